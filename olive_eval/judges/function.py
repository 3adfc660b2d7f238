"""A judge that is a user's Python function: ``judge(prompt) -> str``, or a batch form ``judge(prompts) -> [str]``.

The function comes from a ``user_script`` (loaded once per process, checked when the config is validated: a
missing name is one config error listing what the script defines) or, without a script, from the names a script
registered with :func:`register_judge`. An OpenAI-compatible HTTP endpoint is such a function: see
``examples/judge_endpoint``.

As a scoring judge (``reward``), the function is ``f(prompts, responses) -> [float]``: called with whole batches,
the two lists of equal length.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, model_validator

from olive_eval.errors import ConfigError
from olive_eval.judges.base import BatchCall, JudgeModel, JudgeSource, JudgeSpec, OneCall, judge_source_registry
from olive_eval.registry import Registry, RegistryError
from olive_eval.strict_model import LaxPath
from olive_eval.user_module import load_function

__all__ = ["FunctionJudgeSpec", "register_judge"]


class _Named:
    """A function registered as a judge, and whether it takes a list of prompts."""

    def __init__(self, func: Callable[..., Any], batched: bool) -> None:
        self.func, self.batched = func, batched


#: Judges registered by name from user scripts (``@register_judge("my_judge")``).
named_judges: Registry[_Named] = Registry("judge")


def register_judge(name: str, *, batched: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``@register_judge("my_judge")`` over ``f(prompt) -> str`` (``batched=True``: ``f(prompts) -> [str]``).

    A judged metric then names it with ``"judge": {"function": "my_judge"}`` and no ``user_script``.
    """

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        code = getattr(func, "__code__", None)
        origin = f"{code.co_filename}:{code.co_firstlineno}" if code else getattr(func, "__module__", "?")
        named_judges.register(name, _Named(func, batched), origin=origin)
        return func

    return wrap


class FunctionJudgeSpec(JudgeSpec):
    """``{"type": "function", "function": NAME, "user_script": PATH}``; ``batch_function`` for the batch form."""

    function: str | None = Field(None, description="f(prompt) -> str, in user_script (or registered by name)")
    batch_function: str | None = Field(None, description="f(prompts) -> list[str], in user_script: used if given")
    user_script: LaxPath | None = Field(None, description="The script defining the function (relative: to the cwd)")
    script_dir: LaxPath | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for every call; recorded")

    @model_validator(mode="after")
    def _named(self) -> FunctionJudgeSpec:
        if self.returns == "score" and self.batch_function is not None:
            raise ValueError(
                "a scoring function takes whole batches already: name it with function, not batch_function"
            )
        if self.function is None and self.batch_function is None:
            raise ValueError("a function judge names its function (judge.function) or batch_function")
        if self.batch_function is not None and self.user_script is None:
            raise ValueError("judge.batch_function names a function of judge.user_script, which is not given")
        return self


class FunctionSource(JudgeSource):
    Spec: ClassVar[type[JudgeSpec]] = FunctionJudgeSpec
    gives: ClassVar[tuple[str, ...]] = ("text", "score")

    @classmethod
    def check(cls, spec: JudgeSpec) -> None:
        cls._function(spec)  # type: ignore[arg-type]

    @classmethod
    def _function(cls, spec: FunctionJudgeSpec) -> tuple[Callable[..., Any], bool, dict[str, Any]]:
        if spec.user_script is None:
            assert spec.function is not None
            try:
                named = named_judges.get(spec.function)
            except RegistryError as exc:
                raise ValueError(
                    f"judge.function '{spec.function}' is not a registered judge and no "
                    f"judge.user_script is given ({exc})"
                ) from None
            return named.func, named.batched, {"function": spec.function, "registered": True}
        script = Path(spec.user_script).resolve()
        name, batched = (spec.batch_function, True) if spec.batch_function is not None else (spec.function, False)
        assert name is not None
        try:
            func = load_function(script, name, spec.script_dir)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        digest = hashlib.sha256(script.read_bytes()).hexdigest()[:16]
        return func, batched, {"function": name, "user_script": str(script), "script_sha256": digest}

    @classmethod
    def build(
        cls, spec: JudgeSpec, model: JudgeModel | None = None, runtime: Any = None
    ) -> tuple[BatchCall | OneCall, bool, dict[str, Any]]:
        assert isinstance(spec, FunctionJudgeSpec)
        func, batched, identity = cls._function(spec)
        kwargs = dict(spec.kwargs)
        if spec.returns == "score":
            batched = True

            def call(pairs: list[Any]) -> Any:
                return func([p for p, _ in pairs], [r for _, r in pairs], **kwargs)

        else:
            call = (lambda prompts: func(prompts, **kwargs)) if kwargs else func
        return call, batched, {"source": "function", **identity, "batched": batched, "kwargs": kwargs}


judge_source_registry.register("function", FunctionSource)
