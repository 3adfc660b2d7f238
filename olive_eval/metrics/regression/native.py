"""The optional C extension of the regression kernels (``_ranks.c``), or None where it was not built.

Installed without a C compiler, every kernel runs its numpy form, which the tests hold equal to the compiled one.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["extension"]

extension: ModuleType | None
try:
    from olive_eval.metrics.regression import _ranks as extension
except ImportError:  # no compiler at install time
    extension = None
