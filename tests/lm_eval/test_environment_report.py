"""lm-eval's environment report (torch's ``collect_env``, which runs ``pip list``, and ``git describe``) is left
out of olive-eval's lm-eval runs, which record neither, and is lm-eval's own again outside them."""

from __future__ import annotations

import subprocess
import threading

import torch.utils.collect_env
from lm_eval import evaluator
from lm_eval.loggers import utils as lm_eval_utils

from olive_eval import evaluate
from olive_eval.lm_eval.environment_report import without_environment_report
from tests.lm_eval.conftest import hf_model, lm_config


def _own_steps() -> bool:
    return (
        evaluator.add_env_info is lm_eval_utils.add_env_info
        and evaluator.get_git_commit_hash is lm_eval_utils.get_git_commit_hash
    )


def test_a_run_collects_no_environment_and_runs_no_git(llama, tasks_folder, tmp_path, monkeypatch):
    collected, commands = [], []
    monkeypatch.setattr(torch.utils.collect_env, "get_pretty_env_info", lambda: collected.append(1) or "")
    real_check_output = subprocess.check_output

    def check_output(args, *rest, **kwargs):
        commands.append(args)
        return real_check_output(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "check_output", check_output)
    config = lm_config(hf_model(llama), tasks_folder, tmp_path, metric_config={"tasks": ["words_mc"]})
    result = evaluate(config).models["base"]
    assert result.metrics["lm-words_mc/acc,none"].value is not None
    assert collected == [] and not [c for c in commands if "git" in c[0]]
    assert _own_steps()
    evaluator.add_env_info(outside := {})  # outside a run, lm-eval's own report (here the patched collect_env)
    assert collected == [1] and "pretty_env_info" in outside


def test_blocks_that_nest_or_overlap_put_the_steps_back_when_the_last_ends():
    assert _own_steps()
    with without_environment_report():
        assert not _own_steps()
        with without_environment_report():
            assert not _own_steps()
        assert not _own_steps()  # the outer block is still open
        entered, leave = threading.Event(), threading.Event()

        def other_thread():
            with without_environment_report():
                entered.set()
                leave.wait(10)

        thread = threading.Thread(target=other_thread)
        thread.start()
        entered.wait(10)
    assert not _own_steps()  # the other thread's block outlives this one
    leave.set()
    thread.join(10)
    assert _own_steps()
