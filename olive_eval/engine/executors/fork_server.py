"""Starting the ``process`` executor's children: multiprocessing's fork server, started once with what every
child imports (the engine, the run's runtimes, the libraries a first batch needs), so each child forks from it
in milliseconds; and a child started without importing the parent's ``__main__`` again. The server is forked
from this process where that is clean (:mod:`olive_eval.engine.executors.forked_server`), else started as a new
interpreter that imports them.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def main_not_imported() -> Iterator[None]:
    """Start a child without it importing the parent's ``__main__`` again, as multiprocessing would: a user's
    optimization-loop script without a ``__name__`` guard would run again in every child (and ``python -``
    has no file to import). Nothing the child unpickles lives in ``__main__``."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {key: main.__dict__[key] for key in ("__file__", "__spec__") if key in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def fork_context(preload: list[str]) -> Any:
    """The fork server's context (spawn where there is none). Where the server cannot be forked from this
    process (:func:`~olive_eval.engine.executors.forked_server.why_not_forked`), the stdlib's is started now,
    with ``preload`` imported, beside the run's data loading; else :func:`ensure_server` forks it before the
    first child."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    from olive_eval.engine.executors.forked_server import why_not_forked

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload)  # read when the server starts: the first run's list stays
    if why_not_forked() is not None:
        forkserver.ensure_running()
    return context


def ensure_server(context: Any, preload: list[str]) -> None:
    """Before a child starts: the fork server forked from this process where it can be, now that the run's data
    is open and the libraries a first batch touches are warm (a child forked from it pays neither again);
    otherwise the stdlib starts its own (a new interpreter) as the child starts, if none runs yet."""
    if context.get_start_method() == "forkserver":
        from olive_eval.engine.executors.forked_server import ensure_forked

        ensure_forked(preload)


#: What a child would import on its first batch or record (``pyarrow.compute`` alone is a third of a second).
LAZY_IMPORTS = ("numpy", "pyarrow", "pyarrow.compute", "pyarrow.json", "pyarrow.parquet", "psutil")


def engine_modules() -> set[str]:
    """olive-eval's modules this process has imported (the config's and the engine's), and those every unit
    needs; the fork server imports them once."""
    loaded = {
        name
        for name in list(sys.modules)
        if name.startswith("olive_eval.") and not name.startswith("olive_eval.engine.executors.ray")
    }
    return loaded | {
        "olive_eval.engine.executors.worker",
        "olive_eval.engine.passes.shards",
        "olive_eval.records.parquet",
        "olive_eval.data.collate",
    }


def runtime_module(model_type: str) -> str | None:
    """The module that registers ``model_type``, for a child to import ahead of its unit."""
    from olive_eval.registry import indexed_module

    return indexed_module("model type", model_type)
