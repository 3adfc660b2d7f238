"""Progress a person can follow: a line per stage, and on a terminal a live bar per pass and timing phase.

The engine reports through a plain callable, ``progress(model, message)``: the session API and the Olive
integration pass their own, and process or Ray children forward theirs as lines. A progress object may also
track tasks with a total (it has ``start_task``, see :class:`Tracker`); the pass loop and the timing phase start
theirs through :func:`start_task`, which gives a plain callable a task that does nothing, so callers never
check which kind they hold. tqdm is imported only when a bar is made: ``import olive_eval`` stays light.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol, TextIO, runtime_checkable

#: ``progress(model, message)``: one line per stage.
Progress = Callable[[str, str], None]

#: A bar redraws at most this often (seconds): a pass over many tiny batches costs a counter update per batch.
REDRAW_SECONDS = 0.25
#: A transient bar (a timing round, a warm-up) shows only once it has lasted this long: short ones never flicker.
TRANSIENT_DELAY = 0.5


class Task:
    """Work with a size (examples of a pass, timed runs, rounds), advanced as it gets done.

    This base does nothing: it is what a plain callable gets. ``live`` says whether anyone is watching, so a
    caller can leave out the periodic lines a live bar replaces.
    """

    live = False

    def advance(self, n: int = 1) -> None:
        """``n`` more units done."""

    def close(self) -> None:
        """The task is over (done or not): its bar stops."""

    def __enter__(self) -> Task:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


#: The task a progress callable without ``start_task`` gets.
NO_TASK = Task()


@runtime_checkable
class Tracker(Protocol):
    """A progress callable that also follows tasks with a total (None: unknown, a count is shown)."""

    def __call__(self, model: str, message: str) -> None: ...

    def start_task(self, model: str, label: str, total: int | None, unit: str, transient: bool = False) -> Task: ...


def start_task(
    progress: Progress, model: str, label: str, total: int | None, unit: str, transient: bool = False
) -> Task:
    """A task on ``progress`` when it tracks tasks, else :data:`NO_TASK`. ``transient``: its bar goes when done
    (a round inside a phase that has its own bar)."""
    starter = getattr(progress, "start_task", None)
    if starter is None:
        return NO_TASK
    return starter(model, label, total, unit, transient)


class StageLines:
    """A timestamped line per stage on stderr (``[   1.2s] model: message``), as a run printed before bars."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.started = time.perf_counter()
        self._stream = stream

    @property
    def stream(self) -> TextIO:
        """stderr as it is now (tests and callers may swap it), unless a stream was given."""
        return self._stream if self._stream is not None else sys.stderr

    def line(self, model: str, message: str) -> str:
        return f"[{time.perf_counter() - self.started:7.1f}s] {model}: {message}"

    def __call__(self, model: str, message: str) -> None:
        print(self.line(model, message), file=self.stream, flush=True)


class TerminalBars(StageLines):
    """tqdm bars on stderr for each task, with the stage lines written above them (nothing is lost).

    For a terminal only: the caller checks that stderr is one. Bars never go to stdout, where the table goes.
    """

    def __call__(self, model: str, message: str) -> None:
        bar = _bar_class()
        bar.write(self.line(model, message), file=self.stream)
        self.stream.flush()

    def start_task(self, model: str, label: str, total: int | None, unit: str, transient: bool = False) -> Task:
        bar = _bar_class()(
            total=total,
            desc=f"{model}: {label}" if model else label,
            unit=f" {unit}",
            file=self.stream,
            leave=not transient,
            delay=TRANSIENT_DELAY if transient else 0.0,
            mininterval=REDRAW_SECONDS,
            miniters=1,  # with mininterval, a redraw at most every REDRAW_SECONDS however many advances
            **_screen(self.stream),
        )
        return _BarTask(bar)


class _BarTask(Task):
    live = True

    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def advance(self, n: int = 1) -> None:
        if n:
            self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


def _screen(stream: TextIO) -> dict[str, Any]:
    """tqdm's size arguments: follow the terminal's size as it changes, or, where it reports none (0 x 0, as a
    pseudo-terminal opened without one does, where tqdm would draw nothing), ``$COLUMNS`` x ``$LINES`` or 80 x 24."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        size = os.terminal_size((0, 0))
    if size.columns > 0 and size.lines > 0:
        return {"dynamic_ncols": True}
    fallback = shutil.get_terminal_size()
    return {"ncols": fallback.columns - 1, "nrows": fallback.lines}


_BAR: type | None = None


def _bar_class() -> type:
    """tqdm's bar without its monitor thread: a thread waking in the process has no place in a timing phase, and
    with ``miniters=1`` the redraw needs no monitor. Made on first use, so tqdm loads only with a bar."""
    global _BAR
    if _BAR is None:
        from tqdm import tqdm

        _BAR = type("OliveEvalBar", (tqdm,), {"monitor_interval": 0})
    return _BAR


def for_stderr(quiet: bool = False, bars: bool = True) -> Progress:
    """What the command line reports with: nothing (``quiet``), bars when stderr is a terminal and ``bars``,
    else the stage lines."""
    if quiet:
        return silent
    isatty = getattr(sys.stderr, "isatty", None)
    if bars and isatty is not None and isatty():
        return TerminalBars()
    return StageLines()


def silent(model: str, message: str) -> None:
    """The progress that reports nothing: the default where a caller gives none."""
