"""Semantic segmentation metrics against scikit-learn and torchmetrics on the same label maps."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
from torchmetrics.functional.classification import multiclass_jaccard_index
from torchmetrics.functional.segmentation import mean_iou as tm_mean_iou

from olive_eval.metrics.confusion import confusion_dict, confusion_matrix
from olive_eval.metrics.segmentation import kernels as S

pytestmark = pytest.mark.filterwarnings("ignore")  # scikit-learn warns on undefined values

TOL = 1e-12
IGNORE = 255


def random_maps(rng: np.random.Generator, n: int, shape: tuple[int, int], c: int, dtype=np.uint8, absent=()):
    """Blocky reference maps with some ignored pixels, predictions right about 70% of the time."""
    refs = np.repeat(np.repeat(rng.integers(0, c, (n, shape[0] // 4, shape[1] // 4)), 4, axis=1), 4, axis=2)
    for a in absent:
        refs[refs == a] = (a + 1) % c
    preds = np.where(rng.random(refs.shape) < 0.7, refs, rng.integers(0, c, refs.shape))
    for a in absent:
        preds[preds == a] = (a + 1) % c
    refs[rng.random(refs.shape) < 0.05] = IGNORE
    return preds.astype(dtype), refs.astype(dtype)


def valid_pixels(preds: np.ndarray, refs: np.ndarray, ignore: int | None = IGNORE) -> tuple[np.ndarray, np.ndarray]:
    keep = refs != ignore if ignore is not None else np.ones(refs.shape, bool)
    return preds[keep].astype(np.int64), refs[keep].astype(np.int64)


def nan_equal(a, b, tol: float = TOL) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all((np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= tol)))


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.int32])
def test_confusion_matrices_match_sklearn_and_numpy_bincount(dtype):
    rng = np.random.default_rng(0)
    c = 6
    preds, refs = random_maps(rng, 5, (32, 24), c, dtype=dtype)
    per_image = S.confusion_matrices(preds, refs, c, ignore_index=IGNORE)
    assert per_image.shape == (5, c, c) and per_image.dtype == np.int64
    for i in range(5):
        p, r = valid_pixels(preds[i], refs[i])
        np.testing.assert_array_equal(per_image[i], skm.confusion_matrix(r, p, labels=range(c)))
        np.testing.assert_array_equal(per_image[i], np.bincount(c * r + p, minlength=c * c).reshape(c, c))
    ragged = [preds[0], preds[1][:16, :10]], [refs[0], refs[1][:16, :10]]
    both = S.confusion_matrices(*ragged, c, ignore_index=IGNORE)
    np.testing.assert_array_equal(both[0], per_image[0])
    p, r = valid_pixels(ragged[0][1], ragged[1][1])
    np.testing.assert_array_equal(both[1], skm.confusion_matrix(r, p, labels=range(c)))
    assert confusion_dict(per_image[0], list("abcdef"))["b"]["c"] == int(per_image[0, 1, 2])


@pytest.mark.parametrize("seed", range(3))
def test_iou_precision_recall_f1_accuracy_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    c = 7
    preds, refs = random_maps(rng, 4, (40, 40), c, absent=(5,))  # class 5 absent from both
    preds[0, :4, :4] = 6  # class 6 also predicted where the reference is ignored ...
    refs[refs == 6] = 0  # ... but never a reference label
    scores = S.segmentation_scores(S.confusion_matrices(preds, refs, c, ignore_index=IGNORE).sum(axis=0))
    p, r = valid_pixels(preds, refs)
    labels = list(range(c))

    union = np.bincount(p, minlength=c) + np.bincount(r, minlength=c)
    jac = skm.jaccard_score(r, p, labels=labels, average=None, zero_division=0)
    assert np.isnan(scores.iou[5]) and union[5] == 0 and jac[5] == 0  # sklearn: zero_division; ours: undefined
    defined = union > 0
    assert nan_equal(scores.iou[defined], jac[defined])
    assert scores.mean_iou == pytest.approx(jac[defined].mean(), abs=TOL)

    prec, rec, f1, _ = skm.precision_recall_fscore_support(r, p, labels=labels, zero_division=np.nan)
    assert nan_equal(scores.precision, prec) and nan_equal(scores.recall, rec)
    assert nan_equal(scores.f1[defined], f1[defined]) and np.isnan(scores.f1[5])
    assert scores.pixel_accuracy == pytest.approx(skm.accuracy_score(r, p), abs=TOL)
    np.testing.assert_array_equal(scores.confusion, skm.confusion_matrix(r, p, labels=labels))


@pytest.mark.parametrize("ignore_index", [IGNORE, 0])
def test_mean_iou_matches_torchmetrics_jaccard_index(ignore_index):
    rng = np.random.default_rng(4)
    c = 5
    preds, refs = random_maps(rng, 6, (24, 24), c, absent=(3,))
    refs[refs == IGNORE] = ignore_index  # ignore_index 0: the background class is ignored
    matrix = S.confusion_matrices(preds, refs, c, ignore_index=ignore_index).sum(axis=0)
    p, r = torch.as_tensor(preds.astype(np.int64)), torch.as_tensor(refs.astype(np.int64))
    macro = multiclass_jaccard_index(p, r, num_classes=c, average="macro", ignore_index=ignore_index)
    assert S.mean_iou(matrix, ignore_index=ignore_index) == pytest.approx(float(macro), abs=1e-6)
    per_class = multiclass_jaccard_index(p, r, num_classes=c, average="none", ignore_index=ignore_index)
    ours = S.iou(matrix, ignore_index=ignore_index)
    defined = ~np.isnan(ours)
    assert np.allclose(ours[defined], per_class.double().numpy()[defined], atol=1e-6)
    assert np.isnan(ours[3]) and (ignore_index == IGNORE or np.isnan(ours[ignore_index]))


def test_per_image_mean_iou_matches_torchmetrics_mean_iou():
    rng = np.random.default_rng(8)
    c = 4
    preds, refs = random_maps(rng, 5, (16, 16), c, absent=(2,))
    refs[refs == IGNORE] = 0  # torchmetrics' mean_iou has no ignore index
    per_image = S.confusion_matrices(preds, refs, c)
    p, r = torch.as_tensor(preds.astype(np.int64)), torch.as_tensor(refs.astype(np.int64))
    expected = tm_mean_iou(p, r, num_classes=c, input_format="index").double().numpy()
    assert np.allclose(S.mean_iou(per_image), expected, atol=1e-6)
    expected_per_class = tm_mean_iou(p, r, num_classes=c, input_format="index", per_class=True).double().numpy()
    ours = S.iou(per_image)
    assert np.allclose(np.nan_to_num(ours, nan=-1.0), expected_per_class, atol=1e-6)  # torchmetrics: -1 = absent


def test_torchmetrics_published_mean_iou_vector():
    """torchmetrics' ``mean_iou`` docstring: index input, 4 images, 5 classes -> [0.3617, 0.3128, 0.3047, 0.3499]."""
    preds = torch.randint(0, 2, (4, 16, 16), generator=torch.Generator().manual_seed(42)).numpy()
    target = torch.randint(0, 2, (4, 16, 16), generator=torch.Generator().manual_seed(43)).numpy()
    per_image = S.mean_iou(S.confusion_matrices(preds, target, 5))
    assert np.allclose(per_image, [0.3617, 0.3128, 0.3047, 0.3499], atol=5e-5)
    assert np.allclose(S.iou(S.confusion_matrices(preds, target, 5))[2, :2], [0.2727, 0.3366], atol=5e-5)


