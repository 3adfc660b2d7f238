"""A generating HfModel's latency times what its accuracy pass runs (issue 19): olive-eval's plain latency ``p50`` of
a tiny GPT-2 decoded by ``decode`` (``max_new_tokens`` 24, a batch of 4 prompts) / the median of a direct
back-to-back ``generate()`` loop on the same batch, in one process.

Before the task's call mode was asked by the timing phase, the timed call was one forward pass: the ratio was
about 0.04. It should be about 1. olive-eval's runs and the direct loops alternate over ``--reps`` repetitions,
so both see the same machine; the ratio printed last is the median over repetitions.

Torch runs on one thread (``OMP_NUM_THREADS=1`` unless set), olive-eval and the direct loop alike: on a small
shared machine its spinning worker threads make a tiny model's calls erratic.

Run: ``python bench/bench_call_mode.py`` (about half a minute).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402
from transformers.utils import logging as transformers_logging  # noqa: E402

from olive_eval import evaluate  # noqa: E402
from olive_eval.runtimes import hf  # noqa: E402
from tests.helpers import write_jsonl  # noqa: E402
from tests.runtimes import hf_models  # noqa: E402

GENERATION = {"max_new_tokens": 24, "do_sample": False}


def config(folder: Path, data: Path, out: Path, runs: int) -> dict[str, Any]:
    pre = {"type": "text_generation_huggingface_pre_process", "input_cols": ["text"]}
    model = {"type": "HfModel", "name": "gpt2", "model_path": str(folder), "task": "text-generation"}
    return {
        "input_model": {**model, "generation_kwargs": GENERATION},
        "data_configs": [
            {
                "name": "prompts",
                "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                "pre_process_data_config": pre,
                "post_process_data_config": {"type": "decode"},
                "dataloader_config": {"batch_size": 4},
            }
        ],
        "metrics": [
            {
                "name": "lat",
                "type": "latency",
                "data_config": "prompts",
                "sub_types": [{"name": "p50", "metric_config": {"warmup_num": 3, "repeat_test_num": runs}}],
            }
        ],
        "output_dir": str(out),
    }


def traced_gpt2(tmp: Path) -> tuple[Path, Path, dict[str, Any], Any]:
    """A tiny GPT-2 and its prompts built under ``tmp``, the model loaded for the direct loop, and a dict that
    receives (under ``"tensors"``) the very tensors olive-eval times, for the direct loop to time too."""
    folder = hf_models.build_gpt2(tmp / "gpt2")
    data = write_jsonl(tmp / "prompts.jsonl", [{"text": t} for t in hf_models.sentences(4, seed=3, max_words=5)])
    timed: dict[str, Any] = {}
    bind = hf.HfRuntime.bind

    def keep_inputs(self: hf.HfRuntime, batch: Any) -> Any:
        call = bind(self, batch)
        timed["tensors"] = call.tensors
        return call

    hf.HfRuntime.bind = keep_inputs  # type: ignore[method-assign]
    return folder, data, timed, AutoModelForCausalLM.from_pretrained(folder).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="timed calls per repetition, each side")
    parser.add_argument("--reps", type=int, default=6)
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    transformers_logging.set_verbosity_error()  # the direct loop's padding-side notice, once per call
    tmp = Path(tempfile.mkdtemp())
    folder, data, timed, lm = traced_gpt2(tmp)
    ratios = []
    for rep in range(args.reps):
        result = evaluate(config(folder, data, tmp / f"out{rep}", args.runs)).models["gpt2"]
        assert result.status == "ok", result.error
        reported = result.metrics["lat-p50"].value
        seconds = []
        with torch.inference_mode():
            for _ in range(3):
                lm.generate(**timed["tensors"], **GENERATION)
            for _ in range(args.runs):
                started = time.perf_counter()
                lm.generate(**timed["tensors"], **GENERATION)
                seconds.append(time.perf_counter() - started)
        direct = float(np.median(seconds)) * 1000
        ratios.append(reported / direct)
        print(f"rep {rep}: olive-eval p50 {reported:.3f} ms, direct generate() {direct:.3f} ms, ratio {ratios[-1]:.3f}")
    print(f"latency p50 / direct generate(): {statistics.median(ratios):.3f} (median of {args.reps}; target ~1)")


if __name__ == "__main__":
    main()
