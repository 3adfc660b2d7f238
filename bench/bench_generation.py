"""Generation latency fidelity (issue 19): what olive-eval reports for a generating model against the same work
timed directly, in one process, on the same prompts.

* e2e    olive-eval's ``e2e_p50`` (one whole generation of the batch) / the median of a direct back-to-back loop
         of the same generation on the same batch (target 0.97-1.03);
* ttft   olive-eval's ``ttft_p50`` / the median first-token time of a direct streamed generation (0.95-1.05).

For an HfModel (``generate()``; a streamer for the first token) and a GenAIModel (onnxruntime-genai's token
loop), on a small random-weight Llama built here (4 layers, hidden size 256) and its fp32 GenAI export. Every
generation decodes exactly ``NEW`` tokens from prompts of ``PROMPT`` tokens, batch of 2. olive-eval's runs and
the direct loops alternate over ``--reps`` repetitions (each side first in turn), so both see the same machine;
the ratio is of the medians over repetitions.

Torch and the GenAI sessions run on one thread (``OMP_NUM_THREADS=1`` unless set; ``intra_op_num_threads: 1`` in
the export's genai_config.json), olive-eval and the direct loops alike: on a small shared machine spinning worker
threads made a tiny model's forward pass 100x slower.

Run: ``python bench/bench_generation.py`` (about two minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # torch's threads spin under a shared machine's load: one thread

from olive_eval import evaluate  # noqa: E402
from tests.runtimes import llm_models  # noqa: E402

PROMPT, NEW, ROWS, RUNS, WARMUP = 32, 32, 2, 15, 3


def build(root: Path) -> dict[str, Path]:
    """The Llama and its GenAI export, whose sessions get one intra-op thread (both sides read the same folder)."""
    hf = llm_models.build_tiny_llama(root / "hf", hidden_size=256, layers=4)
    genai = llm_models.export_genai(hf, root / "genai", "fp32")
    spec = json.loads((genai / "genai_config.json").read_text())
    spec["model"]["decoder"]["session_options"]["intra_op_num_threads"] = 1
    (genai / "genai_config.json").write_text(json.dumps(spec))
    return {"hf": hf, "genai": genai}


def prompts(hf: Path) -> np.ndarray:
    """The prompts olive-eval times: the data's first batch unpadded and repeated to PROMPT tokens."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(hf)
    rows = [tokenizer(t)["input_ids"] for t in llm_models.sentences(ROWS, seed=1)]
    return np.stack([np.resize(np.asarray(r, dtype=np.int64), PROMPT) for r in rows])


def reported(root: Path, models: dict[str, Path]) -> dict[str, dict[str, float]]:
    root.mkdir(parents=True, exist_ok=True)
    timing = {"prompt_tokens": PROMPT, "max_new_tokens": NEW, "warmup_num": WARMUP, "repeat_test_num": RUNS}
    config = {
        "input_model": {"type": "HfModel", "name": "hf", "model_path": str(models["hf"]), "task": "text-generation"},
        "candidates": [{"type": "GenAIModel", "name": "genai", "model_path": str(models["genai"])}],
        "data_configs": [
            llm_models.prompts_data_config(root / "p.jsonl", llm_models.sentences(ROWS, seed=1), batch_size=ROWS)
        ],
        "metrics": [
            {
                "name": "gen",
                "type": "latency",
                "data_config": "gen",
                "sub_types": [
                    {"name": "e2e_p50", "priority": 1, "metric_config": timing},
                    {"name": "ttft_p50", "priority": -1, "metric_config": timing},
                ],
            }
        ],
        "output_dir": str(root / "out"),
    }
    result = evaluate(config, progress=lambda *_: None)
    return {
        name: {sub: result.models[name].metrics[f"gen-{sub}_p50"].value for sub in ("e2e", "ttft")}
        for name in ("hf", "genai")
    }


