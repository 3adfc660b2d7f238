"""What an earlier run left in an output folder, for ``--resume``: its results, the model it died in,
and the config it ran (to say what changed since).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olive_eval.records.results import RESULTS_FILE, RunResult
from olive_eval.records.results_load import read_results


@dataclass
class PreviousRun:
    """An earlier run's results.json, read back."""

    path: Path
    result: RunResult
    #: The model whose status was still ``running``: the process died while evaluating it.
    running: str | None
    #: The run config it ran, as recorded in ``environment["config"]`` (None when not recorded).
    config: dict[str, Any] | None
    config_sha256: str | None

    @property
    def finished(self) -> list[str]:
        """Models evaluated to the end (``ok`` or ``partial``): these need not run again."""
        return [name for name, model in self.result.models.items() if model.evaluated]

    @property
    def unfinished(self) -> list[str]:
        """Models still to do: pending, running, interrupted or failed."""
        return [name for name, model in self.result.models.items() if not model.evaluated]


def previous_run(output_dir: Path) -> PreviousRun | None:
    """The run recorded in ``output_dir/results.json``; None when there is none.

    A results.json that cannot be read back raises ValueError naming the file and the JSON path.
    """
    path = output_dir / RESULTS_FILE
    if not path.is_file():
        return None
    result = read_results(path)
    running = next((name for name, model in result.models.items() if model.status == "running"), None)
    config = result.environment.get("config")
    if config is not None and not isinstance(config, dict):
        raise ValueError(f"{path}: environment.config: expected an object")
    sha = result.environment.get("config_sha256")
    return PreviousRun(path, result, running, config, sha if isinstance(sha, str) else None)


def config_changes(old: Any, new: Any, path: str = "") -> list[str]:
    """JSON paths (``metrics[0].sub_types[1].goal.value``) where ``new`` differs from ``old``: changed,
    added or removed, in document order. Equal configs give an empty list; a change at the top is ``$``."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in [*new, *(k for k in old if k not in new)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in old or key not in new:
                out.append(where)
            else:
                out.extend(config_changes(old[key], new[key], where))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            where = f"{path}[{i}]"
            if i >= len(old) or i >= len(new):
                out.append(where)
            else:
                out.extend(config_changes(old[i], new[i], where))
        return out
    same = type(old) is type(new) and old == new
    return [] if same else [path or "$"]
