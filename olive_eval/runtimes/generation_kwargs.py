"""Generation options in transformers' names, with the bounds ``generate()`` needs, checked when the config is read.

One model for every model type that generates: an ``HfModel`` (``OpenGenerationKwargs``: other keys of
transformers' ``generate()`` pass through unjudged) and a ``GenAIModel`` (a subclass that adds its own keys and
refuses others). A value out of bounds (``max_new_tokens: -3``, ``temperature: 0``) would otherwise fail only
after the model loaded, or generate nonsense. Configs that keep generation options in a plain dict ask
:func:`generation_kwargs_problem`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from olive_eval.strict_model import StrictModel


class GenerationKwargs(StrictModel):
    """The options both transformers' ``generate()`` and GenAI's search take, bounded; unknown keys are errors."""

    max_new_tokens: int | None = Field(None, ge=1, description="Tokens to generate after the prompt (at least 1).")
    max_length: int | None = Field(None, ge=1, description="Prompt and generated tokens together.")
    min_new_tokens: int | None = Field(None, ge=0, description="End-of-sequence is ignored before this many.")
    do_sample: bool | None = None
    temperature: float | None = Field(None, gt=0)
    top_k: int | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    num_beams: int | None = Field(None, ge=1)
    repetition_penalty: float | None = Field(None, gt=0)

    def passed(self) -> dict[str, Any]:
        """The options as given in the config (no defaults added), for ``generate(**options)``."""
        return self.model_dump(exclude_unset=True)


class OpenGenerationKwargs(GenerationKwargs):
    """:class:`GenerationKwargs` bounded as there; any other key of ``generate()`` is kept as given."""

    model_config = ConfigDict(extra="allow")  # transformers' generate() takes many more options


def generation_kwargs_problem(kwargs: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(key, what is wrong)`` for the first option of ``kwargs`` out of :class:`GenerationKwargs`' bounds, or
    None; keys it does not know are not judged."""
    try:
        OpenGenerationKwargs.model_validate(dict(kwargs))
    except ValidationError as exc:
        error = exc.errors()[0]
        return ".".join(str(part) for part in error["loc"]), error["msg"]
    return None
