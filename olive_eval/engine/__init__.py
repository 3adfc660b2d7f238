"""The engine: plan the work, run each model over each data config once, score, rank."""
