"""Each judged test starts with no judges built and the scripted judge's call log empty (judges and their reply
caches live for the process)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from olive_eval.judges import forget_judges
from tests.metrics.judged import scripted


@pytest.fixture(autouse=True)
def fresh_judges() -> Iterator[None]:
    forget_judges()
    scripted.CALLS.clear()
    yield
    forget_judges()
