"""Judges for LLM-guided metrics: a user's function, a model olive-eval runs, or (through a function) an HTTP
endpoint. A run plans, loads and closes its judges (:mod:`olive_eval.engine.run.judges`); see docs/judged.md."""

from olive_eval.judges.base import Judge, JudgeFailure, Judges, JudgeSource, JudgeSpec, judge_key, judges_of
from olive_eval.judges.function import register_judge

__all__ = ["Judge", "JudgeFailure", "JudgeSource", "JudgeSpec", "Judges", "judge_key", "judges_of", "register_judge"]
