"""The session: a run held open for an optimization loop (its lifetime, output folder and candidates)."""
