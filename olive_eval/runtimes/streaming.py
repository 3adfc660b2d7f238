"""Generation timed token by token: what a runtime that generates offers the timing phase.

A runtime that generates implements :class:`StreamsTokens`: ``bind_generation`` binds a batch of prompts of one
length to a call that decodes exactly ``new_tokens`` tokens (end-of-sequence ignored, so every run decodes the
same number) and records, for each call, when each token arrived (:class:`TokenTrace`). Time to first token is
then measured, not ``e2e / n``. The engine turns the traces into the generation latency sub-types
(:mod:`olive_eval.engine.timing.generation_timing`).
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from olive_eval.data.batch import Batch
from olive_eval.runtimes.base import BoundCall


@dataclass(frozen=True)
class TokenTrace:
    """One generation call: ``token_seconds[i]`` is when the ``i``-th new token of every row was on the host,
    counted from the start of the call; ``seconds`` the whole call. ``prompt_tokens`` counts the tokens of all
    rows, ``rows`` the batch size. (The calls' memory is the timing phase's to read, as for any runtime.)"""

    prompt_tokens: int
    rows: int
    token_seconds: np.ndarray
    seconds: float


class StreamingCall(BoundCall):
    """A bound generation call that keeps a :class:`TokenTrace` of each call, in order."""

    def __init__(self) -> None:
        self.traces: list[TokenTrace] = []

    def take(self, n: int) -> list[TokenTrace]:
        """The traces of the last ``n`` calls; every trace kept so far is dropped (warm-ups included)."""
        out = self.traces[-n:] if n else []
        self.traces = []
        return out

    @abstractmethod
    def _generate(self, on_token: Callable[[], None]) -> int:
        """Run one generation, calling ``on_token()`` once per new token as it reaches the host; returns the
        prompt tokens of all rows."""

    def __call__(self) -> None:
        stamps: list[float] = []
        clock = time.perf_counter
        start = clock()
        prompt = self._generate(lambda: stamps.append(clock() - start))
        seconds = clock() - start
        self.traces.append(TokenTrace(prompt, self.rows, np.asarray(stamps, dtype=np.float64), seconds))

    @property
    @abstractmethod
    def rows(self) -> int: ...


@runtime_checkable
class StreamsTokens(Protocol):
    """A runtime that can be timed token by token."""

    def bind_generation(self, batch: Batch, new_tokens: int) -> StreamingCall:
        """``batch``'s prompts (``input_ids``, every row of one length) bound to a call that decodes exactly
        ``new_tokens`` tokens per row."""
        ...
