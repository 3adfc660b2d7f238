"""What a model says of one of its inputs: runtimes describe their inputs with it, and dummy data (for latency
without a dataset) is drawn from it. It lives with the data so that the data floor never imports the runtimes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InputSpec:
    """One model input: its name, numpy dtype, and shape (``None`` or a string for a dynamic dimension)."""

    name: str
    dtype: np.dtype
    shape: tuple[int | str | None, ...] | None = None

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) and d > 0 for d in self.shape)
