"""COCO bbox evaluation: olive-eval's numpy kernel against pycocotools and faster-coco-eval, in one run.

The set is synthetic and seeded, at COCO scale by default: 5,000 images, about 36,000 ground-truth
boxes (Poisson 7.2 per image, 1 % crowd, areas from the 'area' field, all three size ranges), 100
detections per image (jittered copies of the ground truth, 15 % with a wrong label, and background
boxes), 80 categories with a long-tailed frequency.

What is timed, for each library, is ``evaluate()`` + ``accumulate()`` of ``COCOeval(iouType="bbox")``
with the default parameters, printing silenced; for olive-eval it is ``evaluate_coco`` (matching,
accumulation and the summary) on the flat arrays. Building the inputs is excluded from all three and
timed apart: ``COCO()`` + ``createIndex`` + ``loadRes`` for the references, ``from_coco`` (JSON dicts to
flat arrays) for olive-eval. Each timing is the median of ``--repeat`` runs (pycocotools runs once by
default: it takes about a minute at full size).

The precision ``[T, R, K, A, M]`` and recall ``[T, K, A, M]`` arrays of olive-eval and faster-coco-eval
are compared with pycocotools' (largest absolute difference, and whether they are identical).

``--compute-metric``: the user's path instead. The same set as torchmetrics-style per-image dicts (numpy
arrays, ``xywh``), ``compute_metric("map", predictions, references, box_format="xywh")`` timed whole (the
per-image input path, matching, accumulation) against faster-coco-eval's ``evaluate`` + ``accumulate`` +
``summarize`` on its built ``COCO`` and ``loadRes`` objects (and, for information, with those built too);
median of ``--repeat`` interleaved runs, wall time (and, apart, CPU seconds, which a loaded machine moves
less); the mAP must equal pycocotools' ``summarize`` of faster-coco-eval's precision array to 1e-15 (the
sub-type averages per resampling list, so its last bit can differ).

``--numpy``: without the optional C extensions (what an install without a compiler runs).

Run: ``python bench/bench_coco.py`` (about 2 minutes on 2 cores), ``--images 1000`` or ``--quick`` to
shrink it.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from olive_eval.metrics.detection.coco import evaluate_coco
from olive_eval.metrics.detection.inputs import from_coco

WIDTH, HEIGHT = 640, 480


def synthetic_coco(
    n_images: int = 5000,
    seed: int = 0,
    n_categories: int = 80,
    gt_per_image: float = 7.2,
    dets_per_image: int = 100,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A COCO ground-truth dataset and a results list (see the module docstring)."""
    rng = np.random.default_rng(seed)
    cat_ids = np.sort(rng.choice(np.arange(1, 91), n_categories, replace=False))  # sparse ids, as in COCO
    freq = 1.0 / np.arange(1, n_categories + 1) ** 0.9
    freq /= freq.sum()
    images, anns, dets = [], [], []
    for i in range(n_images):
        image_id = int(i * 7 + 3)
        images.append({"id": image_id, "width": WIDTH, "height": HEIGHT})
        n_gt = int(rng.poisson(gt_per_image))
        cats = rng.choice(cat_ids, n_gt, p=freq)
        side = np.exp(rng.normal(3.9, 0.9, n_gt)).clip(4, 400)
        aspect = np.exp(rng.normal(0, 0.5, n_gt))
        w, h = (side * aspect).clip(2, WIDTH - 1), (side / aspect).clip(2, HEIGHT - 1)
        x, y = rng.random(n_gt) * (WIDTH - w), rng.random(n_gt) * (HEIGHT - h)
        crowd = rng.random(n_gt) < 0.01
        area = w * h * rng.uniform(0.5, 1.0, n_gt)  # a mask's area is below its box's
        for k in range(n_gt):
            box = [float(x[k]), float(y[k]), float(w[k]), float(h[k])]
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": int(cats[k]),
                    "bbox": box,
                    "area": float(area[k]),
                    "iscrowd": int(crowd[k]),
                }
            )
        # jittered copies of the ground truth (a few per object), scored by how good they are
        copies = rng.poisson(4, n_gt)
        src = np.repeat(np.arange(n_gt), copies)
        jit = rng.normal(0, 0.12, (len(src), 4))
        boxes = np.stack(
            [
                x[src] + jit[:, 0] * w[src],
                y[src] + jit[:, 1] * h[src],
                w[src] * np.exp(jit[:, 2]),
                h[src] * np.exp(jit[:, 3]),
            ],
            axis=1,
        )
        labels = np.where(rng.random(len(src)) < 0.85, cats[src], rng.choice(cat_ids, len(src), p=freq))
        scores = np.clip(1 - np.abs(jit).mean(axis=1) * 3 + rng.normal(0, 0.15, len(src)), 0.001, 1.0)
        # background boxes fill the image up to dets_per_image, half of them of a category in the image
        n_bg = max(dets_per_image - len(src), 0)
        s, a = np.exp(rng.normal(3.6, 1.0, n_bg)).clip(4, 400), np.exp(rng.normal(0, 0.5, n_bg))
        bw, bh = np.minimum(s * a, WIDTH - 1), np.minimum(s / a, HEIGHT - 1)
        bg = np.stack([rng.random(n_bg) * (WIDTH - bw), rng.random(n_bg) * (HEIGHT - bh), bw, bh], axis=1)
        present = cats if n_gt else cat_ids
        bg_labels = np.where(rng.random(n_bg) < 0.5, rng.choice(present, n_bg), rng.choice(cat_ids, n_bg, p=freq))
        boxes = np.concatenate([boxes, bg])
        labels = np.concatenate([labels, bg_labels])
        scores = np.concatenate([scores, rng.random(n_bg) * 0.5])
        top = np.argsort(-scores, kind="stable")[:dets_per_image]  # a detector keeps its best 100
        for j in top:
            dets.append(
                {
                    "image_id": image_id,
                    "category_id": int(labels[j]),
                    "bbox": [float(v) for v in boxes[j]],
                    "score": float(scores[j]),
                }
            )
    categories = [{"id": int(c), "name": f"c{c}"} for c in cat_ids]
    return {"images": images, "annotations": anns, "categories": categories}, dets


