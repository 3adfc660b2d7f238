"""What a report is built from: a run's results.json, checked to be ours, with one-line errors naming the file."""

from __future__ import annotations

from pathlib import Path

from olive_eval.errors import UsageError
from olive_eval.records.results import RESULTS_FILE, RunResult
from olive_eval.records.results_load import read_results


def load_run(output_dir: Path) -> RunResult:
    """The run in ``output_dir`` (a folder holding results.json, or the file itself).

    UsageError (exit 2, one line naming the file): no results.json; one that cannot be read, is not valid
    JSON (cut short) or is not an olive-eval results file.
    """
    path = output_dir / RESULTS_FILE if output_dir.is_dir() else output_dir
    if not path.is_file():
        where = output_dir if not output_dir.exists() else path
        raise UsageError(f"{where}: no {RESULTS_FILE} here (give the output folder of an olive-eval run)")
    try:
        result = read_results(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    result.output_dir = str(path.parent)
    return result
