"""Memory meters: where a model's memory is read from, so that ``peak_memory_mb`` means one thing for every runtime.

A meter reads a level now, resets its peak, and reads the peak since that reset. The process meter reads the
resident memory (Linux ``/proc``: ``VmRSS`` for the level, the kernel's high-water mark ``VmHWM`` for the peak,
reset through ``/proc/self/clear_refs``); a torch model on a GPU reads torch's allocated device memory instead
(``torch.cuda.memory_allocated`` / ``max_memory_allocated``). Each runtime class names its meter for a device
(:meth:`olive_eval.runtimes.base.Runtime.memory_meter`), before the model loads, so the load itself is measured.
The engine turns the reads into a model's footprint (:mod:`olive_eval.engine.timing.peak_memory`).
"""

from __future__ import annotations

import ctypes
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cache

from olive_eval.lazy import LazyModule

torch = LazyModule("torch")


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
    that a later read is the peak since; False where it cannot (not Linux, or not allowed). It also lowers what
    ``getrusage``'s ``ru_maxrss`` reports for the process from then on."""
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


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc
    except (OSError, AttributeError):
        return None


def release_free_heap() -> bool:
    """Hand the C allocator's free memory back to the system (glibc ``malloc_trim(0)``), so that memory freed by
    earlier work and reused by the next allocations shows as resident again; False where there is no such call."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class MemoryMeter(ABC):
    """One kind of memory a model's footprint is read in."""

    @abstractmethod
    def level(self) -> int:
        """Bytes held now."""

    def release(self) -> None:  # noqa: B027 - optional hook
        """Before a level is read: let go of what the allocator keeps free, so that its reuse is seen (nothing by
        default: a meter that counts allocated bytes sees reuse anyway)."""

    @abstractmethod
    def reset_peak(self) -> None:
        """Start a new peak at the level now."""

    @abstractmethod
    def peak(self) -> int:
        """The most bytes held since :meth:`reset_peak`."""

    @property
    @abstractmethod
    def readable(self) -> bool:
        """False where this system cannot tell (the figure would be a made-up 0)."""

    @property
    @abstractmethod
    def basis(self) -> str:
        """How the footprint was measured, for results.json: the load's part + the calls' part."""


class ProcessMemory(MemoryMeter):
    """The process's resident memory (RSS). Memory the C allocator keeps after a free stays resident, and a later
    allocation that reuses it does not grow the process: :meth:`release` returns it first (glibc), so a model is
    not credited with what another model, or the data, freed. Where the kernel's peak cannot be reset, the peak is
    the level read after the calls, which misses what they freed before returning; the basis then says so.

    ``host_only``: the model runs on a device whose memory this meter cannot see (ONNX Runtime's CUDA provider,
    onnxruntime-genai on a GPU), and the basis says that too."""

    def __init__(self, host_only: bool = False) -> None:
        self.host_only = host_only
        self._peak_resets = True
        self._heap_released = False

    def level(self) -> int:
        return rss_bytes()

    def release(self) -> None:
        self._heap_released = release_free_heap()

    def reset_peak(self) -> None:
        self._peak_resets = reset_peak_rss()

    def peak(self) -> int:
        return peak_rss_bytes() if self._peak_resets else rss_bytes()

    @property
    def readable(self) -> bool:
        return rss_bytes() > 0

    @property
    def basis(self) -> str:
        if self._peak_resets:
            calls = (
                "the process's peak resident memory during each round of its calls (VmHWM, reset before the round) "
                "above its resident memory just before them"
            )
        else:
            calls = (
                "the process's resident memory after each round of its calls above its resident memory just before "
                "them (the peak could not be reset: /proc/self/clear_refs is not writable here)"
            )
        released = "; the allocator's free memory returned to the system before each read (malloc_trim)"
        device = "; host memory only, any device memory it holds is not measured" if self.host_only else ""
        return f"the resident memory the model's load added + {calls}{released if self._heap_released else ''}{device}"


class TorchDeviceMemory(MemoryMeter):
    """torch's allocated memory on the current CUDA device: the tensors torch holds, not its cached blocks nor the
    CUDA context. Before CUDA starts, the level is 0 (nothing is allocated yet)."""

    def level(self) -> int:
        return int(torch.cuda.memory_allocated()) if torch.cuda.is_initialized() else 0

    def reset_peak(self) -> None:
        if torch.cuda.is_initialized():
            torch.cuda.reset_peak_memory_stats()

    def peak(self) -> int:
        return int(torch.cuda.max_memory_allocated()) if torch.cuda.is_initialized() else 0

    @property
    def readable(self) -> bool:
        return True

    @property
    def basis(self) -> str:
        return (
            "the device memory torch allocated for the model's load + torch's peak allocated device memory during "
            "each round of its calls (torch.cuda.max_memory_allocated, reset before the round) above what was "
            "allocated just before them"
        )
