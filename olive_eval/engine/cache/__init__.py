"""Results a run does not measure again: the result cache (its keys and stored evidence) and --resume."""
