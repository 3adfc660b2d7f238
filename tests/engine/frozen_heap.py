"""The test process's own heap, out of the garbage collector's reach while a test measures memory.

``peak_memory_mb`` collects the garbage before every level it reads (:mod:`olive_eval.engine.timing.peak_memory`),
and a full ``gc.collect()`` walks every object the process tracks. In a run that is the run's own objects; in a
test worker it is every object of every library the suite imported before (about 500,000 late in the suite: 0.4 s
a collection, 20-50 collections a file, most of these files' time). ``gc.freeze()`` sets the objects alive when a
test starts aside until it ends, so each collection walks what the test made: its models, their data, and the
garbage the method collects (a model closed before, its cycles). Freezing and thawing move lists, not objects.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Every object alive now left out of garbage collections until the block ends (then collected as usual)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
