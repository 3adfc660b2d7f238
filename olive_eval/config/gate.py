"""``fail_on_miss``: which candidates must meet their goals for a CI job to pass (the CLI exits 3 otherwise).

Checked when the config is read, so a gate that can never pass, or that names a model the run does not evaluate,
is a config error before any model runs rather than a surprise exit code after them all.
"""

from __future__ import annotations

from typing import Any

from olive_eval.strict_model import unknown_choice_hint

#: ``True``: some candidate must meet every goal; a list: each named candidate must; ``False``: no gate.
FailOnMiss = bool | list[str]

FAIL_ON_MISS_HELP = (
    "Gate a CI job: the CLI exits 3 when no candidate meets every goal (true), or when a candidate named here "
    "misses one (a list of candidate names). Needs at least one goal. The CLI's --fail-on-miss wins."
)


def gate_problem(setting: Any, candidates: list[str], baseline: str, has_goals: bool) -> tuple[str, str] | None:
    """``(JSON subpath, why)`` when ``setting`` cannot gate this run, None when it can (or is off)."""
    if setting is False:
        return None
    if setting is not True and not (isinstance(setting, list) and all(isinstance(n, str) for n in setting)):
        return "", "give true, false or a list of candidate names"
    if setting == []:
        return "", "name at least one candidate, or give true to pass when any candidate meets every goal"
    if not has_goals:
        return "", "the config sets no goal, so no candidate can miss one; give a sub-type a 'goal'"
    if setting is True:
        return None if candidates else ("", "the config has no candidates to meet the goals")
    for i, name in enumerate(setting):
        if name == baseline:
            return f"[{i}]", f"'{name}' is the baseline (input_model): goals are relative to it, it has none to miss"
        if name not in candidates:
            hint = unknown_choice_hint(name, candidates) if candidates else "; the config has no candidates"
            return f"[{i}]", f"no candidate named '{name}'{hint}"
    return None


def parse_names(text: str) -> list[str]:
    """``--fail-on-miss a,b``: the names, split at commas (a name with a comma goes in the config's list)."""
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise ValueError(f"give candidate names separated by commas, not {text!r}")
    return names
