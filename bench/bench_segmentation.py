"""mIoU over label maps: olive-eval's segmentation kernels against a plain numpy bincount confusion matrix.

Data: ``--images`` 512x512 uint8 maps (default 1000), 21 classes (Pascal VOC's count), blocky references,
predictions right on ~80% of pixels. Two settings, each a ratio ours / plain numpy measured in the
same process (best of ``--repeat`` interleaved runs):

* with ignore: ~5% of reference pixels are 255 (ignored); the reference masks them out per image,
  ``np.bincount(C * ref[valid] + pred[valid], minlength=C*C)``;
* no ignore: the reference is the bare ``np.bincount(C * ref + pred, minlength=C*C)`` per image.

"ours" is ``segmentation.kernels.confusion_matrices`` (one matrix per image, every label validated) summed, then
``segmentation.kernels.mean_iou``; the reference computes IoU from its matrix with the same rule. Matrices must
be identical and mIoU equal to 1e-12, or the script exits with status 1.

Run: ``python bench/bench_segmentation.py`` (about a minute on 2 cores); ``--images 100`` to shrink.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from olive_eval.metrics.segmentation import kernels as S

C, IGNORE, SIDE = 21, 255, 512


def make_maps(n: int, rng: np.random.Generator, ignore: bool) -> tuple[np.ndarray, np.ndarray]:
    refs = np.empty((n, SIDE, SIDE), np.uint8)
    preds = np.empty_like(refs)
    for i in range(n):
        ref = np.repeat(np.repeat(rng.integers(0, C, (SIDE // 32, SIDE // 32), dtype=np.uint8), 32, 0), 32, 1)
        noise = rng.random((SIDE, SIDE))
        preds[i] = np.where(noise < 0.8, ref, rng.integers(0, C, (SIDE, SIDE), dtype=np.uint8))
        if ignore:
            ref[noise > 0.95] = IGNORE
        refs[i] = ref
    return preds, refs


def plain_numpy(preds: np.ndarray, refs: np.ndarray, ignore: bool) -> tuple[np.ndarray, float]:
    matrix = np.zeros(C * C, np.int64)
    for pred, ref in zip(preds, refs, strict=True):
        if ignore:
            valid = ref != IGNORE
            matrix += np.bincount(C * ref[valid].astype(np.intp) + pred[valid], minlength=C * C)
        else:
            matrix += np.bincount(C * ref.astype(np.intp).ravel() + pred.ravel(), minlength=C * C)
    matrix = matrix.reshape(C, C)
    tp = np.diag(matrix).astype(np.float64)
    union = matrix.sum(0) + matrix.sum(1) - tp
    iou = tp[union > 0] / union[union > 0]
    return matrix, float(iou.mean())


def ours(preds: np.ndarray, refs: np.ndarray, ignore: bool) -> tuple[np.ndarray, float]:
    matrix = S.confusion_matrices(preds, refs, C, ignore_index=IGNORE if ignore else None).sum(axis=0)
    return matrix, S.mean_iou(matrix)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=1000, help="number of 512x512 maps (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the best time counts")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    failed = False
    print(f"== mIoU: {args.images} maps of {SIDE}x{SIDE} uint8, {C} classes, best of {args.repeat}")
    print(f"{'setting':<12} {'ours [s]':>9} {'numpy [s]':>10} {'ours/numpy':>10}  {'mIoU':>18}  {'|diff|':>8}")
    for ignore in (True, False):
        preds, refs = make_maps(args.images, np.random.default_rng(args.seed), ignore)
        best = {"ours": float("inf"), "numpy": float("inf")}
        results = {}
        for _ in range(args.repeat):
            for name, func in (("ours", ours), ("numpy", plain_numpy)):
                start = time.perf_counter()
                results[name] = func(preds, refs, ignore)
                best[name] = min(best[name], time.perf_counter() - start)
        same = np.array_equal(results["ours"][0], results["numpy"][0])
        diff = abs(results["ours"][1] - results["numpy"][1])
        failed |= not (same and diff <= 1e-12)
        setting = "with ignore" if ignore else "no ignore"
        ratio = best["ours"] / best["numpy"]
        print(
            f"{setting:<12} {best['ours']:>9.3f} {best['numpy']:>10.3f} {ratio:>10.3f}  "
            f"{results['ours'][1]:>18.15f}  {diff:>8.1e}{'' if same else '  MATRICES DIFFER'}"
        )
        del preds, refs
    if failed:
        print("VALUES DIFFER from the plain numpy reference", file=sys.stderr)
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
