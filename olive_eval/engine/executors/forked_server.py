"""multiprocessing's fork server, forked from this process rather than started as a new interpreter.

A new interpreter imports the engine, numpy, pyarrow and the run's runtime again before it forks its first child:
about 1.4 s of a quickstart run from the command line, which the run waited for (issue 34). This process has
imported them already, so a fork of it is a ready server in milliseconds. It is what the stdlib server would be
had it imported the same modules, with three differences handled here: it holds none of this process's files,
pipes, sockets or locks (each such descriptor is pointed at ``/dev/null``, keeping its number taken), it never
runs this process's exit handlers (it leaves by ``os._exit``), and Ctrl-C and SIGTERM act in its children as in a
fresh interpreter's.

It is forked only where that is as clean as a new interpreter: Linux, one Python thread, no GPU device open (CUDA
does not survive a fork), this process under :data:`MAX_RSS` (the server keeps the pages this process later
frees), and multiprocessing's fork server laid out as in Python 3.10-3.12. Anywhere else the stdlib starts its
own, as before.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import signal
import socket
import sys
import threading
import warnings
from typing import Any

#: The largest resident size of this process the server is forked from (the server holds those pages).
MAX_RSS = 1 << 30

#: Descriptors of these kinds stay open in the server: devices (``/dev/urandom`` a library keeps open).
KEPT_PREFIXES = ("/dev/",)

#: A device this process has open that says a GPU context lives here: a fork of it cannot use the GPU.
GPU_DEVICES = ("/dev/nvidia", "/dev/dri", "/dev/kfd")


def open_descriptors() -> dict[int, str]:
    """This process's open descriptors and what each points at ("" where unreadable)."""
    folder = "/proc/self/fd"
    out: dict[int, str] = {}
    for name in os.listdir(folder):
        try:
            out[int(name)] = os.readlink(f"{folder}/{name}")
        except OSError:  # the descriptor listdir itself held, closed since
            continue
    return out


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def why_not_forked() -> str | None:
    """Why the server cannot be forked from this process now (None: it can)."""
    from multiprocessing import forkserver

    if sys.platform != "linux":
        return "not Linux"
    if threading.active_count() > 1:
        return "more than one Python thread"
    server = getattr(forkserver, "_forkserver", None)
    layout = ("_lock", "_forkserver_pid", "_forkserver_address", "_forkserver_alive_fd")
    if server is None or not all(hasattr(server, name) for name in layout) or hasattr(server, "_forkserver_authkey"):
        return "multiprocessing's fork server is not laid out as this module knows"
    if list(inspect.signature(forkserver.main).parameters) != [
        "listener_fd",
        "alive_r",
        "preload",
        "main_path",
        "sys_path",
    ]:
        return "multiprocessing's fork server is not laid out as this module knows"
    if any(target.startswith(GPU_DEVICES) for target in open_descriptors().values()):
        return "a GPU device is open"
    if resident_bytes() > MAX_RSS:
        return "this process is over MAX_RSS"
    return None


def ensure_forked(preload: list[str]) -> bool:
    """The fork server running, forked from here with ``preload`` imported first; False (nothing started) where
    :func:`why_not_forked` says it cannot be, for the stdlib to start one. True also when one already runs."""
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver
    if server._forkserver_pid is not None:
        pid, _ = os.waitpid(server._forkserver_pid, os.WNOHANG)
        if not pid:
            return True  # running (either kind): reused
    if why_not_forked() is not None:
        return False
    for name in preload:  # what the children need, imported once here (most of it is already)
        with contextlib.suppress(ImportError):
            __import__(name)
    if why_not_forked() is not None:  # an import may have started a thread
        return False
    with server._lock:
        _fork_locked(server)
    return True


def _fork_locked(server: Any) -> None:
    from multiprocessing import connection, forkserver

    _ensure_tracker()
    if server._forkserver_pid is not None:  # a dead one: as the stdlib does before starting anew
        os.close(server._forkserver_alive_fd)
        server._forkserver_address = server._forkserver_alive_fd = server._forkserver_pid = None
    address = connection.arbitrary_address("AF_UNIX")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(address)
    os.chmod(address, 0o600)
    listener.listen()
    alive_r, alive_w = os.pipe()
    pid = _fork()
    if pid == 0:  # the server
        code = 0
        try:
            listener_fd = listener.detach()
            os.close(alive_w)
            _release_descriptors(keep={0, 1, 2, listener_fd, alive_r})
            signal.signal(signal.SIGINT, signal.default_int_handler)  # what its children restore
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            forkserver.main(listener_fd, alive_r, [])
        except SystemExit:  # this process exited: the server's usual end
            pass
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(alive_r)
    listener.close()
    server._forkserver_address = address
    server._forkserver_alive_fd = alive_w
    server._forkserver_pid = pid


def _ensure_tracker() -> None:
    """multiprocessing's resource tracker running (it unlinks the named semaphores and shared memory a process that
    died left), forked from here as the server is, rather than a new interpreter: that one imports the stdlib's
    multiprocessing and the site packages' path hooks again, about 60 ms of CPU beside a 2 s run (issue 34). It holds
    none of this process's descriptors but its own pipe's read end and stdio, ignores Ctrl-C and SIGTERM as the
    stdlib's does, shows the warnings a fresh interpreter would, and leaves by ``os._exit`` once every process that
    holds the pipe's write end (this one and the children it is passed to) has closed it. One already running (this
    process's, either kind) is kept; where the tracker is laid out otherwise than 3.10-3.12's, the stdlib starts it."""
    from multiprocessing import resource_tracker

    tracker: Any = getattr(resource_tracker, "_resource_tracker", None)
    layout = ("_lock", "_fd", "_pid", "_check_alive")
    known = tracker is not None and all(hasattr(tracker, name) for name in layout)
    if not known or list(inspect.signature(resource_tracker.main).parameters) != ["fd"] or tracker._fd is not None:
        resource_tracker.ensure_running()
        return
    with tracker._lock:
        read_end, write_end = os.pipe()
        blocked = {signal.SIGINT, signal.SIGTERM}  # until the tracker ignores them (a Ctrl-C now would end it)
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            pid = _fork()
            if pid == 0:  # the tracker
                try:
                    os.close(write_end)
                    _release_descriptors(keep={0, 1, 2, read_end})
                    warnings.resetwarnings()  # a fresh interpreter's: a leak is reported whatever this process hid
                    resource_tracker.main(read_end)  # ignores SIGINT and SIGTERM, then unblocks them
                finally:
                    os._exit(0)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        os.close(read_end)
        tracker._fd, tracker._pid = write_end, pid


def _fork() -> int:
    for stream in (sys.stdout, sys.stderr):  # what is buffered here would be written again by the fork
        if stream is not None:
            stream.flush()
    with warnings.catch_warnings():  # Python 3.12+ warns of any OS thread; the native ones here survive a fork
        warnings.filterwarnings("ignore", message=r".*multi-threaded, use of fork\(\)", category=DeprecationWarning)
        return os.fork()


def _release_descriptors(keep: set[int]) -> None:
    """Each descriptor this process had open, but ``keep`` and devices, pointed at ``/dev/null``: the files,
    pipes, sockets and locks are not held by the server, and no number a Python object owns is reused."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd, target in open_descriptors().items():
            if fd in keep or fd == null or target.startswith(KEPT_PREFIXES):
                continue
            try:
                os.dup2(null, fd, inheritable=False)
            except OSError:
                continue
    finally:
        os.close(null)
