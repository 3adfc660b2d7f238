"""lm-eval ``LM`` objects over olive-eval's loaded models, so lm-eval's requests run on the model the run loaded.

A runtime says which of lm-eval's request types it serves (``Runtime.lm_eval_requests``) and builds its adapter
(``Runtime.lm_eval_adapter``): a transformers model is lm-eval's own ``HFLM`` around the loaded module; a GenAI
model is lm-eval's ``onnxruntime-genai`` backend around the loaded ``og.Model``; a Python model is
:class:`PythonLM` here. The request logic (context and continuation tokens, rolling windows, stop sequences)
stays lm-eval's wherever lm-eval has it.
"""

from __future__ import annotations

from typing import Any

from olive_eval.errors import EvaluationError
from olive_eval.lm_eval import lm_eval_package
from olive_eval.lm_eval.options import AdapterOptions

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


def python_lm(obj: Any, call: Any, where: str, options: AdapterOptions) -> Any:
    """:class:`PythonLM` for a Python model object (lm-eval is imported here, on first use)."""
    lm_eval_package()
    from olive_eval.lm_eval.python_lm import PythonLM

    return PythonLM(obj, call, where, options)


def python_requests(obj: Any) -> frozenset[str]:
    """What a Python model object serves: generation through its call; the others through its own methods."""
    own = {r for r in (LOGLIKELIHOOD, ROLLING) if callable(getattr(obj, r, None))}
    return frozenset({GENERATE, *own})
