"""One adapter for a plain function registered where a registry holds step classes (filters, text transforms).

``@register_filter("shout")`` or ``@register_transform("no_articles")`` over ``f(x) -> x`` registers a
:class:`FunctionEntry`: it takes no parameters beyond ``type``, and called with them, as a step class is, it gives
the registry's own function step (a :class:`FunctionStep` subclass) that applies ``f``. The entry is recorded
where ``f`` is defined, so a name taken twice names both functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from olive_eval.registry import Registry


def function_origin(func: Callable[..., Any]) -> str:
    """``file:line`` of a function (its module for one without code), for the registry's collision messages."""
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else str(getattr(func, "__module__", "?"))


class FunctionStep:
    """Mixed into a registry's step class: the step named by its ``type`` that applies ``func``; it pickles by
    reference to ``func``."""

    def __init__(self, params: Any, func: Callable[[Any], Any]) -> None:
        super().__init__(params)  # type: ignore[call-arg]
        self.name = params.type
        self.func = func


class FunctionEntry:
    """What a registry holds for a function: ``Params`` validates its spec, and a call builds ``step(params, func)``."""

    def __init__(self, name: str, func: Callable[[Any], Any], step: type[FunctionStep], params: type[BaseModel]):
        self.name, self.func, self.step, self.Params = name, func, step, params

    def __call__(self, params: BaseModel) -> FunctionStep:
        return self.step(params, self.func)


def register_step(registry: Registry[Any], name: str, obj: Any, base: type, step: type[FunctionStep], how: str) -> None:
    """Register ``obj`` under ``name``: a subclass of ``base`` whose ``Params`` subclass ``base.Params`` (its
    ``name`` set), or a plain function, held as a :class:`FunctionEntry` of ``step``; TypeError naming ``how``
    (the decorator) for anything else."""
    if isinstance(obj, type):
        if not issubclass(obj, base):
            raise TypeError(f"@{how}('{name}') needs a {base.__name__} subclass or a function, got {obj!r}")
        if not issubclass(obj.Params, base.Params):
            raise TypeError(f"@{how}('{name}'): {obj.__name__}.Params must subclass {base.Params.__name__}")
        obj.name = name
        registry.register(name, obj)
    elif callable(obj):
        registry.register(name, FunctionEntry(name, obj, step, base.Params), origin=function_origin(obj))
    else:
        raise TypeError(f"@{how}('{name}') needs a {base.__name__} subclass or a function, got {obj!r}")
