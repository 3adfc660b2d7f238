"""Random detection scenes for the conformance tests, and runners for the reference libraries on them.

Scenes are built to hit the rules where implementations differ: boxes on an integer grid (so IoUs tie
exactly and duplicates exist), scores rounded to one decimal (ties in score), crowd regions, objects of
every COCO area range, images with nothing, ground truth only or predictions only, and a label that only
ever appears in predictions.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from tests.helpers import write_jsonl

Scene = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def random_scene(
    seed: int,
    n_images: int = 30,
    n_labels: int = 4,
    max_gt: int = 6,
    extra_dets: int = 6,
    crowd_rate: float = 0.15,
    score_decimals: int = 1,
) -> Scene:
    """``(predictions, references)`` as torchmetrics-style dicts with ``xyxy`` float64 boxes."""
    rng = np.random.default_rng(seed)
    preds, refs = [], []
    for _ in range(n_images):
        kind = rng.random()
        scale = float(rng.choice([1.0, 3.0, 7.0]))  # small, medium and large objects
        n_gt = 0 if kind < 0.1 else int(rng.integers(1, max_gt + 1))
        xy = rng.integers(0, 30, (n_gt, 2)).astype(np.float64)
        wh = rng.integers(1, 16, (n_gt, 2)).astype(np.float64)
        g_boxes = np.concatenate([xy, xy + wh], axis=1) * scale
        g_labels = rng.integers(0, n_labels, n_gt)
        crowd = (rng.random(n_gt) < crowd_rate).astype(np.int64)
        area = np.where(rng.random(n_gt) < 0.3, rng.uniform(1, 120, n_gt) * scale**2, 0.0)
        d_boxes, d_labels = [], []
        if kind >= 0.2:  # images 0.1..0.2 have ground truth but no predictions
            for k in range(n_gt):
                for _ in range(int(rng.integers(0, 4))):
                    jitter = rng.integers(-2, 3, 4) * (rng.random() < 0.7)
                    d_boxes.append(g_boxes[k] + jitter * scale)
                    same = rng.random() < 0.85
                    d_labels.append(g_labels[k] if same else rng.integers(0, n_labels + 1))
            for _ in range(int(rng.integers(0, extra_dets + 1))):
                p = rng.integers(0, 30, 2).astype(np.float64)
                d_boxes.append(np.concatenate([p, p + rng.integers(1, 16, 2)]) * scale)
                d_labels.append(rng.integers(0, n_labels + 1))  # label n_labels: predictions only
        n_dt = len(d_boxes)
        d_boxes_arr = np.array(d_boxes, np.float64).reshape(-1, 4)
        d_boxes_arr[:, 2:] = np.maximum(d_boxes_arr[:, 2:], d_boxes_arr[:, :2])  # keep x2 >= x1 after jitter
        scores = np.round(rng.random(n_dt), score_decimals)
        preds.append({"boxes": d_boxes_arr, "scores": scores, "labels": np.array(d_labels, np.int64)})
        refs.append({"boxes": g_boxes, "labels": g_labels, "iscrowd": crowd, "area": area})
    return preds, refs


def to_xywh(boxes: np.ndarray) -> np.ndarray:
    out = np.array(boxes, np.float64).reshape(-1, 4).copy()
    out[:, 2:] = out[:, 2:] - out[:, :2]
    return out


def scene_to_coco(preds: list[dict], refs: list[dict], box_format: str = "xyxy") -> tuple[dict, list[dict]]:
    """The scene as a COCO ground-truth dataset and results list, built as torchmetrics builds them."""
    labels = sorted({int(v) for r in refs for v in r["labels"]} | {int(v) for p in preds for v in p["labels"]})
    images, anns, dets = [], [], []
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        images.append({"id": i, "height": 1000, "width": 1000})
        g = to_xywh(r["boxes"]) if box_format == "xyxy" else np.asarray(r["boxes"], np.float64).reshape(-1, 4)
        for k in range(len(g)):
            area = float(r.get("area", np.zeros(len(g)))[k])
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i,
                    "category_id": int(r["labels"][k]),
                    "bbox": g[k].tolist(),
                    "area": area if area > 0 else float(g[k, 2] * g[k, 3]),
                    "iscrowd": int(r.get("iscrowd", np.zeros(len(g)))[k]),
                }
            )
        d = to_xywh(p["boxes"]) if box_format == "xyxy" else np.asarray(p["boxes"], np.float64).reshape(-1, 4)
        for k in range(len(d)):
            dets.append(
                {
                    "image_id": i,
                    "category_id": int(p["labels"][k]),
                    "bbox": d[k].tolist(),
                    "score": float(p["scores"][k]),
                }
            )
    gt = {"images": images, "annotations": anns, "categories": [{"id": c, "name": str(c)} for c in labels]}
    return gt, dets


def run_pycocotools(
    gt: dict,
    dets: list[dict],
    iou_type: str = "bbox",
    max_dets: list[int] | None = None,
    iou_thresholds: list[float] | None = None,
    cat_ids: list[int] | None = None,
) -> COCOeval:
    """``COCOeval`` after ``evaluate`` + ``accumulate`` (+ ``summarize`` when ``maxDets`` has 3 entries)."""
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        if dets:
            coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
        else:  # loadRes cannot take an empty list
            coco_dt = COCO()
            coco_dt.dataset = {"images": list(gt["images"]), "categories": list(gt["categories"]), "annotations": []}
            coco_dt.createIndex()
        ev = COCOeval(coco_gt, coco_dt, iou_type)
        if max_dets is not None:
            ev.params.maxDets = list(max_dets)
        if iou_thresholds is not None:
            ev.params.iouThrs = np.array(iou_thresholds, np.float64)
        if cat_ids is not None:
            ev.params.catIds = list(cat_ids)
        ev.evaluate()
        ev.accumulate()
        if len(ev.params.maxDets) == 3:
            ev.summarize()
    return ev


def random_mask_scene(seed: int, n_images: int = 12, n_labels: int = 3) -> tuple[list[dict], list[dict]]:
    """Per-image dicts with dense ``uint8`` masks ``[N, H, W]`` (image sizes vary), plus crowd flags."""
    rng = np.random.default_rng(seed)
    preds, refs = [], []
    for _ in range(n_images):
        h, w = int(rng.integers(20, 70)), int(rng.integers(20, 70))
        n_gt = int(rng.integers(0, 5))
        g_masks = np.zeros((n_gt, h, w), np.uint8)
        for k in range(n_gt):
            y, x = rng.integers(0, h - 4), rng.integers(0, w - 4)
            g_masks[k, y : y + rng.integers(2, h), x : x + rng.integers(2, w)] = 1
            g_masks[k] &= (rng.random((h, w)) > 0.1).astype(np.uint8)
        g_labels = rng.integers(0, n_labels, n_gt)
        d_masks, d_labels = [], []
        for k in range(n_gt):
            for _ in range(int(rng.integers(0, 3))):
                shifted = np.roll(g_masks[k], (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
                d_masks.append(shifted)
                d_labels.append(g_labels[k] if rng.random() < 0.85 else rng.integers(0, n_labels + 1))
        for _ in range(int(rng.integers(0, 3))):
            m = np.zeros((h, w), np.uint8)
            y, x = rng.integers(0, h - 2), rng.integers(0, w - 2)
            m[y : y + rng.integers(1, h), x : x + rng.integers(1, w)] = 1
            d_masks.append(m)
            d_labels.append(rng.integers(0, n_labels + 1))
        preds.append(
            {
                "masks": np.array(d_masks, np.uint8).reshape(-1, h, w),
                "scores": np.round(rng.random(len(d_masks)), 1),
                "labels": np.array(d_labels, np.int64),
            }
        )
        refs.append({"masks": g_masks, "labels": g_labels, "iscrowd": (rng.random(n_gt) < 0.2).astype(np.int64)})
    return preds, refs


def encode(mask: np.ndarray) -> dict:
    """pycocotools' compressed RLE of a dense mask, with ``counts`` as a JSON string."""
    rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {"size": [int(v) for v in rle["size"]], "counts": rle["counts"].decode("ascii")}


