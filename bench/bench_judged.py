"""Judged-metric overhead: the ten LLM-guided sub-types over a scripted judge that sleeps a fixed time per call,
against the same judge calls made directly in a loop, same run.

The judge answers every prompt with canned JSON (three items per extraction, one verdict per item, a score of 4)
after ``--sleep-ms`` of sleep, standing in for a model's latency. Timed:

* ours: every sub-type as a prediction pass calls it (``statistics`` over chunks of ``--chunk`` examples, then
  ``reduce``), sharing one fresh judge (no reply cached from an earlier repeat); the prompts the judge received are kept;
* direct: the judge function called on those same prompts, one after the other, in a plain loop.

The ratio ours / direct is what the metrics add over the judge calls themselves (target: at most 1.05). It is
printed for a judge without a timeout (called in the caller's thread) and with one (each call in a worker thread),
and the sum of the sleeps is printed beside. Each figure is the median of ``--repeat`` runs.

Run: ``python bench/bench_judged.py`` (about a minute and a half), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time

from olive_eval.judges import judges_of, register_judge
from olive_eval.metrics import get_metric

METRICS = {
    "answer_correctness": ("prediction", "references"),
    "answer_relevance": ("prediction", "query"),
    "bias": ("prediction",),
    "toxicity": ("prediction",),
    "faithfulness": ("prediction", "contexts"),
    "hallucination": ("prediction", "contexts"),
    "context_precision": ("query", "references", "contexts"),
    "context_recall": ("references", "contexts"),
    "context_relevance": ("query", "contexts"),
    "summary_coherence": ("prediction", "source"),
}
EXTRACT = re.compile(r"You split a text into its (\w+)\.")
COUNT = re.compile(r"exactly (\d+) verdicts")
SLEEP = [0.002]
PROMPTS: list[str] = []


def judge(prompt: str) -> str:
    """Canned JSON after a fixed sleep: a model's latency with none of its variance."""
    time.sleep(SLEEP[0])
    kind = EXTRACT.search(prompt)
    if kind:
        return json.dumps({kind.group(1): ["first item", "second item", "third item"]})
    count = COUNT.search(prompt)
    if count:
        return json.dumps(
            {"verdicts": ["yes", "no", "yes"][: int(count.group(1))] + ["no"] * (int(count.group(1)) - 3)}
        )
    return '{"score": 4}'


@register_judge("bench_judge")
def recorded(prompt: str) -> str:
    PROMPTS.append(prompt)
    return judge(prompt)


def data(n: int) -> dict[str, list]:
    return {
        "prediction": [f"answer {i}: the sky is blue {i} times" for i in range(n)],
        "query": [f"question {i}: why is the sky blue?" for i in range(n)],
        "references": [[f"reference {i} a", f"reference {i} b"] for i in range(n)],
        "contexts": [[f"context {i}.{k}" for k in range(3)] for i in range(n)],
        "source": [f"source text {i}" for i in range(n)],
    }


def ours(columns: dict[str, list], chunk: int, timeout: float | None) -> float:
    PROMPTS.clear()
    spec = {"judge": {"function": "bench_judge", **({"timeout": timeout} if timeout else {})}}
    judges = judges_of(spec["judge"])  # one judge for every sub-type, as a run hands them
    n = len(columns["prediction"])
    start = time.perf_counter()
    for name, reads in METRICS.items():
        metric = get_metric(name, spec)
        metric.bind_judges(judges)
        parts = [metric.statistics(*(columns[r][i : i + chunk] for r in reads)) for i in range(0, n, chunk)]
        score = metric.reduce(metric.concat_statistics(parts))
        assert score.details["scored"] == n, (name, score.details)
    seconds = time.perf_counter() - start
    for built in judges.values():
        built.close()
    return seconds


def direct(prompts: list[str]) -> float:
    start = time.perf_counter()
    for prompt in prompts:
        judge(prompt)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--chunk", type=int, default=32)
    parser.add_argument("--sleep-ms", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.repeat = 40, 1
    SLEEP[0] = args.sleep_ms / 1000
    columns = data(args.examples)
    for label, timeout in (("no timeout", None), ("timeout 30 s", 30.0)):
        ours_s, direct_s = [], []
        for _ in range(args.repeat):
            ours_s.append(ours(columns, args.chunk, timeout))
            prompts = list(PROMPTS)
            direct_s.append(direct(prompts))
        o, d = statistics.median(ours_s), statistics.median(direct_s)
        print(
            f"{label:>12}: {args.examples} examples x {len(METRICS)} sub-types, {len(prompts)} judge calls "
            f"(sleeps alone {len(prompts) * SLEEP[0]:.3f} s): ours {o:.3f} s, the same calls in a loop {d:.3f} s, "
            f"ratio {o / d:.3f}"
        )


if __name__ == "__main__":
    main()
