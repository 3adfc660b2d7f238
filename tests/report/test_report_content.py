"""The report of real runs (quickstart, confidence) and of small written ones: what each part shows."""

from __future__ import annotations

import re
from pathlib import Path

from olive_eval.records.results import ModelResult
from olive_eval.report.html import write_report

from .conftest import report, script_json
from .helpers import curves_run, instances, lm_eval_instances, model, small_run, sub, trade_off_run

MAX_BYTES = 5 * 1024 * 1024


def test_quickstart_report_ranks_both_models_with_the_goal(quickstart_run: Path) -> None:
    path = write_report(quickstart_run)
    assert path == quickstart_run / "report.html"
    page, _ = report(quickstart_run)
    ranking = re.search(r"<table class=\"oe-table\" id=\"oe-ranking\">.*?</table>", page, re.S)
    assert ranking is not None
    assert "digits_fp32" in ranking.group(0) and "digits_int8" in ranking.group(0)
    assert "met &gt;= " in ranking.group(0)  # the accuracy goal, against its threshold


def test_quickstart_pareto_has_both_points_and_the_front(quickstart_run: Path) -> None:
    page, figures = report(quickstart_run)
    line, points = figures["pareto"]["data"]
    assert points["text"] == ["digits_fp32", "digits_int8"]
    assert all(v is not None for v in points["x"] + points["y"])
    assert line["name"] == "Pareto front" and len(line["x"]) >= 1
    data = script_json(page, "oe-pareto-data")
    assert (data["x"], data["y"]) == ("accuracy-accuracy_score", "latency-p50")  # the two objectives
    assert "<select id='pareto-x'>" in page and "<select id='pareto-y'>" in page
    assert "id='pareto'" in page


def test_quickstart_latency_chart_has_every_run_in_five_rounds(quickstart_run: Path) -> None:
    _, figures = report(quickstart_run)
    traces = figures["timing-latency"]["data"]
    rounds = [t for t in traces if t["name"].startswith("round")]
    assert [t["name"] for t in rounds] == [f"round {k}" for k in range(1, 6)]
    assert sum(len(t["y"]) for t in rounds) == 2 * 1000  # both models, every run
    assert {t["name"] for t in traces} >= {"p50", "p90"}


def test_confidence_report_draws_error_bars(confidence_run: Path) -> None:
    _, figures = report(confidence_run)
    bars = figures["values-accuracy-accuracy_score"]["data"][0]["error_y"]
    assert all(v is not None and v >= 0 for v in bars["array"] + bars["arrayminus"])
    pareto_points = figures["pareto"]["data"][1]
    assert any(v is not None for v in pareto_points["error_y"]["array"])


def test_confidence_report_shows_worst_examples_beside_the_baseline(confidence_run: Path) -> None:
    page, _ = report(confidence_run)
    assert "Worst examples" in page
    assert "examples compared" in page


def test_the_page_is_small_and_fetches_nothing(quickstart_run: Path) -> None:
    page, _ = report(quickstart_run)
    assert len(page.encode()) < MAX_BYTES
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "cdn.plot.ly" not in page and "mathjax" not in page.lower().replace("mathjaxconfig", "")
    assert "DecompressionStream" in page and "id='oe-plotly-gz'" in page


def test_model_names_and_predictions_are_escaped(tmp_path: Path) -> None:
    bad = "<script>alert(1)</script>"
    small_run(tmp_path, {"base": model("base", 0.9, 2.0), bad: model("x", 0.8, 1.0)})
    instances(tmp_path, "base", "acc", [1.0, 1.0], ["fine", "fine"])
    instances(tmp_path, "x", "acc", [0.0, 1.0], ["<img src=x onerror=alert(2)>", "ok"])
    page = write_report(tmp_path).read_text()
    assert bad not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page  # the worst example, escaped
    assert page.count("<script") == 4  # figures, Pareto data, plotly, the page's script: nothing injected


