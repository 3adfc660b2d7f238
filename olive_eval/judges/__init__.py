"""Judges for LLM-guided metrics: a user's function, a model olive-eval runs, or (through a function) an HTTP
endpoint. See docs/judged.md."""

from olive_eval.judges.base import Judge, JudgeFailure, JudgeSource, JudgeSpec, forget_judges, resolve_judge
from olive_eval.judges.function import register_judge

__all__ = ["Judge", "JudgeFailure", "JudgeSource", "JudgeSpec", "forget_judges", "register_judge", "resolve_judge"]
