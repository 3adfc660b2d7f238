"""The list of files olive-eval wrote in an output folder, kept in the folder's mark, so that a later run removes
exactly those and nothing of the user's.

The mark (:data:`MARKER_FILE`) is JSON lines: its first line says the folder is olive-eval's
(``{"tool": "olive-eval", "version": ..., "files": "listed"}``); each later line is one file a run wrote below
``instances/`` or ``samples/``, with its identity when written (``{"file": "instances/base/acc.parquet",
"size": ..., "mtime_ns": ..., "ino": ...}``), or a temporary file being written (``"partial": true``). Lines are
appended with one ``O_APPEND`` write each, so the processes of a run (the ``process`` and ``ray`` executors'
workers) can add theirs at once. A listed file whose identity changed was changed by the user since: it is
theirs, and kept.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Marks a folder as olive-eval's, and lists what its runs wrote.
MARKER_FILE = ".olive-eval"
TOOL = "olive-eval"
#: Folders a run writes per-example files to; only files below these are listed (and ever removed).
RUN_FOLDERS = ("instances", "samples", "outputs")
#: In the mark's first line: its later lines list the files written (a mark without it is from an earlier version).
LISTED = "listed"
#: What an earlier version's per-example files end with (a mark without a list: see :func:`clear_written`).
RECORD_SUFFIXES = (".parquet", ".jsonl")
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def mark_text(version: str) -> str:
    """A new mark, listing no file yet."""
    return json.dumps({"tool": TOOL, "version": version, "files": LISTED}) + "\n"


def read_mark(marker: Path) -> dict[str, Any] | None:
    """The mark's first line, when the file is a plain file (not a link) naming olive-eval; else None."""
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        with marker.open(encoding="utf-8") as file:
            head = json.loads(file.readline())
    except (OSError, ValueError):
        return None
    return head if isinstance(head, dict) and head.get("tool") == TOOL else None


