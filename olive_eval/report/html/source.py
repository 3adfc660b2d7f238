"""What a report is built from: a run's results.json, checked to be ours, with one-line errors naming the file."""

from __future__ import annotations

import json
from pathlib import Path

from olive_eval.errors import UsageError
from olive_eval.results import RESULTS_FILE, RunResult
from olive_eval.results_load import run_result_from_dict


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
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON, perhaps cut short ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict) or "baseline" not in data:
        raise UsageError(f"{path}: not an olive-eval results file (it needs 'baseline' and 'models')")
    try:
        result = run_result_from_dict(data, where=str(path))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{path}: not an olive-eval results file ({exc})") from None
    result.output_dir = str(path.parent)
    return result
