"""A report page opened from disk in Debian's headless Chromium, driven by Selenium, and what it showed.

The browser runs offline with the flags this machine needs (no background networking, a fresh profile), and
logs both its console and its network events, so a test can assert that the page loaded with no console error
and asked the network for nothing. ``python -m tests.browser PAGE...`` checks pages from the command line
(``.ci/run`` checks every example's report with it).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install chromium chromium-driver"
#: Schemes a self-contained page may load from; anything else went to (or tried) the network. ``chrome-untrusted:``
#: is Chromium's own WebUI (its new-tab page, open before the first page loads, can log a request late): served by
#: the browser itself, never fetched.
LOCAL_SCHEMES = (
    "file:",
    "data:",
    "blob:",
    "about:",
    "chrome:",
    "chrome-untrusted:",
    "chrome-extension:",
    "devtools:",
)
DRAWN = "return [...document.querySelectorAll('.oe-chart')].every(c => c.querySelector('.main-svg') !== null)"


def missing_browser() -> str | None:
    """What to install when Chromium or its driver is missing (the tests fail with it, never skip)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            return f"{path} is missing: {INSTALL}"
    return None


@dataclass
class PageLoad:
    """What a page did when it loaded: console entries, requests other than local files, its charts."""

    console_errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)
    charts: dict[str, int] = field(default_factory=dict)  # chart id -> number of SVG elements drawn in it


class Browser:
    """One headless Chromium for many pages (a start costs about a second)."""

    def __init__(self, width: int = 1280, height: int = 1000) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        self._profile = tempfile.mkdtemp(prefix="olive-eval-chromium-")
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
        ):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))

    def open(self, page: Path, timeout: float = 60.0) -> PageLoad:
        """Load ``page`` from disk and wait until every chart is drawn (or ``timeout`` passes)."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver.get_log("browser")  # drop what an earlier page left
        self.driver.get_log("performance")
        self.driver.get(Path(page).resolve().as_uri())
        with contextlib.suppress(TimeoutException):  # the load below says which chart is empty
            WebDriverWait(self.driver, timeout).until(lambda d: d.execute_script(DRAWN))
        load = PageLoad()
        for entry in self.driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                load.console_errors.append(entry.get("message", ""))
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                url = message["params"]["request"]["url"]
                if not url.startswith(LOCAL_SCHEMES):
                    load.network.append(url)
        load.charts = self.driver.execute_script(
            "const out = {}; document.querySelectorAll('.oe-chart').forEach("
            "c => { out[c.id] = c.querySelectorAll('.main-svg *').length; }); return out;"
        )
        return load

    def run(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def screenshot(self, element_id: str) -> Any:
        """The element's pixels, as a Pillow image."""
        from PIL import Image
        from selenium.webdriver.common.by import By

        png = self.driver.find_element(By.ID, element_id).screenshot_as_png
        return Image.open(io.BytesIO(png)).convert("RGB")

    def close(self) -> None:
        self.driver.quit()
        shutil.rmtree(self._profile, ignore_errors=True)


def problems(load: PageLoad) -> list[str]:
    """Why a page load is not clean: console errors, network requests, charts missing or empty."""
    found = [f"console error: {line}" for line in load.console_errors]
    found += [f"network request: {url}" for url in load.network]
    if not load.charts:
        found.append("no chart on the page")
    found += [f"chart '{name}' is empty" for name, drawn in load.charts.items() if not drawn]
    return found


def main(pages: list[str]) -> int:
    """Check each page; print one line per problem; exit 1 when any page has one."""
    if (missing := missing_browser()) is not None:
        print(f"browser check: {missing}", file=sys.stderr)
        return 2
    browser = Browser()
    bad = 0
    try:
        for page in pages:
            found = problems(browser.open(Path(page)))
            for line in found:
                print(f"{page}: {line}", file=sys.stderr)
            bad += bool(found)
            if not found:
                print(f"{page}: loaded, every chart drawn, no console error, no network request")
    finally:
        browser.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
