"""Perplexity against torch cross-entropy and torchmetrics.functional.text.perplexity on the same logits."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from pydantic import ValidationError
from torchmetrics.functional.text import perplexity as tm_perplexity

from olive_eval.metrics import get_metric
from olive_eval.metrics import language_modeling as lm
from olive_eval.metrics.language_modeling import perplexity, perplexity_statistics, reduce_perplexity


def lm_data(seed, n, t, v, ignore_fraction=0.0, ignore_index=-100):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 3, (n, t, v))
    targets = rng.integers(0, v, (n, t))
    if ignore_fraction:
        targets = np.where(rng.random((n, t)) < ignore_fraction, ignore_index, targets)
    return logits, targets


def torch_reference(logits, targets, ignore_index=-100):
    """exp(sum of shifted token cross-entropies / number of scored tokens), by torch."""
    lg = torch.from_numpy(logits[:, :-1]).reshape(-1, logits.shape[-1])
    tg = torch.from_numpy(targets[:, 1:]).reshape(-1)
    total = F.cross_entropy(lg, tg, ignore_index=ignore_index, reduction="sum").item()
    count = int((tg != ignore_index).sum())
    return (math.exp(total / count) if total / count < 700 else math.inf), total, count


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("n", "t", "v"), [(1, 2, 5), (3, 7, 11), (8, 16, 50)])
@pytest.mark.parametrize("ignore_fraction", [0.0, 0.3])
def test_perplexity_matches_torch_and_torchmetrics(seed, n, t, v, ignore_fraction):
    logits, targets = lm_data(seed, n, t, v, ignore_fraction)
    targets[0, 1] = 0  # at least one scored token
    score = get_metric("perplexity").compute(logits, targets)
    ref, total, count = torch_reference(logits, targets)
    assert score.value == pytest.approx(ref, rel=1e-9)
    assert score.extra["tokens"] == count
    shifted = torch.from_numpy(logits[:, :-1]), torch.from_numpy(targets[:, 1:])
    tm = tm_perplexity(*shifted, ignore_index=-100).item()
    assert score.value == pytest.approx(tm, rel=1e-6)
    stats = perplexity_statistics(logits, targets)
    assert stats.shape == (n, 2)
    assert stats[:, 0].sum() == pytest.approx(total, rel=1e-9)


def test_perplexity_per_example_statistics_and_all_ignored_rows():
    logits, targets = lm_data(4, 5, 9, 13, ignore_fraction=0.2)
    targets[1] = -100  # a row with every token ignored
    targets[3, 1:] = -100  # only the (unscored) first token kept
    metric = get_metric("perplexity")
    stats = metric.statistics(logits, targets)
    assert stats[1].tolist() == [0.0, 0.0]
    assert stats[3].tolist() == [0.0, 0.0]
    for i in (0, 2, 4):  # each row on its own against torch
        _, total, count = torch_reference(logits[i : i + 1], targets[i : i + 1])
        assert stats[i, 0] == pytest.approx(total, rel=1e-9)
        assert stats[i, 1] == count
    assert metric.reduce(stats).value == pytest.approx(torch_reference(logits, targets)[0], rel=1e-9)
    halves = np.concatenate([metric.statistics(logits[:2], targets[:2]), metric.statistics(logits[2:], targets[2:])])
    assert metric.reduce(halves).value == pytest.approx(metric.reduce(stats).value, rel=1e-12)


def test_perplexity_custom_and_disabled_ignore_index():
    logits, targets = lm_data(6, 4, 10, 7, ignore_fraction=0.25, ignore_index=0)
    assert get_metric("perplexity", {"ignore_index": 0}).compute(logits, targets).value == pytest.approx(
        torch_reference(logits, targets, ignore_index=0)[0], rel=1e-9
    )
    logits, targets = lm_data(7, 2, 6, 7)
    no_ignore = get_metric("perplexity", {"ignore_index": None}).compute(logits, targets).value
    assert no_ignore == pytest.approx(torch_reference(logits, targets)[0], rel=1e-9)


def test_perplexity_is_numerically_stable_for_large_logits():
    logits, targets = lm_data(8, 2, 5, 6)
    shifted = logits + 1e4  # softmax is shift-invariant; a naive exp(1e4) would overflow
    got = perplexity(shifted, targets)
    assert math.isfinite(got)
    assert got == pytest.approx(torch_reference(logits, targets)[0], rel=1e-9)
    peaked = logits * 1e3  # huge nll, still finite per token
    stats = perplexity_statistics(peaked, targets)
    assert np.isfinite(stats).all()
    assert stats[:, 0].sum() == pytest.approx(torch_reference(peaked, targets)[1], rel=1e-9)


def test_perplexity_blocks_give_the_same_result(monkeypatch):
    logits, targets = lm_data(10, 3, 11, 9, ignore_fraction=0.3)
    whole = perplexity_statistics(logits, targets)
    monkeypatch.setattr(lm, "_CHUNK_ELEMENTS", 20)  # two token positions per block
    np.testing.assert_allclose(perplexity_statistics(logits, targets), whole, rtol=1e-12)


def test_perplexity_known_values():
    v = 4
    uniform = np.zeros((2, 6, v))
    targets = np.tile(np.arange(6) % v, (2, 1))
    assert perplexity(uniform, targets) == pytest.approx(v)  # uniform predictions: perplexity = vocabulary size
    confident = np.full((1, 3, v), -50.0)
    confident[0, 0, 2] = confident[0, 1, 1] = 50.0
    assert perplexity(confident, np.array([[0, 2, 1]])) == pytest.approx(1.0)


def test_perplexity_degenerate_and_bad_inputs():
    logits, targets = lm_data(9, 2, 1, 5)  # T == 1: nothing to score after the shift
    assert perplexity_statistics(logits, targets).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert math.isnan(reduce_perplexity(np.zeros((3, 2))))
    logits, targets = lm_data(9, 2, 4, 5)
    with pytest.raises(ValueError, match=r"\[N, T, V\]"):
        perplexity(logits[0], targets)
    with pytest.raises(ValueError, match=r"\[N, T\]"):
        perplexity(logits, targets[:, :3])
    bad = targets.copy()
    bad[0, 2] = 5
    with pytest.raises(ValueError, match=r"\[0, 4\]"):
        perplexity(logits, bad)


def test_perplexity_registration_and_config():
    metric = get_metric("perplexity")
    assert (metric.kind, metric.reads[0], metric.higher_is_better) == ("map_reduce", "logits", False)
    assert metric.config.ignore_index == -100
    with pytest.raises(ValidationError) as info:
        get_metric("perplexity", {"ignore_idx": -1})
    assert "ignore_idx" in str(info.value)
    assert "did you mean 'ignore_index'" in str(info.value)
