"""The kinds of work a run does, each registered by name (:data:`olive_eval.engine.work.base.work_registry`):
a metric type names the kind that measures it, and the kind plans its units and runs them. A new kind of work is
one new module here, or an entry point in the ``olive_eval.work`` group of another distribution."""
