"""The install steps the READMEs give agree with each other and with pyproject.toml."""

import re
from importlib.metadata import requires
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "examples").glob("*/README.md")), *sorted((REPO / "docs").glob("*.md"))]
#: The only install commands a page may give: torch's CPU wheel, the package, the dev extras, the examples' extras,
#: Olive beside olive-eval, the extras of lm-eval, the embedding metrics, ray and the report.
INSTALLS = {
    "pip install torch==2.13.0",
    "pip install .",
    'pip install -e ".[dev]"',
    'pip install ".[examples]"',
    'pip install ".[olive]"',
    'pip install ".[lm_eval]"',
    'pip install ".[embeddings]"',
    'pip install ".[ray]"',
    'pip install ".[report]"',
}
#: The extra each example's README must name (the quickstart needs only olive-eval itself).
EXAMPLE_EXTRAS = {"quickstart": None, "olive_workflow": "olive", "judge_endpoint": None, "reward": None}


def pip_commands(text: str) -> list[str]:
    return [m.group(0).strip().rstrip("`") for m in re.finditer(r"pip install [^\n&#`]*", text)]


def test_every_page_gives_the_same_install_commands():
    found = {f"{page.relative_to(REPO)}: {cmd}" for page in PAGES for cmd in pip_commands(page.read_text())}
    assert {line for line in found if line.split(": ", 1)[1] not in INSTALLS} == set()


def test_each_example_that_needs_packages_names_its_extra():
    for readme in sorted((REPO / "examples").glob("*/README.md")):
        extra = EXAMPLE_EXTRAS.get(readme.parent.name, "examples")
        if extra is not None:
            assert f'pip install ".[{extra}]"' in readme.read_text(), readme


def test_the_dev_install_has_every_package_the_examples_need():
    def extra(name: str) -> set[str]:
        marker = f'extra == "{name}"'
        return {re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower() for req in requires("olive-eval") if marker in req}

    assert extra("examples") and extra("examples") <= extra("dev")
    assert extra("olive") and extra("olive") <= extra("dev")


def test_timings_in_the_example_pages_are_ranges_on_a_named_machine():
    for readme in sorted((REPO / "examples").glob("*/README.md")):
        for line in readme.read_text().splitlines():
            if re.search(r"#.*\d+ (s|min)\b", line):  # a timing in a command's comment
                assert re.search(r"\d+(\.\d+)?-\d+(\.\d+)? (s|min)\b", line) and "2-core" in line, f"{readme}: {line}"
