"""Random inputs of fixed shapes, for latency and throughput when no dataset is configured."""

from __future__ import annotations

import numpy as np

from olive_eval.data.input_spec import InputSpec
from olive_eval.data.sources import DummyDatasetParams
from olive_eval.errors import EvaluationError


def dummy_inputs(config: DummyDatasetParams | None, specs: list[InputSpec]) -> dict[str, np.ndarray]:
    """One batch of random inputs: from ``config`` where it names inputs, else from the model's static shapes."""
    rng = np.random.default_rng(0 if config is None else config.seed)
    if config is not None and config.input_shapes is not None:
        names = config.input_names or [s.name for s in specs]
        types = config.input_types or ["float32"] * len(names)
        if len(names) != len(config.input_shapes):
            raise EvaluationError("dummy data: input_names and input_shapes have different lengths")
        return {
            n: _random(rng, tuple(shape), np.dtype(t))
            for n, shape, t in zip(names, config.input_shapes, types, strict=True)
        }
    if not specs:
        raise EvaluationError(
            "dummy data: the model does not describe its inputs; give input_names/input_shapes/input_types"
        )
    dynamic = [s for s in specs if not s.is_static]
    if dynamic:
        s = dynamic[0]
        raise EvaluationError(
            f"dummy data: model input '{s.name}' has a dynamic shape {list(s.shape or [])}; "
            "give input_shapes in a DummyDataContainer data config"
        )
    return {s.name: _random(rng, tuple(s.shape), s.dtype) for s in specs}  # type: ignore[arg-type]


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 2, shape).astype(dtype)
