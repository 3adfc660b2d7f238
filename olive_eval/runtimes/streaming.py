"""Generation timed token by token: what a runtime that generates offers the timing phase.

A runtime that generates implements :class:`StreamsTokens`: ``bind_generation`` binds a batch of prompts of one
length to a call that decodes exactly ``new_tokens`` tokens (end-of-sequence ignored, so every run decodes the
same number) and records, for each call, when each token arrived (:class:`TokenTrace`). Time to first token is
then measured, not ``e2e / n``. The engine turns the traces into the generation latency sub-types
(:mod:`olive_eval.engine.timing.generation_timing`).
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
    rows, ``rows`` the batch size; ``memory_bytes`` the call's memory as ``memory_basis`` says
    (:data:`MEMORY_BASES`)."""

    prompt_tokens: int
    rows: int
    token_seconds: np.ndarray
    seconds: float
    memory_bytes: int = 0
    memory_basis: str = "peak"


#: What a trace's ``memory_bytes`` is: the process's resident memory at the call's peak above what it held just
#: before the call (the kernel's high-water mark, reset before the call), the same read after the call where that
#: mark cannot be reset, or a device's own peak during the call (the whole of a model's memory on a GPU).
MEMORY_BASES = {
    "peak": "the process's peak resident memory during each call (VmHWM) above its resident memory just before",
    "after": "the process's resident memory after each call above its resident memory just before (the peak "
    "could not be reset: /proc/self/clear_refs is not writable here)",
    "device": "the device memory torch held at each call's peak",
}


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


def reset_peak_rss() -> bool:
    """Reset the kernel's record of the process's peak resident memory (``VmHWM``) to its resident memory now, so
    that a read after a call is that call's peak; False where it cannot (not Linux, or not allowed)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_rss_bytes() -> int:
    """The process's peak resident memory since the last :func:`reset_peak_rss` (``VmHWM``; 0 when unreadable)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class StreamingCall(BoundCall):
    """A bound generation call that keeps a :class:`TokenTrace` of each call, in order."""

    def __init__(self) -> None:
        self.traces: list[TokenTrace] = []
        self._rss_before = 0
        self._peak_reset = False

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
        self._rss_before = rss_bytes()  # memory read before and after the call, outside its time
        self._peak_reset = reset_peak_rss()
        clock = time.perf_counter
        start = clock()
        prompt = self._generate(lambda: stamps.append(clock() - start))
        seconds = clock() - start
        memory, basis = self.memory_bytes(), self.memory_basis()
        stamped = np.asarray(stamps, dtype=np.float64)
        self.traces.append(TokenTrace(prompt, self.rows, stamped, seconds, memory, basis))

    def memory_basis(self) -> str:
        """What :meth:`memory_bytes` reads (a key of :data:`MEMORY_BASES`)."""
        return "peak" if self._peak_reset else "after"

    def memory_bytes(self) -> int:
        """The memory the last call took beyond what the process held just before it: its peak where the kernel's
        high-water mark could be reset, else what is still resident after it; a runtime that knows its device's
        peak (a model on a GPU) gives that instead (and ``memory_basis`` "device")."""
        after = peak_rss_bytes() if self._peak_reset else rss_bytes()
        return max(0, after - self._rss_before)

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
