"""``"shards": N`` on the ray executor (a local Ray, two CPUs): each shard a Ray task; values, intervals, paired
goals and per-example files bit-identical to one process; a shard whose worker dies fails the pass in one line."""

from __future__ import annotations

import textwrap

from olive_eval import evaluate
from tests.engine.executors.test_process_shards import run_crashing_at_load
from tests.engine.executors.test_ray_executor import MODELS, python_config
from tests.engine.executors.test_shards import outcome, same_files, with_files, with_goal

RAY = {"type": "ray", "address": "local", "num_workers": 2}

DIES_IN_A_SHARD = MODELS + textwrap.dedent(
    """

    class DiesPast:
        '''Dies on the batches of the second shard (examples 4 and on), always or only the first time.'''

        def __init__(self, marker):
            self.marker = marker

        def __call__(self, batch):
            if int(batch["v"][0]) >= 4 and (self.marker is None or not Path(self.marker).exists()):
                if self.marker is not None:
                    Path(self.marker).write_text("died once")
                os._exit(3)
            return [int(v) % 3 for v in batch["v"]]


    def load_dies_in_a_shard(model_path):
        return DiesPast(None)


    def load_dies_once_in_a_shard(model_path):
        return DiesPast(Path(__file__).parent / "shard_marker")


    class HangsPast:
        def __call__(self, batch):
            if int(batch["v"][0]) >= 4:
                import time

                time.sleep(3600)
            return [int(v) % 3 for v in batch["v"]]


    def load_hangs_in_a_shard(model_path):
        return HangsPast()
    """
)


def test_shards_on_ray_give_the_values_intervals_goals_and_files_of_one_process(local_ray, toy):
    metrics = [{**with_goal()[0], "sample_log_num": 70}, with_files(toy.root)[1]]  # and a custom metric
    config = toy.config({"cand": 0.5, "near": 0.05}, metrics)
    lines: list[tuple[str, str]] = []
    one = evaluate(config, output_dir=toy.root / "one")
    got = evaluate(
        {**config, "executor": {**RAY, "shards": 2}},
        output_dir=toy.root / "ray",
        progress=lambda model, message: lines.append((model, message)),
    )
    assert all(model.status == "ok" for model in got.models.values()), got.models
    assert outcome(got) == outcome(one)
    goal = got.models["cand"].metrics["acc-accuracy_score"].goal
    assert goal is not None and goal == one.models["cand"].metrics["acc-accuracy_score"].goal
    assert got.models["cand"].metrics["ordered-s"].value is not None  # a custom metric, sharded too
    assert got.models["cand"].passes["toy"]["examples"] == 120
    assert same_files(toy.root / "one", toy.root / "ray") == 9  # 3 models: acc's records, and 2 sample logs
    # each shard ran as a Ray task, and the progress lines name its worker
    assert any(
        m == "cand" and s.startswith("[") and "shard 2 of 2 (examples 64-119 of 'toy') started" in s for m, s in lines
    )


def test_a_shard_whose_worker_dies_fails_the_pass_after_one_retry(local_ray, tmp_path):
    loaders = {"base": "load_echo", "dies": "load_dies_in_a_shard", "once": "load_dies_once_in_a_shard"}
    result = evaluate(python_config(tmp_path, loaders, {**RAY, "shards": 2}, DIES_IN_A_SHARD))
    dies = result.models["dies"]
    assert dies.status == "failed"
    error = dies.metrics["acc-accuracy_score"].error or ""
    assert error.startswith("shard 2 of 2: the model's Ray worker died (retried once): "), error
    assert "\n" not in error
    once = result.models["once"]  # Ray ran its shard again, on a fresh worker
    assert once.status == "ok" and (tmp_path / "shard_marker").exists()
    assert once.metrics["acc-accuracy_score"].value == result.models["base"].metrics["acc-accuracy_score"].value


def test_a_shard_past_the_timeout_is_cancelled_and_says_so(local_ray, tmp_path):
    loaders = {"base": "load_echo", "hangs": "load_hangs_in_a_shard", "fine": "load_echo"}
    result = evaluate(python_config(tmp_path, loaders, {**RAY, "shards": 2, "timeout_s": 3}, DIES_IN_A_SHARD))
    hangs = result.models["hangs"]
    assert hangs.status == "failed"
    error = hangs.metrics["acc-accuracy_score"].error
    assert error == "the model ran past its timeout of 3 s (timeout_s); its Ray shard tasks were cancelled"
    assert result.models["fine"].status == "ok"


def test_a_sharded_model_that_dies_while_loading_fails_alone_and_leaves_no_ray_process(no_local_ray, tmp_path):
    # one worker (a local Ray of one CPU): the run's own Ray starts one interpreter fewer, both shards run on it
    code, stderr, models, left = run_crashing_at_load(tmp_path, {**RAY, "num_workers": 1, "shards": 2})
    assert code == 1, stderr  # a model failed; the run went to its end and ended its own Ray
    assert models["exit"]["status"] == "failed"
    assert models["exit"]["error"] == "the model's process exited with status 3"
    assert models["segv"]["status"] == "failed"
    assert models["segv"]["error"] == "the model's process was killed by signal SIGSEGV"
    assert models["after"]["status"] == "ok" and models["after"]["metrics"]["acc-accuracy_score"]["value"] == 1.0
    assert left == []  # no Ray worker, raylet or fork server of the run outlives it
