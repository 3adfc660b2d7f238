"""Independent references for the fidelity measures: scipy's softmax, relative entropy and Jensen-Shannon distance,
scikit-learn's cosine similarity and mean squared error, Python loops for agreement. None calls our kernels."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.special import rel_entr, softmax
from sklearn.metrics import mean_squared_error
from sklearn.metrics.pairwise import cosine_similarity as sk_cosine

SEEDS = [0, 1, 2]
SHAPES = [(300, 10), (40, 7, 12)]


def outputs(seed: int, shape: tuple[int, ...], noise: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """A candidate near the baseline (some argmaxes flipped), float32 like a model's output."""
    rng = np.random.default_rng(seed)
    baseline = rng.normal(scale=2.0, size=shape).astype(np.float32)
    candidate = (baseline + rng.normal(scale=noise, size=shape)).astype(np.float32)
    return candidate, baseline


def by_position(array: np.ndarray) -> np.ndarray:
    """``[n, positions, classes]`` in float64, whatever the input's rank."""
    a = np.asarray(array, dtype=np.float64)
    return a.reshape(len(a), -1, a.shape[-1])


def ref_topk(candidate: np.ndarray, baseline: np.ndarray, k: int) -> np.ndarray:
    """Python loops: the k largest classes with the lower index first among equals, overlap / k, mean over positions."""

    def top(row: np.ndarray) -> set[int]:
        return set(sorted(range(len(row)), key=lambda j: (-float(row[j]), j))[:k])

    c, b = by_position(candidate), by_position(baseline)
    values = []
    for example_c, example_b in zip(c, b, strict=True):
        overlaps = [len(top(pc) & top(pb)) / k for pc, pb in zip(example_c, example_b, strict=True)]
        values.append(np.mean(overlaps))
    return np.array(values)


def ref_top1(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    def first_max(row: np.ndarray) -> int:
        return max(range(len(row)), key=lambda j: float(row[j]))  # Python's max keeps the first of equals

    c, b = by_position(candidate), by_position(baseline)
    values = []
    for example_c, example_b in zip(c, b, strict=True):
        values.append(np.mean([first_max(pc) == first_max(pb) for pc, pb in zip(example_c, example_b, strict=True)]))
    return np.array(values)


def ref_kl(candidate: np.ndarray, baseline: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    p = softmax(by_position(baseline) / temperature, axis=-1)
    q = softmax(by_position(candidate) / temperature, axis=-1)
    return rel_entr(p, q).sum(axis=-1).mean(axis=1)


def ref_js(candidate: np.ndarray, baseline: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    p = softmax(by_position(baseline) / temperature, axis=-1)
    q = softmax(by_position(candidate) / temperature, axis=-1)
    return (jensenshannon(p, q, axis=-1) ** 2).mean(axis=1)  # scipy gives the distance: the divergence's root


def flat(array: np.ndarray) -> np.ndarray:
    a = np.asarray(array, dtype=np.float64)
    return a.reshape(len(a), -1)


def ref_cosine(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    return np.diag(sk_cosine(flat(candidate), flat(baseline)))


def ref_mse(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Per example: scikit-learn's mean squared error with one output column per example."""
    return mean_squared_error(flat(baseline).T, flat(candidate).T, multioutput="raw_values")


def ref_max_abs(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    return np.abs(flat(candidate) - flat(baseline)).max(axis=1)


def ref_energies(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Per example: the baseline's energy Σb² and the difference's Σ(c−b)²."""
    b, d = flat(baseline), flat(candidate) - flat(baseline)
    return np.stack([(b**2).sum(axis=1), (d**2).sum(axis=1)], axis=1)


def snr_db(signal: np.ndarray | float, noise: np.ndarray | float) -> np.ndarray:
    return 10 * np.log10(np.asarray(signal, dtype=np.float64) / noise)
