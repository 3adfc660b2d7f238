"""``peak_memory_mb``: a model's own memory footprint over its timing run, measured one way for every runtime.

Every model of a run shares one process (with ``timing.keep_loaded``, the default, all are resident at once and
the rounds interleave them), so the process's total would be much the same for every model. A model's own
footprint is what its load and warm-up added to its runtime's meter (:mod:`olive_eval.runtimes.memory`: the
process's resident memory, or torch's device memory on a GPU) + the most its timed calls held above the level
just before them. The calls' part is taken round by round: the level is read and the meter's peak reset right
before the model's round, and the peak read right after it, while the other models are idle, so what they hold
cancels out. Before each level is read, what is already garbage is collected and the meter lets the allocator's
free memory go (glibc's ``malloc_trim``), so memory that other work freed and this model reuses counts as this
model's; a round that reads memory starts with one untimed call inside the reading, which takes that memory back
(page faults and all) before the timed calls. Nothing is read or released inside a timed call.

What it cannot see: memory kept free by an allocator the meter cannot release (a C library other than glibc); a
device the meter does not read (its basis says so).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from olive_eval.metrics.performance import TimingSample
from olive_eval.runtimes.memory import MemoryMeter


class Footprint:
    """One model's memory over one timing run: its loads' part (the largest over loads, with
    ``"keep_loaded": false``), its calls' part (the largest over rounds), and the meter's own peak during the
    calls (the whole process's, the other models' memory included), kept for what a reader may compare it with."""

    def __init__(self, meter: MemoryMeter) -> None:
        self.meter = meter
        self.load_bytes = 0
        self.call_bytes = 0
        self.total_peak_bytes = 0

    @contextmanager
    def loading(self) -> Iterator[None]:
        """Around a load and its warm-up: what they leave held is the model's."""
        before = self._settled_level()
        yield
        self.load_bytes = max(self.load_bytes, self._settled_level() - before)  # the warm-up's transients: let go

    @contextmanager
    def calls(self) -> Iterator[None]:
        """Around one round's calls: their peak above the level just before them."""
        before = self._settled_level()
        self.meter.reset_peak()
        yield
        peak = self.meter.peak()
        self.call_bytes = max(self.call_bytes, peak - before)
        self.total_peak_bytes = max(self.total_peak_bytes, peak)

    def _settled_level(self) -> int:
        """The level once what is already garbage (a model closed before, its cycles) is collected and the
        allocator's free memory let go: it would otherwise be freed, or reused, while this model is measured."""
        gc.collect()
        self.meter.release()
        return self.meter.level()

    def record(self, sample: TimingSample, description: dict[str, Any]) -> None:
        """The footprint as ``peak_memory_mb``'s bytes (None where the meter cannot read this system), and its
        parts and method in the runtime's description (results.json's ``runtimes`` entry, ``peak_memory``)."""
        sample.peak_memory_bytes = self.load_bytes + self.call_bytes if self.meter.readable else None
        description["peak_memory"] = {
            "basis": self.meter.basis,
            "load_bytes": self.load_bytes,
            "call_bytes": self.call_bytes,
            "total_peak_bytes": self.total_peak_bytes,
        }
