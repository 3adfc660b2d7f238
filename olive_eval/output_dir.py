"""A run's output directory: checked and locked before any model runs, and cleared of an earlier run's files.

Checking first means a file in the way, or a folder that cannot be written, fails in one line before
the baseline has spent minutes being evaluated. The lock makes a second run into the same folder fail
at once instead of mixing its models into the first run's results.json and ``instances/``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from types import TracebackType

from olive_eval.errors import UsageError
from olive_eval.results import RESULTS_FILE

LOCK_FILE = ".olive-eval.lock"
#: Folders a run writes below its output directory; an earlier run's are removed when a new run starts.
RUN_FOLDERS = ("instances", "samples")
_MAX_FOLDER_CHARS = 80


class OutputDir:
    """``with OutputDir(path):`` holds the directory for one run (a process-wide advisory lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock: int | None = None

    def __enter__(self) -> OutputDir:
        self.open()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def open(self) -> None:
        path = self.path
        blocker = next((p for p in (path, *path.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            where = "is a file" if blocker == path else f"is below {blocker}, which is a file"
            raise UsageError(f"output directory {path} {where}; choose a folder (--output-dir)")
        try:
            path.mkdir(parents=True, exist_ok=True)
            fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise UsageError(f"output directory {path} cannot be written: {exc.strerror}") from None
        if not _try_lock(fd):
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise UsageError(
                f"output directory {path} is in use by another olive-eval run (pid {holder}); "
                "wait for it or choose another --output-dir"
            )
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock = fd
        try:
            self._clear_previous_run()
        except OSError as exc:
            self.close()
            raise UsageError(f"output directory {path}: cannot remove an earlier run's files: {exc}") from None

    def _clear_previous_run(self) -> None:
        """Only the files olive-eval itself writes: results.json and its per-model folders."""
        (self.path / RESULTS_FILE).unlink(missing_ok=True)
        for name in RUN_FOLDERS:
            folder = self.path / name
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder)

    def close(self) -> None:
        if self._lock is not None:
            _unlock(self._lock)
            os.close(self._lock)
            self._lock = None


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def folder_names(names: list[str]) -> dict[str, str]:
    """A distinct, safe folder name for each name, readable where possible.

    Characters other than letters, digits, ``_``, ``-`` and ``.`` become ``_``; a leading dot becomes
    ``_`` (so ``.`` and ``..`` cannot climb out); names that collide after that, or differ only in
    case (one folder on macOS and Windows), get ``-2``, ``-3``... in order.
    """
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        slug = re.sub(r"[^\w.\-]", "_", name)[:_MAX_FOLDER_CHARS] or "_"
        if slug.startswith("."):
            slug = "_" + slug[1:]
        candidate, n = slug, 1
        while candidate.casefold() in taken:
            n += 1
            candidate = f"{slug}-{n}"
        taken.add(candidate.casefold())
        out[name] = candidate
    return out
