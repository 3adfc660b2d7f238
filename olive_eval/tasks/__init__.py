"""Tasks: what a model does, as one registered concept (:mod:`olive_eval.tasks.base`).

A task declares its transformers model classes, how its model is called (:class:`~olive_eval.tasks.call_mode.
CallMode`), its default pre-process, post-process and dataloader, the outputs its runtime adds and the metrics it
allows; transformers' and Olive's spellings of a task are both its names. Built-in tasks are registered by the
modules of this package; other packages add Task subclasses through the entry-point group ``olive_eval.tasks``.
"""
