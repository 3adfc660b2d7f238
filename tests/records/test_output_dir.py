"""Never lose or mix a result: per-model folders, a checked and locked output directory (issue 6, items 12-15)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from olive_eval import evaluate
from olive_eval.cli import main
from olive_eval.errors import UsageError
from olive_eval.records.output_dir import LOCK_FILE, MARKER_FILE, REPORT_FILE, REPORT_GENERATOR, OutputDir, folder_names
from olive_eval.records.parquet import read_records


def accuracy_with_instances() -> list[dict]:
    return [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}], "sample_log_num": 2}]


# ------------------------------------------------------------------------------ item 12: one folder per model
def test_folder_names_never_collide_and_never_climb_out():
    names = ["a/b", "a_b", "模型一", "模型二", "..", ".", "A_B", "x" * 200]
    folders = folder_names(names)
    assert len({f.casefold() for f in folders.values()}) == len(names)
    assert folders["a/b"] == "a_b" and folders["a_b"] == "a_b-2" and folders["A_B"] == "A_B-3"
    assert folders["模型一"] == "模型一" and folders["模型二"] == "模型二"
    assert folders[".."] == "_." and folders["."] == "_"
    assert all("/" not in f and not f.startswith(".") and len(f) <= 84 for f in folders.values())


def test_every_model_gets_its_own_folder_and_results_json_says_which(toy):
    config = toy.config({"a_b": 0.1, "模型一": 0.2, "模型二": 0.3, "..": 0.4}, accuracy_with_instances())
    config["input_model"]["name"] = "a/b"
    result = evaluate(config)
    out = toy.root / "out"
    written = json.loads((out / "results.json").read_text())
    folders = {name: model["folder"] for name, model in written["models"].items()}
    assert len(set(folders.values())) == 5
    for name, folder in folders.items():
        rows = list(read_records(out / "instances" / folder / "acc.parquet"))
        assert len(rows) == len(toy.x)
        expected = result.models[name].metrics["acc-accuracy_score"].value
        assert sum(r["accuracy_score"] for r in rows) / len(rows) == pytest.approx(expected)
        assert (out / "samples" / folder / "acc_samples.jsonl").is_file()
    assert not (toy.root / "instances").exists()  # '..' stayed inside


# ------------------------------------------------------------------------------ item 13: unusable output directory
def test_output_dir_that_is_a_file_fails_before_any_model_runs(toy, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    config = toy.config({}, accuracy_with_instances())
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    for out, expected in (
        (blocker, f"output directory {blocker} is a file; choose a folder (--output-dir)"),
        (blocker / "sub", f"output directory {blocker / 'sub'} is below {blocker}, which is a file; choose a folder"),
    ):
        assert main(["--config", str(path), "--quiet", "--output-dir", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"olive-eval: error: {expected}") and "\n" not in err


def test_output_dir_that_cannot_be_created(toy):
    # /proc refuses new folders even to root, so this holds wherever the tests run (CI runs as root)
    with pytest.raises(UsageError, match=r"^output directory /proc/olive_eval_out cannot be written: "):
        evaluate(toy.config({}, accuracy_with_instances()), output_dir="/proc/olive_eval_out")
    assert not (toy.root / "out").exists()  # checked before the baseline ran


# ------------------------------------------------------------------------------ item 14: one run per directory
def test_a_second_run_into_a_busy_output_dir_fails_at_once(toy, tmp_path):
    out = tmp_path / "busy"
    with OutputDir(out):
        started = subprocess.run(
            [
                sys.executable,
                "-c",
                f"from olive_eval.records.output_dir import OutputDir; OutputDir(__import__('pathlib').Path({str(out)!r})).open()",
            ],
            capture_output=True,
            text=True,
        )
        assert started.returncode != 0
        assert f"output directory {out} is in use by another olive-eval run (pid {os.getpid()})" in started.stderr
        with pytest.raises(UsageError, match="is in use by another olive-eval run"):
            evaluate(toy.config({}, accuracy_with_instances()), output_dir=out)
    evaluate(toy.config({}, accuracy_with_instances()), output_dir=out)  # released: runs
    assert (out / LOCK_FILE).is_file()


def test_a_later_run_does_not_leave_stale_model_folders(toy, tmp_path):
    out = tmp_path / "out"
    evaluate(toy.config({"old_candidate": 0.1}, accuracy_with_instances()), output_dir=out)
    assert (out / "instances" / "old_candidate").is_dir()
    # a user's own files there are kept: tests/records/test_output_manifest.py
    (out / "notes.txt").write_text("the user's own file")
    evaluate(toy.config({"new": 0.1}, accuracy_with_instances()), output_dir=out)
    assert sorted(p.name for p in (out / "instances").iterdir()) == ["base", "new"]
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["base", "new"]
    assert set(json.loads((out / "results.json").read_text())["models"]) == {"base", "new"}
    assert (out / "notes.txt").read_text() == "the user's own file"


# ------------------------------------------------------------------------------ item 15: permissions
def test_output_files_respect_the_umask(toy, tmp_path):
    old = os.umask(0o022)
    try:
        evaluate(toy.config({}, accuracy_with_instances()), output_dir=tmp_path / "out")
    finally:
        os.umask(old)
    for path in (tmp_path / "out" / "results.json", tmp_path / "out" / "instances" / "base" / "acc.parquet"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


# ------------------------------------------------------------------------------ issue 16 item 1: the user's files
def run_cli(toy, out, capsys) -> tuple[int, str]:
    path = toy.root / "run.json"
    path.write_text(json.dumps(toy.config({"cand": 0.1}, accuracy_with_instances())))
    code = main(["--config", str(path), "--quiet", "--output-dir", str(out)])
    return code, capsys.readouterr().err.strip()


def test_a_folder_holding_our_names_without_our_mark_is_refused_and_left_alone(toy, tmp_path, capsys):
    out = tmp_path / "p"
    (out / "instances" / "sub").mkdir(parents=True)
    (out / "samples").mkdir()
    (out / "instances" / "sub" / "important.txt").write_text("k")
    (out / "samples" / "mine.jsonl").write_text("{}\n")
    code, err = run_cli(toy, out, capsys)
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert err.startswith(f"olive-eval: error: output directory {out} holds instances, samples")
    assert "choose another --output-dir" in err
    assert (out / "instances" / "sub" / "important.txt").read_text() == "k"
    assert (out / "samples" / "mine.jsonl").read_text() == "{}\n"

    theirs = tmp_path / "q"
    theirs.mkdir()
    (theirs / "results.json").write_text('{"mine": 1}')
    code, err = run_cli(toy, theirs, capsys)
    assert code == 2 and err.startswith(f"olive-eval: error: output directory {theirs} holds results.json")
    assert (theirs / "results.json").read_text() == '{"mine": 1}'


def test_a_folder_with_only_unrelated_files_is_claimed_and_they_stay(toy, tmp_path, capsys):
    out = tmp_path / "p"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert run_cli(toy, out, capsys) == (0, "")
    assert json.loads((out / MARKER_FILE).read_text().splitlines()[0])["tool"] == "olive-eval"
    assert (out / "notes.txt").read_text() == "mine" and (out / "results.json").is_file()


@pytest.mark.parametrize("name", ["results.json", "instances", "samples", MARKER_FILE, LOCK_FILE])
def test_links_where_olive_eval_writes_are_refused_even_in_its_own_folder(toy, tmp_path, capsys, name):
    out = tmp_path / "p"
    assert run_cli(toy, out, capsys)[0] == 0  # the folder is olive-eval's
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("k")
    target = elsewhere if name in ("instances", "samples") else elsewhere / "keep.txt"
    link = out / name
    shutil.rmtree(link) if link.is_dir() else link.unlink()
    link.symlink_to(target)
    code, err = run_cli(toy, out, capsys)
    assert code == 2 and "\n" not in err
    assert err.startswith(f"olive-eval: error: output directory {out}: {link} is a link")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"] and (elsewhere / "keep.txt").read_text() == "k"


def test_a_marked_folder_loses_only_what_olive_eval_wrote_and_links_are_removed_not_followed(toy, tmp_path, capsys):
    out = tmp_path / "p"
    assert run_cli(toy, out, capsys)[0] == 0
    (out / "instances" / "base" / "important.txt").write_text("k")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "acc.jsonl").write_text("theirs\n")
    (out / "instances" / "old").symlink_to(elsewhere)
    (out / "samples" / "cand" / "acc_samples.jsonl").unlink()
    (out / "samples" / "cand" / "acc_samples.jsonl").symlink_to(elsewhere / "acc.jsonl")
    assert run_cli(toy, out, capsys)[0] == 0
    assert (out / "instances" / "base" / "important.txt").read_text() == "k"
    assert not (out / "instances" / "old").is_symlink()
    assert not (out / "samples" / "cand" / "acc_samples.jsonl").is_symlink()
    assert (elsewhere / "acc.jsonl").read_text() == "theirs\n"
    assert len((out / "samples" / "cand" / "acc_samples.jsonl").read_text().splitlines()) == 2


def test_a_damaged_mark_is_refused(toy, tmp_path, capsys):
    out = tmp_path / "p"
    assert run_cli(toy, out, capsys)[0] == 0
    (out / MARKER_FILE).write_text("not json")
    code, err = run_cli(toy, out, capsys)
    assert code == 2 and err.startswith(f"olive-eval: error: output directory {out} holds results.json, instances")
    assert (out / "results.json").is_file()


def test_a_new_run_removes_the_earlier_runs_report_but_not_a_users_page_or_a_link(toy, tmp_path, capsys):
    out = tmp_path / "p"
    assert run_cli(toy, out, capsys)[0] == 0
    (out / REPORT_FILE).write_text(f'<!doctype html><html><head>{REPORT_GENERATOR} 0.1.0"></head></html>')
    assert run_cli(toy, out, capsys)[0] == 0
    assert not (out / REPORT_FILE).exists()  # it described the earlier run's results

    (out / REPORT_FILE).write_text("<html><head><title>my own notes</title></head></html>")
    assert run_cli(toy, out, capsys)[0] == 0
    assert (out / REPORT_FILE).read_text().startswith("<html><head><title>my own notes")

    theirs = tmp_path / "theirs.html"
    theirs.write_text(f'<html><head>{REPORT_GENERATOR}"></head></html>')
    (out / REPORT_FILE).unlink()
    (out / REPORT_FILE).symlink_to(theirs)
    assert run_cli(toy, out, capsys)[0] == 0
    assert theirs.is_file() and (out / REPORT_FILE).is_symlink()  # never followed


def test_a_run_fsyncs_results_json_once_and_the_mark_never(toy, monkeypatch):
    """The claim's mark and the 'running' writes rename into place unsynced; the run's last results.json is synced."""
    import olive_eval.records.results

    synced: list[str] = []
    real = olive_eval.records.results.os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(olive_eval.records.results.os, "fsync", fsync)
    evaluate(toy.config({"cand": 0.1}, accuracy_with_instances()))
    out = toy.root / "out"
    assert [os.path.basename(p).split(".")[1] for p in synced] == ["results"]  # the temporary .results.json.*
    assert (out / MARKER_FILE).is_file() and json.loads((out / MARKER_FILE).read_text().splitlines()[0])["tool"]


def test_a_rerun_removes_the_temporary_results_files_a_run_left_and_nothing_else(toy, tmp_path, capsys):
    """``.results.json.*`` regular files go; a link or a folder of that name, and a file that only looks alike,
    stay."""
    out = tmp_path / "p"
    assert run_cli(toy, out, capsys)[0] == 0
    left = [out / ".results.json.k2j4abcd", out / ".results.json."]
    for path in left:
        path.write_text("{")
    (tmp_path / "theirs").write_text("theirs")
    kept = [out / ".results.json.link", out / ".results.json.folder", out / ".results.jsonx", out / "results.json.bak"]
    kept[0].symlink_to(tmp_path / "theirs")
    kept[1].mkdir()
    kept[2].write_text("x")
    kept[3].write_text("x")
    assert run_cli(toy, out, capsys)[0] == 0
    assert not any(os.path.lexists(path) for path in left)
    assert all(os.path.lexists(path) for path in kept) and (tmp_path / "theirs").read_text() == "theirs"
