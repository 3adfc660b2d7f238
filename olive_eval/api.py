"""The public Python surface: ``evaluate(config)``, ``compute_metric``, the session, ``Evaluation``, and
``goals_missed(result, ...)``, the verdict ``olive-eval --fail-on-miss`` exits 3 on.

The run itself is the engine's (:mod:`olive_eval.engine.run.run`); ``evaluate`` is the session
(:mod:`olive_eval.engine.session.session`) run over the config's own candidates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olive_eval.config import RunConfig
from olive_eval.config.executor import ExecutorConfig
from olive_eval.decide.gate import goals_missed
from olive_eval.engine.executors.base import Executor
from olive_eval.engine.run.run import RunInterrupted
from olive_eval.engine.session.session import Evaluation
from olive_eval.metrics.compute import compute_metric
from olive_eval.progress import Progress, silent
from olive_eval.records.results import RunResult

__all__ = ["Evaluation", "RunInterrupted", "compute_metric", "evaluate", "goals_missed"]


def evaluate(
    config: RunConfig | dict[str, Any] | str | Path,
    *,
    output_dir: str | Path | None = None,
    progress: Progress = silent,
    allow_download: bool | None = None,
    executor: str | dict[str, Any] | ExecutorConfig | Executor | None = None,
) -> RunResult:
    """Evaluate the baseline and every candidate, check goals, rank, and write results.json.

    ``config`` is a path to a JSON file, a dict of the same shape, or a :class:`RunConfig`.
    The output directory is checked and held for the run before any model runs. results.json is
    rewritten atomically as each model starts (which it marks ``running``, so a process that dies with it
    leaves its name, beside the finished models' results) and when the run ends, so an interrupted run keeps
    what it had. A model that fails is
    recorded with its error; the others still run. A file that cannot be written (a full disk) does not
    stop the run: it is listed in ``write_errors``. Ctrl-C raises :class:`RunInterrupted`.
    ``allow_download`` overrides the config's ``allow_download`` (the CLI's ``--allow-download``); ``executor``
    its ``executor`` (the CLI's ``--executor``: see :class:`Evaluation`).
    """
    with Evaluation(
        config, output_dir=output_dir, progress=progress, allow_download=allow_download, executor=executor
    ) as session:
        return session.run()
