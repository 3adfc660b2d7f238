"""A rerun removes exactly the per-example files olive-eval wrote, listed in the folder's mark with their
identity; a user's own files, and ours the user changed, are kept (issue 29, item 1)."""

from __future__ import annotations

import json
import os
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


def test_clearing_removes_each_listed_file_only_while_it_is_the_one_written(tmp_path):
    """One look (``lstat``) per listed file decides: unchanged, removed; changed, kept and said; a link or a folder
    in its place, or nothing, left alone; a kept model's unchanged file stays, listed as kept."""
    from olive_eval.records.output_manifest import clear_written, mark_text

    out = tmp_path / "out"
    (out / "instances" / "m").mkdir(parents=True)
    (out / "instances" / "kept").mkdir()
    (out / MARKER_FILE).write_text(mark_text("0.0.0"))
    names = ["same", "changed", "link", "folder", "gone", "kept_same", "kept_changed"]
    files = {
        name: out / "instances" / ("kept" if name.startswith("kept") else "m") / f"{name}.parquet" for name in names
    }
    for path in files.values():
        path.write_bytes(b"PAR1")
        record_written(out, path)
    with (out / MARKER_FILE).open("a") as mark:
        mark.write("not json\n")  # a damaged line: skipped
    files["changed"].write_bytes(b"PAR1 edited")
    files["kept_changed"].write_bytes(b"PAR1 edited")
    (tmp_path / "theirs.parquet").write_bytes(b"theirs")
    files["link"].unlink()
    files["link"].symlink_to(tmp_path / "theirs.parquet")
    files["folder"].unlink()
    files["folder"].mkdir()
    files["gone"].unlink()

    cleared = clear_written(out, keep_folders={"kept"})

    assert cleared.removed == [files["same"]]
    assert cleared.changed == [files["changed"], files["kept_changed"]]
    assert list(cleared.kept) == ["instances/kept/kept_same.parquet"]
    assert cleared.kept["instances/kept/kept_same.parquet"]["size"] == 4
    assert not files["same"].exists() and files["changed"].read_bytes() == b"PAR1 edited"
    assert files["link"].is_symlink() and (tmp_path / "theirs.parquet").read_bytes() == b"theirs"
    assert files["folder"].is_dir() and files["kept_same"].is_file()


def test_a_mark_that_is_a_link_or_not_ours_clears_by_name(tmp_path):
    from olive_eval.records.output_manifest import clear_written

    out = tmp_path / "out"
    (out / "instances" / "m").mkdir(parents=True)
    record = out / "instances" / "m" / "acc.parquet"
    record.write_bytes(b"PAR1")
    (tmp_path / "elsewhere").write_text('{"tool": "olive-eval", "version": "1", "files": "listed"}\n')
    (out / MARKER_FILE).symlink_to(tmp_path / "elsewhere")
    assert clear_written(out).removed == [record]  # the link is not read: found by name, as an old version's
    record.write_bytes(b"PAR1")
    (out / MARKER_FILE).unlink()
    (out / MARKER_FILE).write_text('{"tool": "other"}\n{"file": "instances/m/acc.parquet"}\n')
    assert clear_written(out).removed == [record]


def test_clearing_looks_at_each_listed_file_once(tmp_path, monkeypatch):
    """A warm rerun's clear costs a file system call per listed file, not three (``is_symlink``, ``is_file``,
    ``lstat``)."""
    import olive_eval.records.output_manifest as manifest

    out = tmp_path / "out"
    (out / "instances" / "m").mkdir(parents=True)
    (out / MARKER_FILE).write_text(manifest.mark_text("0.0.0"))
    for i in range(20):
        (out / "instances" / "m" / f"{i}.parquet").write_bytes(b"PAR1")
        record_written(out, out / "instances" / "m" / f"{i}.parquet")
    looks: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: looks.append(str(p)) or real_stat(p, *a, **k))
    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: looks.append(str(p)) or real_lstat(p, *a, **k))
    assert len(manifest.clear_written(out).removed) == 20
    assert len([p for p in looks if p.endswith(".parquet")]) == 20


def test_a_rerun_writes_into_the_folders_it_cleared_and_those_it_left_empty_go_when_it_ends(
    toy, tmp_path, capsys, monkeypatch
):
    """The clear leaves emptied folders in place while the run works (a folder removed and made again costs the
    file system two journaled changes): those the run writes into again are the same folders, the others go
    when the run ends; a user's own empty folder stays."""
    from olive_eval.records.output_manifest import clear_written, remove_emptied

    out = tmp_path / "out"
    assert run_cli(toy, out, capsys, {"old": 0.1})[0] == 0
    (out / "instances" / "mine").mkdir()
    removed: list[str] = []
    real_rmdir = Path.rmdir

    def rmdir(self: Path) -> None:
        real_rmdir(self)  # an OSError (not empty) is not a removal
        removed.append(self.relative_to(out).as_posix())

    monkeypatch.setattr(Path, "rmdir", rmdir)
    assert run_cli(toy, out, capsys, {"new": 0.1}) == (0, "")
    assert sorted(removed) == ["instances/old", "samples/old"]  # base's folders written into again, never removed
    monkeypatch.undo()
    assert sorted(p.name for p in (out / "instances").iterdir()) == ["base", "mine", "new"]
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["base", "new"]

    cleared = clear_written(out)
    assert cleared.removed and all(path.parent.is_dir() for path in cleared.removed)  # left for the caller
    (out / "samples" / "new" / "notes.txt").write_text("n")
    remove_emptied(out, cleared.removed)
    assert sorted(p.name for p in (out / "instances").iterdir()) == ["mine"]
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["new"]
