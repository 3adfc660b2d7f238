"""A batch fed as it is (the arrays of a batch like the last) gets the same treatment as the first: a later batch
that needs a cast, a copy or a shape check still gets it, and a column of another name still feeds a single input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from olive_eval.data.batch import Batch
from olive_eval.errors import EvaluationError
from olive_eval.runtimes.onnx import OnnxRuntime
from olive_eval.runtimes.onnx_config import ONNXModelConfig

from .models import linear_numpy, linear_onnx, two_input_numpy, two_input_onnx

CPU = [("CPUExecutionProvider", {})]


def _runtime(path: Path) -> OnnxRuntime:
    return OnnxRuntime.load(ONNXModelConfig.model_validate({"type": "ONNXModel", "model_path": path}), "cpu", CPU)


def test_batches_like_the_first_give_their_own_outputs(tmp_path: Path, rng: np.random.Generator) -> None:
    runtime = _runtime(linear_onnx(tmp_path / "linear.onnx"))
    for name in ("x", "x", "pixels", "pixels"):  # the only column feeds the only input, whatever its name
        x = rng.standard_normal((5, 4)).astype(np.float32)
        np.testing.assert_allclose(runtime.predict(Batch({name: x}, [name]))["y"], linear_numpy(x), 1e-6)


def test_a_later_batch_is_still_cast_copied_and_checked(tmp_path: Path, rng: np.random.Generator) -> None:
    runtime = _runtime(linear_onnx(tmp_path / "linear.onnx"))
    runtime.predict(Batch({"x": rng.standard_normal((5, 4)).astype(np.float32)}, ["x"]))
    wide = rng.standard_normal((5, 8))
    for x in (wide[:, :4], wide[:, ::2].astype(np.float32), wide[:, :4].tolist()):  # float64, strided, a list
        np.testing.assert_allclose(runtime.predict(Batch({"x": x}, ["x"]))["y"], linear_numpy(np.asarray(x)), 1e-6)
    with pytest.raises(EvaluationError, match=r"input 'x' of linear.onnx has shape \[5, 3\]"):
        runtime.predict(Batch({"x": wide[:, :3].astype(np.float32).copy()}, ["x"]))


def test_a_later_batch_of_two_inputs_is_still_checked(tmp_path: Path) -> None:
    runtime = _runtime(two_input_onnx(tmp_path / "two_input.onnx"))
    ids, scale = np.array([[1, 0, 3], [9, 2, 0]], dtype=np.int64), np.array([[1.0], [0.5]], dtype=np.float32)
    runtime.predict(Batch({"ids": ids, "scale": scale}, ["ids", "scale"]))
    emb = runtime.predict(Batch({"ids": ids.astype(np.int32), "scale": scale}, ["ids", "scale"]))["emb"]
    np.testing.assert_allclose(emb, two_input_numpy(ids, scale)[0])
    with pytest.raises(EvaluationError, match="input 'ids' has dtype float64"):
        runtime.predict(Batch({"ids": ids + 0.5, "scale": scale}, ["ids", "scale"]))
    with pytest.raises(EvaluationError, match="expects input"):
        runtime.predict(Batch({"ids": ids, "other": scale}, ["ids", "other"]))


def test_a_later_batch_with_other_columns_feeds_only_its_inputs(tmp_path: Path, rng: np.random.Generator) -> None:
    """A batch's labels and metadata beside its model inputs: the input still feeds the graph, batch after batch,
    under its own name or, being the only input, under another; a batch naming no input is still an error."""
    runtime = _runtime(linear_onnx(tmp_path / "linear.onnx"))
    for name in ("x", "x", "pixels", "pixels", "x"):
        x = rng.standard_normal((5, 4)).astype(np.float32)
        batch = Batch({"label": np.arange(5), name: x, "text": list("abcde")}, [name])
        np.testing.assert_allclose(runtime.predict(batch)["y"], linear_numpy(x), 1e-6)
    with pytest.raises(EvaluationError, match="expects input"):
        runtime.predict(Batch({"label": np.arange(5), "x": x}, []))
