"""The one key of a measured value: the config's metric and one of its sub-types.

Both names may hold hyphens (``wmt16-de-en/bleu,none``, ``exact_match,strict-match``), so the ``"metric-sub"``
string results.json and the table show cannot be split back: the engine carries the pair, and ``label`` is for
output only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple


class MetricKey(NamedTuple):
    """A metric's name and one of its sub-types' names."""

    metric: str
    sub_type: str

    @property
    def label(self) -> str:
        """The output string: results.json's key of the value, the table's row."""
        return f"{self.metric}-{self.sub_type}"


def metric_keys(metrics: Iterable[Any]) -> dict[str, MetricKey]:
    """Every sub-type of ``metrics`` (metric configs) by its output label: the way back from a result's key."""
    return {key.label: key for key in (MetricKey(m.name, s.score_key) for m in metrics for s in m.sub_types)}
