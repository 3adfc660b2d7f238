"""Anytime-valid statistics for sequential goal decisions: confidence sequences for a bounded mean, an Olive goal
as per-example margins, and the decision at chunk ends. Pure numpy; the engine decides when to look."""
