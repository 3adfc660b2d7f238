"""Repeats and reductions end to end (issue 19): a PythonModel samples answers from a seeded distribution; pass@k,
maj@k, take_first and mean over its samples equal a direct computation from the same draws; strict-match and
flexible-extract stay apart; the seed takes effect; bad configs fail with one line."""

from __future__ import annotations

import importlib.util
import math
import textwrap
from collections import Counter

import numpy as np
import pytest

from olive_eval import evaluate
from olive_eval.config import load_run_config
from olive_eval.data.batch import Batch
from olive_eval.engine.passes.repeats import RepeatingPost, RepeatOutputs, RepeatPlan, samples
from olive_eval.errors import ConfigError
from olive_eval.runtimes.genai_config import GenAIModelConfig
from olive_eval.runtimes.hf_config import HfModelConfig
from olive_eval.runtimes.python import PythonModelConfig
from tests.helpers import write_jsonl

SAMPLER = textwrap.dedent(
    '''
    import numpy as np


    def sample(row, label, seed):
        """One generation for a row: right with a row-dependent chance, in one of two answer formats."""
        rng = np.random.default_rng([row, seed])
        answer = label if rng.random() < (row % 5 + 1) / 6 else label + int(rng.integers(1, 3))
        return f"so 12 apples, #### {answer}" if rng.random() < 0.6 else f"I got 7 then {answer} in all."


    class Sampler:
        def __call__(self, batch):
            return [sample(int(r), int(y), int(s)) for r, y, s in zip(batch["row"], batch["label"], batch["repeat_seed"])]


    class Greedy:
        def __call__(self, batch):
            return [f"#### {int(y)}" for y in batch["label"]]


    class OwnRepeats:
        """Returns several predictions per example itself (no repeats asked for)."""

        def __call__(self, batch):
            from olive_eval.data.filters import Repeats

            return [Repeats([f"#### {int(y)}", "x"]) for y in batch["label"]]


    def load_own_repeats(model_path):
        return OwnRepeats()


    def load_sampler(model_path):
        return Sampler()


    def load_greedy(model_path):
        return Greedy()
    '''
)
STRICT = {"type": "regex", "pattern": r"#### (\-?[0-9\.\,]+)"}  # lm-eval gsm8k's strict-match
FLEXIBLE = {"type": "regex", "pattern": r"(-?[$0-9.,]{2,})|(-?[0-9]+)", "group_select": -1}  # flexible-extract
ROWS = 30
LABELS = [(7 * i) % 40 + 10 for i in range(ROWS)]


@pytest.fixture
def config(tmp_path):
    (tmp_path / "sampler.py").write_text(SAMPLER)
    data = write_jsonl(tmp_path / "d.jsonl", [{"row": i, "label": str(LABELS[i])} for i in range(ROWS)])

    def make(metrics: list[dict], loader: str = "load_sampler") -> dict:
        return {
            "input_model": {
                "type": "PythonModel",
                "name": "m",
                "user_script": str(tmp_path / "sampler.py"),
                "model_loader": loader,
            },
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(data)},
                    "pre_process_data_config": {"input_cols": ["row"], "label_col": "label"},
                    "dataloader_config": {"batch_size": 7},
                }
            ],
            "metrics": metrics,
            "output_dir": str(tmp_path / "out"),
        }

    return make


