"""Each judged test starts with the scripted judge's call log empty. Judges live as long as what built them (a
run, a metric used on its own), so no judge is left over from another test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.metrics.judged import scripted


@pytest.fixture(autouse=True)
def fresh_calls() -> Iterator[None]:
    scripted.CALLS.clear()
    yield
