"""The detection example: its generator, its detector and configs/detection.json, on a small set, with
every mAP checked against pycocotools on the same detections."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from olive_eval import evaluate
from tests.metrics.detection.scenes import run_pycocotools, scene_to_coco

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "detection"


def _detector():
    spec = importlib.util.spec_from_file_location("detection_example_detector", EXAMPLE / "detector.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_components_match_a_flood_fill() -> None:
    components = _detector().components
    rng = np.random.default_rng(0)
    mask = rng.random((40, 50)) < 0.45
    labels = components(mask)
    assert ((labels > 0) == mask).all()
    # every 4-neighbour pair of foreground pixels shares a label, and each label is one connected piece
    assert (labels[1:][mask[1:] & mask[:-1]] == labels[:-1][mask[1:] & mask[:-1]]).all()
    assert (labels[:, 1:][mask[:, 1:] & mask[:, :-1]] == labels[:, :-1][mask[:, 1:] & mask[:, :-1]]).all()
    for value in np.unique(labels[labels > 0])[:20]:
        seen, todo = set(), [tuple(np.argwhere(labels == value)[0])]
        while todo:
            y, x = todo.pop()
            if (y, x) in seen or not (0 <= y < 40 and 0 <= x < 50) or not mask[y, x]:
                continue
            seen.add((y, x))
            todo += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]
        assert len(seen) == int((labels == value).sum())


def test_the_shipped_config_runs_and_matches_pycocotools(tmp_path) -> None:
    data = tmp_path / "shapes.jsonl"
    subprocess.run([sys.executable, str(EXAMPLE / "make_data.py"), "--images", "40", "--out", str(data)], check=True)
    config = json.loads((ROOT / "configs" / "detection.json").read_text())
    config["data_configs"][0]["load_dataset_config"]["data_files"] = str(data)
    for model in (config["input_model"], *config["candidates"]):
        model["user_script"] = str(EXAMPLE / "detector.py")
    config["evaluator"]["metrics"] = config["evaluator"]["metrics"][:2]  # no timing in a test
    config["output_dir"] = str(tmp_path / "out")
    result = evaluate(config)
    detector = _detector()
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    refs = [{k: np.asarray(v, np.float64) for k, v in r["objects"].items()} for r in rows]
    for name, scale in (("shapes_full", 1), ("shapes_downscaled", 2)):
        preds = [detector.detect(np.asarray(r["pixels"], np.uint8), scale=scale) for r in rows]
        preds = [
            {k: np.asarray(v, np.float64).reshape(-1, 4) if k == "boxes" else np.asarray(v) for k, v in p.items()}
            for p in preds
        ]
        ev = run_pycocotools(*scene_to_coco(preds, [{**r, "labels": r["labels"].astype(int)} for r in refs]))
        metrics = result.models[name].metrics
        assert metrics["detection-map"].value == pytest.approx(ev.stats[0], abs=1e-12)
        assert metrics["detection-map_50"].value == pytest.approx(ev.stats[1], abs=1e-12)
        assert metrics["detection-mar_100"].value == pytest.approx(ev.stats[8], abs=1e-12)
    assert result.models["shapes_full"].metrics["detection-map"].value > 0.7
