"""lm-eval tasks run as a kind of work: planned with the run (``plan``), run on each loaded model (``evaluate``).

It sits beside the engine, above the config it reads (:class:`olive_eval.config.metric.MetricConfig`), while
:mod:`olive_eval.lm_eval` keeps what the config and the runtimes' adapters need below it: the options, the
``lm_eval`` metric type, task lookup and the lm-eval ``LM`` adapters.
"""
