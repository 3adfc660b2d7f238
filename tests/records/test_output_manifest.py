"""A rerun removes exactly the per-example files olive-eval wrote, listed in the folder's mark with their
identity; a user's own files, and ours the user changed, are kept (issue 29, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

from olive_eval.cli import main
from olive_eval.records.output_dir import MARKER_FILE
from olive_eval.records.output_manifest import record_written
from olive_eval.records.parquet import read_records


def metrics() -> list[dict]:
    return [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}], "sample_log_num": 2}]


def run_cli(toy, out: Path, capsys, candidates: dict[str, float]) -> tuple[int, str]:
    path = toy.root / "run.json"
    path.write_text(json.dumps(toy.config(candidates, metrics())))
    code = main(["--config", str(path), "--quiet", "--no-cache", "--output-dir", str(out)])
    return code, capsys.readouterr().err.strip()


def listed(out: Path) -> list[str]:
    """The files the mark lists as written (every line after the first)."""
    lines = (out / MARKER_FILE).read_text().splitlines()
    return sorted(json.loads(line)["file"] for line in lines[1:] if not json.loads(line).get("partial"))


def test_the_mark_lists_every_file_the_run_wrote_with_its_identity(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"cand": 0.1}) == (0, "")
    assert listed(out) == [
        "instances/base/acc.parquet",
        "instances/cand/acc.parquet",
        "samples/base/acc_samples.jsonl",
        "samples/cand/acc_samples.jsonl",
    ]
    for line in (out / MARKER_FILE).read_text().splitlines()[1:]:
        entry = json.loads(line)
        if not entry.get("partial"):
            stat = (out / entry["file"]).stat()
            assert (entry["size"], entry["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns)


def test_a_rerun_keeps_the_users_own_record_files(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"old": 0.1})[0] == 0
    mine = {
        out / "instances" / "old" / "mine.parquet": b"my parquet",
        out / "instances" / "base" / "mine.jsonl": b"{}\n",
        out / "instances" / "elsewhere" / "deep" / "x.parquet": b"x",
        out / "samples" / "mine.jsonl": b"{}\n",
        out / "samples" / "old" / "acc_samples.jsonl.bak": b"b",
    }
    for path, data in mine.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert run_cli(toy, out, capsys, {"new": 0.1}) == (0, "")
    for path, data in mine.items():
        assert path.read_bytes() == data, path
    assert not (out / "instances" / "old" / "acc.parquet").exists()  # ours: removed
    assert not (out / "samples" / "old" / "acc_samples.jsonl").exists()
    assert len(list(read_records(out / "instances" / "new" / "acc.parquet"))) == len(toy.x)


def test_folders_emptied_of_our_files_go_and_the_users_empty_folder_stays(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"old": 0.1})[0] == 0
    (out / "instances" / "my_empty").mkdir()
    assert run_cli(toy, out, capsys, {"new": 0.1})[0] == 0
    assert sorted(p.name for p in (out / "instances").iterdir()) == ["base", "my_empty", "new"]
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["base", "new"]


def test_a_file_we_wrote_and_the_user_changed_is_kept_and_said(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"old": 0.1})[0] == 0
    changed = out / "instances" / "old" / "acc.parquet"
    changed.write_bytes(b"my edit")
    code, err = run_cli(toy, out, capsys, {"new": 0.1})
    assert code == 0 and changed.read_bytes() == b"my edit"
    assert err == f"olive-eval: warning: kept {changed}: changed since olive-eval wrote it"
    # it is the user's now: the next run keeps it without a word
    assert run_cli(toy, out, capsys, {"new": 0.1}) == (0, "")
    assert changed.read_bytes() == b"my edit"


def test_a_changed_file_where_the_run_writes_is_kept_and_the_run_says_it_could_not_write_there(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"cand": 0.1})[0] == 0
    changed = out / "samples" / "cand" / "acc_samples.jsonl"
    changed.write_text("my notes\n")
    code, err = run_cli(toy, out, capsys, {"cand": 0.1})
    assert code == 1 and changed.read_text() == "my notes\n"
    assert f"olive-eval: warning: kept {changed}: changed since olive-eval wrote it" in err
    assert f"olive-eval: error: cannot write {changed}: " in err
    assert len(list(read_records(out / "instances" / "cand" / "acc.parquet"))) == len(toy.x)  # the rest is written


def test_a_temporary_file_left_by_a_run_that_died_mid_file_is_removed(toy, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"old": 0.1})[0] == 0
    left = out / "instances" / "old" / ".acc2.parquet.k2j4"
    left.write_bytes(b"PAR1")
    record_written(out, left, partial=True)  # what a sink does when it opens its temporary file
    mine = out / "instances" / "old" / ".acc3.parquet.abcd"
    mine.write_bytes(b"mine")  # looks the same, but olive-eval never listed it
    assert run_cli(toy, out, capsys, {"new": 0.1})[0] == 0
    assert not left.exists() and mine.read_bytes() == b"mine"


def test_a_folder_marked_by_an_earlier_version_loses_its_records_by_name_as_that_version_promised(
    toy, tmp_path, capsys
):
    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"old": 0.1})[0] == 0
    (out / MARKER_FILE).write_text('{"tool": "olive-eval", "version": "0.0.9"}\n')  # no list of files
    (out / "instances" / "old" / "notes.txt").write_text("n")
    assert run_cli(toy, out, capsys, {"new": 0.1}) == (0, "")
    assert not (out / "instances" / "old" / "acc.parquet").exists()
    assert (out / "instances" / "old" / "notes.txt").read_text() == "n"
    assert listed(out) == sorted(
        f"{kind}/{model}/{name}"
        for model in ("base", "new")
        for kind, name in (("instances", "acc.parquet"), ("samples", "acc_samples.jsonl"))
    )
