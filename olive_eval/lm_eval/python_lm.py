"""An lm-eval ``LM`` over a ``PythonModel``'s object: an HTTP endpoint, llama.cpp, anything callable.

``generate_until`` calls the object the way a prediction pass does, a batch of columns: ``prompt`` (lm-eval's
context), ``until`` (its stop strings) and ``max_gen_toks``, one row per request; the text is cut at the first
stop string, as lm-eval's own backends do. ``loglikelihood`` and ``loglikelihood_rolling`` need the object's own
methods of those names, taking ``[(context, continuation), ...]`` and ``[text, ...]`` and returning
``[(logprob, is_greedy), ...]`` and ``[logprob, ...]``: only the model knows its token probabilities.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lm_eval.api.model import LM

from olive_eval.errors import EvaluationError
from olive_eval.lm_eval.options import AdapterOptions
from olive_eval.user_module import call_user

#: lm-eval's default generation length when a task sets none.
DEFAULT_MAX_GEN_TOKS = 256


def cut_at_stops(text: str, stops: list[str]) -> str:
    """``text`` up to the first occurrence of any stop string."""
    end = len(text)
    for stop in stops:
        if stop:
            at = text.find(stop)
            if at != -1:
                end = min(end, at)
    return text[:end]


class PythonLM(LM):
    def __init__(self, obj: Any, call: Callable[[dict[str, Any]], Any], where: str, options: AdapterOptions) -> None:
        super().__init__()
        self._obj, self._call, self._where = obj, call, where
        self._batch = options.batch_size
        self._max_gen = DEFAULT_MAX_GEN_TOKS

    def _own(self, name: str) -> Callable[..., Any]:
        method = getattr(self._obj, name, None)
        if not callable(method):
            raise EvaluationError(f"{self._where} has no {name}() method, which lm-eval's {name} requests need")
        return method

    def _checked(self, out: Any, n: int, what: str) -> list[Any]:
        if not isinstance(out, (list, tuple)) or len(out) != n:
            got = f"{len(out)} items" if isinstance(out, (list, tuple)) else type(out).__name__
            raise EvaluationError(f"{self._where}: {what} returned {got} for {n} requests; return one per request")
        return list(out)

    def loglikelihood(self, requests: list[Any]) -> list[tuple[float, bool]]:
        pairs = [tuple(r.args) for r in requests]
        out = self._checked(
            call_user(self._own("loglikelihood"), self._where, (pairs,), {}), len(pairs), "loglikelihood"
        )
        return [(float(lp), bool(greedy)) for lp, greedy in out]

    def loglikelihood_rolling(self, requests: list[Any]) -> list[float]:
        texts = [r.args[0] for r in requests]
        method = self._own("loglikelihood_rolling")
        out = self._checked(call_user(method, self._where, (texts,), {}), len(texts), "loglikelihood_rolling")
        return [float(v) for v in out]

    def generate_until(self, requests: list[Any]) -> list[str]:
        texts: list[str] = []
        for start in range(0, len(requests), self._batch):
            chunk = requests[start : start + self._batch]
            stops = [_stops(r.args[1]) for r in chunk]
            batch = {
                "prompt": [r.args[0] for r in chunk],
                "until": stops,
                "max_gen_toks": [int(r.args[1].get("max_gen_toks", self._max_gen)) for r in chunk],
            }
            out = self._checked(call_user(self._call, self._where, (batch,), {}), len(chunk), "the call")
            texts += [cut_at_stops(str(t), s) for t, s in zip(out, stops, strict=True)]
        return texts


def _stops(gen_kwargs: dict[str, Any]) -> list[str]:
    until = gen_kwargs.get("until") or []
    return [until] if isinstance(until, str) else list(until)
