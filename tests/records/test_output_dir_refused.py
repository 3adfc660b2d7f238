"""A refused output folder is left exactly as it was: no lock file, no mark, no truncated pid (issue 29, item 4)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from olive_eval.cli import main
from olive_eval.records.output_dir import LOCK_FILE, MARKER_FILE, OutputDir
from olive_eval.records.run_log import LOG_FILE


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry below ``folder``: a link's target, a file's bytes, a folder as such."""
    out: dict[str, object] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
    return out


def run_cli(toy, out: Path, capsys) -> tuple[int, str]:
    path = toy.root / "run.json"
    path.write_text(
        json.dumps(
            toy.config({"cand": 0.1}, [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}])
        )
    )
    code = main(["--config", str(path), "--quiet", "--no-cache", "--output-dir", str(out)])
    return code, capsys.readouterr().err.strip()


def ours(toy, tmp_path: Path, capsys) -> Path:
    out = tmp_path / "ours"
    assert run_cli(toy, out, capsys)[0] == 0
    return out


def foreign_results(toy, tmp_path: Path, capsys) -> Path:
    out = tmp_path / "foreign"
    out.mkdir()
    (out / "results.json").write_text('{"mine": 1}')
    return out


def foreign_records(toy, tmp_path: Path, capsys) -> Path:
    out = tmp_path / "records"
    (out / "instances" / "m").mkdir(parents=True)
    (out / "instances" / "m" / "a.parquet").write_bytes(b"PAR1")
    return out


def damaged_mark(toy, tmp_path: Path, capsys) -> Path:
    out = ours(toy, tmp_path, capsys)
    (out / MARKER_FILE).write_text("not json")
    return out


def results_is_a_folder(toy, tmp_path: Path, capsys) -> Path:
    out = ours(toy, tmp_path, capsys)
    (out / "results.json").unlink()
    (out / "results.json").mkdir()
    (out / "results.json" / "x.txt").write_text("x")
    return out


def died_run_and_wrong_kind(toy, tmp_path: Path, capsys) -> Path:
    """An earlier run died (its pid is left in the lock file): a refusal must not erase that pid."""
    out = ours(toy, tmp_path, capsys)
    (out / LOCK_FILE).write_text("424242")
    (out / "instances").rename(out / "moved")
    (out / "instances").write_text("a file where a folder belongs")
    return out


def link_in_our_folder(toy, tmp_path: Path, capsys) -> Path:
    out = ours(toy, tmp_path, capsys)
    (out / "results.json").unlink()
    (out / "results.json").symlink_to(tmp_path / "nowhere.json")
    return out


def log_is_a_link(toy, tmp_path: Path, capsys) -> Path:
    """The run's log file would be written through it."""
    out = ours(toy, tmp_path, capsys)
    (tmp_path / "elsewhere.txt").write_text("mine")
    (out / LOG_FILE).symlink_to(tmp_path / "elsewhere.txt")
    return out


@pytest.mark.parametrize(
    "make",
    [
        foreign_results,
        foreign_records,
        damaged_mark,
        results_is_a_folder,
        died_run_and_wrong_kind,
        link_in_our_folder,
        log_is_a_link,
    ],
)
def test_a_refused_folder_is_left_exactly_as_it_was(toy, tmp_path, capsys, make):
    out = make(toy, tmp_path, capsys)
    before = snapshot(out)
    code, err = run_cli(toy, out, capsys)
    assert code == 2 and err.startswith("olive-eval: error: output directory") and "\n" not in err
    assert snapshot(out) == before


def test_a_refused_file_and_the_folders_above_it_are_left_as_they_were(toy, tmp_path, capsys):
    box = tmp_path / "box"
    box.mkdir()
    (box / "a_file").write_text("x")
    before = snapshot(box)
    for out in (box / "a_file", box / "a_file" / "sub"):
        assert run_cli(toy, out, capsys)[0] == 2
    assert snapshot(box) == before


def test_a_busy_folder_is_left_as_it_was(toy, tmp_path, capsys):
    out = ours(toy, tmp_path, capsys)
    with OutputDir(out):
        before = snapshot(out)
        code, err = run_cli(toy, out, capsys)
        assert code == 2 and "is in use by another olive-eval run" in err
        assert snapshot(out) == before


def test_a_data_error_found_when_the_run_is_planned_leaves_the_earlier_run_as_it_was(toy, tmp_path, capsys):
    out = ours(toy, tmp_path, capsys)
    before = snapshot(out)
    config = toy.config({"cand": 0.1}, [{"name": "acc", "type": "accuracy", "sub_types": [{"name": "accuracy_score"}]}])
    config["data_configs"][0]["pre_process_data_config"]["input_cols"] = ["no_such_column"]
    path = toy.root / "bad.json"
    path.write_text(json.dumps(config))
    assert main(["--config", str(path), "--quiet", "--no-cache", "--output-dir", str(out)]) == 2
    assert "no_such_column" in capsys.readouterr().err
    assert snapshot(out) == before
