"""Per-image statistics: ragged tables whose rows each belong to one image. Pure numpy.

A detection only ever meets the ground truth of its own image, so a matching decomposes over images:
what accumulation reads of it (per detection its category, score and match outcomes; per ground truth its
category and whether it counts) can be kept image by image, and precision and recall re-accumulated for
any list of images. ``stats[idx]`` is the images ``idx`` in that order, repeats included (a bootstrap
resample); :meth:`PerImage.concat` joins the batches of a pass. A column that points at rows of another
table (a match's detection) holds indices local to the image, so it survives both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from olive_eval.metrics.detection.labels import Names, merge_names


def _rows_of(offsets: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of images ``idx`` in that order, and the offsets of the gathered table."""
    starts = offsets[idx]
    counts = offsets[idx + 1] - starts
    new = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(counts, out=new[1:])
    rows = np.arange(new[-1], dtype=np.int64) + np.repeat(starts - new[:-1], counts)
    return rows, new


@dataclass(frozen=True)
class Table:
    """Rows of every image, image after image: image ``i`` owns rows ``offsets[i]:offsets[i + 1]``."""

    offsets: np.ndarray  # [I + 1] int64
    columns: dict[str, np.ndarray]  # each [rows, ...]

    @classmethod
    def of(cls, image: np.ndarray, n_images: int, columns: dict[str, np.ndarray]) -> Table:
        """A table from rows tagged with their image; rows keep their order within an image (rows already in
        image order, as the matching leaves most of them, are kept as they are: no sort, no copy)."""
        offsets = np.zeros(n_images + 1, np.int64)
        np.cumsum(np.bincount(image, minlength=n_images), out=offsets[1:])
        if not (image[1:] < image[:-1]).any():
            return cls(offsets, dict(columns))
        order = np.argsort(image, kind="stable")
        return cls(offsets, {name: values[order] for name, values in columns.items()})

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def image_of_rows(self) -> np.ndarray:
        """``[rows]``: the position of each row's image."""
        return np.repeat(np.arange(len(self.offsets) - 1), np.diff(self.offsets))

    def absolute(self, local: np.ndarray, image: np.ndarray) -> np.ndarray:
        """Local row indices of this table (of rows on images ``image``) as indices into the whole table."""
        return local + self.offsets[image]

    def where(self, keep: np.ndarray, columns: dict[str, np.ndarray]) -> Table:
        """The rows ``keep`` of ``columns`` (this table's columns, or arrays computed from them)."""
        counts = np.bincount(self.image_of_rows()[keep], minlength=len(self.offsets) - 1)
        offsets = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Table(offsets, {name: values[keep] for name, values in columns.items()})

    def take(self, idx: np.ndarray) -> Table:
        rows, offsets = _rows_of(self.offsets, idx)
        return Table(offsets, {name: values[rows] for name, values in self.columns.items()})


@dataclass(frozen=True)
class PerImage:
    """One evaluation's per-image tables; its length is the number of images."""

    category_ids: np.ndarray  # [K] ascending: every category the inputs name (columns hold these ids)
    tables: dict[str, Table]
    names: Names = field(default_factory=dict)  # text labels: id -> (key, value)

    def __len__(self) -> int:
        return len(next(iter(self.tables.values())).offsets) - 1

    def __getitem__(self, idx: np.ndarray | Sequence[int]) -> PerImage:
        """The images ``idx`` in that order (an image listed twice is two images)."""
        at = np.asarray(idx, np.int64).reshape(-1)
        return PerImage(self.category_ids, {name: table.take(at) for name, table in self.tables.items()}, self.names)

    @staticmethod
    def concat(parts: Sequence[PerImage]) -> PerImage:
        """The images of ``parts`` one after another (the batches of a pass)."""
        if len(parts) == 1:
            return parts[0]
        categories = np.unique(np.concatenate([p.category_ids for p in parts]))
        tables = {}
        for name, first in parts[0].tables.items():
            counts = np.concatenate([np.diff(p.tables[name].offsets) for p in parts])
            offsets = np.zeros(len(counts) + 1, np.int64)
            np.cumsum(counts, out=offsets[1:])
            columns = {c: np.concatenate([p.tables[name].columns[c] for p in parts]) for c in first.columns}
            tables[name] = Table(offsets, columns)
        names = merge_names([p.names for p in parts], [p.category_ids for p in parts], "the batches of the pass")
        return PerImage(categories, tables, names)
