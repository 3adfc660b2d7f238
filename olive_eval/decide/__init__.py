"""Pure decisions on results: goals against the baseline, the lexicographic ranking by priority, the Pareto
front. No engine objects, no I/O."""
