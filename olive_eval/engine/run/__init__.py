"""The run: the plan of its work, its context and data, the order models go in, goals against the baseline."""
