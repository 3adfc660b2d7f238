"""olive-eval as the evaluator of an Olive workflow (``olive run``).

Importing this package registers :class:`~olive_eval.olive.evaluator.OliveEvalEvaluator` in Olive's evaluator
registry under ``"OliveEval"``; a workflow's evaluator names it with ``"type": "OliveEval"`` and points its
``user_script`` at :data:`USER_SCRIPT` (``olive-eval olive-script`` prints that path). See docs/olive.md.
"""

from __future__ import annotations

from pathlib import Path

try:
    import olive.evaluator.olive_evaluator  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "olive_eval.olive plugs olive-eval into Microsoft Olive, which is not installed: "
        'pip install "olive-eval[olive]" (olive-ai 0.13)'
    ) from exc

from olive_eval.olive.evaluator import EVALUATOR_TYPE, OliveEvalEvaluator, register

#: The file a workflow's evaluator ``user_script`` names: importing it registers the evaluator.
USER_SCRIPT = Path(__file__).with_name("user_script.py")

register()

__all__ = ["EVALUATOR_TYPE", "USER_SCRIPT", "OliveEvalEvaluator", "register"]
