"""The optional C extension of the speech edit counts (``_edit_counts.c``), or None where not built, and how many
threads it counts on.

Installed without a C compiler, the counts take the rapidfuzz path, which the tests hold equal to the compiled one.
"""

from __future__ import annotations

from types import ModuleType

from olive_eval.cores import usable_cores

__all__ = ["MAX_THREADS", "PAIRS_PER_THREAD", "compiled_available", "counts_extension", "kernel_threads"]

#: Pairs per thread of the C kernel: smaller batches are counted on the calling thread alone.
PAIRS_PER_THREAD = 5_000
#: The most threads the C kernel counts on (beside whatever else the run does).
MAX_THREADS = 4

counts_extension: ModuleType | None
try:
    from olive_eval.metrics.speech import _edit_counts as counts_extension
except ImportError:  # no compiler at install time
    counts_extension = None


def compiled_available() -> bool:
    """Whether the C extension ``_edit_counts`` was built (else every count takes the rapidfuzz path)."""
    return counts_extension is not None


def kernel_threads(n_pairs: int) -> int:
    """Threads for the C kernel: one per usable core, at most :data:`MAX_THREADS`, each with enough pairs."""
    return max(1, min(usable_cores(), MAX_THREADS, n_pairs // PAIRS_PER_THREAD))
