import olive_eval.olive  # noqa: F401  (registers the "OliveEval" evaluator type)
