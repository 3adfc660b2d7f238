"""Fidelity benchmarks (issue 31): the kernels against scipy / scikit-learn / torch computing the same per-example
values, and what fidelity adds to a candidate's pass. Every ratio is ours / reference, measured in the same run.

* kernels      1M examples x 10 classes (and 100k x 1000 for the divergences), float32 outputs: each kernel's
               time / its reference's time on the same arrays (median of repeats, the two interleaved);
* pass         a baseline and one candidate ONNX classifier over 20k examples, evaluated with an accuracy metric
               only and with accuracy + fidelity (top1_agreement, kl_divergence) on the same data: the
               candidate's ``pass:<data>`` stage and whole ``seconds`` from results.json, with / without (target
               <= 1.05; the baseline's outputs are read back, not recomputed). Repetitions interleaved, medians;
               three models: a small and a 2M-parameter MLP with 10 classes, and one with 1000 classes.

Run: ``python bench/bench_fidelity.py [--quick] [--part kernels|pass]`` (about 6 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.special import rel_entr, softmax
from sklearn.metrics import mean_squared_error
from sklearn.metrics.pairwise import paired_cosine_distances

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _models import classification_parquet, mlp_onnx

from olive_eval import evaluate
from olive_eval.metrics.fidelity import kernels

Arrays = tuple[np.ndarray, np.ndarray]


# ---------------------------------------------------------------------------------------------- references
def ref_top1(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (c.argmax(axis=-1) == b.argmax(axis=-1)).astype(np.float64)


def ref_topk(c: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    import torch

    top_c = torch.topk(torch.from_numpy(c), k, dim=-1).indices
    top_b = torch.topk(torch.from_numpy(b), k, dim=-1).indices
    return ((top_c[:, :, None] == top_b[:, None, :]).any(dim=-1).sum(dim=-1) / k).numpy()


def ref_kl(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    p, q = softmax(b.astype(np.float64), axis=-1), softmax(c.astype(np.float64), axis=-1)
    return rel_entr(p, q).sum(axis=-1)


def ref_js(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    p, q = softmax(b.astype(np.float64), axis=-1), softmax(c.astype(np.float64), axis=-1)
    return jensenshannon(p, q, axis=-1) ** 2


def ref_cosine(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1.0 - paired_cosine_distances(c.astype(np.float64), b.astype(np.float64))


def ref_mse(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    return mean_squared_error(b.astype(np.float64).T, c.astype(np.float64).T, multioutput="raw_values")


def ref_max_abs(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(c.astype(np.float64) - b).max(axis=-1)


def ref_energies(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    b64 = b.astype(np.float64)
    d = c.astype(np.float64) - b64
    return np.stack([(b64**2).sum(axis=-1), (d**2).sum(axis=-1)], axis=1)


#: kernel name -> (ours, reference, the reference's name, how ours is turned into the reference's values)
KERNELS: list[tuple[str, Callable[[np.ndarray, np.ndarray], Any], Callable[..., np.ndarray], str]] = [
    ("top1_agreement", kernels.top1_agreement, ref_top1, "numpy argmax =="),
    ("topk_agreement k=5", lambda c, b: kernels.topk_agreement(c, b, 5), lambda c, b: ref_topk(c, b, 5), "torch.topk"),
    ("kl_divergence", kernels.kl_divergence, ref_kl, "scipy softmax + rel_entr"),
    ("js_divergence", kernels.js_divergence, ref_js, "scipy jensenshannon**2"),
    ("cosine_similarity", kernels.cosine_similarity, ref_cosine, "sklearn paired_cosine_distances"),
    ("squared_error (mse)", kernels.squared_error, ref_mse, "sklearn mean_squared_error raw_values"),
    ("max_abs_error", kernels.max_abs_error, ref_max_abs, "numpy abs().max()"),
    ("signal_and_noise (snr)", kernels.signal_and_noise, ref_energies, "numpy sums of squares"),
]


def per_example(name: str, ours: np.ndarray) -> np.ndarray:
    """Our kernel's output as the reference's per-example values."""
    if name.startswith("squared_error"):
        return ours[:, 0] / ours[:, 1]
    return ours


def outputs(n: int, classes: int, seed: int = 0) -> Arrays:
    rng = np.random.default_rng(seed)
    baseline = rng.normal(scale=2.0, size=(n, classes)).astype(np.float32)
    return (baseline + rng.normal(scale=0.5, size=(n, classes)).astype(np.float32)), baseline


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def in_chunks(fn: Callable[[np.ndarray, np.ndarray], Any], c: np.ndarray, b: np.ndarray, chunk: int) -> np.ndarray:
    """The function over consecutive chunks of examples, as a pass scores them (bounded memory)."""
    return np.concatenate([np.asarray(fn(c[i : i + chunk], b[i : i + chunk])) for i in range(0, len(c), chunk)])


def bench_kernels(n: int, classes: int, names: set[str] | None, repeats: int, chunk: int) -> None:
    c, b = outputs(n, classes)
    print(f"\nkernels on {n:,} examples x {classes} classes (float32), chunks of {chunk:,}; median of {repeats}")
    print(f"  {'kernel':<24} {'ours s':>8} {'ref s':>8} {'ours/ref':>9}  max |diff|  reference")
    for name, ours, ref, ref_name in KERNELS:
        if names is not None and name.split()[0] not in names:
            continue
        ours_t, ref_t = [], []
        for _ in range(repeats):  # interleaved: drift (other load, frequency) hits both alike
            t, mine = timed(lambda ours=ours: in_chunks(ours, c, b, chunk))
            ours_t.append(t)
            t, theirs = timed(lambda ref=ref: in_chunks(ref, c, b, chunk))
            ref_t.append(t)
        diff = float(np.nanmax(np.abs(per_example(name, mine) - theirs)))
        o, r = statistics.median(ours_t), statistics.median(ref_t)
        print(f"  {name:<24} {o:8.3f} {r:8.3f} {o / r:9.3f}  {diff:.1e}     {ref_name}")


# ---------------------------------------------------------------------------------------------- the pass
def run_config(root: Path, base: Path, cand: Path, data: dict, fidelity: bool) -> dict[str, Any]:
    accuracy = {
        "name": "acc",
        "type": "accuracy",
        "data_config": data["name"],
        "sub_types": [{"name": "accuracy_score", "priority": 1}],
    }
    fid = {
        "name": "fid",
        "type": "fidelity",
        "data_config": data["name"],
        "sub_types": [{"name": "top1_agreement"}, {"name": "kl_divergence"}],
    }
    return {
        "input_model": {"type": "ONNXModel", "name": "base", "model_path": str(base)},
        "candidates": [{"type": "ONNXModel", "name": "cand", "model_path": str(cand)}],
        "data_configs": [data],
        "metrics": [accuracy, fid] if fidelity else [accuracy],
        "output_dir": str(root / ("out-fid" if fidelity else "out-acc")),
    }


def pass_seconds(config: dict[str, Any], data_name: str) -> dict[str, tuple[float, float]]:
    """Per model, from results.json: (the ``pass:<data>`` stage, the model's whole evaluation). The stage holds
    inference and the chunks scored as the pass streams; the last chunk, the reduce and the intervals are scored
    after it, so the model's seconds are the figure that holds all of fidelity's work."""
    evaluate(config)
    models = json.loads((Path(config["output_dir"]) / "results.json").read_text())["models"]
    for name, model in models.items():
        if model["status"] != "ok":
            raise RuntimeError(f"{name}: {model.get('error')}")
    return {name: (model["stage_seconds"][f"pass:{data_name}"], model["seconds"]) for name, model in models.items()}


def bench_pass(root: Path, sizes: list[int], n: int, batch: int, repeats: int) -> None:
    tag = "x".join(map(str, sizes))
    base = mlp_onnx(root / f"base-{tag}.onnx", sizes, seed=0)
    cand = mlp_onnx(root / f"cand-{tag}.onnx", sizes, seed=1)
    parquet = classification_parquet(root / f"data-{tag}.parquet", n, sizes[0], sizes[-1])
    data = {
        "name": "data",
        "load_dataset_config": {"data_name": "parquet", "data_files": str(parquet)},
        "pre_process_data_config": {"input_cols": ["x"], "label_col": "label"},
        "dataloader_config": {"batch_size": batch},
    }
    plain, with_fid = run_config(root, base, cand, data, False), run_config(root, base, cand, data, True)
    pass_seconds(plain, "data")  # warm up: imports, first session
    pass_seconds(with_fid, "data")
    seconds: dict[bool, list[dict[str, tuple[float, float]]]] = {False: [], True: []}
    for rep in range(repeats):
        order = (False, True) if rep % 2 == 0 else (True, False)  # interleaved, alternating which goes first
        for fidelity in order:
            seconds[fidelity].append(pass_seconds(with_fid if fidelity else plain, "data"))
    print(f"\npass: MLP {sizes}, {n:,} examples, batch {batch}; {repeats} interleaved repetitions, medians")
    for model, what in (("cand", "candidate (reads the baseline's outputs)"), ("base", "baseline (writes them)")):
        for i, figure in enumerate(("pass stage", "model seconds")):
            without = [s[model][i] for s in seconds[False]]
            with_ = [s[model][i] for s in seconds[True]]
            ratios = [w / o for w, o in zip(with_, without, strict=True)]
            print(
                f"  {what:<42} {figure:<13} {statistics.median(without):7.3f}s -> {statistics.median(with_):7.3f}s "
                f"with/without = {statistics.median(with_) / statistics.median(without):.3f} "
                f"(per repetition {min(ratios):.3f}..{max(ratios):.3f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions")
    parser.add_argument("--part", choices=["all", "kernels", "pass"], default="all", help="which benchmarks to run")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    repeats = 3 if args.quick else 5
    if args.part in ("all", "kernels"):
        bench_kernels(1_000_000 // scale, 10, None, repeats, chunk=100_000)
        bench_kernels(100_000 // scale, 1000, {"kl_divergence", "js_divergence"}, repeats, chunk=10_000)
    if args.part == "kernels":
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sizes in ([64, 256, 10], [256, 1024, 1024, 10], [256, 1024, 1000]):
            bench_pass(root, sizes, 20_000 // scale, 64, 5 if args.quick else 9)


if __name__ == "__main__":
    main()