class _First:
    """A streamer that stamps the first new token (the first ``put`` is the prompt)."""

    def __init__(self, start: float) -> None:
        self.start, self.puts, self.first = start, 0, None

    def put(self, value) -> None:
        self.puts += 1
        if self.puts == 2:
            self.first = time.perf_counter() - self.start

    def end(self) -> None:
        pass


def direct_hf(hf: Path, ids: np.ndarray) -> dict[str, float]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(hf).eval()
    tensors = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.ones_like(torch.from_numpy(ids))}
    kwargs = {"max_new_tokens": NEW, "min_new_tokens": NEW}
    with torch.inference_mode():
        for _ in range(WARMUP):
            model.generate(**tensors, **kwargs)
        e2e = []
        for _ in range(RUNS):
            start = time.perf_counter()
            model.generate(**tensors, **kwargs)
            e2e.append(time.perf_counter() - start)
        ttft = []
        for _ in range(RUNS):
            streamer = _First(time.perf_counter())
            model.generate(**tensors, **kwargs, streamer=streamer)
            ttft.append(streamer.first)
    return {"e2e": 1000 * statistics.median(e2e), "ttft": 1000 * statistics.median(ttft)}


def direct_genai(folder: Path, ids: np.ndarray) -> dict[str, float]:
    import onnxruntime_genai as og

    config = og.Config(str(folder))
    config.clear_providers()
    model = og.Model(config)

    def generate(first: bool) -> float:
        """The whole generation's seconds, or (``first``) the seconds to the first token of a streamed one."""
        start = time.perf_counter()
        params = og.GeneratorParams(model)
        params.set_search_options(batch_size=ROWS, max_length=PROMPT + NEW, min_length=PROMPT + NEW)
        generator = og.Generator(model, params)
        generator.append_tokens(ids.astype(np.int32))
        first_token = None
        while not generator.is_done():
            generator.generate_next_token()
            if first and first_token is None:
                generator.get_next_tokens()
                first_token = time.perf_counter() - start
        return first_token if first else time.perf_counter() - start

    for _ in range(WARMUP):
        generate(False)
    e2e = [generate(False) for _ in range(RUNS)]
    ttft = [generate(True) for _ in range(RUNS)]
    return {"e2e": 1000 * statistics.median(e2e), "ttft": 1000 * statistics.median(ttft)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        models = build(root)
        ids = prompts(models["hf"])
        ours: dict[str, dict[str, list[float]]] = {m: {"e2e": [], "ttft": []} for m in models}
        theirs: dict[str, dict[str, list[float]]] = {m: {"e2e": [], "ttft": []} for m in models}
        for rep in range(args.reps):  # olive-eval first, then the direct loops first: a drift cancels
            for side in (0, 1) if rep % 2 == 0 else (1, 0):
                if side == 0:
                    for name, values in reported(root / f"run{rep}", models).items():
                        for sub, value in values.items():
                            ours[name][sub].append(value)
                    continue
                for name, values in (
                    ("hf", direct_hf(models["hf"], ids)),
                    ("genai", direct_genai(models["genai"], ids)),
                ):
                    for sub, value in values.items():
                        theirs[name][sub].append(value)
    print(f"prompts {ROWS} x {PROMPT} tokens, {NEW} new tokens, {RUNS} runs, {args.reps} repetitions")
    print(f"{'model':8} {'statistic':10} {'olive-eval ms':>14} {'direct ms':>10} {'ratio':>7}  target     per rep")
    for name in models:
        for sub, target in (("e2e", "0.97-1.03"), ("ttft", "0.95-1.05")):
            a, b = statistics.median(ours[name][sub]), statistics.median(theirs[name][sub])
            each = " ".join(f"{x / y:.2f}" for x, y in zip(ours[name][sub], theirs[name][sub], strict=True))
            print(f"{name:8} {sub + '_p50':10} {a:14.3f} {b:10.3f} {a / b:7.3f}  {target}  {each}")


if __name__ == "__main__":
    main()
