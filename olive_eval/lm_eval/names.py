"""Sub-type names of an lm_eval metric: ``task/metric,filter`` (lm-eval's own ``metric,filter`` key under its task).

``task/metric`` means the filter ``none`` (lm-eval's default), and Olive's ``task-metric`` is accepted when one
filter gives that metric, so an Olive ``LMEvaluator`` name still works. Results keep the name as written.
"""

from __future__ import annotations

from dataclasses import dataclass

NO_FILTER = "none"


@dataclass(frozen=True)
class Produced:
    """One value lm-eval reports: ``results[task]["metric,filter"]``, and its direction."""

    task: str
    metric: str
    filter: str
    higher_is_better: bool

    @property
    def name(self) -> str:
        return f"{self.task}/{self.metric},{self.filter}"

    @property
    def result_key(self) -> str:
        return f"{self.metric},{self.filter}"

    @property
    def stderr_key(self) -> str:
        return f"{self.metric}_stderr,{self.filter}"


def resolve(name: str, produced: list[Produced]) -> Produced:
    """The value a sub-type ``name`` means; ValueError listing what the tasks produce when it means none, or
    naming the candidates when Olive's ``task-metric`` fits several filters."""
    by_name = {p.name: p for p in produced}
    if name in by_name:
        return by_name[name]
    if "/" in name and "," not in name and f"{name},{NO_FILTER}" in by_name:
        return by_name[f"{name},{NO_FILTER}"]
    olive = [p for p in produced if f"{p.task}-{p.metric}" == name]
    if len(olive) == 1:
        return olive[0]
    if olive:
        raise ValueError(
            f"sub-type '{name}' (Olive's task-metric form) fits {len(olive)} filters; name one: "
            + ", ".join(p.name for p in olive)
        )
    raise ValueError(f"the tasks do not produce sub-type '{name}'; they produce: {', '.join(by_name)}")
