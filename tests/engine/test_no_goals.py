"""Issue 29 item 10: a run without goals has no goals to meet: ``goals_met`` is null in results.json, and the
console table and the report show '-', while the candidates are still ranked."""

from __future__ import annotations

import json
import re

from olive_eval import evaluate
from olive_eval.report.console import render
from olive_eval.report.html.data_run import ranking_rows
from olive_eval.report.html.tables import ranking_table


def ranked_accuracy(goal: dict | None = None) -> dict:
    sub = {"name": "accuracy_score", "priority": 1, **({"goal": goal} if goal else {})}
    return {"name": "acc", "type": "accuracy", "data_config": "toy", "sub_types": [sub]}


def row(table: str, label: str) -> list[str]:
    return next(line.split()[len(label.split()) :] for line in table.splitlines() if line.startswith(label))


def table_rows(html: str) -> list[list[str]]:
    return [re.findall(r"<td>(.*?)</td>", tr) for tr in html.split("<tr>")[2:]]


def test_without_goals_goals_met_is_null_and_shown_as_a_dash_everywhere(toy):
    result = evaluate(toy.config({"close": 0.05, "far": 1.5}, [ranked_accuracy()]))
    written = json.loads((toy.root / "out" / "results.json").read_text())
    assert [written["models"][n]["goals_met"] for n in ("base", "close", "far")] == [None, None, None]
    assert sorted(written["ranking"]) == ["close", "far"]  # no goal to miss: every candidate is ranked
    assert row(render(result), "goals met") == ["-", "-", "-"]
    rows = ranking_rows(result, ["base", "close", "far"])
    assert [r.goals_met for r in rows] == [None, None, None]
    assert [cells[3] for cells in table_rows(ranking_table(rows))] == ["–", "–", "–"]  # the 'goals met' column


def test_with_a_goal_each_candidate_says_yes_or_no_everywhere(toy):
    result = evaluate(
        toy.config({"close": 0.0, "far": 3.0}, [ranked_accuracy({"type": "max-degradation", "value": 0.01})])
    )
    written = json.loads((toy.root / "out" / "results.json").read_text())
    assert [written["models"][n]["goals_met"] for n in ("base", "close", "far")] == [None, True, False]
    assert row(render(result), "goals met") == ["-", "yes", "no"]
    rows = ranking_rows(result, ["base", "close", "far"])
    assert [r.goals_met for r in rows] == [None, True, False]
    assert [cells[3] for cells in table_rows(ranking_table(rows))] == ["–", "yes", "no"]
