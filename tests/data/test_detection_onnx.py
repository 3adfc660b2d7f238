"""Post-process ``detection_outputs``: ONNX detectors whose boxes, scores and labels outputs are named in the
config, evaluated end to end and checked against pycocotools on the same detections; and each bad input."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.data.batch import Batch
from olive_eval.data.components import build, registries
from olive_eval.data.prepared import PrepareContext
from olive_eval.errors import ConfigError, EvaluationError
from tests.helpers import write_jsonl
from tests.metrics.detection.scenes import random_scene, run_pycocotools, scene_to_coco

TOL = 1e-12
KEYS = {"map": 0, "map_50": 1, "map_75": 2, "mar_100": 8}
GARBAGE = [0.0, 0.0, 60.0, 60.0, 0.99, 0.0]  # a confident padding row: scored if padding were not dropped


# ------------------------------------------------------------------------------------------ ONNX detectors
def _save(graph: onnx.GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _const(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def batched_detector(path: Path) -> Path:
    """``dets [B, K, 6]`` (box, score, class) and ``count [B]`` → ``boxes [B, K, 4]``, ``scores [B, K]``,
    ``labels [B, K]`` (int64) and ``num_detections [B]``: an NMS-style export, padded to K."""
    nodes = [
        helper.make_node("Slice", ["dets", "s0", "s4", "ax2"], ["boxes"]),
        helper.make_node("Slice", ["dets", "s4", "s5", "ax2"], ["score_col"]),
        helper.make_node("Squeeze", ["score_col", "ax2"], ["scores"]),
        helper.make_node("Slice", ["dets", "s5", "s6", "ax2"], ["label_col"]),
        helper.make_node("Squeeze", ["label_col", "ax2"], ["label_f"]),
        helper.make_node("Cast", ["label_f"], ["labels"], to=TensorProto.INT64),
        helper.make_node("Identity", ["count"], ["num_detections"]),
    ]
    graph = helper.make_graph(
        nodes,
        "batched_detector",
        [
            helper.make_tensor_value_info("dets", TensorProto.FLOAT, ["B", "K", 6]),
            helper.make_tensor_value_info("count", TensorProto.INT64, ["B"]),
        ],
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["B", "K", 4]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["B", "K"]),
            helper.make_tensor_value_info("labels", TensorProto.INT64, ["B", "K"]),
            helper.make_tensor_value_info("num_detections", TensorProto.INT64, ["B"]),
        ],
        [_const("s0", [0]), _const("s4", [4]), _const("s5", [5]), _const("s6", [6]), _const("ax2", [2])],
    )
    return _save(graph, path)


def flat_detector(path: Path) -> Path:
    """The same inputs → one ``detections [N, 7]`` output, rows ``batch, x1, y1, x2, y2, class, score`` for
    the real detections of the whole batch (as NonMaxSuppression-based exports give), via NonZero/GatherND."""
    nodes = [
        helper.make_node("Shape", ["dets"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["k"], axis=0),
        helper.make_node("Range", ["zero", "k", "one"], ["slots"]),
        helper.make_node("Unsqueeze", ["count", "ax1"], ["count_col"]),
        helper.make_node("Less", ["slots", "count_col"], ["real"]),
        helper.make_node("NonZero", ["real"], ["where_t"]),
        helper.make_node("Transpose", ["where_t"], ["where"], perm=[1, 0]),
        helper.make_node("GatherND", ["dets", "where"], ["rows"]),
        helper.make_node("Slice", ["where", "s0", "s1", "ax1"], ["image_i"]),
        helper.make_node("Cast", ["image_i"], ["image_f"], to=TensorProto.FLOAT),
        helper.make_node("Slice", ["rows", "s0", "s4", "ax1"], ["box"]),
        helper.make_node("Slice", ["rows", "s4", "s5", "ax1"], ["score"]),
        helper.make_node("Slice", ["rows", "s5", "s6", "ax1"], ["label"]),
        helper.make_node("Concat", ["image_f", "box", "label", "score"], ["detections"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "flat_detector",
        [
            helper.make_tensor_value_info("dets", TensorProto.FLOAT, ["B", "K", 6]),
            helper.make_tensor_value_info("count", TensorProto.INT64, ["B"]),
        ],
        [helper.make_tensor_value_info("detections", TensorProto.FLOAT, ["N", 7])],
        [
            _const("s0", [0]),
            _const("s1", [1]),
            _const("s4", [4]),
            _const("s5", [5]),
            _const("s6", [6]),
            _const("ax1", [1]),
            numpy_helper.from_array(np.array(0, np.int64), "zero"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
        ],
    )
    return _save(graph, path)


# -------------------------------------------------------------------------------------------- the scenes
def from_xyxy(boxes: np.ndarray, box_format: str) -> np.ndarray:
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    wh = b[:, 2:] - b[:, :2]
    if box_format == "xywh":
        return np.concatenate([b[:, :2], wh], axis=1)
    if box_format == "cxcywh":
        return np.concatenate([b[:, :2] + wh / 2, wh], axis=1)
    return b


def scene_data(tmp_path: Path, seed: int, box_format: str = "xyxy", label_shift: int = 0) -> tuple[Path, list, list]:
    """A jsonl of padded model inputs and references; the detections as the model will give them."""
    preds, refs = random_scene(seed, n_images=23)
    k = max(len(p["scores"]) for p in preds) + 2
    rows, given = [], []
    for p, r in zip(preds, refs, strict=True):
        n = len(p["scores"])
        dets = np.array([GARBAGE] * k, np.float32)
        boxes = from_xyxy(p["boxes"], box_format)
        dets[:n] = np.column_stack([boxes, p["scores"], p["labels"]]) if n else dets[:0]
        rows.append(
            {
                "dets": dets.tolist(),
                "count": n,
                "objects": {
                    "boxes": np.asarray(r["boxes"]).tolist(),
                    "labels": (np.asarray(r["labels"]) + label_shift).tolist(),
                    "iscrowd": np.asarray(r["iscrowd"]).tolist(),
                    "area": np.asarray(r["area"]).tolist(),
                },
            }
        )
        # the detections as float32 carries them, in xyxy, labels as the references number them
        xyxy = np.asarray(p["boxes"], np.float64).reshape(-1, 4)
        given.append(
            {
                "boxes": xyxy,
                "scores": p["scores"].astype(np.float32).astype(np.float64),
                "labels": p["labels"] + label_shift,
            }
        )
    refs = [{**r, "labels": r["labels"] + label_shift} for r in refs]
    return write_jsonl(tmp_path / "scene.jsonl", rows), given, refs


def run_config(tmp_path: Path, model: Path, data: Path, post: dict[str, Any], batch_size: int = 4) -> dict[str, Any]:
    return {
        "input_model": {"type": "ONNXModel", "name": "detector", "model_path": str(model)},
        "data_configs": [
            {
                "name": "scene",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["dets", "count"], "label_col": "objects"},
                "post_process_data_config": {"type": "detection_outputs", **post},
                "dataloader_config": {"batch_size": batch_size},
            }
        ],
        "metrics": [
            {
                "name": "det",
                "type": "accuracy",
                "data_config": "scene",
                "sub_types": [{"name": "map", "priority": 1}, *({"name": k} for k in KEYS if k != "map")],
            }
        ],
        "output_dir": str(tmp_path / "out"),
    }


def assert_matches_pycocotools(result: Any, preds: list, refs: list) -> None:
    ev = run_pycocotools(*scene_to_coco(preds, refs))
    metrics = result.models["detector"].metrics
    for key, stat in KEYS.items():
        ref = float(ev.stats[stat])
        assert not math.isnan(ref) and ref != -1
        assert metrics[f"det-{key}"].value == pytest.approx(ref, rel=0, abs=TOL), key


BATCHED = {"boxes": "boxes", "scores": "scores", "labels": "labels", "num_detections": "num_detections"}
FLAT = {
    "layout": "flat",
    "batch_index": {"output": "detections", "index": 0},
    "boxes": {"output": "detections", "index": [1, 2, 3, 4]},
    "labels": {"output": "detections", "index": 5},
    "scores": {"output": "detections", "index": 6},
}


# ------------------------------------------------------------------------------------------------- runs
@pytest.mark.parametrize(("seed", "box_format"), [(0, "xyxy"), (1, "xywh"), (2, "cxcywh")])
def test_batched_padded_outputs_match_pycocotools(tmp_path, seed: int, box_format: str) -> None:
    data, preds, refs = scene_data(tmp_path, seed, box_format)
    model = batched_detector(tmp_path / "det.onnx")
    result = evaluate(run_config(tmp_path, model, data, {**BATCHED, "box_format": box_format}))
    assert_matches_pycocotools(result, preds, refs)


def test_padding_rows_count_without_num_detections(tmp_path) -> None:
    """No num_detections: every row is a detection, the confident padding rows included (and pycocotools
    agrees on that scene), which is why padded exports must name it."""
    data, preds, refs = scene_data(tmp_path, 4)
    model = batched_detector(tmp_path / "det.onnx")
    post = {k: v for k, v in BATCHED.items() if k != "num_detections"}
    result = evaluate(run_config(tmp_path, model, data, post))
    k = max(len(p["scores"]) for p in preds) + 2
    pad = np.array(GARBAGE)
    padded = [
        {
            "boxes": np.vstack([p["boxes"], np.tile(pad[:4], (k - len(p["scores"]), 1))]),
            "scores": np.concatenate([p["scores"], np.full(k - len(p["scores"]), np.float32(pad[4]))]),
            "labels": np.concatenate([p["labels"], np.zeros(k - len(p["scores"]), np.int64)]),
        }
        for p in preds
    ]
    assert_matches_pycocotools(result, padded, refs)
    honest = evaluate(run_config(tmp_path, model, data, BATCHED)).models["detector"].metrics["det-map"].value
    assert result.models["detector"].metrics["det-map"].value < honest


@pytest.mark.parametrize("batch_size", [1, 5])
def test_flat_rows_with_a_batch_index_match_pycocotools(tmp_path, batch_size: int) -> None:
    # the model gives 0-based classes; the references number them from 1
    data, preds, refs = scene_data(tmp_path, 5, label_shift=1)
    model = flat_detector(tmp_path / "flat.onnx")
    result = evaluate(run_config(tmp_path, model, data, {**FLAT, "label_offset": 1}, batch_size=batch_size))
    assert_matches_pycocotools(result, preds, refs)


def test_score_threshold_and_max_detections(tmp_path) -> None:
    data, preds, refs = scene_data(tmp_path, 6)
    model = batched_detector(tmp_path / "det.onnx")
    result = evaluate(run_config(tmp_path, model, data, {**BATCHED, "score_threshold": 0.5, "max_detections": 3}))
    kept = []
    for p in preds:
        ranked = sorted((-s, i) for i, s in enumerate(p["scores"].tolist()) if s >= 0.5)
        rows = sorted(i for _, i in ranked[:3])
        kept.append(
            {"boxes": p["boxes"].reshape(-1, 4)[rows], "scores": p["scores"][rows], "labels": p["labels"][rows]}
        )
    assert sum(len(k["scores"]) for k in kept) < sum(len(p["scores"]) for p in preds)
    assert_matches_pycocotools(result, kept, refs)


# -------------------------------------------------------------------------------------------- bad input
def _apply(post: dict[str, Any], outputs: dict[str, Any], size: int = 2) -> Any:
    params = (
        registries["post-process"].get("detection_outputs").Params.model_validate({"type": "detection_outputs", **post})
    )
    component = build("post-process", params)
    batch = Batch({"x": np.zeros(size)}, ["x"], start=10)
    return component.apply(outputs, batch, PrepareContext("scene"))


def _batched_outputs(b: int = 2, k: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 20, (b, k, 2))
    return {
        "boxes": np.concatenate([xy, xy + 5], axis=-1).astype(np.float32),
        "scores": rng.random((b, k)).astype(np.float32),
        "labels": rng.integers(0, 3, (b, k)),
        "num_detections": np.array([1, k]),
    }


def test_a_named_output_the_model_lacks_lists_its_outputs() -> None:
    with pytest.raises(EvaluationError) as info:
        _apply({**BATCHED, "scores": "detection_scores"}, _batched_outputs())
    message = str(info.value)
    assert "'detection_scores'" in message and "it gives: boxes, scores, labels, num_detections" in message
    assert "examples 10-11" in message and "\n" not in message


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            {"boxes": np.zeros((2, 3, 5), np.float32)},
            "output 'boxes' (boxes) has shape [2, 3, 5]; layout 'batched' needs [2, ?, 4]",
        ),
        (
            {"boxes": np.zeros((3, 3, 4), np.float32)},
            "output 'boxes' (boxes) has shape [3, 3, 4]; layout 'batched' needs [2, ?, 4]",
        ),
        (
            {"scores": np.zeros((2, 4), np.float32)},
            "output 'scores' (scores) has shape [2, 4]; layout 'batched' needs [2, 3]",
        ),
        ({"labels": np.zeros(6, np.int64)}, "output 'labels' (labels) has shape [6]; layout 'batched' needs [2, 3]"),
        (
            {"num_detections": np.array([1, 2, 3])},
            "output 'num_detections' (num_detections) has shape [3]; layout 'batched' needs [2]",
        ),
    ],
)
def test_shapes_that_do_not_fit_name_the_output_and_its_shape(change: dict, needle: str) -> None:
    with pytest.raises(EvaluationError, match=r"^post-process 'detection_outputs'") as info:
        _apply(BATCHED, {**_batched_outputs(), **change})
    assert needle in str(info.value)


def test_num_detections_beyond_the_padding() -> None:
    with pytest.raises(EvaluationError, match=r"holds \[1, 4\]; each must be between 0 and 3"):
        _apply(BATCHED, {**_batched_outputs(), "num_detections": np.array([1, 4])})


def test_fractional_labels_are_refused() -> None:
    with pytest.raises(EvaluationError, match=r"output 'labels' \(labels\) must hold integers"):
        _apply(BATCHED, {**_batched_outputs(), "labels": np.full((2, 3), 0.5)})


def test_an_index_past_the_last_axis() -> None:
    outputs = {"detections": np.zeros((4, 6), np.float32)}
    with pytest.raises(
        EvaluationError, match=r"scores takes index 6 of the last axis of output 'detections', whose shape is \[4, 6\]"
    ):
        _apply({**FLAT}, outputs)


def test_a_batch_index_outside_the_batch() -> None:
    rows = np.zeros((3, 7), np.float32)
    rows[:, 3:5] = 5.0
    rows[:, 0] = [0, 1, 2]
    with pytest.raises(EvaluationError, match=r"holds image 2; the batch has 2 images \(0 to 1\)"):
        _apply(FLAT, {"detections": rows})


def test_nan_scores_name_the_example() -> None:
    outputs = _batched_outputs()
    outputs["scores"][1, 2] = np.nan
    with pytest.raises(EvaluationError, match="example 11 has a NaN or infinite score or box coordinate"):
        _apply(BATCHED, outputs)
    outputs["num_detections"] = np.array([1, 2])  # the NaN is padding: not read
    assert len(_apply(BATCHED, outputs)[1]["scores"]) == 2


def test_a_run_reports_a_missing_output_as_the_model_error(tmp_path) -> None:
    data, _, _ = scene_data(tmp_path, 0)
    model = batched_detector(tmp_path / "det.onnx")
    result = evaluate(run_config(tmp_path, model, data, {**BATCHED, "labels": "classes"}))
    m = result.models["detector"]
    assert m.status == "failed"
    assert "no such output; it gives: boxes, scores, labels, num_detections" in m.error


@pytest.mark.parametrize(
    ("post", "needle"),
    [
        ({**FLAT, "batch_index": None}, "layout 'flat' needs batch_index"),
        ({**BATCHED, "batch_index": "b"}, "batch_index applies to layout 'flat'"),
        ({**BATCHED, "box_format": "yxyx"}, "box_format"),
        ({**BATCHED, "max_detections": 0}, "max_detections"),
        ({**BATCHED, "scores": {"output": "scores", "column": 1}}, "scores.column: unknown key; valid: index, output"),
        ({**BATCHED, "scores": 3}, 'scores: expected an output name or {"output": name, "index": ...}, got 3'),
    ],
)
def test_config_mistakes_are_config_errors_with_their_path(tmp_path, post: dict, needle: str) -> None:
    config = run_config(tmp_path, tmp_path / "det.onnx", tmp_path / "scene.jsonl", post)
    batched_detector(tmp_path / "det.onnx")
    write_jsonl(tmp_path / "scene.jsonl", [{"dets": [GARBAGE], "count": 1, "objects": {"boxes": [], "labels": []}}])
    with pytest.raises(ConfigError) as info:
        load_run_config(config)
    assert needle in str(info.value) and "post_process_data_config" in str(info.value)


def test_a_one_class_detector_without_labels_gets_the_offset_as_its_label() -> None:
    outputs = _batched_outputs()
    post = {k: v for k, v in BATCHED.items() if k != "labels"}
    predictions = _apply({**post, "label_offset": 7, "box_format": "xywh"}, outputs)
    for i, n in enumerate(outputs["num_detections"]):
        assert predictions[i]["labels"].tolist() == [7] * n
        given = outputs["boxes"][i, :n].astype(np.float64)
        assert np.array_equal(predictions[i]["boxes"][:, :2], given[:, :2])
        assert np.array_equal(predictions[i]["boxes"][:, 2:], given[:, :2] + given[:, 2:])
