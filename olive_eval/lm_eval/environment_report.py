"""lm-eval's environment report, left out of olive-eval's lm-eval runs.

At the end of every ``simple_evaluate`` lm-eval describes the machine for its results: torch's ``collect_env``
(which runs ``pip list`` in a fresh interpreter, 0.4-0.5 s) and ``git describe`` in the working folder. olive-eval
records none of it (its results.json has its own environment block), so a run of several models paid that once per
model for nothing. :func:`without_environment_report` replaces the two steps for the block; they are lm-eval's own
again when the last block open ends, so a user's ``simple_evaluate`` outside a run reports as it always did.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import Any

_lock = threading.Lock()
_open_blocks = 0
_saved: dict[str, Any] = {}


def _no_environment(results: dict[str, Any]) -> None:
    """In place of ``add_env_info``: the results keep no environment description."""


def _no_commit() -> None:
    """In place of ``get_git_commit_hash``: no ``git`` process (the results' ``git_hash`` is None)."""


#: lm_eval.evaluator's name → its stand-in; a name this lm-eval version lacks is left alone.
_STAND_INS = {"add_env_info": _no_environment, "get_git_commit_hash": _no_commit}


@contextmanager
def without_environment_report() -> Iterator[None]:
    """Within the block, ``lm_eval.evaluator`` skips its environment report. Blocks may nest or overlap across
    threads: the first to open replaces the steps, the last to close puts them back."""
    global _open_blocks
    evaluator = import_module("lm_eval.evaluator")
    with _lock:
        if _open_blocks == 0:
            for name, stand_in in _STAND_INS.items():
                if hasattr(evaluator, name):
                    _saved[name] = getattr(evaluator, name)
                    setattr(evaluator, name, stand_in)
        _open_blocks += 1
    try:
        yield
    finally:
        with _lock:
            _open_blocks -= 1
            if _open_blocks == 0:
                for name, original in _saved.items():
                    setattr(evaluator, name, original)
                _saved.clear()
