"""Content hashes of files and folders, for the result cache's keys.

A file is hashed once per process: the digest is remembered under its path and ``stat`` fields (size,
mtime, ctime, inode). ``mtime`` alone is not enough, since a tool can rewrite a file and set its mtime
back (``os.utime``); ``ctime`` cannot be set back. A file changed within :data:`RACY_SECONDS` of its
hashing is not remembered (git's "racily clean" rule): two writes within one tick of the filesystem clock
can leave every ``stat`` field as it was.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

#: Files whose ctime is this recent when hashed are hashed again next time.
RACY_SECONDS = 2.0
CHUNK = 1 << 20

_memo: dict[tuple[str, int, int, int, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks; remembered while its ``stat`` stays the same."""
    stat = path.stat()
    memo_key = (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)
    known = _memo.get(memo_key)
    if known is not None:
        return known
    started = time.time_ns()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    out = digest.hexdigest()
    if started - max(stat.st_ctime_ns, stat.st_mtime_ns) > RACY_SECONDS * 1e9:
        _memo[memo_key] = out
    return out


def tree_sha256(path: Path) -> str:
    """A file's sha256, or a folder's: over its files' relative names and hashes, recursively, in sorted order."""
    if not path.is_dir():
        return file_sha256(path)
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = Path(root) / name
            digest.update(full.relative_to(path).as_posix().encode() + b"\0")
            digest.update(file_sha256(full).encode() + b"\n")
    return digest.hexdigest()