def record_written(out_dir: Path, path: Path, partial: bool = False) -> None:
    """Add ``path`` (a file just written below ``out_dir``'s run folders; ``partial``: a temporary file being
    written) to the mark, so the next run into ``out_dir`` removes it. Nothing for a file elsewhere, or a folder
    without a mark (nothing to clear it later); an error costs only the listing (the file stays)."""
    rel = _relative(out_dir, path)
    if rel is None:
        return
    entry: dict[str, Any] = {"file": rel}
    try:
        if partial:
            entry["partial"] = True
        else:
            entry.update(_identity(path))
        fd = os.open(out_dir / MARKER_FILE, os.O_WRONLY | os.O_APPEND | _NO_FOLLOW)
    except OSError:
        return
    try:
        os.write(fd, (json.dumps(entry) + "\n").encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def may_replace(out_dir: Path, path: Path) -> bool:
    """Whether a run may write ``path``: nothing is there, or what is there is a file olive-eval wrote (listed,
    unchanged), or ``path`` is not in a run folder of a marked ``out_dir``."""
    if not os.path.lexists(path):
        return True
    rel = _relative(out_dir, path)
    if rel is None or read_mark(out_dir / MARKER_FILE) is None:
        return True
    written = _listed(out_dir / MARKER_FILE).files.get(rel)
    return written is not None and not path.is_symlink() and written == _identity(path)


@dataclass
class Cleared:
    """What :func:`clear_written` did: the files removed, and those kept because the user changed them."""

    removed: list[Path] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    #: Listed files left in place because their model's results are kept (``--resume``): relative path -> identity.
    kept: dict[str, dict[str, int]] = field(default_factory=dict)


def listed_lines(files: dict[str, dict[str, int]]) -> str:
    """Mark lines listing files already written (a resumed run's kept models' files)."""
    return "".join(json.dumps({"file": rel, **identity}) + "\n" for rel, identity in files.items())


def clear_written(out_dir: Path, keep_folders: Collection[str] = ()) -> Cleared:
    """Remove the files the mark lists whose identity is unchanged and temporary files left by a run that died;
    keep everything else. The folders that leaves empty are the caller's to remove (:func:`remove_emptied`) once the
    run is done with them: a rerun writes into most of them again, and a folder removed and made again costs two
    journaled changes of the file system. Files of a model folder in ``keep_folders`` (models whose
    results ``--resume`` keeps) stay, listed in :attr:`Cleared.kept`. A mark from an earlier version (no list) had
    its per-example files found by name (``.parquet``, ``.jsonl``), as that version did."""
    lines = _mark_lines(out_dir / MARKER_FILE)
    if lines is None or lines[0].get("files") != LISTED:
        return _clear_by_name(out_dir)
    listing = _listing(lines[1])
    done = Cleared()
    for rel, identity in listing.files.items():
        path = out_dir / rel
        try:
            found = path.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(found.st_mode):  # a link (never followed) or a folder: not a file we wrote
            continue
        parts = rel.split("/")
        ours = len(parts) > 2 and parts[0] in RUN_FOLDERS and parts[1] in keep_folders
        if identity != _identity_of(found):
            done.changed.append(path)
            continue
        if ours:
            done.kept[rel] = identity
            continue
        try:
            path.unlink()
        except OSError:
            continue
        done.removed.append(path)
    for rel in listing.partial:
        path = out_dir / rel
        if rel not in listing.files and path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            done.removed.append(path)
    return done


@dataclass
class _Listing:
    files: dict[str, dict[str, int]] = field(default_factory=dict)
    partial: set[str] = field(default_factory=set)


def _mark_lines(marker: Path) -> tuple[dict[str, Any], list[str]] | None:
    """The mark's first line, as :func:`read_mark` reads it, and its later lines, from one read of the file; None
    where :func:`read_mark` says None."""
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        text = marker.read_text(encoding="utf-8")
        head = json.loads(text.partition("\n")[0])
    except (OSError, ValueError):
        return None
    return (head, text.splitlines()[1:]) if isinstance(head, dict) and head.get("tool") == TOOL else None


def _listed(marker: Path) -> _Listing:
    """The mark's list (a damaged line is skipped: its file is kept, never removed by guess)."""
    try:
        lines = marker.read_text(encoding="utf-8").splitlines()[1:]
    except OSError:
        return _Listing()
    return _listing(lines)


def _listing(lines: list[str]) -> _Listing:
    """The list the mark's lines after its first give."""
    listing = _Listing()
    for line in lines:
        try:
            entry = json.loads(line)
            rel = entry["file"]
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(rel, str) or _unsafe(rel):
            continue
        if entry.get("partial"):
            listing.partial.add(rel)
        else:
            listing.files[rel] = {k: entry.get(k) for k in ("size", "mtime_ns", "ino")}
    return listing


def _identity(path: Path) -> dict[str, int]:
    """Size, modification time (ns) and inode: an edit, a copy over it or a new file in its place changes one."""
    return _identity_of(path.lstat())


def _identity_of(found: os.stat_result) -> dict[str, int]:
    return {"size": found.st_size, "mtime_ns": found.st_mtime_ns, "ino": found.st_ino}


def _relative(out_dir: Path, path: Path) -> str | None:
    """``path`` relative to ``out_dir`` when it is below one of its run folders, else None."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(out_dir))
    except ValueError:
        return None
    parts = rel.parts
    return rel.as_posix() if len(parts) > 1 and parts[0] in RUN_FOLDERS and ".." not in parts else None


def _unsafe(rel: str) -> bool:
    parts = Path(rel).parts
    return Path(rel).is_absolute() or ".." in parts or len(parts) < 2 or parts[0] not in RUN_FOLDERS


def remove_emptied(out_dir: Path, removed: list[Path]) -> None:
    """Remove the folders above ``removed`` (files :func:`clear_written` removed) that are empty, up to (not
    including) ``out_dir``."""
    folders = {parent for path in removed for parent in path.parents if parent != out_dir and out_dir in parent.parents}
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            continue


def _clear_by_name(out_dir: Path) -> Cleared:
    """An earlier version's folder: its per-example files (and ones still being written) by name."""
    done = Cleared()
    for name in RUN_FOLDERS:
        for root, _dirs, files in os.walk(out_dir / name):
            for file in files:
                path = Path(root) / file
                if not path.is_symlink() and _is_record(file):
                    path.unlink()
                    done.removed.append(path)
    return done


def _is_record(name: str) -> bool:
    """A per-example file, or one still being written (``.<name>.parquet.<random>``)."""
    return name.endswith(RECORD_SUFFIXES) or (name.startswith(".") and any(f"{s}." in name for s in RECORD_SUFFIXES))
