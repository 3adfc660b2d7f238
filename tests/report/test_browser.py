"""The report in a real headless browser (Debian's chromium, driven by Selenium): it loads from disk with no
console error and no network request, every chart is drawn, and the Pareto chart is not blank.

The checks are first shown to catch what they look for, on pages made to fail them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import Browser, missing_browser, problems


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
    found = problems(browser.open(page, timeout=2))
    assert any("console error" in line and "drawn wrong" in line for line in found), found
    assert any(line == "network request: http://127.0.0.1:9/pixel.png" for line in found), found
    assert "chart 'empty' is empty" in found


def test_a_page_without_charts_is_a_problem(browser, tmp_path) -> None:
    assert problems(browser.open(_page(tmp_path, "<p>nothing drawn</p>"), timeout=1)) == ["no chart on the page"]
