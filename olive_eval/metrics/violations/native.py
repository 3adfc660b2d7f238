"""The optional C form of the matching (``_matching.c``): overlaps, string codes and the greedy in one call each.

Looked up at call time (``native.matching_extension``), so a test can set it to None and run the numpy forms, which
are what an install without a C compiler runs.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["matching_extension"]

matching_extension: ModuleType | None
try:
    from olive_eval.metrics.violations import _matching as matching_extension
except ImportError:  # installed without a C compiler: the numpy forms
    matching_extension = None
