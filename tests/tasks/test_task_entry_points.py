"""Another package adds a task through the entry-point group ``olive_eval.tasks``: its name and its aliases resolve,
an HfModel takes it with the call mode it declares, and an entry point that is no Task is one line naming it."""

from __future__ import annotations

import sys
import textwrap

import pytest

from olive_eval.registry import RegistryError
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.tasks.base import get_task, task_names, task_problem, task_registry
from olive_eval.tasks.call_mode import CallMode
from tests.plugins.toy_distribution import install_distribution

PLUGIN = textwrap.dedent(
    """
    from olive_eval.tasks.base import Task
    from olive_eval.tasks.call_mode import CallMode


    class Summarization(Task):
        aliases = ("summarize",)
        model_classes = ("AutoModelForSeq2SeqLM",)
        call_modes = (CallMode.GENERATE,)
        post_process = "decode"


    def not_a_task():
        return None
    """
)

ENTRY_POINTS = """\
[olive_eval.tasks]
plugin-summarization = {module}:Summarization
plugin-broken = {module}:not_a_task
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch, request):
    module = install_distribution(
        tmp_path,
        monkeypatch,
        request,
        name="olive-eval-task-plugin",
        version="0.1",
        source=PLUGIN,
        entry_points=ENTRY_POINTS,
    )
    yield module
    monkeypatch.undo()
    for name in ("plugin-summarization", "summarize"):
        task_registry.unregister(name)
    sys.modules.pop(module, None)


def test_a_plugin_task_and_its_alias(plugin):
    task = get_task("summarize")  # an alias is known once its task's entry point is loaded, which looking it up does
    assert task is get_task("plugin-summarization") and task.name == "plugin-summarization"
    config = HfModelConfig(type="HfModel", model_path="x", task="summarize")
    assert config.call_mode(None) is CallMode.GENERATE and config.call_mode(True) is CallMode.GENERATE
    assert "plugin-summarization (summarize)" in task_names()


def test_a_plugin_entry_point_that_is_no_task_is_one_line_when_its_name_is_used(plugin):
    assert get_task("ner").name == "token-classification"  # the broken plugin stops nothing else
    assert "plugin-broken" not in task_problem("no-such-task")
    with pytest.raises(RegistryError) as caught:
        get_task("plugin-broken")
    assert str(caught.value) == (
        f"entry point 'plugin-broken = {plugin}:not_a_task' (group olive_eval.tasks) of distribution "
        "'olive-eval-task-plugin 0.1' is not a Task subclass (it is a function)"
    )
