"""The registered fidelity measures: each value and per-example score equal to an independent reference (scipy,
scikit-learn, Python loops) in the same test; the pass's path (batches through the metric scorer, the reduce, the
bootstrap's finalize_totals) gives the reference's value and an interval around it; every option takes effect;
bad options are refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.config import load_run_config
from olive_eval.config.metric import MetricConfig
from olive_eval.engine.passes.scoring import MetricScorer
from olive_eval.errors import ConfigError
from olive_eval.metrics import stats
from olive_eval.metrics.fidelity.measures import fidelity_registry
from olive_eval.testing import check_metric
from tests.metrics.fidelity.references import (
    SEEDS,
    SHAPES,
    flat,
    outputs,
    ref_cosine,
    ref_energies,
    ref_js,
    ref_kl,
    ref_max_abs,
    ref_mse,
    ref_top1,
    ref_topk,
    snr_db,
)

TOL = 1e-12
CI = {"method": "percentile", "n_resamples": 2000, "level": 0.95, "seed": 11}


def reference(name: str, config: dict, c: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """The measure's per-example values and its value over the set, from the references alone."""
    if name == "output_mse":
        return ref_mse(c, b), float(((flat(c) - flat(b)) ** 2).mean())  # total squared error / total elements
    if name == "max_abs_error":
        return ref_max_abs(c, b), float(np.abs(flat(c) - flat(b)).max())  # the max over examples
    if name == "snr_db":
        energies = ref_energies(c, b)
        return snr_db(energies[:, 0], energies[:, 1]), float(snr_db(*energies.sum(axis=0)))  # summed energies
    per_example = {
        "top1_agreement": lambda: ref_top1(c, b),
        "topk_agreement": lambda: ref_topk(c, b, config.get("k", 5)),
        "kl_divergence": lambda: ref_kl(c, b, config.get("temperature", 1.0)),
        "js_divergence": lambda: ref_js(c, b, config.get("temperature", 1.0)),
        "cosine_similarity": lambda: ref_cosine(c, b),
    }[name]()
    return per_example, float(per_example.mean())


MEASURES = [
    ("top1_agreement", {}),
    ("topk_agreement", {}),
    ("topk_agreement", {"k": 3}),
    ("kl_divergence", {}),
    ("kl_divergence", {"temperature": 2.5}),
    ("js_divergence", {}),
    ("js_divergence", {"temperature": 0.5}),
    ("cosine_similarity", {}),
    ("output_mse", {}),
    ("max_abs_error", {}),
    ("snr_db", {}),
]
HIGHER_IS_BETTER = {
    "top1_agreement": True,
    "topk_agreement": True,
    "kl_divergence": False,
    "js_divergence": False,
    "cosine_similarity": True,
    "output_mse": False,
    "max_abs_error": False,
    "snr_db": True,
}


def scored(subs: list[dict], batches: list[tuple[np.ndarray, np.ndarray]], output: str = "logits") -> dict:
    """The sub-types scored as a pass scores them: batch by batch, the baseline's outputs beside the model's."""
    config = MetricConfig.model_validate(
        {"name": "fid", "type": "fidelity", "sub_types": subs, "confidence_interval": CI}
    )
    scorer = MetricScorer(config, None, None, "candidate")
    start = 0
    for c, b in batches:
        fields = {"prediction": c.argmax(axis=-1), output: c, f"baseline.{output}": b}
        scorer.update(fields, start, {})
        start += len(c)
    return {s.sub.name: s for s in scorer.finish()}


