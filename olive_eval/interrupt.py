"""Knowing that Ctrl-C was pressed even where a library swallowed the KeyboardInterrupt.

A bare ``except`` in a dependency (an import guarded against anything, a plotting fallback) can eat the
KeyboardInterrupt, and the code goes on half-done: a page built without what the import was for, or an
``AttributeError`` on a partially imported module. :class:`SigintSeen` records the signal itself, so the caller
can refuse to publish what was built and say it was interrupted.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any


class SigintSeen:
    """``with SigintSeen() as seen:``: SIGINT still raises KeyboardInterrupt in the block, and ``seen()`` says
    whether one came. Outside the main thread (no signal handler can be set there) it only raises as before."""

    def __init__(self) -> None:
        self.seen = False
        self._previous: Any = None
        self._installed = False

    def __call__(self) -> bool:
        return self.seen

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def __enter__(self) -> SigintSeen:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
