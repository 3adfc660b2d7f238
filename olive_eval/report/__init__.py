"""Human-readable reports of a run."""
