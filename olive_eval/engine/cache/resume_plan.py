"""What ``--resume`` keeps of an earlier run in the same output folder, and what it tells the user.

A model the earlier run finished (``ok`` or ``partial``) is kept when nothing its values depend on changed:
its cache key (:func:`olive_eval.engine.cache.cache_key.key_payload`, without timings) is the same under the
recorded config and the current one. Everything else is evaluated again; timings always are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from olive_eval.config import RunConfig
from olive_eval.engine.cache.cache_key import digest, key_payload
from olive_eval.engine.cache.resume import config_changes, previous_run
from olive_eval.errors import UsageError
from olive_eval.records.results import ModelResult

#: Changed paths named in the note before "and N more".
_SHOWN = 8


def plan_resume(run: RunConfig, recorded: dict[str, Any], out_dir: Path) -> tuple[dict[str, ModelResult], list[str]]:
    """The earlier run's results to keep, by model name, and one line per thing the user should know."""
    try:
        previous = previous_run(out_dir)
    except ValueError as exc:
        raise UsageError(f"--resume: {exc}") from None
    if previous is None:
        raise UsageError(f"--resume: {out_dir} holds no results.json to resume from")
    notes: list[str] = []
    if previous.running is not None:
        notes.append(f"resuming: the previous run died while evaluating '{previous.running}'")
    stopped = [name for name, model in previous.result.models.items() if model.status == "interrupted"]
    if stopped:
        notes.append(f"resuming: the previous run was interrupted while evaluating '{stopped[0]}'")
    if previous.config is None:
        notes.append("resuming: the previous run recorded no config; every model is evaluated again")
        return {}, notes
    changes = config_changes(previous.config, recorded)
    if changes:
        more = f" and {len(changes) - _SHOWN} more" if len(changes) > _SHOWN else ""
        notes.append(f"resuming: the config changed since: {', '.join(changes[:_SHOWN])}{more}")
    try:
        old_run = RunConfig.model_validate(previous.config)
    except ValidationError:
        notes.append("resuming: the previous run's config no longer validates; every model is evaluated again")
        return {}, notes
    old_models = {m.display_name(): m for m in old_run.models()}
    kept: dict[str, ModelResult] = {}
    for model in run.models():
        name = model.display_name()
        old = old_models.get(name)
        if name not in previous.finished or old is None or previous.result.models[name].early_stopped:
            continue  # not finished, new, or stopped early against a baseline that may have changed
        same = digest(key_payload(old_run, old, include_timing=False)) == digest(
            key_payload(run, model, include_timing=False)
        )
        if same:
            kept[name] = previous.result.models[name]
    todo = [m.display_name() for m in run.models() if m.display_name() not in kept]
    notes.append(
        f"resuming: keeping {', '.join(kept) or 'no model'}; evaluating {', '.join(todo) or 'no model'}"
        + (" (timings are measured again)" if kept else "")
    )
    return kept, notes
