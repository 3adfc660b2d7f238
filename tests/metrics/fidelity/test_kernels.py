"""The fidelity kernels against independent references in the same test: scipy's softmax, relative entropy and
Jensen-Shannon distance, scikit-learn's cosine similarity and mean squared error, Python loops for agreement.

Random float32 outputs, ``[n, classes]`` and ``[n, positions, classes]``, several seeds; then the edge cases:
identical outputs, zero vectors, huge logits, masked (-inf) logits, ties, one class, mismatched shapes, NaN and
non-numeric input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import log_softmax, rel_entr, softmax
from scipy.stats import entropy
from sklearn.metrics import mean_squared_error
from sklearn.metrics.pairwise import cosine_similarity as sk_cosine

from olive_eval.metrics.fidelity import kernels
from tests.metrics.fidelity.references import (
    SEEDS,
    SHAPES,
    flat,
    outputs,
    ref_js,
    ref_kl,
    ref_top1,
    ref_topk,
)

TOL = 1e-12


# ---------------------------------------------------------------------------------------------- random data
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_agreement_equals_python_loops(seed, shape):
    c, b = outputs(seed, shape)
    top1 = kernels.top1_agreement(c, b)
    np.testing.assert_array_equal(top1, ref_top1(c, b))
    assert 0.2 < top1.mean() < 0.95  # some flipped, some kept: the data tests something
    for k in (1, 2, 3, shape[-1] - 1, shape[-1]):
        np.testing.assert_allclose(kernels.topk_agreement(c, b, k), ref_topk(c, b, k), rtol=0, atol=TOL)
    np.testing.assert_array_equal(kernels.topk_agreement(c, b, 1), top1)  # k 1 is top-1
    np.testing.assert_array_equal(kernels.topk_agreement(c, b, shape[-1]), 1.0)  # every class: full overlap


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_divergences_equal_scipy(seed, shape):
    c, b = outputs(seed, shape)
    kl = kernels.kl_divergence(c, b)
    np.testing.assert_allclose(kl, ref_kl(c, b), rtol=0, atol=TOL)
    p, q = softmax(flat(b).reshape(-1, shape[-1]), axis=-1), softmax(flat(c).reshape(-1, shape[-1]), axis=-1)
    np.testing.assert_allclose(kl, entropy(p, q, axis=-1).reshape(shape[0], -1).mean(axis=1), rtol=0, atol=TOL)
    assert not np.allclose(kl, kernels.kl_divergence(b, c), atol=1e-3)  # KL(baseline ‖ candidate), not reversed
    js = kernels.js_divergence(c, b)
    np.testing.assert_allclose(js, ref_js(c, b), rtol=0, atol=TOL)
    np.testing.assert_allclose(js, kernels.js_divergence(b, c), rtol=0, atol=TOL)  # symmetric
    assert (js > 0).all() and (js <= np.log(2)).all() and (kl > 0).all()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_elementwise_measures_equal_sklearn_and_numpy(seed, shape):
    c, b = outputs(seed, shape)
    np.testing.assert_allclose(kernels.cosine_similarity(c, b), np.diag(sk_cosine(flat(c), flat(b))), rtol=0, atol=TOL)
    per_example_mse = mean_squared_error(flat(b).T, flat(c).T, multioutput="raw_values")  # one column per example
    total, count = kernels.squared_error(c, b).T
    np.testing.assert_allclose(total / count, per_example_mse, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(count, np.prod(shape[1:]))
    np.testing.assert_array_equal(kernels.max_abs_error(c, b), np.abs(flat(c) - flat(b)).max(axis=1))
    signal, noise = kernels.signal_and_noise(c, b).T
    np.testing.assert_allclose(signal, (flat(b) ** 2).sum(axis=1), rtol=1e-12, atol=0)
    np.testing.assert_allclose(noise, ((flat(c) - flat(b)) ** 2).sum(axis=1), rtol=1e-12, atol=0)


def test_float32_inputs_are_compared_in_float64():
    """Two float32 outputs one ulp apart: their difference is kept, not rounded to float32 arithmetic."""
    b = np.full((3, 4), 1.0, dtype=np.float32)
    c = np.nextafter(b, np.float32(2))
    ulp = float(c[0, 0]) - 1.0
    np.testing.assert_array_equal(kernels.max_abs_error(c, b), ulp)
    np.testing.assert_array_equal(kernels.squared_error(c, b)[:, 0], 4 * ulp**2)


# ---------------------------------------------------------------------------------------------- temperature
@pytest.mark.parametrize("temperature", [0.5, 2.0, 7.0])
def test_temperature_takes_effect_and_equals_the_reference(temperature):
    c, b = outputs(3, (200, 6))
    for ours, ref in ((kernels.kl_divergence, ref_kl), (kernels.js_divergence, ref_js)):
        at_t = ours(c, b, temperature)
        np.testing.assert_allclose(at_t, ref(c, b, temperature), rtol=0, atol=TOL)
        assert abs(at_t.mean() - ours(c, b).mean()) > 1e-3  # another temperature, another value


# ---------------------------------------------------------------------------------------------- identity
@pytest.mark.parametrize("shape", [*SHAPES, (50, 4)])
def test_identical_outputs_are_the_identity(shape):
    _, b = outputs(4, shape)
    b[::3, ..., 1] = b[::3, ..., 0]  # ties too: both sides break them alike
    same = b.copy()
    np.testing.assert_array_equal(kernels.top1_agreement(same, b), 1.0)
    np.testing.assert_array_equal(kernels.topk_agreement(same, b, 3), 1.0)
    np.testing.assert_array_equal(kernels.kl_divergence(same, b), 0.0)  # exactly: the baseline's own value
    np.testing.assert_array_equal(kernels.js_divergence(same, b), 0.0)
    np.testing.assert_allclose(kernels.cosine_similarity(same, b), 1.0, rtol=0, atol=TOL)
    np.testing.assert_array_equal(kernels.squared_error(same, b)[:, 0], 0.0)
    np.testing.assert_array_equal(kernels.max_abs_error(same, b), 0.0)
    np.testing.assert_array_equal(kernels.signal_and_noise(same, b)[:, 1], 0.0)  # no noise: SNR undefined
    assert (kernels.signal_and_noise(same, b)[:, 0] > 0).all()


def test_divergences_are_never_negative():
    """Rounding cannot make a divergence of near-identical outputs negative: 0 is the identity's value."""
    _, b = outputs(5, (2000, 50))
    near = b + np.float32(1e-6)  # a shift: the same softmax up to rounding
    assert (kernels.kl_divergence(near, b) >= 0).all() and (kernels.js_divergence(near, b) >= 0).all()
    np.testing.assert_allclose(kernels.kl_divergence(near, b), ref_kl(near, b), rtol=0, atol=TOL)
    # scipy's jensenshannon is NaN here (the root of a sum rounded below 0): its divergence from rel_entr instead
    p, q = softmax(b.astype(np.float64), axis=-1), softmax(near.astype(np.float64), axis=-1)
    js = 0.5 * (rel_entr(p, (p + q) / 2) + rel_entr(q, (p + q) / 2)).sum(axis=-1)
    assert (js < 0).any()
    np.testing.assert_allclose(kernels.js_divergence(near, b), js, rtol=0, atol=TOL)


