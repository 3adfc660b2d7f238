"""The data pipeline's registered components, in Olive's ``{type, params}`` shape.

Five kinds, one registry each: datasets (``load_dataset_config``), pre-processing, post-processing,
dataloaders, and the containers that pick a default for each. A component is a class with a ``Params``
model (its config, validated strictly) and the behaviour of its kind; ``@register_component(kind, name)``
adds one, from olive-eval or a user script, and an entry point in the kind's group adds one from another package. Olive components that olive-eval does not have are registered
as refusals: naming one is an error that says so, never a silent no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import model_validator

from olive_eval.registry import Registry
from olive_eval.strict_model import StrictModel

#: The kinds of component, each with the entry-point group through which other packages add components of it.
GROUPS = {
    "dataset": "olive_eval.datasets",
    "pre-process": "olive_eval.pre_process",
    "post-process": "olive_eval.post_process",
    "dataloader": "olive_eval.dataloaders",
    "container": "olive_eval.containers",
}
KINDS = tuple(GROUPS)


class ComponentParams(StrictModel):
    """A component's config: its ``type`` and its own keys."""

    type: str


class Component:
    """Base of every registered data component."""

    name: ClassVar[str]
    Params: ClassVar[type[ComponentParams]] = ComponentParams

    def __init__(self, params: ComponentParams) -> None:
        self.params = params


C = TypeVar("C", bound=type[Component])


def _adopter(kind: str) -> Callable[[str, Any, str], None]:
    def adopt(name: str, cls: type[Component], origin: str) -> None:
        if not issubclass(cls.Params, ComponentParams):
            raise TypeError(f"has a Params that is not a ComponentParams subclass ({cls.Params!r})")
        cls.name = name
        registries[kind].register(name, cls, origin=origin)

    return adopt


#: One registry per kind; built-ins are the components defined in the modules of ``olive_eval.data``, and other
#: packages add Component subclasses through the kind's entry-point group (:data:`GROUPS`).
registries: dict[str, Registry[Any]] = {
    kind: Registry(
        f"{kind} type", packages=("olive_eval.data",), group=GROUPS[kind], base=Component, adopt=_adopter(kind)
    )
    for kind in KINDS
}


def register_component(kind: str, name: str) -> Callable[[C], C]:
    """Register a component class of ``kind`` (one of :data:`KINDS`) under ``name``."""
    if kind not in registries:
        raise ValueError(f"unknown component kind '{kind}'; kinds: {', '.join(KINDS)}")

    def wrap(cls: C) -> C:
        cls.name = name
        registries[kind].register(name, cls)
        return cls

    return wrap


def build(kind: str, params: ComponentParams) -> Any:
    """An instance of the registered component that ``params`` configures."""
    return registries[kind].get(params.type)(params)


def not_built(kind: str, name: str, note: str) -> None:
    """Register Olive's component ``name`` as one olive-eval refuses by name, saying why."""

    class Refused(ComponentParams):
        @model_validator(mode="before")
        @classmethod
        def _refuse(cls, data: Any) -> Any:
            available = [n for n in registries[kind].names() if n not in _REFUSED[kind]]
            raise ValueError(
                f"{kind} '{name}' is Olive's, but olive-eval does not have it ({note}); "
                f"available: {', '.join(available)}"
            )

    class Placeholder(Component):
        Params = Refused

    _REFUSED.setdefault(kind, set()).add(name)
    register_component(kind, name)(Placeholder)


_REFUSED: dict[str, set[str]] = {}
