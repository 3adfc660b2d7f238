"""Answer-matching kernels against straightforward per-sample Python loops, on generated QA pairs.

Every figure is a ratio ours / loop measured in the same process (CPU time of this process, best of a few
repeats: the machine is shared, and CPU time is what the two sides consume), and every kernel's scores must be
identical to the loop's, float for float:

* exact_match, relaxed_accuracy (rule "olive"), word_sort_ratio (method "olive") against a per-sample loop with
  Olive's semantics written here (target ours/loop <= 0.2);
* anls against a per-sample loop of the DocVQA scorer's steps with ``rapidfuzz.distance.Levenshtein.distance``
  (target <= 1.0).

exact_match runs its C extension where it is built (the usual install); the row ``exact_match (numpy)`` is the
kernel an install without a C compiler runs, for information.

Two forms of the references, each scored by a loop written for it:

* ``olive``: one string per example with the alternatives joined by ``|``, the form Olive's
  ``vision_vqa_pre_process`` writes and Olive's metrics split (``ref.split("|")``). The targets are judged here.
* ``lists``: a list of alternatives per example (olive-eval also takes this form; Olive does not).

The data (seeded): document/chart QA answers, 40 % numbers in various formats and 60 % one to five words; a
quarter of the examples have two or three alternatives; predictions are right (half of them with another case,
spacing or a trailing newline), near (a word changed, or a number off by 2-8 %) or wrong. Every string is built
separately, as a dataset loader or a model's decoder would produce it.

Run: ``python bench/bench_answers.py`` (1,000,000 pairs, a few minutes on 2 cores); ``--n 100000`` for a
quick run.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any
from unittest.mock import patch

import numpy as np
from rapidfuzz.distance import Levenshtein

from olive_eval.metrics.answers import kernels
from olive_eval.metrics.answers.kernels import (
    anls_scores,
    exact_match_scores,
    relaxed_accuracy_scores,
    word_sort_ratio_scores,
)

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sta", "ver", "ion", "a", "e", "tor", "quen", "bri", "dge", "ham"]


# ------------------------------------------------------------------------------------------------------ data
def make_words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choices(SYLLABLES, k=rng.randint(1, 5))) for _ in range(n)]


def number_text(rng: random.Random, value: float) -> str:
    style = rng.random()
    if style < 0.4:
        return str(round(value))
    if style < 0.6:
        return f"{value:.1f}"
    if style < 0.75:
        return f"{round(value):,}"
    if style < 0.9:
        return f"{value:.1f}%"
    return f"${value:.2f}"


def make_answer(rng: random.Random, words: list[str]) -> tuple[str, float | None]:
    if rng.random() < 0.4:
        value = rng.choice([rng.uniform(0, 100), rng.uniform(100, 20000), float(rng.randint(0, 12))])
        return number_text(rng, value), value
    text = " ".join(rng.choices(words, k=rng.randint(1, 5)))
    return (text.capitalize() if rng.random() < 0.3 else text), None


def surface(rng: random.Random, text: str) -> str:
    roll = rng.random()
    if roll < 0.5:
        return "".join([text])  # a separate string object with the same text
    if roll < 0.7:
        return text.upper()
    if roll < 0.8:
        return text.lower()
    if roll < 0.9:
        return text + rng.choice(["\n", " ", ".\n"])
    return "  ".join(text.split(" "))


def make_pairs(n: int, seed: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    words = make_words(rng, 3000)
    preds, refs = [], []
    for _ in range(n):
        answer, value = make_answer(rng, words)
        alts = [answer]
        if rng.random() < 0.25:
            alts += [
                surface(rng, answer) if value is None else number_text(rng, value) for _ in range(rng.randint(1, 2))
            ]
        roll = rng.random()
        if roll < 0.45:
            pred = surface(rng, rng.choice(alts))
        elif roll < 0.6 and value is not None:
            pred = number_text(rng, value * rng.choice([0.98, 1.02, 0.92, 1.08]))
        elif roll < 0.6:
            tokens = answer.split(" ")
            tokens[rng.randrange(len(tokens))] = rng.choice(words)
            pred = " ".join(tokens if rng.random() < 0.5 else tokens[::-1])
        else:
            pred = make_answer(rng, words)[0]
        preds.append(pred)
        refs.append(alts)
    return preds, refs


# ----------------------------------------------------------------------------------- straightforward loops
def normalize(s: str) -> str:
    return " ".join(s.strip().lower().split())


def parse_number(s: str) -> float | None:
    try:
        return float(s.strip().replace(",", "").replace("%", ""))
    except ValueError:
        return None


def loop_exact_match(preds: list[str], refs: list, joined: bool) -> np.ndarray:
    out = []
    for pred, ref in zip(preds, refs, strict=True):
        p = normalize(pred)
        out.append(1.0 if any(p == normalize(a) for a in (ref.split("|") if joined else ref)) else 0.0)
    return np.array(out)


def loop_relaxed_accuracy(preds: list[str], refs: list, joined: bool, tolerance: float = 0.05) -> np.ndarray:
    out = []
    for pred, ref in zip(preds, refs, strict=True):
        p, hit = parse_number(pred), False
        for alt in ref.split("|") if joined else ref:
            r = parse_number(alt)
            if p is not None and r is not None:
                hit = r == p or (r != 0 and abs(p - r) / abs(r) <= tolerance)
            else:
                hit = normalize(pred) == normalize(alt)
            if hit:
                break
        out.append(1.0 if hit else 0.0)
    return np.array(out)


def loop_word_sort_ratio(preds: list[str], refs: list, joined: bool) -> np.ndarray:
    out = []
    for pred, ref in zip(preds, refs, strict=True):
        best = 0.0
        pw = sorted(pred.strip().lower().split())
        for alt in ref.split("|") if joined else ref:
            rw = sorted(alt.strip().lower().split())
            if not rw:
                value = 1.0 if not pw else 0.0
            else:
                value = sum((Counter(pw) & Counter(rw)).values()) / max(len(pw), len(rw))
            best = max(best, value)
        out.append(best)
    return np.array(out)


def loop_anls(preds: list[str], refs: list, joined: bool, threshold: float = 0.5) -> np.ndarray:
    out = []
    for pred, ref in zip(preds, refs, strict=True):
        p, p_len, best = normalize(pred), len(pred.upper()), 0.0
        for a in ref.split("|") if joined else ref:
            longest = max(p_len, len(a.upper()))  # the scorer divides by the longer raw answer
            nl = Levenshtein.distance(p, normalize(a)) / longest if longest else 0.0
            best = max(best, 1.0 - nl if nl <= threshold else 0.0)
        out.append(best)
    return np.array(out)


def exact_match_numpy(preds: list[str], refs: list) -> np.ndarray:
    """exact_match without its C extension: the numpy kernel."""
    with patch.object(kernels, "_compiled", None):
        return exact_match_scores(preds, refs)


# --------------------------------------------------------------------------------------------------- timing
def cpu_time(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best CPU time of this process over ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = func()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="number of (prediction, references) pairs")
    parser.add_argument("--repeat", type=int, default=3, help="timed repeats per side (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    preds, lists = make_pairs(args.n, args.seed)
    joined = ["|".join(alts) for alts in lists]  # no generated answer holds "|"
    n_alts = sum(map(len, lists))
    numeric = sum(parse_number(a[0]) is not None for a in lists)
    print(
        f"{args.n:,} pairs, {n_alts:,} reference answers ({numeric / args.n:.0%} numeric), "
        f"generated in {time.perf_counter() - start:.1f} s; CPU seconds, best of {args.repeat}\n"
    )

    compiled = "C extension" if kernels._compiled is not None else "NOT BUILT: numpy"
    print(f"exact_match runs its {compiled}\n")
    cases: list[tuple[str, Callable[..., np.ndarray], Callable[..., np.ndarray], float | None]] = [
        ("exact_match", exact_match_scores, loop_exact_match, 0.2),
        ("exact_match (numpy)", exact_match_numpy, loop_exact_match, None),
        ("relaxed_accuracy", relaxed_accuracy_scores, loop_relaxed_accuracy, 0.2),
        ("word_sort_ratio", word_sort_ratio_scores, loop_word_sort_ratio, 0.2),
        ("anls", anls_scores, loop_anls, 1.0),
    ]
    header = f"{'metric':<21}{'form':<7}{'loop s':>9}{'ours s':>9}{'ratio':>8}{'target':>8}  identical  mean"
    print(header)
    print("-" * len(header))
    failures = []
    for name, kernel, loop, target in cases:
        for form, refs in (("olive", joined), ("lists", lists)):
            t_loop, expected = cpu_time(lambda loop=loop, refs=refs: loop(preds, refs, refs is joined), args.repeat)
            t_ours, got = cpu_time(lambda kernel=kernel, refs=refs: kernel(preds, refs), args.repeat)
            identical = np.array_equal(got, expected)
            ratio = t_ours / t_loop
            print(
                f"{name:<21}{form:<7}{t_loop:>9.3f}{t_ours:>9.3f}{ratio:>8.3f}{target if form == 'olive' and target else '':>8}  "
                f"{'yes' if identical else 'NO':<9}  {expected.mean():.6f}"
            )
            if not identical:
                failures.append(f"{name} ({form}): scores differ from the loop")
            if form == "olive" and target is not None and ratio > target:
                failures.append(f"{name}: ours/loop {ratio:.3f} > {target}")
    print("\n".join(["", "MISSED:", *failures]) if failures else "\nall targets met, all scores identical")


if __name__ == "__main__":
    main()
