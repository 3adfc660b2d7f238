"""Finding and loading an lm_eval metric's tasks before any model loads.

Local tasks come from ``include_path``; a name not found there is looked up among lm-eval's built-in tasks
(indexing them takes seconds, so only then). A task whose data would have to be downloaded fails here, in one
line, unless the run allows downloads. What each task produces (every metric under every filter, with lm-eval's
direction) is read from the loaded task, so a sub-type name is checked before any model runs.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from olive_eval.huggingface_env import hub_dataset_cached, offline
from olive_eval.lm_eval import lm_eval_package
from olive_eval.lm_eval.names import NO_FILTER, Produced
from olive_eval.lm_eval.options import LmEvalOptions
from olive_eval.strict_model import closest

#: ``datasets`` builders that read local files (``dataset_path: json`` with ``data_files``).
LOCAL_BUILDERS = {"json", "csv", "parquet", "arrow", "text", "pandas", "imagefolder", "audiofolder"}


class TaskProblem(ValueError):
    """A task cannot be used; ``index`` is the position in ``tasks`` it concerns (None: the whole list)."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


@dataclass
class LoadedTasks:
    """lm-eval's loaded tasks and groups (``TaskManager.load``), what they produce, and the manager."""

    manager: Any
    loaded: dict[str, Any]
    #: What each name loaded as (a Task, a Group, or a tag's Tasks), for lm-eval to run without loading again
    top: list[Any] = field(default_factory=list)
    produced: list[Produced] = field(default_factory=list)


@contextmanager
def quiet_lm_eval() -> Iterator[None]:
    """lm-eval logs every task it builds at INFO and WARNING, it and ``datasets`` draw progress bars on stderr, and
    a process it starts may print to the process's stderr; a run reports through its own lines, so all of it is
    kept off the output for the block (Python's stderr and the process's)."""
    logger = logging.getLogger("lm_eval")
    level = logger.level
    logger.setLevel(logging.ERROR)
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(io.StringIO()):
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        logger.setLevel(level)


def needs_download(dataset_path: str | None) -> bool:
    """Whether a task's dataset is neither local files nor in the Hugging Face cache."""
    if not dataset_path or dataset_path in LOCAL_BUILDERS or Path(dataset_path).exists():
        return False
    return not hub_dataset_cached(dataset_path)


#: Task indexes built in this process, newest last (at most ``KEPTMANAGERS``), by :func:`_index_key`.
MANAGERS: dict[tuple[Any, ...], Any] = {}
KEPTMANAGERS = 4

#: The files a task folder's index is read from (lm-eval reads YAML; a task's ``!function`` names a .py).
TASK_FILES = (".yaml", ".yml", ".py")


def _index_key(paths: list[Path], defaults: bool) -> tuple[Any, ...]:
    """What a TaskManager's index depends on: the folders, lm-eval's built-ins or not, and each task file's
    path, size and modification time (a file edited, added or removed indexes again)."""
    files = []
    for folder in paths:
        root = Path(folder)
        found = [root] if root.is_file() else sorted(f for f in root.rglob("*") if f.suffix in TASK_FILES)
        for f in found:
            stat = f.stat()
            files.append((str(f), stat.st_size, stat.st_mtime_ns))
    return (tuple(str(p) for p in paths), defaults, tuple(files))


def task_manager(paths: list[Path], defaults: bool) -> Any:
    """lm-eval's TaskManager for ``paths`` (and its built-in tasks with ``defaults``), built once per process
    while no task file changes: indexing lm-eval's ~15k built-in tasks takes about 10 s, once per run
    before (issue 34)."""
    key = _index_key(paths, defaults)
    if key in MANAGERS:
        MANAGERS[key] = MANAGERS.pop(key)  # the newest now
        return MANAGERS[key]
    manager = _build(paths, defaults)
    MANAGERS[key] = manager
    while len(MANAGERS) > KEPTMANAGERS:
        MANAGERS.pop(next(iter(MANAGERS)))
    return manager


def _build(paths: list[Path], defaults: bool) -> Any:
    from lm_eval.tasks import TaskManager  # importable: load_tasks, the way in, checked

    with quiet_lm_eval():
        return TaskManager(include_path=[str(p) for p in paths] or None, include_defaults=defaults)


#: lm-eval's built-in tasks alone, indexed at most once per process (they change only with lm-eval itself), kept
#: apart from ``MANAGERS`` so that no number of task folders evicts them.
BUILT_INS: dict[str, Any] = {}


def built_in_tasks() -> Any:
    """The index of lm-eval's built-in tasks without any folder: what a name missing from every task folder is
    looked up in (a mistyped name no longer indexes the built-ins again for each folder, issue 34)."""
    if "manager" not in BUILT_INS:
        BUILT_INS["manager"] = _build([], defaults=True)
    return BUILT_INS["manager"]


def _describe_local(manager: Any) -> str:
    names = [n for n in manager.all_tasks if n in manager.all_subtasks or n in manager.all_groups]
    if not names:
        return "no local tasks (give include_path: a folder of task YAML files)"
    parts = []
    for name in names:
        cfg = manager.task_index[name].cfg or {}
        where = cfg.get("dataset_path")
        parts.append(f"{name} (needs a download: {where})" if needs_download(where) else name)
    return "local tasks: " + ", ".join(parts)