@pytest.fixture
def sample(tmp_path, config):
    spec = importlib.util.spec_from_file_location("sampler_for_test", tmp_path / "sampler.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.sample


def metric(name: str, repeats: int, reduction, filters=(STRICT,), priority: int = -1, **extra) -> dict:
    return {
        "name": name,
        "type": "accuracy",
        "data_config": "d",
        "repeats": repeats,
        "reduction": reduction,
        "filters": list(filters),
        "sub_types": [{"name": "exact_match", "priority": priority}],
        **extra,
    }


def extract(text: str, strict: bool) -> str:
    """lm-eval's two gsm8k filters, by hand: the number after '####', or the last number."""
    import re

    if strict:
        found = re.findall(r"#### (\-?[0-9\.\,]+)", text)
        return found[0].strip() if found else "[invalid]"
    found = re.findall(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", text)
    return next(g for g in found[-1] if g).strip() if found else "[invalid]"


def comb_pass_at_k(n: int, c: int, k: int) -> float:
    """The estimator as the Codex paper writes it, with exact binomials."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def expected(sample, seed: int, repeats: int, strict: bool = True) -> dict[str, float]:
    draws = [[extract(sample(i, LABELS[i], seed + r), strict) for r in range(repeats)] for i in range(ROWS)]
    right = [[d == str(LABELS[i]) for d in draws[i]] for i in range(ROWS)]
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    return {
        "first": mean([r[0] for r in right]),
        "maj": mean([Counter(d).most_common(1)[0][0] == str(LABELS[i]) for i, d in enumerate(draws)]),
        "mean": mean([mean(r) for r in right]),
        **{
            f"pass{k}": mean([comb_pass_at_k(repeats, sum(r), k) for r in right])
            for k in {1, 3, repeats}
            if k <= repeats
        },
    }


def values(result) -> dict[str, float]:
    return {key.split("-")[0]: m.value for key, m in result.models["m"].metrics.items()}


def test_pass_at_k_maj_at_k_take_first_and_mean_equal_a_direct_computation(config, sample):
    metrics = [
        metric("first", 5, "take_first", priority=1),
        metric("maj", 5, "majority_vote"),
        metric("mean", 5, "mean"),
        metric("pass1", 5, {"type": "pass_at_k", "k": 1}),
        metric("pass3", 5, {"type": "pass_at_k", "k": 3}),
        metric("pass5", 5, {"type": "pass_at_k", "k": 5}),
    ]
    got = values(evaluate(config(metrics)))
    want = expected(sample, 0, 5)
    assert got == pytest.approx(want, abs=1e-12)
    assert 0 < want["first"] < want["pass3"] < want["pass5"] < 1  # the draws are neither all right nor all wrong
    assert want["pass1"] == pytest.approx(want["mean"])


def test_strict_match_and_flexible_extract_stay_apart(config, sample):
    metrics = [
        metric("strict", 4, {"type": "pass_at_k", "k": 2}, priority=1),
        metric("flexible", 4, {"type": "pass_at_k", "k": 2}, filters=[FLEXIBLE]),
    ]
    got = values(evaluate(config(metrics)))
    strict = [[extract(sample(i, LABELS[i], r), True) == str(LABELS[i]) for r in range(4)] for i in range(ROWS)]
    flexible = [[extract(sample(i, LABELS[i], r), False) == str(LABELS[i]) for r in range(4)] for i in range(ROWS)]
    assert got["strict"] == pytest.approx(sum(comb_pass_at_k(4, sum(r), 2) for r in strict) / ROWS, abs=1e-12)
    assert got["flexible"] == pytest.approx(sum(comb_pass_at_k(4, sum(r), 2) for r in flexible) / ROWS, abs=1e-12)
    assert got["flexible"] > got["strict"]  # the '####' format is only part of the draws


def test_a_metric_with_fewer_repeats_reads_the_first_samples_of_the_pass(config, sample):
    metrics = [metric("pass3", 6, {"type": "pass_at_k", "k": 3}, priority=1), metric("first", 2, "mean")]
    got = values(evaluate(config(metrics)))
    assert got["pass3"] == pytest.approx(expected(sample, 0, 6)["pass3"], abs=1e-12)
    assert got["first"] == pytest.approx(expected(sample, 0, 2)["mean"], abs=1e-12)


def test_the_seed_takes_effect(config, sample):
    def run(seed: int) -> dict[str, float]:
        return values(evaluate(config([metric("maj", 4, "majority_vote", priority=1, repeat_seed=seed)])))

    assert run(0)["maj"] == pytest.approx(expected(sample, 0, 4)["maj"])
    assert run(1000)["maj"] == pytest.approx(expected(sample, 1000, 4)["maj"])
    draws = {seed: [sample(i, LABELS[i], seed) for i in range(ROWS)] for seed in (0, 1000)}
    assert draws[0] != draws[1000]  # another seed, other samples (and the run follows them, as checked above)
    assert run(0) == run(0)


def test_identical_repeats_of_a_python_model_are_said_neutrally(config):
    """A PythonModel's generator is its own: the run cannot tell greedy from sampling."""
    result = evaluate(config([metric("maj", 3, "majority_vote", priority=1)], loader="load_greedy"))
    assert result.models["m"].metrics["maj-exact_match"].value == 1.0
    assert f"{ROWS} examples whose 3 repeats were all identical on 'd'" in result.models["m"].warnings
    sampled = evaluate(config([metric("maj", 3, "majority_vote", priority=1)]))
    assert not any("identical" in w for w in sampled.models["m"].warnings)


# ------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("bad", "path", "message"),
    [
        (
            metric("p", 4, {"type": "pass_at_k", "k": 5}),
            "metrics[0].reduction.k",
            "pass@5 needs at least 5 samples per example, and metric 'p' has repeats 4; raise repeats to 5 or lower k",
        ),
        (
            metric("p", 4, None),
            "metrics[0].repeats",
            "metric 'p' samples 4 repeats of each example but does not reduce them: set 'reduction' (take_first, "
            "majority_vote, mean, pass_at_k) or end 'filters' with take_first or majority_vote",
        ),
        (
            metric("p", 4, "pass_at_k5"),
            "metrics[0].reduction.type",
            "unknown reduction \"pass_at_k5\"; did you mean 'pass_at_k'?",
        ),
        (metric("p", 4, {"type": "pass_at_k", "n": 2}), "metrics[0].reduction.n", "unknown key; valid: k, type"),
        (metric("p", 0, "mean"), "metrics[0].repeats", "Input should be greater than or equal to 1"),
    ],
)
def test_bad_repeats_config_is_a_config_error(config, bad, path, message):
    with pytest.raises(ConfigError) as info:
        load_run_config(config([bad]))
    assert (info.value.path, info.value.message) == (path, message)


def test_a_score_reduction_on_a_metric_without_per_example_scores(config):
    bad = {**metric("p", 2, "mean"), "sub_types": [{"name": "wer", "priority": 1}]}
    with pytest.raises(ConfigError) as info:
        load_run_config(config([bad]))
    assert info.value.path == "metrics[0].sub_types[0].name"
    assert info.value.message.startswith("reduction 'mean' reduces each example's sample scores, which 'wer' does not")


def test_repeats_with_no_reducing_filter_is_accepted_when_a_filter_reduces(config):
    ok = metric("p", 3, None, filters=[STRICT, {"type": "majority_vote"}])
    assert load_run_config(config([ok])).all_metrics[0].repeats == 3


def test_samples_left_unreduced_fail_the_metric_with_one_line(config):
    plain = {**metric("own", 1, None), "filters": [STRICT]}
    result = evaluate(config([{**plain, "sub_types": [{"name": "exact_match", "priority": 1}]}], "load_own_repeats"))
    assert result.models["m"].metrics["own-exact_match"].error == (
        "metric 'own' cannot score the model output: metric 'own': example 0 still holds 2 samples after the filters; "
        "reduce them ('reduction': take_first, majority_vote, mean or pass_at_k)"
    )


def test_pass_at_k_over_scores_that_are_not_pass_or_fail_fails_the_metric(config):
    anls = {**metric("a", 2, {"type": "pass_at_k", "k": 1}), "sub_types": [{"name": "anls", "priority": 1}]}
    result = evaluate(config([anls]))
    error = result.models["m"].metrics["a-anls"].error
    assert "pass@k counts a sample as passed at score 1 and failed at 0; sample" in error
    assert "(use a pass/fail metric such as exact_match, or the 'mean' reduction)" in error


class _Echo:
    """A post-process that gives the outputs' texts as they are."""

    def apply(self, outputs, batch, context):
        return outputs["text"]


@pytest.mark.parametrize(
    ("model", "wording"),
    [
        (HfModelConfig(type="HfModel", model_path="m"), "as greedy decoding gives (sample: do_sample true)"),
        (
            HfModelConfig(type="HfModel", model_path="m", generation_kwargs={"do_sample": True, "temperature": 0.8}),
            "although the model samples (do_sample true): a confident model, or a temperature too low; "
            "raise the temperature for repeats that differ",
        ),
        (
            GenAIModelConfig(type="GenAIModel", model_path="m", generation_kwargs={"do_sample": True}),
            "although the model samples",
        ),
        (
            GenAIModelConfig(type="GenAIModel", model_path="m", search_options={"do_sample": True}),
            "although the model samples",
        ),
        (
            GenAIModelConfig(
                type="GenAIModel",
                model_path="m",
                generation_kwargs={"do_sample": True},
                search_options={"do_sample": False},
            ),
            "as greedy decoding gives",
        ),
    ],
)
def test_identical_repeats_are_explained_by_whether_the_model_samples(model, wording):
    notes: dict[str, int] = {}
    post = RepeatingPost(_Echo(), RepeatPlan(3, 0), notes, samples(model))
    batch = Batch({"x": np.zeros(2)}, ["x"])
    post.apply(RepeatOutputs([{"text": ["a", "b"]}] * 3), batch, None)
    ((note, count),) = notes.items()
    assert count == 2
    assert note.startswith("examples whose 3 repeats were all identical")
    assert wording in note
    post.apply(
        RepeatOutputs([{"text": ["a"]}, {"text": ["c"]}, {"text": ["a"]}]), Batch({"x": np.zeros(1)}, ["x"]), None
    )
    assert notes == {}  # one example whose repeats differ: no warning


def test_whether_a_model_samples_is_unknown_for_a_python_model():
    assert samples(PythonModelConfig(type="PythonModel", user_script="m.py", model_loader="load")) is None
