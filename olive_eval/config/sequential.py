"""The ``sequential`` setting: decide each candidate's goals on as few examples as the evidence needs.

Every model reads the data in one seeded random order; a candidate is scored in growing chunks and stops
once every ranked goal with a ``confidence`` is decided by an anytime-valid confidence sequence (see
docs/sequential.md). Only the settings and their checks live here; the engine does the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from olive_eval.config.components import nested_error
from olive_eval.config.metric import MetricConfig
from olive_eval.strict_model import StrictModel


class SequentialSettings(StrictModel):
    """How a candidate's goals are decided chunk by chunk."""

    min_examples: int = Field(
        description="Examples of the first chunk: nothing is decided before them. At least 1 and at most the "
        "data's examples.",
    )
    chunk: int | None = Field(
        None,
        description="Examples added per later chunk; default: each chunk doubles the examples seen "
        "(min_examples, 2x, 4x, ...), so a candidate is looked at only about log2(N / min_examples) times.",
    )
    seed: int = Field(0, description="Seed of the random order every model reads the data in.")
    method: Literal["betting", "empirical_bernstein"] = Field(
        "betting", description="The confidence sequence: betting (tighter) or empirical_bernstein (closed form)."
    )
    race: bool = Field(
        False,
        description="Also stop a candidate that is, with its goal's confidence, worse on the top objective than "
        "a candidate evaluated before it (keep the best of N). Needs a ranked goal with a confidence.",
    )
    finish: Literal["none", "best"] = Field(
        "none",
        description="'best': evaluate the best candidate on all the data after the sweep, so its headline values "
        "are full-data values; 'none' (default): each candidate keeps the values of the examples it used.",
    )


def check_sequential(settings: SequentialSettings | None, metrics: Sequence[MetricConfig]) -> None:
    """Settings that cannot work whatever the data: bad sizes, racing without a ranked goal to race on."""
    if settings is None:
        return
    if settings.min_examples < 1:
        raise nested_error("sequential.min_examples", f"give at least 1 example, not {settings.min_examples}")
    if settings.chunk is not None and settings.chunk < 1:
        raise nested_error("sequential.chunk", f"give at least 1 example, not {settings.chunk}")
    confident = [
        sub for metric in metrics for sub in metric.sub_types if sub.priority > 0 and sub.goal and sub.goal.confidence
    ]
    if not confident:
        what = "race" if settings.race else "min_examples"
        raise nested_error(
            f"sequential.{what}",
            "sequential needs a ranked goal with a confidence to decide: give a sub-type with a priority a goal "
            "with 'confidence'",
        )


def checkpoints(settings: SequentialSettings, total: int) -> list[int]:
    """The examples seen at each look: min_examples, then doubling (or ``chunk`` more each time), then all."""
    out, seen = [], settings.min_examples
    while seen < total:
        out.append(seen)
        seen = seen + settings.chunk if settings.chunk is not None else 2 * seen
    return [*out, total]