def uncompressed(mask: np.ndarray) -> dict:
    """COCO's uncompressed RLE (``counts`` a list), by a plain run-length loop over column-major pixels."""
    flat = np.asarray(mask).ravel(order="F").tolist()
    counts, current, run = [], 0, 0
    for v in flat:
        if v != current:
            counts.append(run)
            current, run = v, 0
        run += 1
    counts.append(run)
    return {"size": list(mask.shape), "counts": counts}


def mask_scene_to_coco(preds: list[dict], refs: list[dict]) -> tuple[dict, list[dict]]:
    labels = sorted({int(v) for r in refs for v in r["labels"]} | {int(v) for p in preds for v in p["labels"]})
    images, anns, dets = [], [], []
    for i, (p, r) in enumerate(zip(preds, refs, strict=True)):
        h, w = r["masks"].shape[1:] if len(r["masks"]) else p["masks"].shape[1:]
        images.append({"id": i, "height": int(h), "width": int(w)})
        for k in range(len(r["masks"])):
            rle = encode(r["masks"][k])
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i,
                    "category_id": int(r["labels"][k]),
                    "segmentation": rle,
                    "area": float(mask_utils.area(mask_utils.encode(np.asfortranarray(r["masks"][k])))),
                    "iscrowd": int(r["iscrowd"][k]),
                }
            )
        for k in range(len(p["masks"])):
            dets.append(
                {
                    "image_id": i,
                    "category_id": int(p["labels"][k]),
                    "segmentation": encode(p["masks"][k]),
                    "score": float(p["scores"][k]),
                }
            )
    gt = {"images": images, "annotations": anns, "categories": [{"id": c, "name": str(c)} for c in labels]}
    return gt, dets