# ---------------------------------------------------------------------------------------------- zero vectors
def test_cosine_of_zero_vectors():
    """Both zero: 1 (identical outputs are the identity); one zero: 0, as scikit-learn gives; scikit-learn gives 0
    for two zero vectors too, the one place the conventions differ."""
    zero, one = np.zeros((1, 5)), np.ones((1, 5))
    c = np.vstack([zero, zero, one, -one])
    b = np.vstack([zero, one, zero, one])
    np.testing.assert_allclose(kernels.cosine_similarity(c, b), [1.0, 0.0, 0.0, -1.0], rtol=0, atol=TOL)
    np.testing.assert_allclose(np.diag(sk_cosine(c, b))[1:], [0.0, 0.0, -1.0], rtol=0, atol=TOL)
    assert sk_cosine(zero, zero)[0, 0] == 0.0
    rng = np.random.default_rng(6)
    unit = rng.normal(size=(20, 8))
    tiny = unit * 1e-150  # small but not zero: the cosine of the unscaled vectors (scikit-learn's is 0 here)
    np.testing.assert_allclose(
        kernels.cosine_similarity(tiny, tiny[::-1]), np.diag(sk_cosine(unit, unit[::-1])), rtol=0, atol=TOL
    )


# ---------------------------------------------------------------------------------------------- huge logits
def test_huge_logits_neither_overflow_nor_give_nan():
    big = np.finfo(np.float32).max / 2
    b = np.array([[big, 0.0, -big], [0.0, big, 1.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    c = np.array([[big, 1.0, -big], [big, 0.0, 1.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no invalid value
        values = {
            "kl": kernels.kl_divergence(c, b),
            "js": kernels.js_divergence(c, b),
            "cos": kernels.cosine_similarity(c, b),
            "sq": kernels.squared_error(c, b),
            "max": kernels.max_abs_error(c, b),
            "snr": kernels.signal_and_noise(c, b),
        }
    assert all(np.isfinite(v).all() for v in values.values())
    lp, lq = log_softmax(b.astype(np.float64), axis=-1), log_softmax(c.astype(np.float64), axis=-1)
    expected_kl = np.where(np.exp(lp) > 0, np.exp(lp) * (lp - lq), 0.0).sum(axis=-1)  # in log space: scipy's
    np.testing.assert_allclose(values["kl"], expected_kl, rtol=1e-12, atol=TOL)
    assert values["kl"][0] < TOL and values["kl"][1] == pytest.approx(float(big), rel=1e-6)  # one-hot, then swapped
    assert values["js"][1] == pytest.approx(np.log(2), abs=TOL)  # disjoint supports: the bound
    np.testing.assert_array_equal(kernels.top1_agreement(c, b), [1.0, 0.0, 1.0])
    np.testing.assert_allclose(values["max"], [1.0, float(big), 0.0], rtol=1e-7)


def test_masked_logits_follow_the_convention_zero_log_zero():
    """-inf logits (a masked vocabulary) have probability 0 and add nothing, as in scipy's rel_entr; a class the
    baseline gives weight and the candidate masks makes KL infinite."""
    inf = np.inf
    b = np.array([[2.0, 1.0, -inf, 0.5], [0.0, -inf, -inf, 3.0]])
    c = np.array([[1.5, 1.0, -inf, 0.0], [1.0, -inf, -inf, 2.0]])
    np.testing.assert_allclose(kernels.kl_divergence(c, b), ref_kl(c, b), rtol=0, atol=TOL)
    np.testing.assert_allclose(kernels.js_divergence(c, b), ref_js(c, b), rtol=0, atol=TOL)
    assert np.isfinite(kernels.kl_divergence(c, b)).all()
    mixed_c, mixed_b = outputs(14, (6, 3, 5))  # masked positions among unmasked ones
    mixed_b[1, 2, [0, 3]] = mixed_c[1, 2, [0, 3]] = -inf
    mixed_b[4, 0, 2] = -inf  # only the baseline masks it: the candidate's weight there adds nothing
    for kernel, ref in ((kernels.kl_divergence, ref_kl), (kernels.js_divergence, ref_js)):
        np.testing.assert_allclose(kernel(mixed_c, mixed_b), ref(mixed_c, mixed_b), rtol=0, atol=TOL)
    masked_only_in_candidate = np.array([[1.0, -inf, 0.0]])
    assert kernels.kl_divergence(masked_only_in_candidate, np.array([[1.0, 0.5, 0.0]]))[0] == inf
    assert np.isfinite(kernels.js_divergence(masked_only_in_candidate, np.array([[1.0, 0.5, 0.0]]))).all()


# ---------------------------------------------------------------------------------------------- ties and k
def test_ties_rank_the_lower_class_index_first():
    """Among equal values the lower class index is the largest (numpy's argmax; a stable sort for top-k). Two
    outputs tied between the same classes agree; a tie broken the other way by the candidate disagrees."""
    b = np.array([[2.0, 2.0, 0.0, 1.0], [2.0, 2.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
    c = np.array([[2.0, 2.0, 0.0, 1.0], [2.0, 2.5, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(kernels.top1_agreement(c, b), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(kernels.top1_agreement(c, b), ref_top1(c, b))
    # k 2: row 3's top-2 are {0, 1} for the baseline, {1, 2} for the candidate
    np.testing.assert_array_equal(kernels.topk_agreement(c, b, 2), [1.0, 1.0, 0.5])
    np.testing.assert_array_equal(kernels.topk_agreement(c, b, 2), ref_topk(c, b, 2))
    rng = np.random.default_rng(7)
    coarse_b, coarse_c = (
        rng.integers(0, 3, (500, 6)).astype(np.float32),
        rng.integers(0, 3, (500, 6)).astype(np.float32),
    )
    for k in (1, 2, 4):  # many ties
        np.testing.assert_array_equal(kernels.topk_agreement(coarse_c, coarse_b, k), ref_topk(coarse_c, coarse_b, k))
    np.testing.assert_array_equal(
        kernels.topk_agreement(coarse_c, coarse_b, 1), kernels.top1_agreement(coarse_c, coarse_b)
    )


def test_k_larger_than_the_classes_is_refused():
    c, b = outputs(8, (10, 4))
    with pytest.raises(ValueError, match=r"^k 5 is more than the 4 classes of the output$"):
        kernels.topk_agreement(c, b, 5)


# ---------------------------------------------------------------------------------------------- bad input
CLASS_KERNELS = [
    kernels.top1_agreement,
    lambda c, b: kernels.topk_agreement(c, b, 1),
    kernels.kl_divergence,
    kernels.js_divergence,
]
ALL_KERNELS = [
    *CLASS_KERNELS,
    kernels.cosine_similarity,
    kernels.squared_error,
    kernels.max_abs_error,
    kernels.signal_and_noise,
]


@pytest.mark.parametrize("kernel", ALL_KERNELS)
@pytest.mark.parametrize(
    ("candidate", "baseline", "message"),
    [
        ((8, 5), (8, 6), r"shape \(5,\) per example and the baseline's \(6,\) \(8 and 8 examples\)"),
        ((8, 3, 5), (8, 15), r"shape \(3, 5\) per example and the baseline's \(15,\)"),
        ((8, 5), (9, 5), r"shape \(5,\) per example and the baseline's \(5,\) \(8 and 9 examples\)"),
    ],
)
def test_mismatched_shapes_are_refused_naming_both(kernel, candidate, baseline, message):
    with pytest.raises(ValueError, match=r"^the candidate's output has " + message):
        kernel(np.ones(candidate, np.float32), np.ones(baseline, np.float32))


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_non_numeric_output_is_refused(kernel):
    ok = np.ones((2, 3))
    with pytest.raises(
        ValueError, match=r"^the candidate's output is not an array of numbers of one shape per example \(it is list\)$"
    ):
        kernel([["a", "b", "c"], ["d", "e", "f"]], ok)
    with pytest.raises(ValueError, match=r"^the baseline's output is not an array of numbers .*\(it is list\)$"):
        kernel(ok, [[1.0, 2.0, 3.0], [1.0, 2.0]])  # ragged
    with pytest.raises(ValueError, match=r"^the candidate's output is a single number, not one output per example$"):
        kernel(3.0, ok)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
@pytest.mark.parametrize("side", ["candidate", "baseline"])
def test_nan_output_is_refused_naming_its_examples(kernel, side):
    """A NaN would be argmax's first class (a silent agreement) or a NaN value: refused, with where it is."""
    c, b = outputs(9, (10, 2, 4))
    bad = c if side == "candidate" else b
    bad[3, 1, 2] = bad[7, 0, 0] = np.nan
    with pytest.raises(ValueError, match=rf"^the {side}'s output holds NaN in 2 of 10 examples \(first: example 3\)$"):
        kernel(c, b)


@pytest.mark.parametrize("kernel", CLASS_KERNELS)
def test_one_class_is_refused_by_class_measures(kernel):
    """One value per position (a single sigmoid logit) would always agree and never diverge: refused."""
    c, b = np.array([[0.9], [-2.0]]), np.array([[-0.9], [2.0]])
    with pytest.raises(ValueError, match=r"^the output has 1 class on its last axis: .* compare it with output_mse"):
        kernel(c, b)
    with pytest.raises(ValueError, match=r"^the output has 1 class"):
        kernel(c[:, 0], b[:, 0])  # one number per example


def test_one_number_per_example_for_elementwise_measures():
    c, b = np.array([0.5, -1.0, 2.0]), np.array([1.0, -1.0, 0.0])
    np.testing.assert_array_equal(kernels.max_abs_error(c, b), [0.5, 0.0, 2.0])
    np.testing.assert_array_equal(kernels.squared_error(c, b), [[0.25, 1], [0.0, 1], [4.0, 1]])
    np.testing.assert_array_equal(kernels.cosine_similarity(c, b), [1.0, 1.0, 0.0])  # the signs' agreement


def _pairs(rng: np.random.Generator, n: int, width: int) -> tuple[list[dict], np.ndarray]:
    """``n`` predictions as ``encode_separately`` gives them (``{column: unit embedding}``), and their ``[n, 2, d]``."""
    stacked = rng.standard_normal((n, 2, width))
    stacked /= np.linalg.norm(stacked, axis=2, keepdims=True)
    return [{"sentence1": row[0], "sentence2": row[1]} for row in stacked], stacked


@pytest.mark.parametrize("seed", SEEDS)
def test_mapping_outputs_are_compared_as_their_values_stacked(seed):
    rng = np.random.default_rng(seed)
    candidate, c = _pairs(rng, 40, 16)
    baseline, b = _pairs(rng, 40, 16)
    cosine = kernels.cosine_similarity(candidate, baseline)
    np.testing.assert_allclose(cosine, np.diag(sk_cosine(flat(c), flat(b))), rtol=0, atol=TOL)
    # unit embeddings: the flattened pair's cosine is the mean of the two sentences' cosines
    each = [np.diag(sk_cosine(c[:, k], b[:, k])) for k in (0, 1)]
    np.testing.assert_allclose(cosine, (each[0] + each[1]) / 2, rtol=0, atol=TOL)
    squared = kernels.squared_error(candidate, baseline)
    assert squared[:, 0].sum() / squared[:, 1].sum() == pytest.approx(mean_squared_error(flat(c), flat(b)), abs=TOL)


def test_a_mapping_output_of_unequal_vectors_is_refused():
    ok = [{"a": np.ones(3), "b": np.ones(3)}]
    with pytest.raises(ValueError, match=r"^the candidate's output is not an array of numbers .*\(it is list\)$"):
        kernels.cosine_similarity([{"a": np.ones(3), "b": np.ones(2)}], ok)
