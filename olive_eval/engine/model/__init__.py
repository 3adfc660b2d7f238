"""One model's evaluation: the evaluator, the unit an executor runs, and the one recorder of values."""
