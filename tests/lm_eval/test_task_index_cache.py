"""lm-eval's task index is built once per process for the same task folders while no task file changes: a task
file edited, added or removed, or lm-eval's built-ins asked for, builds it again."""

from __future__ import annotations

import os

import lm_eval.tasks

from olive_eval.lm_eval import tasks
from tests.lm_eval.lm_tasks import write_tasks


def test_the_index_is_built_once_until_a_task_file_changes(tmp_path, monkeypatch):
    folder = write_tasks(tmp_path / "tasks", ["a b"] * 24)
    built: list[tuple[object, bool]] = []
    real = lm_eval.tasks.TaskManager

    def counting(include_path=None, include_defaults=True, **kwargs):  # type: ignore[no-untyped-def]
        built.append((include_path, include_defaults))
        return real(include_path=include_path, include_defaults=include_defaults, **kwargs)

    monkeypatch.setattr(lm_eval.tasks, "TaskManager", counting)
    monkeypatch.setattr(tasks, "MANAGERS", {})
    first = tasks.task_manager([folder], defaults=False)
    assert tasks.task_manager([folder], defaults=False) is first and len(built) == 1
    fresh = real(include_path=str(folder), include_defaults=False)
    assert sorted(first.all_tasks) == sorted(fresh.all_tasks)  # the index a fresh TaskManager has

    yaml = folder / "words_mc.yaml"
    text = yaml.read_text()
    yaml.write_text(text.replace("task: words_mc", "task: words_mc_renamed"))
    stat = yaml.stat()
    os.utime(yaml, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later time even on a coarse clock
    edited = tasks.task_manager([folder], defaults=False)
    assert len(built) == 2 and "words_mc_renamed" in edited.all_tasks and "words_mc" not in edited.all_tasks

    (folder / "extra.yaml").write_text(text.replace("task: words_mc", "task: words_extra"))
    added = tasks.task_manager([folder], defaults=False)
    assert len(built) == 3 and "words_extra" in added.all_tasks


def test_at_most_kept_managers_are_held(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "MANAGERS", {})
    monkeypatch.setattr(tasks, "KEPTMANAGERS", 2)
    folders = [write_tasks(tmp_path / f"tasks{i}", ["a b"] * 24) for i in range(3)]
    managers = [tasks.task_manager([f], defaults=False) for f in folders]
    assert len(tasks.MANAGERS) == 2
    assert tasks.task_manager([folders[2]], defaults=False) is managers[2]  # the newest are kept
    assert tasks.task_manager([folders[0]], defaults=False) is not managers[0]  # the oldest went


def test_the_built_in_tasks_are_indexed_once_for_every_folder(tmp_path, monkeypatch):
    """A name missing from two task folders looks in one index of lm-eval's built-ins, not one per folder; the
    message counts the built-ins with the folder's tasks, as a TaskManager of both would."""
    import pytest

    from olive_eval.lm_eval.options import LmEvalOptions

    built: list[bool] = []
    real = lm_eval.tasks.TaskManager

    def counting(include_path=None, include_defaults=True, **kwargs):  # type: ignore[no-untyped-def]
        built.append(include_defaults)
        return real(include_path=include_path, include_defaults=include_defaults, **kwargs)

    monkeypatch.setattr(lm_eval.tasks, "TaskManager", counting)
    for i in range(2):
        folder = write_tasks(tmp_path / f"tasks{i}", ["a b"] * 24)
        options = LmEvalOptions.model_validate({"tasks": ["words_mc", "words_mcq"], "include_path": [str(folder)]})
        with pytest.raises(tasks.TaskProblem) as caught:
            tasks.load_tasks(options, allow_download=False)
        assert caught.value.index == 1 and "did you mean 'words_mc'?" in str(caught.value)
        count = len(tasks.built_in_tasks().all_subtasks) + 3  # words_mc, words_gen, words_ppl: no built-in's names
        assert f"lm-eval's built-in tasks ({count:,})" in str(caught.value)
    assert built.count(True) <= 1 and built.count(False) == 2  # at most once: another test may have built it
