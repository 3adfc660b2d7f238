"""The run's log file: what third-party libraries log and warn while a run holds its output folder.

transformers, Ray and Olive each give their logger a handler of their own on import (stderr; Olive's on stdout)
and stop it propagating, so their log lines and warnings would land between the run's progress lines and in the
table on stdout. While a run works (not merely holds its folder: inside `olive run` the session stays open for the
whole workflow, and Olive's own log lines between its calls are the host's), those loggers write to
:data:`LOG_FILE` in it instead, as
:func:`olive_eval.lm_eval.tasks.quiet_lm_eval` keeps lm-eval's off the output for its block: the logger's state
is saved, changed for the block and restored after it. A handler a library adds during the run (one imported
mid-run) is held back with the saved ones, and given back when the run ends; Python warnings raised from these
packages go to the same file.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

#: Beside results.json; written only when a library logs something.
LOG_FILE = "olive-eval.log"
#: The loggers (and packages, for warnings) kept off the run's terminal output.
NOISY = ("transformers", "ray", "olive", "lm_eval", "datasets", "huggingface_hub")


class _HeldBack(list):  # type: ignore[type-arg]
    """A logger's handler list during a run: only the run log's handler is live; one the library adds during
    the run is kept aside (``held``) and added to the logger's own handlers when the run ends."""

    def __init__(self, live: logging.Handler, held: list[logging.Handler]) -> None:
        super().__init__([live])
        self.held = held

    def append(self, handler: logging.Handler) -> None:
        if handler not in self.held:
            self.held.append(handler)

    def remove(self, handler: logging.Handler) -> None:
        if handler in self.held:
            self.held.remove(handler)
        else:
            super().remove(handler)

    def __contains__(self, handler: object) -> bool:
        return handler in self.held or super().__contains__(handler)


class RunLog:
    """``open()`` routes the :data:`NOISY` loggers and their packages' warnings to ``path``; ``close()`` undoes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handler: logging.Handler | None = None
        self._saved: dict[str, tuple[Any, bool]] = {}
        self._showwarning: Any = None
        self._depth = 0

    @contextmanager
    def routed(self) -> Iterator[None]:
        """The block's third-party lines go to the file; blocks nest (a session's work calls more work)."""
        self._depth += 1
        if self._depth == 1:
            self.open()
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self.close()

    def open(self) -> None:
        if self._handler is not None:
            return
        # Appended: a session works in several blocks, and the folder's claim removed an earlier run's file.
        handler = logging.FileHandler(self.path, mode="a", encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self._handler = handler
        for name in NOISY:
            logger = logging.getLogger(name)
            self._saved[name] = (logger.handlers, logger.propagate)
            logger.handlers = _HeldBack(handler, [])
            logger.propagate = False
        self._showwarning = warnings.showwarning
        warnings.showwarning = self._warning

    def close(self) -> None:
        if self._handler is None:
            return
        for name, (handlers, propagate) in self._saved.items():
            logger = logging.getLogger(name)
            current = logger.handlers
            for added in current.held if isinstance(current, _HeldBack) else []:
                if added not in handlers:
                    handlers.append(added)  # a list held back by an enclosing run log keeps it held back
            logger.handlers = handlers
            logger.propagate = propagate
        self._saved = {}
        if warnings.showwarning == self._warning:
            warnings.showwarning = self._showwarning
        self._handler.close()
        self._handler = None

    def _warning(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        """A warning raised in one of the :data:`NOISY` packages goes to the log file; any other as before."""
        package = _package_of(filename)
        if package is None or self._handler is None:
            self._showwarning(message, category, filename, lineno, file, line)
            return
        text = warnings.formatwarning(message, category, filename, lineno, line).rstrip()
        self._handler.handle(logging.LogRecord(package, logging.WARNING, filename, lineno, text, None, None))


def _package_of(filename: str) -> str | None:
    """The :data:`NOISY` package whose folder holds ``filename`` (only an imported package can warn)."""
    path = os.path.abspath(filename)
    for name in NOISY:
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if where and path.startswith(os.path.dirname(os.path.abspath(where)) + os.sep):
            return name
    return None
