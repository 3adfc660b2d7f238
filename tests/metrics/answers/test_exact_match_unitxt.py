"""exact_match with ``normalizer: "none"`` against Unitxt 1.26.10's own ``Accuracy`` metric class (the strings as
they are), on the issue's vectors and on random text over many seeds, by both kernels (C and numpy) and through the
registered metric; the default stays Olive's normalization."""

from __future__ import annotations

import random
from unittest.mock import patch

import numpy as np
import pytest
from unitxt.metrics import Accuracy

from olive_eval import compute_metric
from olive_eval.metrics import get_metric
from olive_eval.metrics.answers import kernels
from olive_eval.metrics.answers.kernels import exact_match_scores
from olive_eval.metrics.answers.references import join_alternatives, to_answers

UNITXT = Accuracy()
# case pairs, Python's whitespace (tab, \x1c, NBSP, U+3000), a zero-width space that is not whitespace, final
# sigma, one-to-many lowercasing, NUL, "|" and "\\" (the joined form's separator and escape), wide characters
CHARS = ["a", "A", "b", "B", " ", "  ", "\t", "\n", "\x1c", "\xa0", "\u3000", "\u200b", "Σ", "ς", "σ", "İ", "i̇"]
CHARS += ["ß", "SS", "\x00", "|", "\\", "漢", "😀", "."]


def text(rng: random.Random) -> str:
    return "".join(rng.choices(CHARS, k=rng.randint(0, 5)))


def case(seed: int, n: int = 300) -> tuple[list[str], list[list[str]]]:
    """Predictions that are half the time an answer as it is, or in another case or spacing."""
    rng = random.Random(seed)
    refs = [[text(rng) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    preds = []
    for alts in refs:
        pred = rng.choice(alts) if rng.random() < 0.6 else text(rng)
        preds.append(rng.choice([pred, pred, pred.upper(), pred.lower(), f" {pred}", f"{pred}\t", pred.strip()]))
    return preds, refs


def unitxt_scores(preds: list[str], refs: list[list[str]]) -> list[float]:
    """Unitxt's Accuracy instance by instance, as its metric pipeline calls it."""
    return [
        UNITXT.compute(references=r, prediction=p, task_data={})["accuracy"] for p, r in zip(preds, refs, strict=True)
    ]


def numpy_path(preds, refs, normalize: bool) -> np.ndarray:
    with patch.object(kernels, "_compiled", None):
        return exact_match_scores(preds, refs, normalize=normalize)


def test_the_issues_vectors():
    """Each pair differs only in case or whitespace: 0.0 with "none" (as Unitxt's Accuracy), 1.0 by default."""
    for pred, ref in [(" abc ", "abc"), ("Paris", "paris"), ("a\tb", "a b")]:
        assert UNITXT.compute(references=[ref], prediction=pred, task_data={})["accuracy"] == 0.0
        assert compute_metric("exact_match", [pred], [[ref]], normalizer="none") == 0.0
        assert compute_metric("exact_match", [pred], [[ref]], normalizer={"type": "none"}) == 0.0
        assert compute_metric("exact_match", [pred], [[ref]]) == 1.0  # Olive's default is unchanged
        assert compute_metric("exact_match", [pred], [[ref]], normalizer="strip") == 1.0  # then Olive's
        assert compute_metric("exact_match", [ref], [[ref]], normalizer="none") == 1.0


@pytest.mark.parametrize("seed", range(12))
def test_none_equals_unitxts_accuracy_on_random_text(seed):
    preds, refs = case(seed)
    want = unitxt_scores(preds, refs)
    assert 0.2 < np.mean(want) < 0.8
    joined = [join_alternatives(a) for a in refs]
    paths = {
        "C, lists": exact_match_scores(preds, refs, normalize=False),
        "C, joined": exact_match_scores(preds, joined, normalize=False),
        "C, answers": exact_match_scores(preds, to_answers(refs), normalize=False),
        "numpy, lists": numpy_path(preds, refs, False),
        "numpy, joined": numpy_path(preds, joined, False),
        "metric": get_metric("exact_match", {"normalizer": "none"}).statistics(preds, refs),
    }
    mismatches = {name: int((np.asarray(got) != want).sum()) for name, got in paths.items()}
    print(f"exact_match none, seed {seed}: {len(want)} examples x {len(paths)} paths, mismatches {mismatches}")
    assert sum(mismatches.values()) == 0
    default = exact_match_scores(preds, refs)
    assert (default >= np.asarray(want)).all() and (default > np.asarray(want)).any()  # the option takes effect
    assert numpy_path(preds, refs, True).tolist() == default.tolist()


def test_the_c_and_numpy_paths_agree_on_every_form_and_on_nothing():
    assert exact_match_scores([], [], normalize=False).size == 0
    assert numpy_path([], [], False).size == 0
    raw = kernels._compiled.matches(["a", "A "], ["a|b", "c|A "], None, False)
    assert np.frombuffer(raw, np.float64).tolist() == [1.0, 1.0]
    raw = kernels._compiled.matches(["a", "A "], ["a|b", "c|a"], None, True)
    assert np.frombuffer(raw, np.float64).tolist() == [1.0, 1.0]
    escaped = [r"x\|y|z", r"C:\temp|D:"]
    assert exact_match_scores(["x|y", "C:\\temp"], escaped, normalize=False).tolist() == [1.0, 1.0]
    assert numpy_path(["x|y", "C:\\temp"], escaped, False).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("normalize", [True, False])
def test_input_the_c_kernel_refuses_gets_the_checked_error(normalize):
    matches = kernels._compiled.matches
    assert matches(["a", 1], ["a", "b"], None, normalize) is None
    assert matches(["a", "b"], [["a"], []], None, normalize) is None
    with pytest.raises(TypeError, match="example 1"):
        exact_match_scores(["a", 1], [["a"], ["b"]], normalize=normalize)
    with pytest.raises(ValueError, match="example 1"):
        exact_match_scores(["a", "b"], [["a"], []], normalize=normalize)


def test_an_unknown_normalizer_is_one_clear_error():
    with pytest.raises(ValueError, match="normalizer"):
        get_metric("exact_match", {"normalizer": "nonesuch"})