def in_batches(
    c: np.ndarray, b: np.ndarray, sizes: tuple[int, ...] = (7, 64, 1)
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Uneven batches, the last one whatever is left."""
    cuts = np.cumsum(sizes)
    return list(zip(np.split(c, cuts), np.split(b, cuts), strict=True))


# ---------------------------------------------------------------------------------------------- the values
def test_every_measure_is_registered_with_its_direction():
    # the token measures are measured teacher-forced (tests/engine/test_fidelity_tokens.py), not from a pass's outputs
    token = {"token_agreement": True, "token_kl": False}
    assert sorted(fidelity_registry.names()) == sorted({**HIGHER_IS_BETTER, **token})
    for name, higher in token.items():
        assert fidelity_registry.get(name).higher_is_better is higher
    for name, higher in HIGHER_IS_BETTER.items():
        assert fidelity_registry.get(name).higher_is_better is higher
    subs = scored([{"name": n} for n in HIGHER_IS_BETTER], in_batches(*outputs(0, (30, 4))))
    assert {name: s.sub.higher_is_better for name, s in subs.items()} == HIGHER_IS_BETTER


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("name", "config"), MEASURES)
def test_value_and_instance_scores_equal_the_reference(name, config, seed, shape):
    """check_metric: the value, one score per example, and the same value on shuffled examples."""
    c, b = outputs(seed, shape)
    per_example, value = reference(name, config, c, b)
    check_metric(
        fidelity_registry.get(name),
        c,
        b,
        metric_config=config,
        instance_targets=per_example,
        global_target=value,
        rtol=1e-10,
        atol=TOL,
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_the_pass_path_gives_the_reference_value_and_an_interval_around_it(shape):
    c, b = outputs(5, shape)
    subs = [{"name": name} for name in HIGHER_IS_BETTER]
    results = scored(subs, in_batches(c, b))
    assert sorted(results) == sorted(HIGHER_IS_BETTER)
    for name, s in results.items():
        assert s.error is None and s.score.undefined is None
        value = reference(name, {}, c, b)[1]
        assert s.score.value == pytest.approx(value, rel=1e-10, abs=TOL), name
        low, high = s.evidence.interval(s.score.value, CI["method"], CI["n_resamples"], CI["level"], CI["seed"])
        assert low <= s.score.value <= high and low < high, name


@pytest.mark.parametrize("name", ["top1_agreement", "kl_divergence", "cosine_similarity", "output_mse", "snr_db"])
def test_the_bootstrap_finishes_each_resample_as_the_reference_does(name):
    """The same resampled examples, summed from the references' per-example values (a mean) or energies and
    element counts (output_mse, snr_db), finished by the formulas: the interval the pass gives."""
    c, b = outputs(6, (150, 2, 5))
    per_example, _ = reference(name, {}, c, b)
    if name == "output_mse":
        rows = np.stack([((flat(c) - flat(b)) ** 2).sum(axis=1), np.full(len(c), flat(c).shape[1])], axis=1)
        finish = lambda totals: totals[:, 0] / totals[:, 1]  # noqa: E731
    elif name == "snr_db":
        rows, finish = ref_energies(c, b), lambda totals: snr_db(totals[:, 0], totals[:, 1])
    else:
        rows, finish = per_example[:, None], lambda totals: totals[:, 0] / len(c)
    theta = stats.additive_distribution(rows, lambda totals: totals, CI["n_resamples"], CI["seed"])
    expected = np.percentile(finish(theta), [2.5, 97.5])
    s = scored([{"name": name}], in_batches(c, b))[name]
    ours = s.evidence.interval(s.score.value, CI["method"], CI["n_resamples"], CI["level"], CI["seed"])
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=TOL)


def test_max_abs_error_is_the_largest_over_examples_and_its_interval_reaches_it():
    c, b = outputs(7, (300, 6))
    s = scored([{"name": "max_abs_error"}], in_batches(c, b))["max_abs_error"]
    assert s.score.value == np.abs(c.astype(np.float64) - b).max()
    low, high = s.evidence.interval(s.score.value, CI["method"], CI["n_resamples"], CI["level"], CI["seed"])
    assert high == s.score.value  # most resamples hold the largest example
    assert np.sort(ref_max_abs(c, b))[-40] < low < high  # a resample's max: among the largest examples'


# ---------------------------------------------------------------------------------------------- the identity
def test_the_baseline_against_itself_is_the_identity():
    _, b = outputs(8, (60, 3, 5))
    results = scored([{"name": n} for n in HIGHER_IS_BETTER], in_batches(b.copy(), b))
    values = {name: s.score.value for name, s in results.items() if name != "snr_db"}
    assert values == {
        "top1_agreement": 1.0,
        "topk_agreement": 1.0,
        "kl_divergence": 0.0,
        "js_divergence": 0.0,
        "cosine_similarity": pytest.approx(1.0, abs=TOL),
        "output_mse": 0.0,
        "max_abs_error": 0.0,
    }
    snr = results["snr_db"].score
    assert np.isnan(snr.value) and snr.undefined == "the outputs are identical: there is no noise to measure"


def test_undefined_map_reduce_values_say_why():
    snr, mse = fidelity_registry.get("snr_db")(), fidelity_registry.get("output_mse")()
    zeros = np.zeros((4, 3))
    assert snr.compute(np.ones((4, 3)), zeros).undefined == (
        "the baseline's output is all zeros: there is no signal to measure"
    )
    assert mse.reduce(np.empty((0, 2))).undefined == "no output elements"
    # a resample that drew only noiseless (or signal-free) examples has no SNR: NaN, left out of the interval
    totals = np.array([[4.0, 0.0], [0.0, 2.0], [0.0, 0.0], [4.0, 1.0]])
    np.testing.assert_array_equal(snr.finalize_totals(totals), [np.nan, np.nan, np.nan, snr_db(4.0, 1.0)])
    np.testing.assert_array_equal(mse.finalize_totals(np.array([[3.0, 2.0], [0.0, 0.0]])), [1.5, np.nan])


# ---------------------------------------------------------------------------------------------- options
def test_output_name_compares_that_output():
    c, b = outputs(9, (40, 6))
    other_c, other_b = outputs(10, (40, 6), noise=2.0)
    metric = fidelity_registry.get("top1_agreement").from_config({"output_name": "hidden"})
    assert metric.reads == ("output.hidden", "baseline.output.hidden")
    assert fidelity_registry.get("top1_agreement")().reads == ("logits", "baseline.logits")
    config = MetricConfig.model_validate(
        {
            "name": "fid",
            "type": "fidelity",
            "sub_types": [{"name": "kl_divergence", "metric_config": {"output_name": "hidden"}}],
        }
    )
    scorer = MetricScorer(config, None, None, "candidate")
    scorer.update(
        {
            "prediction": c.argmax(1),
            "logits": other_c,
            "baseline.logits": other_b,
            "output.hidden": c,
            "baseline.output.hidden": b,
        },
        0,
        {},
    )
    value = scorer.finish()[0].score.value
    assert value == pytest.approx(ref_kl(c, b).mean(), abs=TOL)
    assert abs(value - ref_kl(other_c, other_b).mean()) > 0.1  # not the post-process's output


def test_temperature_and_k_take_effect():
    c, b = outputs(11, (80, 8))
    subs = [
        {"name": "kl_divergence", "metric_config": {"temperature": 4.0}},
        {"name": "topk_agreement", "metric_config": {"k": 1}},
    ]
    results = scored(subs, in_batches(c, b))
    kl, top = results["kl_divergence"].score.value, results["topk_agreement"].score.value
    assert kl == pytest.approx(ref_kl(c, b, 4.0).mean(), abs=TOL)
    assert abs(kl - ref_kl(c, b).mean()) > 1e-2
    assert top == pytest.approx(ref_top1(c, b).mean(), abs=TOL)  # k 1: top-1 agreement
    assert abs(top - ref_topk(c, b, 5).mean()) > 1e-2  # not the default k 5


def test_a_mismatched_candidate_fails_the_metric_naming_both_shapes():
    """Every sub-type fails on it, so the metric does (the run fails that candidate, not the others)."""
    c, b = outputs(12, (20, 5))
    with pytest.raises(
        ValueError, match=r"^the candidate's output has shape \(4,\) per example and the baseline's \(5,\)"
    ):
        scored([{"name": "top1_agreement"}, {"name": "output_mse"}], [(c[:, :4], b)])


# ---------------------------------------------------------------------------------------------- bad options
def metric(sub: dict) -> dict:
    return {"name": "fid", "type": "fidelity", "data_config": "toy", "sub_types": [sub]}


@pytest.mark.parametrize(
    ("sub", "message"),
    [
        ({"name": "kl_divergence", "metric_config": {"temperature": 0}}, "temperature: Input should be greater than 0"),
        ({"name": "topk_agreement", "metric_config": {"k": 0}}, "k: Input should be greater than or equal to 1"),
        (
            {"name": "top1_agreement", "metric_config": {"temperature": 2}},
            "temperature: unknown key; valid: compare, output_name",
        ),
        ({"name": "cosine_similarity", "metric_config": {"k": 2}}, "k: unknown key; valid: compare, output_name"),
        ({"name": "perplexity"}, "metric 'perplexity' reads logits, references, not predictions and references"),
        ({"name": "top1_agreemnt"}, "unknown fidelity sub-type 'top1_agreemnt'; did you mean 'top1_agreement'"),
    ],
)
def test_a_bad_option_is_refused_in_one_line(toy, sub, message):
    with pytest.raises(ConfigError) as info:
        load_run_config(toy.config({}, [metric(sub)]))
    assert "\n" not in str(info.value)
    assert message in str(info.value)


def test_k_larger_than_the_classes_fails_that_sub_type_alone():
    c, b = outputs(13, (10, 4))
    results = scored([{"name": "topk_agreement", "metric_config": {"k": 6}}, {"name": "top1_agreement"}], [(c, b)])
    assert str(results["topk_agreement"].error) == "k 6 is more than the 4 classes of the output"
    assert results["top1_agreement"].error is None
    assert results["top1_agreement"].score.value == pytest.approx(ref_top1(c, b).mean(), abs=TOL)