def timed(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of ``repeat`` calls, and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def quiet(func: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return func()

    return run


def per_image(gt: dict[str, Any], dets: list[dict[str, Any]]) -> tuple[list[dict], list[dict]]:
    """The set as torchmetrics-style dicts of numpy arrays, one per image in image order, boxes ``xywh``."""
    at = {image["id"]: k for k, image in enumerate(gt["images"])}
    refs: list[dict[str, list]] = [{"boxes": [], "labels": [], "iscrowd": [], "area": []} for _ in at]
    preds: list[dict[str, list]] = [{"boxes": [], "scores": [], "labels": []} for _ in at]
    for a in gt["annotations"]:
        r = refs[at[a["image_id"]]]
        r["boxes"].append(a["bbox"]), r["labels"].append(a["category_id"])
        r["iscrowd"].append(a["iscrowd"]), r["area"].append(a["area"])
    for d in dets:
        p = preds[at[d["image_id"]]]
        p["boxes"].append(d["bbox"]), p["scores"].append(d["score"]), p["labels"].append(d["category_id"])

    def arrays(item: dict[str, list]) -> dict[str, np.ndarray]:
        out = {k: np.asarray(v, np.int64 if k in ("labels", "iscrowd") else np.float64) for k, v in item.items()}
        out["boxes"] = out["boxes"].reshape(-1, 4)
        return out

    return [arrays(p) for p in preds], [arrays(r) for r in refs]


def compute_metric_row(gt: dict[str, Any], dets: list[dict[str, Any]], repeat: int) -> None:
    from faster_coco_eval import COCO as FasterCOCO
    from faster_coco_eval import COCOeval_faster

    from olive_eval import compute_metric

    preds, refs = per_image(gt, dets)
    ours_t, fast_t, fast_built_t, values = [], [], [], {}
    ours_cpu, fast_cpu = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        values["ours"] = float(compute_metric("map", preds, refs, box_format="xywh"))
        ours_t.append(time.perf_counter() - start)
        ours_cpu.append(time.process_time() - cpu)
        with contextlib.redirect_stdout(io.StringIO()):
            start = time.perf_counter()
            coco_gt = FasterCOCO(copy.deepcopy(gt))
            ev = COCOeval_faster(coco_gt, coco_gt.loadRes(copy.deepcopy(dets)), "bbox")
            built, cpu = time.perf_counter(), time.process_time()
            ev.evaluate(), ev.accumulate(), ev.summarize()
            done = time.perf_counter()
            fast_cpu.append(time.process_time() - cpu)
        fast_t.append(done - built)
        fast_built_t.append(done - start)
        precision = ev.eval["precision"][:, :, :, 0, -1]  # area "all", the last maxDets: pycocotools' summarize
        values["faster-coco-eval"] = float(np.mean(precision[precision > -1]))
        values["stats[0]"] = float(ev.stats[0])
    ours, fast, fast_built = (statistics.median(t) for t in (ours_t, fast_t, fast_built_t))
    print(f"compute_metric('map') {ours:8.3f} s, faster-coco-eval evaluate+accumulate+summarize {fast:8.3f} s")
    print(f"ratio compute_metric / faster-coco-eval = {ours / fast:.4f}  (target <= 0.05; median of {repeat})")
    print(f"ratio compute_metric / faster-coco-eval with COCO()+loadRes = {ours / fast_built:.4f}")
    ours_c, fast_c = statistics.median(ours_cpu), statistics.median(fast_cpu)
    print(
        f"CPU seconds (all threads): compute_metric {ours_c:.3f}, faster-coco-eval {fast_c:.3f}: {ours_c / fast_c:.4f}"
    )
    diff = abs(values["ours"] - values["faster-coco-eval"])
    print(
        f"map {values['ours']!r} vs pycocotools' mean of faster-coco-eval's precision {values['faster-coco-eval']!r}: "
        f"|diff| {diff:.1e} (faster-coco-eval's own stats[0] {values['stats[0]']!r})"
    )
    if diff > 1e-15:  # the sub-type's mean runs per resampling list (accumulation.py): the last bit may differ
        raise SystemExit("VALUES DIFFER from faster-coco-eval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=5000, help="number of images (default 5000)")
    parser.add_argument("--quick", action="store_true", help="1000 images")
    parser.add_argument("--repeat", type=int, default=3, help="runs of olive-eval and faster-coco-eval (median)")
    parser.add_argument("--repeat-pycocotools", type=int, default=1, help="runs of pycocotools (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compute-metric", action="store_true", help="compute_metric on per-image dicts")
    parser.add_argument("--numpy", action="store_true", help="without the C extensions: the numpy forms")
    args = parser.parse_args()
    n_images = 1000 if args.quick else args.images

    start = time.perf_counter()
    gt, dets = synthetic_coco(n_images, seed=args.seed)
    n_cat = len(gt["categories"])
    print(
        f"synthetic set: {n_images:,} images, {len(gt['annotations']):,} ground-truth boxes, "
        f"{len(dets):,} detections, {n_cat} categories (seed {args.seed}, built in {time.perf_counter() - start:.1f} s)"
    )

    if args.numpy:
        from olive_eval.metrics.detection import native

        native.coco_match_extension = None
        native.coco_accumulate_extension = None
    if args.compute_metric:
        compute_metric_row(gt, dets, args.repeat)
        return

    from faster_coco_eval import COCO as FasterCOCO
    from faster_coco_eval import COCOeval_faster
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    def pycoco_inputs() -> COCOeval:
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        return COCOeval(coco_gt, coco_gt.loadRes(copy.deepcopy(dets)), "bbox")

    def faster_inputs() -> COCOeval_faster:
        coco_gt = FasterCOCO(copy.deepcopy(gt))
        return COCOeval_faster(coco_gt, coco_gt.loadRes(copy.deepcopy(dets)), "bbox")

    def run_eval(make: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
        build, evaluated = [], []
        ev = None
        for _ in range(repeat):
            t_build, ev = timed(quiet(make), 1)
            t_eval, _ = timed(quiet(lambda ev=ev: (ev.evaluate(), ev.accumulate())), 1)
            build.append(t_build)
            evaluated.append(t_eval)
        return statistics.median(build), statistics.median(evaluated), ev

    t_ref_in, t_ref, ref = run_eval(pycoco_inputs, args.repeat_pycocotools)
    print(f"pycocotools      evaluate+accumulate {t_ref:8.3f} s   (COCO+loadRes {t_ref_in:.2f} s, not timed)")
    t_fast_in, t_fast, fast = run_eval(faster_inputs, args.repeat)
    print(f"faster-coco-eval evaluate+accumulate {t_fast:8.3f} s   (COCO+loadRes {t_fast_in:.2f} s, not timed)")
    t_ours_in, data = timed(lambda: from_coco(gt, dets), 1)
    t_ours, ours = timed(lambda: evaluate_coco(data), args.repeat)
    print(f"olive-eval       evaluate_coco       {t_ours:8.3f} s   (from_coco {t_ours_in:.2f} s, not timed)")

    p_ref, r_ref = ref.eval["precision"], ref.eval["recall"]
    for name, p, r in (
        ("olive-eval", ours.precision, ours.recall),
        ("faster-coco-eval", fast.eval["precision"], fast.eval["recall"]),
    ):
        same = p.shape == p_ref.shape and np.array_equal(p, p_ref) and np.array_equal(r, r_ref)
        diff = max(float(np.abs(p - p_ref).max()), float(np.abs(r - r_ref).max())) if p.shape == p_ref.shape else np.inf
        print(f"{name:<17} vs pycocotools: max |diff| {diff:.3g} over precision and recall, identical: {same}")
    print(f"map {ours.summary['map']:.6f}  map_50 {ours.summary['map_50']:.6f}  mar_100 {ours.summary['mar_100']:.6f}")

    print(f"ratio olive-eval / pycocotools      = {t_ours / t_ref:.4f}  (target <= 0.1)")
    print(f"ratio olive-eval / faster-coco-eval = {t_ours / t_fast:.4f}")
    print(f"ratio faster-coco-eval / pycocotools = {t_fast / t_ref:.4f}")
    incl = (t_ours + t_ours_in) / (t_ref + t_ref_in)
    print(f"ratio with input building on both sides (from_coco vs COCO+loadRes) = {incl:.4f}")


if __name__ == "__main__":
    main()