def test_per_class_curves_and_confusion_matrices(tmp_path: Path) -> None:
    curves_run(tmp_path)
    page, figures = report(tmp_path)
    assert [t["x"] for t in figures["perclass-acc-map"]["data"]] == [["rect", "disk"]] * 2
    assert "table-perclass-acc-map" in page
    pr = figures["pr-acc-pr_curve"]["data"]
    assert len(pr) == 4 and pr[0]["x"] == [0.75, 0.5]  # recall per threshold
    roc = figures["roc-acc-pr_curve"]["data"]
    assert roc[0]["x"] == [1 / 6, 0.0]  # false positive rate
    heatmaps = figures["confusion-acc-confusion_matrix"]["data"]
    assert heatmaps[0]["z"] == [[4, 1], [0, 5]] and [h["visible"] for h in heatmaps] == [False, True]
    diagram = figures["reliability-acc-ece"]  # ece and mce share their bins: one diagram for both
    assert (
        "reliability-acc-mce" not in figures and diagram["layout"]["title"]["text"] == "acc-ece, acc-mce: reliability"
    )
    diagonal, base, cand = diagram["data"]
    assert diagonal["x"] == [0, 1] and base["x"] == cand["x"] == [0.3, 0.9]  # the empty bin has no point
    assert base["y"] == [0.25, 5 / 6] and cand["y"] == [0.25, 0.5] and "4 examples" in base["text"][0]


def test_a_flat_breakdown_is_a_table_of_its_numbers_with_deltas(tmp_path: Path) -> None:
    def wer(hits: int, subs: int) -> dict:
        return {"hits": hits, "substitutions": subs, "deletions": 2, "insertions": 1, "normalizer": "olive"}

    nested = {"per_utterance": [{"hits": 1}]}  # not flat: listed as not drawn
    models = {
        name: ModelResult(
            "ok",
            metrics={
                "speech-wer": sub(0.2, 1, higher=False, details=wer(hits, subs)),
                "speech-odd": sub(0.1, details=nested),
            },
            folder=name,
        )
        for name, hits, subs in (("base", 90, 8), ("cand", 85, 13))
    }
    small_run(tmp_path, models)
    page, _ = report(tmp_path)
    table = page[page.index('id="table-details-speech-wer"') :]
    table = table[: table.index("</table>")]
    cells = re.findall(r"<td>(.*?)</td>", table)
    assert cells[:3] == ["hits", "90", "85 <span class='oe-base'>(Δ -5)</span>"], cells
    assert "substitutions" in cells and "normalizer" not in cells
    assert "speech-odd: a structured value this page does not draw" in page


def test_lm_eval_samples_are_compared_per_task_and_filter(tmp_path: Path) -> None:
    keys = ("gen/exact_match,strict", "gen/exact_match,loose", "mc/acc")
    models = {
        name: ModelResult("ok", metrics={f"copy-{k}": sub(0.5, higher=True) for k in keys}, folder=name)
        for name in ("base", "cand")
    }
    small_run(tmp_path, models)
    lm_eval_instances(tmp_path, "base", "copy", {"gen": ["ok", "ok", "no"], "mc": ["ok", "no"]})
    lm_eval_instances(tmp_path, "cand", "copy", {"gen": ["ok", "bad", "ok"], "mc": ["no", "no"]})
    page, _ = report(tmp_path)
    for key, flips in ((keys[0], "1 flipped right → wrong, 1 wrong → right"), (keys[2], "1 flipped right → wrong, 0")):
        table_id = f'id="examples-copy-{key.replace("/", "_").replace(",", "_")}-cand"'
        assert table_id in page, key
        section = page[page.index(f"copy: {key} — cand") :]
        assert flips in section[: section.index("</table>")]
    rows = page[page.index('id="examples-copy-gen_exact_match_strict-cand"') :]
    rows = rows[: rows.index("</table>")]
    assert "gen #1 (strict)" in rows and "<code>bad</code>" in rows and "<code>ok</code>" in rows


def test_the_pareto_front_is_the_one_worked_out_by_hand(tmp_path: Path) -> None:
    trade_off_run(tmp_path)
    _, figures = report(tmp_path)
    line, points = figures["pareto"]["data"]
    names = points["text"]
    assert [names[points["x"].index(x)] for x in line["x"]] == ["b", "a", "base"]
    diamonds = {n for n, symbol in zip(names, points["marker"]["symbol"], strict=True) if symbol == "diamond"}
    assert diamonds == {"b", "a", "base"}
