"""A run's output directory: checked, claimed and locked before any model runs, and cleared of an earlier run's files.

Checking first means a file in the way, or a folder that cannot be written, fails in one line before
the baseline has spent minutes being evaluated. The lock makes a second run into the same folder fail
at once instead of mixing its models into the first run's results.json and ``instances/``.

A folder is olive-eval's once a run has written its marker (:data:`MARKER_FILE`) there. Only then are an
earlier run's files removed, and only those olive-eval wrote: the per-example files its mark lists
(:mod:`olive_eval.records.output_manifest`), unchanged since; a user's own results.json, or any other file in
``instances/`` and ``samples/``, is never deleted. Links where olive-eval writes are refused at
the top and removed (never followed) below, so a run never writes out of its folder.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection
from pathlib import Path
from types import TracebackType

from olive_eval.errors import UsageError
from olive_eval.records.output_manifest import (
    MARKER_FILE,
    RUN_FOLDERS,
    Cleared,
    clear_written,
    listed_lines,
    mark_text,
    read_mark,
    remove_emptied,
)
from olive_eval.records.results import RESULTS_FILE, atomic_write_text
from olive_eval.records.run_log import LOG_FILE, RunLog

LOCK_FILE = ".olive-eval.lock"
#: What a run writes at the top of its output directory.
RUN_NAMES = (RESULTS_FILE, *RUN_FOLDERS, MARKER_FILE, LOCK_FILE, LOG_FILE)
#: The HTML report beside results.json, and what its head carries so that only a page olive-eval wrote is removed
#: when a new run starts (a run describes itself anew; an earlier run's page would describe other results).
REPORT_FILE = "report.html"
REPORT_GENERATOR = '<meta name="generator" content="olive-eval'
_REPORT_HEAD_BYTES = 4096
_MAX_FOLDER_CHARS = 80
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


class OutputDir:
    """``with OutputDir(path):`` holds the directory for one run (a process-wide advisory lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock: int | None = None
        self._marked = False
        #: Whether :meth:`claim` made the folder the run's (until then nothing in it was changed).
        self.claimed = False
        #: The model an earlier run into this folder was evaluating when its process died, if one did.
        self.died_during: str | None = None
        #: What claiming the folder has to tell the user (an earlier run's file kept because it was changed).
        self.notes: list[str] = []
        #: Third-party libraries' log lines and warnings, kept off the terminal while the run works (``routed()``).
        self.log = RunLog(path / LOG_FILE)
        #: The earlier run's files the claim removed: the folders they leave empty go when the folder is closed.
        self._removed: list[Path] = []

    def __enter__(self) -> OutputDir:
        self.open()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    @property
    def previous_run_note(self) -> str | None:
        """One line on an earlier run that died mid-model, for the user and for results.json."""
        if self.died_during is None:
            return None
        return (
            f"the previous run into {self.path} ended while evaluating '{self.died_during}' "
            "(the process died: os._exit, a crash or a kill)"
        )

    def open(self, claim: bool = True) -> None:
        """Check and lock the folder, then (``claim``) make it the run's; UsageError, leaving it as it was, if it
        cannot be used. ``claim=False`` leaves :meth:`claim` to the caller, once the run is known to go ahead."""
        path = self.path
        made, blocker = _missing_ancestors(path)
        if blocker is not None and not blocker.is_dir():
            where = "is a file" if blocker == path else f"is below {blocker}, which is a file"
            raise UsageError(f"output directory {path} {where}; choose a folder (--output-dir)")
        link = next((path / name for name in RUN_NAMES if (path / name).is_symlink()), None)
        if link is not None:
            raise UsageError(
                f"output directory {path}: {link} is a link, and olive-eval does not write through links; "
                "remove it or choose another --output-dir"
            )
        lock_existed = os.path.lexists(path / LOCK_FILE)
        try:
            path.mkdir(parents=True, exist_ok=True)
            fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT | _NO_FOLLOW, 0o666)
        except OSError as exc:
            _remove_empty(made)
            raise UsageError(f"output directory {path} cannot be written: {exc.strerror}") from None
        if not _try_lock(fd):
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise UsageError(
                f"output directory {path} is in use by another olive-eval run (pid {holder}); "
                "wait for it or choose another --output-dir"
            )
        self._lock = fd
        try:
            self._marked = self._check()
        except BaseException:  # refused: the folder is left as it was (no lock file, no folder we made)
            self._lock = None
            _unlock(fd)
            os.close(fd)
            if not lock_existed:
                (path / LOCK_FILE).unlink(missing_ok=True)
            _remove_empty(made)
            raise
        if claim:
            self.claim()

    def claim(self, keep_folders: Collection[str] = ()) -> None:
        """Make the locked folder the run's: this process's pid in the lock file, an earlier run's files removed or
        the folder marked as ours (see :meth:`open`)."""
        fd, path = self._lock, self.path
        if fd is None:
            raise RuntimeError("claim() needs the folder opened first")
        try:
            # A pid left in the lock file means its run never closed it: the process died.
            died = bool(os.read(fd, 64).strip())
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(os.getpid()).encode())
            self._claim(self._marked, died, keep_folders)
            self.claimed = True
        except UsageError:
            self.close()
            raise
        except OSError as exc:
            self.close()
            raise UsageError(f"output directory {path}: cannot prepare it for the run: {exc}") from None

    def _check(self) -> bool:
        """Whether the folder is marked as ours; UsageError, before anything is written, if it cannot be used."""
        path = self.path
        if read_mark(path / MARKER_FILE) is not None:
            self._check_kinds()
            return True
        present = [name for name in RUN_NAMES if name != LOCK_FILE and os.path.lexists(path / name)]
        if present:
            raise UsageError(
                f"output directory {path} holds {', '.join(present)}, which olive-eval did not write "
                f"(no valid {MARKER_FILE} marker); choose another --output-dir or remove them"
            )
        return False

    def _claim(self, marked: bool, died: bool, keep_folders: Collection[str] = ()) -> None:
        """Clear an earlier run's files from a folder marked as ours; mark a folder that holds none of them.

        ``died``: the earlier run's process ended without closing the folder, so the model its results.json
        says was running is the one it died with (a run that closed, even one that could not write its last
        results.json, died with none).
        """
        path = self.path
        kept: dict[str, dict[str, int]] = {}
        if marked:
            self.died_during = _running_model(path / RESULTS_FILE) if died else None
            cleared = _clear_previous_run(path, keep_folders)
            self._removed = cleared.removed
            kept = cleared.kept
            self.notes += [f"kept {file}: changed since olive-eval wrote it" for file in cleared.changed]
        from olive_eval import __version__  # here: the package imports this module while it initializes

        # the earlier run's list is done with, but for the files of the models whose results are kept (--resume).
        # Not fsynced, as the lines the run appends to it are not: the rename survives a crash of the process,
        # and a mark lost with the machine makes the next run refuse the folder (it says why), never clear it.
        atomic_write_text(path / MARKER_FILE, mark_text(__version__) + listed_lines(kept), durable=False)

    def _check_kinds(self) -> None:
        """In our folder, results.json is a file and the run folders are folders; anything else is not ours."""
        for name, is_kind in ((RESULTS_FILE, Path.is_file), *((n, Path.is_dir) for n in RUN_FOLDERS)):
            item = self.path / name
            if item.exists() and not is_kind(item):
                raise UsageError(
                    f"output directory {self.path}: {item} is not what olive-eval writes there; "
                    "remove it or choose another --output-dir"
                )

    def close(self) -> None:
        """Release the folder; the folders the claim's clearing left empty, and the run wrote nothing into, go."""
        self.log.close()
        if self._lock is not None:
            remove_emptied(self.path, self._removed)
            self._removed = []
            os.ftruncate(self._lock, 0)  # closed properly: no pid is left behind
            _unlock(self._lock)
            os.close(self._lock)
            self._lock = None


