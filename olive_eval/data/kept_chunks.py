"""A small data file's rows kept between the runs of one process (an optimization loop's ``evaluate()`` calls).

Each run opens its data again (:class:`olive_eval.engine.run.data_store.FirstChunkHeld` holds a one-chunk file
for the run); a loop that evaluates every candidate in its own ``evaluate()`` read the same file each time. The
table is kept under the files' identity (path, device, inode, size, modification and change times), taken again at
each lookup, so a file written since is read again; a file modified in the last ``SETTLING_NS`` is never kept (a
second write within a coarse file system's timestamp tick would leave its identity as it was). At most ``MAX_TABLES`` tables and ``MAX_BYTES`` are kept, the
least recently used dropped first; a table over ``MAX_BYTES`` is not kept.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Sequence

import pyarrow as pa

#: At most this many tables kept (a loop reads one or two data configs).
MAX_TABLES = 4
#: At most this many bytes of tables kept, all together.
MAX_BYTES = 256 << 20

#: A file modified this recently (2 s: the coarsest timestamps of common file systems) is read, not kept.
SETTLING_NS = 2_000_000_000

#: What a kept table is read from: the reader (class and builder) and each file's path and identity.
FilesKey = tuple[str, tuple[tuple[str, int, int, int, int, int], ...]]


def files_key(reader: str, files: Sequence[str]) -> FilesKey | None:
    """The files as they are now; None when one cannot be looked at (it is then read, and fails, as before) or
    changed too recently to tell a later change by its times."""
    stats = []
    settled = time.time_ns() - SETTLING_NS
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_mtime_ns > settled:
            return None
        stats.append((str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return reader, tuple(stats)


class KeptChunks:
    """Tables by the files they were read from, bounded in count and bytes."""

    def __init__(self, max_tables: int = MAX_TABLES, max_bytes: int = MAX_BYTES) -> None:
        self.max_tables, self.max_bytes = max_tables, max_bytes
        self._held: OrderedDict[FilesKey, pa.Table] = OrderedDict()

    def get(self, key: FilesKey | None) -> pa.Table | None:
        if key is None or key not in self._held:
            return None
        self._held.move_to_end(key)
        return self._held[key]

    def put(self, key: FilesKey | None, table: pa.Table) -> None:
        if key is None or table.nbytes > self.max_bytes:
            return
        self._held[key] = table
        self._held.move_to_end(key)
        while len(self._held) > self.max_tables or sum(t.nbytes for t in self._held.values()) > self.max_bytes:
            self._held.popitem(last=False)

    def clear(self) -> None:
        """Drop every kept table (their memory goes back when no run holds them)."""
        self._held.clear()

    def __len__(self) -> int:
        return len(self._held)


#: The process's kept tables.
KEPT = KeptChunks()
