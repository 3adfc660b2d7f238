"""The report in a real headless browser (Debian's chromium, driven by Selenium): it loads from disk with no
console error and no network request, every chart is drawn, and the Pareto chart is not blank.

The checks are first shown to catch what they look for, on pages made to fail them."""

from __future__ import annotations

from pathlib import Path

import pytest

from olive_eval.report.html import write_report
from tests.browser import Browser, PageLoad, missing_browser, problems

from .helpers import TRADE_OFFS, curves_run, failed_and_untimed_run, trade_off_run


@pytest.fixture(scope="module")
def browser():
    if (missing := missing_browser()) is not None:
        pytest.fail(missing)  # CI installs it (.ci/run); never skipped
    driven = Browser()
    yield driven
    driven.close()


def _page(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "page.html"
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>")
    return path


def test_the_checks_see_a_console_error_a_network_request_and_an_empty_chart(browser, tmp_path) -> None:
    page = _page(
        tmp_path,
        "<div class='oe-chart' id='empty'></div><img src='http://127.0.0.1:9/pixel.png'>"
        "<script>throw new Error('drawn wrong')</script>",
    )
    found = problems(browser.open(page, timeout=0.5))  # the chart is never drawn: the wait runs out
    assert any("console error" in line and "drawn wrong" in line for line in found), found
    assert any(line == "network request: http://127.0.0.1:9/pixel.png" for line in found), found
    assert "chart 'empty' is empty" in found


def test_a_page_without_charts_is_a_problem(browser, tmp_path) -> None:
    assert problems(browser.open(_page(tmp_path, "<p>nothing drawn</p>"), timeout=1)) == ["no chart on the page"]


@pytest.fixture(scope="module")
def quickstart_report(quickstart_run) -> Path:
    return write_report(quickstart_run)


#: A mark the quickstart page gets once loaded: gone after any other load or reload of the page.
MARK = "window.oeQuickstartAsLoaded"


@pytest.fixture(scope="module")
def quickstart_loads() -> dict[str, PageLoad]:
    return {}


@pytest.fixture
def quickstart_load(browser, quickstart_report, quickstart_loads) -> PageLoad:
    """The quickstart report as it loaded, for the tests that only read the page: loaded again only when the
    browser no longer shows that load (a load parses and draws the whole page, most of a test's time)."""
    if "load" in quickstart_loads and browser.run(f"return {MARK} === true"):
        return quickstart_loads["load"]
    quickstart_loads["load"] = browser.open(quickstart_report)
    browser.run(f"{MARK} = true")
    return quickstart_loads["load"]


def test_the_quickstart_report_loads_from_disk_with_every_chart_drawn_and_nothing_fetched(
    browser, quickstart_load
) -> None:
    load = quickstart_load
    assert problems(load) == []
    assert {"pareto", "timing-latency"} <= set(load.charts), load.charts
    assert browser.run("return document.body.dataset.chartsDrawn") == "true"


def test_the_pareto_chart_is_drawn_not_blank(browser, quickstart_load) -> None:
    image = browser.screenshot("pareto")
    width, height = image.size
    assert width > 300 and height > 200
    colours = image.getcolors(maxcolors=width * height)
    background = max(colours)[1]
    drawn = sum(count for count, colour in colours if colour != background)
    assert drawn > 0.01 * width * height, f"only {drawn} of {width * height} pixels differ from the background"
    labels = browser.run("return [...document.querySelectorAll('#pareto .textpoint text')].map(t => t.textContent)")
    assert sorted(labels) == ["digits_fp32", "digits_int8"]


def test_choosing_other_metrics_redraws_the_pareto_chart_with_them(browser, quickstart_load) -> None:
    browser.run(f"delete {MARK}")  # the page changes below: the next test that reads it loads it again
    options = browser.run("return [...document.getElementById('pareto-x').options].map(o => o.value)")
    assert "size_on_disk-bytes" in options, options
    browser.run(
        "const s = document.getElementById('pareto-x'); s.value = 'size_on_disk-bytes';"
        "s.dispatchEvent(new Event('change'));"
    )
    title = browser.run("return document.getElementById('pareto').layout.xaxis.title.text")
    assert "size_on_disk-bytes" in title
    xs = browser.run("return document.getElementById('pareto').data.flatMap(t => t.x || [])")
    assert {1210779, 309266} <= {round(x) for x in xs if x is not None}, xs


def test_intervals_are_drawn_as_error_bars(browser, confidence_run) -> None:
    load = browser.open(write_report(confidence_run))
    assert problems(load) == []
    bars = [name for name in load.charts if name.startswith("values-")]
    assert bars, load.charts
    drawn = browser.run(f"return document.querySelectorAll('#{bars[0]} .errorbar').length")
    assert drawn >= 2  # the baseline's and the candidate's


@pytest.mark.parametrize("build", [failed_and_untimed_run, curves_run], ids=["failed-untimed", "curves"])
def test_runs_of_other_shapes_load_cleanly(browser, tmp_path, build) -> None:
    build(tmp_path)
    load = browser.open(write_report(tmp_path))
    assert problems(load) == []
    if build is curves_run:
        drawn = {"pr-acc-pr_curve", "roc-acc-pr_curve", "confusion-acc-confusion_matrix", "reliability-acc-ece"}
        assert drawn <= set(load.charts), load.charts
        points = browser.run("return document.getElementById('reliability-acc-ece').data.map(t => t.y.length)")
        assert points == [2, 2, 2]  # the diagonal, and each model's two non-empty bins


def test_the_pages_front_for_picked_metrics_is_the_one_worked_out_by_hand(browser, tmp_path) -> None:
    trade_off_run(tmp_path)
    assert problems(browser.open(write_report(tmp_path))) == []
    browser.run(
        "const s = document.getElementById('pareto-y'); s.value = 'size-bytes'; s.dispatchEvent(new Event('change'));"
    )
    line, points = browser.run("return document.getElementById('pareto').data.map(t => [t.name, t.x, t.y, t.text])")
    assert line[0] == "Pareto front" and points[0] == "models"
    names = points[3]
    assert [names[points[2].index(y)] for y in line[2]] == ["c", "a", "base"]  # by accuracy, ascending
    assert [TRADE_OFFS[n][2] for n in names] == points[2]  # the y axis is now the size


def test_a_fidelity_report_loads_cleanly_with_its_tables(browser, fidelity_run) -> None:
    load = browser.open(write_report(fidelity_run))
    assert problems(load) == []
    assert browser.run("return document.querySelectorAll('#sec-fidelity #oe-fidelity tbody tr').length") == 3
    tables = browser.run("return [...document.querySelectorAll('#sec-fidelity table.oe-examples')].map(t => t.id)")
    assert "disagree-fid-top1_agreement-far" in tables and len(tables) == 8  # 2 candidates x 4 sub-types
    shown = browser.run("return document.querySelector('#sec-fidelity').getBoundingClientRect().height")
    assert shown > 100