def test_resampling_images_is_summing_their_matrices():
    rng = np.random.default_rng(2)
    preds, refs = random_maps(rng, 8, (16, 16), 3)
    per_image = S.confusion_matrices(preds, refs, 3, ignore_index=IGNORE)
    resamples = rng.integers(0, 8, (10, 8))
    stacked = per_image[resamples].sum(axis=1)
    for row, idx in zip(stacked, resamples, strict=True):
        p, r = valid_pixels(preds[idx], refs[idx])
        jac = skm.jaccard_score(r, p, labels=[0, 1, 2], average="macro", zero_division=0)
        assert S.mean_iou(row) == pytest.approx(jac, abs=TOL)
    assert S.mean_iou(stacked).shape == (10,) and S.pixel_accuracy(stacked).shape == (10,)


def test_edge_cases_are_undefined_not_zero():
    empty = S.segmentation_scores(np.zeros((3, 3), np.int64))
    assert np.isnan(empty.mean_iou) and np.isnan(empty.pixel_accuracy) and np.isnan(empty.iou).all()
    all_ignored = S.confusion_matrices(
        np.zeros((2, 4, 4), np.uint8), np.full((2, 4, 4), IGNORE, np.uint8), 3, ignore_index=IGNORE
    )
    assert not all_ignored.any()
    perfect = S.segmentation_scores(confusion_matrix(np.array([0, 0, 2]), np.array([0, 0, 2]), 3))
    assert perfect.mean_iou == 1.0 and np.isnan(perfect.iou[1]) and perfect.pixel_accuracy == 1.0


def test_bad_maps_raise_clear_errors():
    good = np.zeros((2, 4, 4), np.uint8)
    with pytest.raises(ValueError, match=r"image 1: predicted labels must lie in \[0, 2\]"):
        bad = good.copy()
        bad[1, 0, 0] = 3
        S.confusion_matrices(bad, good, 3)
    with pytest.raises(ValueError, match="image 1: predicted map has shape"):
        S.confusion_matrices([good[0], good[1]], [good[0], good[1, :3]], 3)
    with pytest.raises(ValueError, match=r"image 0: reference labels must lie"):
        bad = good.copy()
        bad[0, 1, 1] = 7
        S.confusion_matrices(good, bad, 3, ignore_index=IGNORE)
    with pytest.raises(ValueError, match=r"image 0: reference labels must lie"):
        S.confusion_matrices(good.astype(np.int64), good.astype(np.int64) - 1, 3)
    with pytest.raises(ValueError, match="integer"):
        S.confusion_matrices(good.astype(np.float32), good, 3)
    with pytest.raises(ValueError, match="2 predicted maps but 1"):
        S.confusion_matrices([good[0], good[1]], [good[0]], 3)
    ignored_pred = good.copy()
    ignored_pred[0, 0, 0] = 9  # a bad prediction is an error even where the reference is ignored
    ignored_ref = good.copy()
    ignored_ref[0, 0, 0] = IGNORE
    with pytest.raises(ValueError, match="predicted labels"):
        S.confusion_matrices(ignored_pred, ignored_ref, 3, ignore_index=IGNORE)
