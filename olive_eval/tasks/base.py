"""The task registry: one name (and its aliases) → one Task subclass that declares everything a task decides.

A task declares the transformers classes its model loads as (``model_classes``), how its model is called
(``call_modes``, see :meth:`Task.call_mode`), its default pre-process, post-process and dataloader (a
``HuggingfaceContainer`` gives them to a data config whose ``pre_process_data_config.task`` names it), the outputs
its runtime adds to a forward pass (``provides``) and the metric sub-types it allows (``metrics``, Olive's vision
task check). Transformers' and Olive's spellings are both its names (``ner`` is ``token-classification``).

This floor holds declarations only: component and metric types are named, never imported, so the data and
runtime floors ask it without importing up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar

from olive_eval.registry import Registry, RegistryError
from olive_eval.strict_model import closest
from olive_eval.tasks.call_mode import CallMode


class Task:
    """A registered task; subclasses set the class attributes (``name`` is set when registered)."""

    name: ClassVar[str]
    #: Other names of the task (Olive's spelling beside transformers').
    aliases: ClassVar[tuple[str, ...]] = ()
    #: transformers auto classes an ``HfModel`` of the task loads as, tried in order.
    model_classes: ClassVar[tuple[str, ...]] = ()
    #: The ways its model can be called; the first is how it is called on inputs that no post-process reads.
    call_modes: ClassVar[tuple[CallMode, ...]] = (CallMode.FORWARD,)
    #: Default component types (a ``HuggingfaceContainer`` gives them where the data config names none).
    pre_process: ClassVar[str | None] = None
    post_process: ClassVar[str | None] = None
    dataloader: ClassVar[str | None] = None
    #: Outputs the runtime adds to a forward pass's (:mod:`olive_eval.tasks.runtime_outputs`).
    provides: ClassVar[tuple[str, ...]] = ()
    #: The metric sub-types it allows among those some task restricts; None: any (Olive's vision task check).
    metrics: ClassVar[tuple[str, ...] | None] = None

    @classmethod
    def call_mode(cls, decodes: bool | None) -> CallMode:
        """How the model is called on a pass whose post-process decodes generated tokens (``decodes``) or reads
        the model's outputs as they are, or on inputs without a post-process (None: the task's first mode).
        ValueError when the post-process decodes generated tokens and the task never generates."""
        if decodes is None:
            return cls.call_modes[0]
        wanted = CallMode.GENERATE if decodes else CallMode.FORWARD
        if wanted in cls.call_modes:
            return wanted
        if decodes:
            raise ValueError(
                f"task '{cls.name}' does not generate (its model is called {cls.call_modes[0].value}), so there are "
                "no generated tokens to decode"
            )
        return cls.call_modes[0]

    @classmethod
    def default_component(cls, key: str) -> str | None:
        """The component type the task gives for a data-config ``key`` (``pre_process_data_config``...), if any."""
        return {
            "pre_process_data_config": cls.pre_process,
            "post_process_data_config": cls.post_process,
            "dataloader_config": cls.dataloader,
        }.get(key)


def _adopt(name: str, cls: type[Task], origin: str) -> None:
    """A task from another package's entry point (group ``olive_eval.tasks``), under its name and aliases."""
    cls.name = name
    for key in (name, *cls.aliases):
        task_registry.register(key, cls, origin=origin)


#: Task names and aliases → Task subclasses: the modules of ``olive_eval.tasks`` register the built-in ones, and
#: other packages add Task subclasses through the entry-point group ``olive_eval.tasks``.
task_registry: Registry[type[Task]] = Registry(
    "task", packages=("olive_eval.tasks",), group="olive_eval.tasks", base=Task, adopt=_adopt
)

T = TypeVar("T", bound=type[Task])


def register_task(name: str) -> Callable[[T], T]:
    """Register a Task subclass under ``name`` and each of its ``aliases``."""

    def wrap(cls: T) -> T:
        cls.name = name
        for key in (name, *cls.aliases):
            task_registry.register(key, cls)
        return cls

    return wrap


def _all_tasks() -> set[type[Task]]:
    """Every task, the plugins' loaded (a plugin's aliases are names only once its entry point is loaded). A plugin
    that cannot load is left out here: it is one line when its own name is used."""
    found = set()
    for key in task_registry.names():
        try:
            found.add(task_registry.get(key))
        except RegistryError:
            continue
    return found


def find_task(name: str) -> type[Task] | None:
    """The task of a name or alias, or None."""
    if name not in task_registry:
        _all_tasks()
    return task_registry.get(name) if name in task_registry else None


def task_names() -> list[str]:
    """Every task once, by its own name, its aliases in brackets: ``token-classification (ner)``."""
    return sorted(f"{t.name} ({', '.join(t.aliases)})" if t.aliases else t.name for t in _all_tasks())


def task_problem(name: str) -> str | None:
    """Why ``name`` is no task (the closest name and the known tasks), or None."""
    if find_task(name) is not None:
        return None
    match = closest(name, task_registry.names())
    hint = f"did you mean '{match}'? " if match else ""
    return f"unknown task '{name}'; {hint}tasks: {', '.join(task_names())}"


def get_task(name: str) -> type[Task]:
    """The task of a name or alias; RegistryError naming the known tasks otherwise."""
    task = find_task(name)
    if task is None:
        raise RegistryError(task_problem(name))
    return task


def check_task_metrics(task: str | None, sub_types: Sequence[str]) -> None:
    """Olive's vision task check: ValueError, with Olive's messages, when a sub-type that some task restricts
    (a name in a task's ``metrics``) does not suit ``task``, the data config's task (None: no check)."""
    restricting = {t for t in _all_tasks() if t.metrics is not None}
    restricted = [name for name in sub_types if any(name in t.metrics for t in restricting)]  # type: ignore[operator]
    if task is None or not restricted:
        return
    own = find_task(task)
    if own is not None and own.metrics is None:
        return  # a task that restricts nothing
    if own is None:
        supported = sorted(t.name for t in restricting)
        raise ValueError(f"Unknown vision task type '{task}'. Supported task types: {supported}.")
    allowed = sorted(own.metrics)  # type: ignore[arg-type]
    for name in restricted:
        if name not in allowed:
            raise ValueError(
                f"Metric sub-type '{name}' is not compatible with task type '{task}'. "
                f"Allowed metrics for '{task}': {allowed}."
            )
