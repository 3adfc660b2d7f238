"""lm-eval's metric ``output_type``, read in olive-eval as how the model must be called for the predictions the
metric scores.

lm-eval registers a metric with the request type its task makes: ``generate_until`` scores generated text,
``loglikelihood``, ``multiple_choice`` and ``loglikelihood_rolling`` score what one forward pass gives (the
log-probability of a continuation, the choice of highest score, a text's total log-likelihood). olive-eval has
no request types; what tells these apart is the pass's call mode (:class:`olive_eval.tasks.call_mode.CallMode`):
a generating pass, or a forward pass. So a metric registered with an ``output_type`` is checked when the run is
planned against the call mode of each pass that scores it, and a mismatch (a ``generate_until`` metric over a
forward pass, a ``multiple_choice`` one over decoded generations) is a one-line config error. A model called as a
plain callable (a Python function, an ONNX graph) decides itself, so nothing is checked for it.
"""

from __future__ import annotations

#: lm-eval's output types, and whether each scores generated output (else a forward pass's).
GENERATES = {
    "generate_until": True,
    "loglikelihood": False,
    "multiple_choice": False,
    "loglikelihood_rolling": False,
}


def check_output_type(metric: str, output_type: str | None) -> None:
    """ValueError naming the metric when ``output_type`` is not one of lm-eval's."""
    if output_type is not None and output_type not in GENERATES:
        raise ValueError(
            f"metric '{metric}': output_type {output_type!r} is not one of {', '.join(map(repr, GENERATES))}"
        )


def output_type_problem(output_type: str | None, generates: bool | None) -> str | None:
    """Why a metric of ``output_type`` cannot score a pass that generates (``generates`` True), runs forward
    (False), or is a plain call (None: the model decides); None when it can."""
    if output_type is None or generates is None or GENERATES[output_type] == generates:
        return None
    wants = "generated text" if GENERATES[output_type] else "a forward pass's scores"
    return f"output_type '{output_type}' scores {wants}"
