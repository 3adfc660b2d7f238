"""A results file that cannot be written (a full disk) costs that file, not the run (issue 16, item 2).

Each error is one line naming the file and the OS error; the table is still printed, every model is still
evaluated, and the exit code is 1.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import olive_eval.records.results
import olive_eval.records.sinks
from olive_eval.cli import main

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def accuracy_with_instances() -> list[dict[str, Any]]:
    return [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}], "sample_log_num": 2}]


def write_config(toy: Any) -> Path:
    path = toy.root / "run.json"
    path.write_text(json.dumps(toy.config({"cand": 0.1}, accuracy_with_instances())))
    return path


def assert_both_models_were_evaluated(stdout: str) -> None:
    table = stdout.splitlines()
    assert "base (baseline)" in table[0] and "cand" in table[0]
    assert next(line for line in table if line.startswith("status")).split()[1:] == ["ok", "ok"]


def test_a_full_disk_while_writing_results_json_is_one_line_and_the_run_goes_on(toy, capsys, monkeypatch):
    real = olive_eval.records.results.atomic_write_text

    def full_disk(target: Path, text: str, durable: bool = True) -> Path:
        if target.name == "results.json":
            raise ENOSPC
        return real(target, text, durable)

    monkeypatch.setattr(olive_eval.records.results, "atomic_write_text", full_disk)
    assert main(["--config", str(write_config(toy)), "--quiet"]) == 1
    captured = capsys.readouterr()
    out = toy.root / "out"
    assert captured.err == f"olive-eval: error: cannot write {out / 'results.json'}: No space left on device\n"
    assert_both_models_were_evaluated(captured.out)
    assert "Results:" not in captured.out  # no claim that the file holds them
    assert (out / "instances" / "cand" / "acc.parquet").is_file()  # the candidate ran after the failed write


class _FullFile:
    """A file object on a full disk: the data never reaches it."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, text: str) -> int:
        raise ENOSPC

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def test_a_full_disk_while_writing_instance_records_is_reported_once_and_costs_no_metric(toy, capsys, monkeypatch):
    full_os = types.SimpleNamespace(**vars(os))
    full_os.fdopen = lambda fd, *args, **kwargs: _FullFile(os.fdopen(fd, *args, **kwargs))
    monkeypatch.setattr(olive_eval.records.sinks, "os", full_os)  # only the record writer's files are on the full disk
    assert main(["--config", str(write_config(toy)), "--quiet"]) == 1
    captured = capsys.readouterr()
    out = toy.root / "out"
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"olive-eval: error: cannot write {out}/")
    assert captured.err.endswith(".parquet: No space left on device\n")
    assert_both_models_were_evaluated(captured.out)
    written = json.loads((out / "results.json").read_text())
    assert [m["metrics"]["acc-accuracy_score"]["value"] for m in written["models"].values()] == [
        1.0,
        0.9333333333333333,
    ]
    assert not [p for p in out.rglob("*") if p.is_file() and ".parquet" in p.name]  # no half-written file is left


