"""lm-eval's request types, the ones a run's tasks make, and the check that a model serves them.

What each model type serves, and the lm-eval ``LM`` over a loaded model, are :mod:`olive_eval.lm_eval.serving`'s.
The request logic (context and continuation tokens, rolling windows, stop sequences) stays lm-eval's wherever
lm-eval has it.
"""

from __future__ import annotations

from typing import Any

from olive_eval.errors import EvaluationError

#: lm-eval's request types, and the task output types that make each.
LOGLIKELIHOOD, ROLLING, GENERATE = "loglikelihood", "loglikelihood_rolling", "generate_until"
REQUESTS = (LOGLIKELIHOOD, ROLLING, GENERATE)
REQUEST_OF_OUTPUT = {
    "loglikelihood": LOGLIKELIHOOD,
    "multiple_choice": LOGLIKELIHOOD,
    "loglikelihood_rolling": ROLLING,
    "generate_until": GENERATE,
}


def requests_needed(loaded_tasks: dict[str, Any]) -> dict[str, list[str]]:
    """Request type → the tasks that make it (``{task name: Task}``)."""
    needed: dict[str, list[str]] = {}
    for name, task in loaded_tasks.items():
        request = REQUEST_OF_OUTPUT.get(task.get_config("output_type"), GENERATE)
        needed.setdefault(request, []).append(name)
    return needed


def check_serves(model: str, served: frozenset[str] | set[str], needed: dict[str, list[str]], how: str) -> None:
    """EvaluationError naming the first request type ``model`` cannot serve and the tasks that need it."""
    for request, tasks in needed.items():
        if request not in served:
            can = ", ".join(r for r in REQUESTS if r in served) or "none"
            raise EvaluationError(
                f"model '{model}' cannot serve lm-eval's {request} requests, which task(s) {', '.join(tasks)} make "
                f"({how}; it serves: {can})"
            )
