"""What scoring a pass gives for each sub-type: its score and the evidence behind it, or the error that stopped it."""

from __future__ import annotations

from dataclasses import dataclass

from olive_eval.config.metric import SubType
from olive_eval.engine.model.evidence import Evidence
from olive_eval.metrics import Score


@dataclass
class Scored:
    """A sub-type's score on the pass, with the evidence a confidence interval or paired goal resamples."""

    sub: SubType
    score: Score
    evidence: Evidence | None = None
    #: Why this sub-type has no score (its neighbours in the metric may have theirs).
    error: Exception | None = None
