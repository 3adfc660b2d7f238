"""The optional C extensions of the regression kernels (``_ranks.c``, ``_moments.c``), or None where not built.

Installed without a C compiler, every kernel runs its numpy form, which the tests hold equal to the compiled one.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["moments_extension", "ranks_extension"]

ranks_extension: ModuleType | None
moments_extension: ModuleType | None
try:
    from olive_eval.metrics.regression import _ranks as ranks_extension
except ImportError:  # no compiler at install time
    ranks_extension = None
try:
    from olive_eval.metrics.regression import _moments as moments_extension
except ImportError:
    moments_extension = None
