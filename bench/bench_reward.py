"""``reward`` overhead: a random BERT reward model scored through the metric (the run's judge machinery: the
classifier source on the HfModel runtime, tokenizing each batch of pairs), against the same tokenizer and model
called directly in a loop over the same batches, same run; the values must be equal.

Timed, each over ``--pairs`` random (prompt, response) pairs in batches of ``--batch-size``:

* ours: ``reward``'s ``statistics`` over chunks of ``--chunk`` examples (as a prediction pass calls it), then
  ``reduce``; the judge's cache off, so every round scores every pair;
* direct: ``tokenizer(prompts, responses, truncation=True, max_length=64, padding=True)`` and the model's forward
  under ``torch.inference_mode``, batch by batch.

The model is loaded once for both, outside the timing. Each figure is the median of ``--repeat`` rounds, run
interleaved. Run: ``python bench/bench_reward.py`` (about a minute), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.judges import RunJudges, plan_judge
from olive_eval.judges import judge_key
from olive_eval.metrics import get_metric
from olive_eval.metrics.judged.reward import scoring
from tests.runtimes import hf_models

CPU = RunContext("cpu", (("CPUExecutionProvider", {}),), False, {}, None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.repeat = 64, 1

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        folder = hf_models.build_bert(Path(tmp) / "rm", seed=0, num_labels=1, hidden_size=args.hidden)
        prompts = hf_models.sentences(args.pairs, 1, min_words=4, max_words=20)
        responses = hf_models.sentences(args.pairs, 2, min_words=0, max_words=30)

        spec = {
            "type": "classifier",
            "model": {"type": "HfModel", "model_path": str(folder), "task": "text-classification"},
            "batch_size": args.batch_size,
            "cache": False,
        }
        planned = scoring(spec)
        judges = RunJudges({judge_key(planned): plan_judge(planned, Path.cwd(), False)}, CPU)
        judges[judge_key(planned)]  # load the model outside the timing

        def ours() -> np.ndarray:
            metric = get_metric("reward", {"reward": spec})
            metric.bind_judges(judges)
            parts = [
                metric.statistics(prompts[i : i + args.chunk], responses[i : i + args.chunk])
                for i in range(0, args.pairs, args.chunk)
            ]
            stats = metric.concat_statistics(parts)
            metric.reduce(stats)
            return metric.instance_scores(stats)

        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForSequenceClassification.from_pretrained(folder).eval()

        def direct() -> np.ndarray:
            out = []
            with torch.inference_mode():
                for i in range(0, args.pairs, args.batch_size):
                    enc = tokenizer(
                        prompts[i : i + args.batch_size],
                        responses[i : i + args.batch_size],
                        truncation=True,
                        max_length=64,
                        padding=True,
                        return_tensors="pt",
                    )
                    out.append(model(**enc).logits[:, 0].double().numpy())
            return np.concatenate(out)

        times: dict[str, list[float]] = {"ours": [], "direct": []}
        results = {}
        for _ in range(args.repeat):
            for name, func in (("ours", ours), ("direct", direct)):
                start = time.perf_counter()
                results[name] = func()
                times[name].append(time.perf_counter() - start)
        judges.close()

    np.testing.assert_allclose(results["ours"], results["direct"], rtol=1e-5, atol=1e-5)
    med = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"{args.pairs} pairs, batch {args.batch_size}, BERT hidden {args.hidden}: values equal (max |diff| "
        f"{np.abs(results['ours'] - results['direct']).max():.2e})"
    )
    print(
        f"ours {med['ours']:.3f} s, direct {med['direct']:.3f} s, ratio ours / direct {med['ours'] / med['direct']:.3f}"
    )


if __name__ == "__main__":
    main()