@pytest.fixture
def full_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Any, str]]:
    """(folder, preexec_fn for the run, the OS error): a 12 KiB tmpfs where ``mount`` is allowed (root, not in
    every container), else a 1000-byte limit on the size of any file the run writes (RLIMIT_FSIZE: EFBIG)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = False
    if request.param == "tmpfs":
        try:
            mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(disk)]).returncode == 0
        except OSError:  # no mount command
            mounted = False
    try:
        if mounted:
            yield disk, None, os.strerror(errno.ENOSPC)
        else:
            yield disk, lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000)), os.strerror(errno.EFBIG)
    finally:
        if mounted:
            subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.parametrize("full_disk", ["tmpfs", "file size limit"], indirect=True)
def test_a_real_write_error_from_the_kernel(toy, full_disk):
    disk, limit, strerror = full_disk
    out = disk / "out"
    done = subprocess.run(
        # --no-cache: the file size limit would stop the result cache's writes too (one more warning line)
        [
            sys.executable,
            "-m",
            "olive_eval",
            "--config",
            str(write_config(toy)),
            "--quiet",
            "--no-cache",
            "--output-dir",
            str(out),
        ],
        capture_output=True,
        text=True,
        preexec_fn=limit,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert f"olive-eval: error: cannot write {out / 'results.json'}: {strerror}" in lines
    assert len(lines) == 2 and all(line.startswith(f"olive-eval: error: cannot write {out}/") for line in lines)
    assert all(line.endswith(f": {strerror}") for line in lines)
    assert_both_models_were_evaluated(done.stdout)


def test_a_run_that_could_not_write_its_last_results_json_is_not_taken_for_one_that_died(toy, capsys, monkeypatch):
    """results.json still says 'base' is running, but the run ended properly: the next run says nothing."""
    real = olive_eval.records.results.atomic_write_text
    writes = []

    def fills_up(target: Path, text: str, durable: bool = True) -> Path:
        writes.append(target)
        if len(writes) > 1:  # base running (the others pending): then the disk is full
            raise ENOSPC
        return real(target, text, durable)

    monkeypatch.setattr(olive_eval.records.results, "atomic_write_text", fills_up)
    path = write_config(toy)
    assert main(["--config", str(path)]) == 1
    out = toy.root / "out"
    assert json.loads((out / "results.json").read_text())["models"]["base"]["status"] == "running"
    capsys.readouterr()
    monkeypatch.setattr(olive_eval.records.results, "atomic_write_text", real)
    assert main(["--config", str(path)]) == 0
    assert "previous run" not in capsys.readouterr().err


def test_only_results_json_s_final_writes_wait_for_the_disk(toy, monkeypatch):
    """The 'running' writes rename into place without fsync (a crash of the process keeps them); the run's last
    write is fsynced. There is one write per model and one at the end: each model's results go out with the next
    one's 'running' marker, the last model's with the end (no all-'pending' write, no write between)."""
    real = olive_eval.records.results.atomic_write_text
    writes: list[tuple[dict[str, Any], bool]] = []

    def recorded(target: Path, text: str, durable: bool = True) -> Path:
        if target.name == "results.json":
            writes.append((json.loads(text), durable))
        return real(target, text, durable)

    monkeypatch.setattr(olive_eval.records.results, "atomic_write_text", recorded)
    assert main(["--config", str(write_config(toy)), "--quiet"]) == 0
    statuses = [({n: m["status"] for n, m in data["models"].items()}, durable) for data, durable in writes]
    assert statuses[:2] == [({"base": "running", "cand": "pending"}, False), ({"base": "ok", "cand": "running"}, False)]
    assert len(writes) == 3
    assert writes[-1][1] and all(m["status"] == "ok" for m in writes[-1][0]["models"].values())


def test_a_durable_write_is_fsynced_and_an_intermediate_one_is_not(tmp_path, monkeypatch):
    synced: list[int] = []
    monkeypatch.setattr(olive_eval.records.results.os, "fsync", synced.append)
    olive_eval.records.results.atomic_write_text(tmp_path / "a.json", "{}\n", durable=False)
    assert synced == [] and (tmp_path / "a.json").read_text() == "{}\n"
    olive_eval.records.results.atomic_write_text(tmp_path / "a.json", "[]\n")
    assert len(synced) == 1 and (tmp_path / "a.json").read_text() == "[]\n"


def test_the_written_bytes_are_a_text_files_even_when_the_kernel_takes_them_a_few_at_a_time(tmp_path, monkeypatch):
    """results.json goes to the descriptor itself, not through a text file: the same bytes as ``open(path, "w",
    encoding="utf-8")`` writes, on random text (new lines, non-ASCII, a carriage return) and when each write
    takes only some of the bytes."""
    import random

    rng = random.Random(0)
    alphabet = ["a", "\n", "\r", "\r\n", "é", "€", "𝄞", '"', "\\", " ", "\t", "\x00"]
    texts = ["", "\n", *("".join(rng.choice(alphabet) for _ in range(rng.randrange(200))) for _ in range(100))]
    real_write = os.write
    pieces: list[int] = []

    def write_a_few(fd: int, data: memoryview) -> int:
        pieces.append(real_write(fd, data[:7]))
        return pieces[-1]

    for few in (False, True):
        if few:
            monkeypatch.setattr(olive_eval.records.results.os, "write", write_a_few)
        for i, text in enumerate(texts):
            reference = tmp_path / f"reference-{i}"
            with open(reference, "w", encoding="utf-8") as handle:
                handle.write(text)
            written = olive_eval.records.results.atomic_write_text(tmp_path / f"written-{i}", text, durable=few)
            assert written.read_bytes() == reference.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left
    assert sum(pieces) == sum(len(text.replace("\n", os.linesep).encode()) for text in texts)  # all, 7 bytes a time
