"""The detection kernels' optional C extensions: ``_coco_match`` (COCO's greedy bbox matching) and
``_coco_accumulate`` (``COCOeval.accumulate``'s precision and recall tables).

Looked up at call time (``native.coco_match_extension``, ``native.coco_accumulate_extension``), so a test can set
one to None and run the numpy form, which is what an install without a C compiler runs.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["coco_accumulate_extension", "coco_match_extension"]

coco_match_extension: ModuleType | None
try:
    from olive_eval.metrics.detection import _coco_match as coco_match_extension
except ImportError:  # installed without a C compiler: the numpy form
    coco_match_extension = None

coco_accumulate_extension: ModuleType | None
try:
    from olive_eval.metrics.detection import _coco_accumulate as coco_accumulate_extension
except ImportError:  # installed without a C compiler: the numpy form
    coco_accumulate_extension = None