# A run of PythonModels replaying fixed detections, scored over a JSON lines data config.
REPLAY_MODEL = textwrap.dedent(
    """
    import json

    class Replay:
        def __init__(self, path):
            self.rows = json.load(open(path))

        def __call__(self, batch):
            return [self.rows[i] for i in batch["image"]]

    def load(model_path):
        return Replay(model_path)
    """
)


def replay_run_config(
    tmp_path: Path, preds: dict[str, list], refs: list, sub_types: list[dict], batch_size: int = 4
) -> dict:
    """A run replaying fixed detections: the first model of ``preds`` is the baseline."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "model.py").write_text(REPLAY_MODEL)
    models = []
    for name, scene in preds.items():
        (tmp_path / f"{name}.json").write_text(
            json.dumps([{k: np.asarray(v).tolist() for k, v in p.items()} for p in scene])
        )
        models.append(
            {
                "type": "PythonModel",
                "name": name,
                "user_script": str(tmp_path / "model.py"),
                "model_loader": "load",
                "model_path": str(tmp_path / f"{name}.json"),
            }
        )
    rows = [{"image": i, "objects": {k: np.asarray(v).tolist() for k, v in r.items()}} for i, r in enumerate(refs)]
    write_jsonl(tmp_path / "d.jsonl", rows)
    return {
        "input_model": models[0],
        "candidates": models[1:],
        "data_configs": [
            {
                "name": "d",
                "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "d.jsonl")},
                "pre_process_data_config": {"input_cols": ["image"], "label_col": "objects"},
                "dataloader_config": {"batch_size": batch_size},
            }
        ],
        "metrics": [{"name": "det", "type": "accuracy", "data_config": "d", "sub_types": sub_types}],
        "output_dir": str(tmp_path / "out"),
    }