def _find(options: LmEvalOptions) -> Any:
    """A TaskManager that knows every task named: the local one, or with lm-eval's built-ins when needed."""
    for path in options.include_path:
        if not Path(path).exists():
            raise TaskProblem(f"include_path '{path}' does not exist")
    local = task_manager(list(options.include_path), defaults=False)
    missing = [(i, t) for i, t in enumerate(options.tasks) if t not in local.task_index]
    if not missing:
        return local
    built_in = built_in_tasks()
    for i, name in missing:
        if name not in built_in.task_index:
            # the folders' index over the built-ins, as one TaskManager of both would have it (folders win a name)
            every = set(local.all_tasks) | set(built_in.all_tasks)
            leaves = set(local.all_subtasks) | (set(built_in.all_subtasks) - set(local.all_tasks))
            guess = closest(name, local.all_tasks) or closest(name, every)
            hint = f"did you mean '{guess}'? " if guess else ""
            raise TaskProblem(
                f"unknown lm-eval task '{name}'; {hint}{_describe_local(local)}; lm-eval's built-in tasks "
                f"({len(leaves):,}) read hub datasets: they need --allow-download unless already cached",
                i,
            )
    return task_manager(list(options.include_path), defaults=True) if options.include_path else built_in


def _check_local(manager: Any, options: LmEvalOptions, allow_download: bool) -> None:
    """Every leaf task of every name reads local data or cached data, unless downloads are allowed."""
    if allow_download:
        return
    for i, name in enumerate(options.tasks):
        for leaf in _leaves(manager, name):
            cfg = manager.task_index[leaf].cfg or {} if leaf in manager.task_index else {}
            dataset = cfg.get("dataset_path")
            if needs_download(dataset):
                raise TaskProblem(
                    f"task '{leaf}' reads dataset '{dataset}', which is not in the local Hugging Face cache; "
                    'run with --allow-download (or "allow_download": true) to fetch it, or point the task\'s '
                    "dataset_path/data_files at local files",
                    i,
                )


def _leaves(manager: Any, name: str) -> list[str]:
    """The task names under a group or tag (the name itself for a task), from the index, without loading."""
    entry = manager.task_index.get(name)
    if entry is None or name in manager.all_subtasks:
        return [name]
    children = (entry.cfg or {}).get("task") if entry.cfg else None
    if isinstance(children, list):
        return [leaf for child in children if isinstance(child, str) for leaf in _leaves(manager, child)]
    return [name]


def _relative_files(files: Any, folder: Path) -> Any:
    """``data_files`` (a path, a list, or a dict of either) with each relative path that exists beside the task's
    YAML made absolute; None when nothing changes."""
    changed = False

    def fix(value: Any) -> Any:
        nonlocal changed
        if (
            isinstance(value, str)
            and not Path(value).is_absolute()
            and "://" not in value
            and (folder / value).exists()
        ):
            changed = True
            return str(folder / value)
        return value

    if isinstance(files, dict):
        out: Any = {k: [fix(v) for v in vs] if isinstance(vs, list) else fix(vs) for k, vs in files.items()}
    elif isinstance(files, list):
        out = [fix(v) for v in files]
    else:
        out = fix(files)
    return out if changed else None


def _spec(manager: Any, name: str) -> Any:
    """What to load for ``name``: the name, or, for a local task whose ``data_files`` are relative to its YAML file
    (lm-eval would read them from the working directory), its config with those paths made absolute."""
    entry = manager.task_index.get(name)
    if entry is None or entry.yaml_path is None or name not in manager.all_subtasks:
        return name
    files = ((entry.cfg or {}).get("dataset_kwargs") or {}).get("data_files")
    if files is None or _relative_files(files, Path(entry.yaml_path).parent) is None:
        return name
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(entry.yaml_path, resolve_func=True)
    kwargs = dict(cfg.get("dataset_kwargs") or {})
    kwargs["data_files"] = _relative_files(kwargs.get("data_files"), Path(entry.yaml_path).parent)
    return {**cfg, "dataset_kwargs": kwargs}


def _produced(loaded: dict[str, Any]) -> list[Produced]:
    produced = []
    for name, task in loaded["tasks"].items():
        directions = task.higher_is_better() or {}
        filters = [f.name for f in getattr(task, "_filters", [])] or [NO_FILTER]
        produced += [Produced(name, m, f, bool(directions.get(m, True))) for f in filters for m in directions]
    for name, group in loaded["groups"].items():
        directions = {}
        for task in group.get_all_tasks():
            directions.update(task.higher_is_better() or {})
        for agg in group.aggregate_metric_list or []:
            for f in agg.filter_list or [NO_FILTER]:
                produced.append(Produced(name, agg.metric, f, bool(directions.get(agg.metric, True))))
    return produced


def load_tasks(options: LmEvalOptions, allow_download: bool) -> LoadedTasks:
    """The metric's tasks, loaded with their data (offline unless allowed); :class:`TaskProblem` when a name is
    unknown, a task's data is not local, or a task fails to build."""
    lm_eval_package()  # lm-eval still importable, whether or not this process indexed the tasks before
    manager = _find(options)
    _check_local(manager, options, allow_download)
    loaded: dict[str, Any] = {"tasks": {}, "groups": {}, "group_map": {}}
    top: list[Any] = []
    with offline(allow_download), quiet_lm_eval():
        for i, name in enumerate(options.tasks):
            try:
                one = manager.load([_spec(manager, name)])
            except Exception as exc:
                message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                where = "" if allow_download else " (downloads are off: --allow-download fetches remote data)"
                raise TaskProblem(
                    f"lm-eval could not load task '{name}': {type(exc).__name__}: {message}{where}", i
                ) from exc
            top += [one["groups"][name]] if name in one["groups"] else list(one["tasks"].values())
            for part in loaded:
                loaded[part].update(one[part])
    return LoadedTasks(manager, loaded, top, _produced(loaded))
