"""The process executor's fork server forked from the run's process: it holds none of the parent's files, pipes
or locks, leaves with the parent, and gives a local run's values; where forking is not clean it is started as a
new interpreter, as before. Each run is a fresh interpreter (a fork server is one per interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from olive_eval import evaluate
from olive_eval.engine.executors import forked_server
from tests.helpers import ToyProblem

ACCURACY = [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score", "priority": 1}]}]

SCRIPT = r"""
import fcntl, json, os, sys, threading
from multiprocessing import forkserver, resource_tracker, shared_memory
from olive_eval import evaluate

config, folder, with_thread = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
if with_thread:
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
lock = open(os.path.join(folder, "held.lock"), "w")
fcntl.flock(lock, fcntl.LOCK_EX)
read_end, write_end = os.pipe()  # a pipe whose reader would wait for every writer to close
pipe = os.readlink(f"/proc/self/fd/{write_end}")
result = evaluate(config, executor="process")
pid = forkserver._forkserver._forkserver_pid
with open(f"/proc/{pid}/stat") as stat:
    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
held = sorted(os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd"))
with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
    command = cmdline.read().decode(errors="replace")
tracker = resource_tracker._resource_tracker._pid
tracked = sorted(os.readlink(f"/proc/{tracker}/fd/{n}") for n in os.listdir(f"/proc/{tracker}/fd"))
with open(f"/proc/{tracker}/cmdline", "rb") as cmdline:
    tracker_command = cmdline.read().decode(errors="replace")
leaked = shared_memory.SharedMemory(create=True, size=16)  # never unlinked: the tracker does, once this exits
fcntl.flock(lock, fcntl.LOCK_UN)
lock.close()
again = open(os.path.join(folder, "held.lock"), "w")
try:
    fcntl.flock(again, fcntl.LOCK_EX | fcntl.LOCK_NB)
    relocked = True
except BlockingIOError:
    relocked = False
values = {name: {k: s.value for k, s in m.metrics.items()} for name, m in result.models.items()}
print(json.dumps({"pid": pid, "parent": parent, "me": os.getpid(), "held": held, "pipe": pipe, "command": command,
                  "relocked": relocked, "values": values, "status": {n: m.status for n, m in result.models.items()},
                  "tracker": tracker, "tracked": tracked, "tracker_command": tracker_command, "leaked": leaked.name}))
"""


def start_script(folder: Path, config: dict[str, Any], with_thread: bool) -> subprocess.Popen[str]:
    """The script on ``config`` in a fresh interpreter, its lock file and output in ``folder`` (its own: two run at
    once)."""
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    folder.mkdir()
    config = {**config, "output_dir": str(folder / "out")}
    command = [sys.executable, "-c", SCRIPT, json.dumps(config), str(folder), "1" if with_thread else "0"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def script_output(started: subprocess.Popen[str], folder: Path) -> dict[str, Any]:
    """What the script printed, once it has exited."""
    stdout, stderr = started.communicate(timeout=300)
    assert started.returncode == 0, stderr[-3000:]
    return {**json.loads(stdout.strip().splitlines()[-1]), "stderr": stderr, "folder": str(folder)}


def gone(pid: int, within_s: float = 60.0) -> bool:
    """Whether process ``pid`` has ended (its parent gone, init reaps it) within ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same run in two fresh interpreters at once, forking the server and, with a second thread, not; and
    locally."""
    toy = ToyProblem(tmp_path_factory.mktemp("forked"))
    config = toy.config({"cand": 0.3}, ACCURACY)
    folders = {kind: toy.root / kind for kind in ("forked", "fresh")}
    started = {kind: start_script(folders[kind], config, with_thread=kind == "fresh") for kind in folders}
    local = evaluate({**config, "output_dir": str(toy.root / "local")})
    return {
        **{kind: script_output(started[kind], folders[kind]) for kind in folders},
        "local": {name: {k: s.value for k, s in m.metrics.items()} for name, m in local.models.items()},
    }


def test_the_server_is_forked_from_the_run_holds_none_of_its_files_and_leaves_with_it(runs):
    out = runs["forked"]
    assert out["parent"] == out["me"] and "forkserver import main" not in out["command"]
    assert str(Path(out["folder"], "held.lock")) not in out["held"] and out["pipe"] not in out["held"]
    assert out["relocked"]  # the lock was the parent's alone: released when it let go
    assert out["status"] == {"base": "ok", "cand": "ok"}
    assert out["values"] == runs["local"]
    assert gone(out["pid"])


def unlinked(name: str, within_s: float = 60.0) -> bool:
    """Whether the shared memory ``name`` is gone from ``/dev/shm`` within ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not Path("/dev/shm", name.lstrip("/")).exists():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("kind", ["forked", "fresh"])
def test_the_resource_tracker_holds_none_of_the_runs_files_and_unlinks_what_it_leaked(runs, kind):
    """Forked from the run where the server is (no new interpreter), the stdlib's otherwise: either way it holds
    neither the run's lock nor its pipe, and it unlinks the shared memory the run left once the run has exited."""
    out = runs[kind]
    forked = "resource_tracker import main" not in out["tracker_command"]
    assert forked == (kind == "forked")
    assert str(Path(out["folder"], "held.lock")) not in out["tracked"] and out["pipe"] not in out["tracked"]
    assert unlinked(out["leaked"]) and gone(out["tracker"])
    assert "leaked shared_memory objects" in out["stderr"]  # its warning, shown as a fresh interpreter's is


def test_with_a_second_thread_the_server_is_a_new_interpreter_and_the_values_are_the_same(runs):
    fresh = runs["fresh"]
    assert "from multiprocessing.forkserver import main" in fresh["command"]
    assert fresh["values"] == runs["local"] and fresh["status"] == {"base": "ok", "cand": "ok"}
    assert gone(fresh["pid"])


def test_why_not_forked_names_a_thread_a_gpu_device_and_the_resident_size(monkeypatch):
    monkeypatch.setattr(forked_server, "MAX_RSS", 1 << 50)  # the suite's process may have grown past 1 GiB
    real = forked_server.open_descriptors
    monkeypatch.setattr(
        forked_server, "open_descriptors", lambda: {k: v for k, v in real().items() if "nvidia" not in v}
    )
    with monkeypatch.context() as one_thread:  # other tests' threads may still run in this process
        one_thread.setattr(threading, "active_count", lambda: 1)
        assert forked_server.why_not_forked() is None
        one_thread.setattr(forked_server, "open_descriptors", lambda: {**real(), 99: "/dev/nvidia0"})
        assert forked_server.why_not_forked() == "a GPU device is open"
        one_thread.setattr(
            forked_server, "open_descriptors", lambda: {k: v for k, v in real().items() if "nvidia" not in v}
        )
        one_thread.setattr(forked_server, "MAX_RSS", forked_server.resident_bytes() // 2)
        assert forked_server.why_not_forked() == "this process is over MAX_RSS"
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert forked_server.why_not_forked() == "more than one Python thread"
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_no_fork_but_on_linux(monkeypatch, platform):
    monkeypatch.setattr(sys, "platform", platform)
    assert forked_server.why_not_forked() == "not Linux"