def _missing_ancestors(path: Path) -> tuple[list[Path], Path | None]:
    """What ``mkdir(parents=True)`` would create (``path`` and its missing parents, deepest first), and the first
    of them that exists (None: not even the root): the folders above one that exists exist too, so they are not
    asked for."""
    made: list[Path] = []
    for folder in (path, *path.parents):
        if folder.exists():
            return made, folder
        made.append(folder)
    return made, None


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a refused run created (deepest first), if still empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _running_model(results: Path) -> str | None:
    """The model an earlier run's results.json says was being evaluated (its process died with it)."""
    try:
        models = json.loads(results.read_text(encoding="utf-8")).get("models", {})
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(models, dict):
        return None
    return next((name for name, m in models.items() if isinstance(m, dict) and m.get("status") == "running"), None)


def _clear_previous_run(path: Path, keep_folders: Collection[str] = ()) -> Cleared:
    """Only the files olive-eval itself wrote: results.json (and its leftover temporary files), its report and the
    per-example files its mark lists; links in the run folders are removed, never followed. Returns the listed
    files kept because the user changed them, and those of ``keep_folders``."""
    with os.scandir(path) as entries:  # the temporary files ``.results.json.*`` (a glob costs more than a listing)
        leftovers = [
            e.path for e in entries if e.name.startswith(f".{RESULTS_FILE}.") and e.is_file(follow_symlinks=False)
        ]
    for leftover in leftovers:
        os.unlink(leftover)
    (path / RESULTS_FILE).unlink(missing_ok=True)
    (path / LOG_FILE).unlink(missing_ok=True)  # the earlier run's; a link there was refused
    if _is_our_report(path / REPORT_FILE):
        (path / REPORT_FILE).unlink()
    for name in RUN_FOLDERS:
        if (path / name).is_dir():
            _remove_links(path / name)
    return clear_written(path, keep_folders)


def _is_our_report(page: Path) -> bool:
    """A regular file whose head names olive-eval as its generator; a user's own report.html is kept."""
    if page.is_symlink() or not page.is_file():
        return False
    with page.open("rb") as file:
        return REPORT_GENERATOR.encode() in file.read(_REPORT_HEAD_BYTES)


def _remove_links(folder: Path) -> None:
    """Remove the links below ``folder`` (never followed): a run writes nothing through them."""
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            if os.path.islink(os.path.join(root, name)):
                os.unlink(os.path.join(root, name))


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
