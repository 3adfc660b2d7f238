"""An ``HfModel`` timed token by token: ``generate()`` with a streamer that stamps each new token as it reaches
the host (transformers hands a streamer every step's tokens on the cpu), decoding exactly ``new_tokens`` tokens
(``min_new_tokens`` = ``max_new_tokens``, so end-of-sequence never stops a run early)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olive_eval.data.batch import Outputs
from olive_eval.lazy import LazyModule
from olive_eval.runtimes.streaming import StreamingCall

torch = LazyModule("torch")


class _Stamps:
    """transformers' streamer protocol (``put``, ``end``): the first ``put`` is the prompt, each later one a token."""

    def __init__(self, on_token: Callable[[], None]) -> None:
        self._on_token, self._prompt_seen = on_token, False

    def put(self, value: Any) -> None:
        if self._prompt_seen:
            self._on_token()
        self._prompt_seen = True

    def end(self) -> None:
        pass


class HfStreamed(StreamingCall):
    """``model.generate(**tensors)`` with the model's generation_kwargs, its lengths fixed to ``new_tokens``."""

    def __init__(self, model: Any, tensors: dict[str, Any], generation_kwargs: dict[str, Any], new_tokens: int) -> None:
        super().__init__()
        self._model, self._tensors = model, tensors
        kwargs = {k: v for k, v in generation_kwargs.items() if k not in ("max_length", "min_length")}
        self._kwargs = {**kwargs, "max_new_tokens": new_tokens, "min_new_tokens": new_tokens}

    @property
    def rows(self) -> int:
        return int(self._tensors["input_ids"].shape[0])

    def _generate(self, on_token: Callable[[], None]) -> int:
        with torch.inference_mode():
            self._model.generate(**self._tensors, **self._kwargs, streamer=_Stamps(on_token))
        return int(self._tensors["input_ids"].numel())

    def outputs(self) -> Outputs:
        return {}
