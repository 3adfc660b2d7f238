"""Another package adds a text transform and a reduction through entry points (issue 19): the transform works as
a filter, a speech normalizer and an answer normalizer; the reduction in a metric's ``reduction``."""

from __future__ import annotations

import re
import sys
import textwrap

import numpy as np
import pytest

from olive_eval import compute_metric
from olive_eval.data.filters import Repeats, apply_filters, build_filters
from olive_eval.metrics.reductions import build_reduction, reduction_registry
from olive_eval.transforms import transform_registry
from tests.plugins.toy_distribution import install_distribution

PLUGIN = textwrap.dedent(
    '''
    import numpy as np

    from olive_eval.metrics.reductions import Reduction


    def digits_only(text):
        return "".join(c for c in text if c.isdigit() or c.isspace()).strip()


    class BestOf(Reduction):
        """The best sample score of each example."""

        def reduce(self, scores, counts):
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            return np.maximum.reduceat(np.asarray(scores, np.float64), starts)
    '''
)

ENTRY_POINTS = """\
[olive_eval.transforms]
plugin_digits = {module}:digits_only

[olive_eval.reductions]
plugin_best_of = {module}:BestOf
plugin_not_a_reduction = {module}:digits_only
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch, request):
    module = install_distribution(
        tmp_path,
        monkeypatch,
        request,
        name="olive-eval-text-plugin",
        version="0.1",
        source=PLUGIN,
        entry_points=ENTRY_POINTS,
    )
    yield module
    monkeypatch.undo()
    transform_registry.unregister("plugin_digits")
    for name in ("plugin_best_of", "plugin_not_a_reduction"):
        reduction_registry.unregister(name)
    sys.modules.pop(module, None)


def test_a_plugin_transform_works_in_all_three_places(plugin):
    assert apply_filters(build_filters([{"type": "plugin_digits"}]), ["it is 42.", Repeats(["7 apples"])]) == [
        "42",
        ["7"],
    ]
    assert compute_metric("wer", ["room 12 b"], ["room 12"], normalizer="plugin_digits") == 0.0
    assert compute_metric("exact_match", ["#### 12"], ["twelve: 12"], normalizer="plugin_digits") == 1.0


def test_a_plugin_reduction(plugin):
    best = build_reduction("plugin_best_of")
    assert best.name == "plugin_best_of"
    assert best.reduce(np.array([0.0, 1.0, 0.0, 0.0]), np.array([2, 2])).tolist() == [1.0, 0.0]


def test_a_plugin_reduction_that_is_not_one_names_its_distribution(plugin):
    with pytest.raises(ValueError) as info:
        build_reduction("plugin_not_a_reduction")
    assert re.fullmatch(
        r"reduction.type: entry point 'plugin_not_a_reduction = .*:digits_only' \(group olive_eval.reductions\) of distribution "
        r"'olive-eval-text-plugin 0.1' is not a Reduction subclass \(it is a function\)",
        str(info.value),
    )
