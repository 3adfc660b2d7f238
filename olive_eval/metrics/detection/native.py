"""The detection kernels' optional C extension (``_coco_match``: COCO's greedy bbox matching).

Looked up at call time (``native.coco_match_extension``), so a test can set it to None and run the numpy form,
which is what an install without a C compiler runs.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["coco_match_extension"]

coco_match_extension: ModuleType | None
try:
    from olive_eval.metrics.detection import _coco_match as coco_match_extension
except ImportError:  # installed without a C compiler: the numpy form
    coco_match_extension = None
