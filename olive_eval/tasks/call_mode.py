"""How a model is called on a batch: declared by its task, resolved once per pass, asked by the pass and by timing.

The accuracy pass and the timing phase call a model the same way because neither decides it: the model config
resolves the mode (:meth:`olive_eval.runtimes.base.ModelConfig.call_mode`, which an ``HfModel`` asks its task),
the planned pass stamps it on every batch it yields (:attr:`olive_eval.data.batch.Batch.call_mode`), and a
runtime calls its model in the batch's mode.
"""

from __future__ import annotations

from enum import Enum


class CallMode(str, Enum):
    """How a runtime calls its model on a batch."""

    #: One forward pass: the model's outputs as they are (logits, hidden states).
    FORWARD = "forward"
    #: Autoregressive decoding: generated token ids (transformers' ``generate()``, a token loop).
    GENERATE = "generate"
    #: The model is a callable with one way of being called (a Python function, an ONNX graph, a module).
    CALL = "call"
