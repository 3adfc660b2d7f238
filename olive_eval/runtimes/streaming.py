"""Generation timed token by token: what a runtime that generates offers the timing phase.

A runtime that generates implements :class:`StreamsTokens`: ``bind_generation`` binds a batch of prompts of one
length to a call that decodes exactly ``new_tokens`` tokens (end-of-sequence ignored, so every run decodes the
same number) and records, for each call, when each token arrived (:class:`TokenTrace`). Time to first token is
then measured, not ``e2e / n``. The engine turns the traces into the generation latency sub-types
(:mod:`olive_eval.engine.generation_timing`).
"""

from __future__ import annotations

import os
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
    rows, ``rows`` the batch size; ``rss_bytes`` is the memory :meth:`StreamingCall.memory_bytes` read after the call
    (the process's resident memory, or a GPU's peak)."""

    prompt_tokens: int
    rows: int
    token_seconds: np.ndarray
    seconds: float
    rss_bytes: int = 0


def rss_bytes() -> int:
    """The process's resident memory now (Linux ``/proc``; psutil elsewhere; 0 when neither can tell)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except ImportError:
        return 0


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
        # memory read right after the call, outside its time (peak_memory_mb is the largest over runs)
        memory = self.memory_bytes()
        self.traces.append(TokenTrace(prompt, self.rows, np.asarray(stamps, dtype=np.float64), seconds, memory))

    def memory_bytes(self) -> int:
        """The memory the last call took at its peak, as far as it can be read: the process's resident memory now,
        unless the runtime knows its device's peak (a model on a GPU)."""
        return rss_bytes()

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
