"""The result cache: entries that round-trip exactly and are never trusted when they do not check out, and a
folder that may not be usable."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from olive_eval.engine.cache.cache_key import CACHE_FORMAT
from olive_eval.engine.cache.result_cache import ResultCache
from olive_eval.engine.model.unit import ModelEvaluation
from tests.engine.cache_helpers import as_json, key_of, make_cache, real_evaluation, write_config
from tests.engine.unit_helpers import evaluate_model
from tests.helpers import write_margin_metric


@pytest.fixture
def setup(toy, tmp_path):
    return write_config(toy, tmp_path)


def test_an_entry_round_trips_exactly(setup, tmp_path):
    config, path = setup
    original = real_evaluation(path)
    key = key_of(config, cache=make_cache(tmp_path / "cache"))
    make_cache(tmp_path / "cache").put(key, original)
    warnings: list[str] = []
    reader = make_cache(tmp_path / "cache", warnings)
    assert key_of(config, cache=reader) == key
    back = reader.get(key)
    assert back is not None and warnings == []
    assert as_json(back.result) == as_json(original.result)
    assert back.result.tracebacks == original.result.tracebacks
    details = back.result.metrics["acc-roc_auc"].details["curve"]
    assert np.isnan(details[0]) and details[1:] == [1.5, None, "nan"]  # a string stays a string
    assert back.result.metrics["acc-accuracy_score"].goal.change_ci_low == float("-inf")
    assert set(back.evidence) == set(original.evidence)
    for name, evidence in original.evidence.items():
        restored = back.evidence[name]
        # the restored evidence resamples to the same values (an independent check of the metric's state)
        np.testing.assert_array_equal(restored.distribution(300, 7), evidence.distribution(300, 7), err_msg=name)
    # and its interval is the one the result carries
    acc = back.result.metrics["acc-accuracy_score"]
    assert back.evidence["acc-accuracy_score"].interval(acc.value, "percentile", 200, 0.95, 42) == (
        acc.ci_low,
        acc.ci_high,
    )
    timings = back.evidence["lat-avg"].timings
    assert [r.tolist() for r in timings.rounds] == [[0.01, 0.012], [0.011, 0.013, 0.0105]]
    assert (timings.batch_size, timings.loads, timings.first_calls) == (2, [0.2], [0.05])


def test_entries_hold_no_pickle(setup, tmp_path):
    config, path = setup
    cache = make_cache(tmp_path / "cache")
    key = key_of(config, cache=cache)
    cache.put(key, real_evaluation(path))
    npz = next((tmp_path / "cache").rglob("*.npz"))
    with np.load(npz, allow_pickle=False) as arrays:
        assert all(arrays[name].dtype != object for name in arrays.files)
    header = json.loads(npz.with_suffix(".json").read_text())
    assert header["key"] == key and header["format"] == CACHE_FORMAT == 2


def test_priorities_follow_the_current_config(setup, tmp_path):
    config, path = setup
    cache = make_cache(tmp_path / "cache")
    cache.put(key_of(config, cache=cache), real_evaluation(path))
    swapped = copy.deepcopy(config)
    swapped["metrics"][0]["sub_types"][0]["priority"] = 2
    swapped["metrics"][2]["sub_types"][0]["priority"] = 1
    back = cache.get(key_of(swapped, cache=cache))
    assert back is not None
    assert back.result.metrics["acc-accuracy_score"].priority == 2 and back.result.metrics["lat-avg"].priority == 1


# ---------------------------------------------------------------- entries that are not trusted


@pytest.fixture
def stored(setup, tmp_path):
    config, path = setup
    cache = make_cache(tmp_path / "cache")
    key = key_of(config, cache=cache)
    cache.put(key, real_evaluation(path))
    entry = next((tmp_path / "cache").rglob("*.json"))
    return config, key, entry


def read_back(config, folder: Path) -> tuple[ModelEvaluation | None, list[str]]:
    warnings: list[str] = []
    cache = make_cache(folder, warnings)
    key = key_of(config, cache=cache)
    first = cache.get(key)
    assert cache.get(key) is None  # asking twice warns once
    return first, warnings


def test_a_truncated_json_entry_is_ignored(stored, tmp_path):
    config, _, entry = stored
    entry.write_text(entry.read_text()[:100])
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None and len(warnings) == 1
    assert warnings[0].startswith(f"cache entry {entry} ignored: not valid JSON (")


def test_a_truncated_npz_is_ignored(stored, tmp_path):
    config, _, entry = stored
    npz = entry.with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:50])
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None
    assert warnings == [f"cache entry {entry} ignored: {npz.name} does not match its header (cut short or replaced)"]


def test_an_npz_with_an_object_array_is_ignored(stored, tmp_path):
    """Even with a header that matches it: loading never unpickles."""
    config, _, entry = stored
    npz = entry.with_suffix(".npz")
    with np.load(npz) as arrays:
        contents = {name: arrays[name] for name in arrays.files}
    contents["a0"] = np.array([{"evil": 1}, None], dtype=object)
    np.savez(npz, **contents)
    header = json.loads(entry.read_text())
    header["arrays_sha256"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    entry.write_text(json.dumps(header))
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None and len(warnings) == 1
    assert warnings[0].startswith(
        f"cache entry {entry} ignored: Object arrays cannot be loaded when allow_pickle=False"
    )


def test_an_entry_from_another_version_is_ignored(stored, tmp_path):
    config, _, entry = stored
    header = json.loads(entry.read_text())
    header["olive_eval"] = "0.0.1"
    entry.write_text(json.dumps(header))
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None
    assert warnings == [
        f"cache entry {entry} ignored: written by olive-eval 0.0.1 (format {CACHE_FORMAT}); "
        f"this is 0.1.0 (format {CACHE_FORMAT})"
    ]


def test_an_entry_of_another_format_is_ignored(stored, tmp_path):
    config, _, entry = stored
    header = json.loads(entry.read_text())
    header["format"] = 99
    entry.write_text(json.dumps(header))
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None and warnings == [
        f"cache entry {entry} ignored: written by olive-eval 0.1.0 (format 99); this is 0.1.0 (format {CACHE_FORMAT})"
    ]


def test_an_entry_under_the_wrong_key_is_ignored(stored, tmp_path):
    config, key, entry = stored
    other = copy.deepcopy(config)
    other["metrics"][0]["sub_types"][1]["metric_config"]["average"] = "macro"
    cache = make_cache(tmp_path / "cache")
    other_key = key_of(other, cache=cache)
    target = tmp_path / "cache" / other_key[:2] / f"{other_key}.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(entry.read_text())
    target.with_suffix(".npz").write_bytes(entry.with_suffix(".npz").read_bytes())
    found, warnings = read_back(other, tmp_path / "cache")
    assert found is None and warnings == [f"cache entry {target} ignored: it holds key {key}, not its own"]


def test_a_malformed_result_in_an_entry_is_ignored(stored, tmp_path):
    config, _, entry = stored
    header = json.loads(entry.read_text())
    header["result"]["metrics"]["acc-f1_score"]["surprise"] = 1
    entry.write_text(json.dumps(header))
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None
    assert warnings == [f"cache entry {entry} ignored: result.metrics.acc-f1_score: unknown key 'surprise'"]


def test_record_files_round_trip_byte_for_byte(setup, tmp_path):
    config, path = setup
    cache = make_cache(tmp_path / "cache")
    key = key_of(config, cache=cache)
    original = real_evaluation(path)
    original.records = {"instances/acc": b"PAR1\x00\xff whatever bytes PAR1", "instances/size": b""}
    cache.put(key, original)
    reader = make_cache(tmp_path / "cache")
    back = reader.get(key_of(config, cache=reader))
    assert back is not None and back.records == original.records


def test_a_record_file_of_no_metric_of_the_run_is_ignored(setup, tmp_path):
    config, path = setup
    cache = make_cache(tmp_path / "cache")
    key = key_of(config, cache=cache)
    original = real_evaluation(path)
    original.records = {"samples/acc": b"{}\n"}  # acc has no sample_log_num: no sample log
    cache.put(key, original)
    entry = next((tmp_path / "cache").rglob("*.json"))
    found, warnings = read_back(config, tmp_path / "cache")
    assert found is None
    assert warnings == [f"cache entry {entry} ignored: it holds a record file 'samples/acc' of no metric of the run"]


# ---------------------------------------------------------------- the folder


def test_a_folder_that_cannot_be_created_warns_once_and_disables_the_cache(setup, tmp_path):
    """As root a 0o500 folder is still writable; a path under a regular file fails for everyone."""
    config, path = setup
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    warnings: list[str] = []
    cache = ResultCache(blocker / "cache", warn=warnings.append)
    assert not cache.enabled
    assert warnings == [f"cache folder {blocker / 'cache'} is not writable (Not a directory); running without a cache"]
    assert key_of(config, cache=cache) == ""
    cache.put("0" * 64, real_evaluation(path))
    assert cache.get("0" * 64) is None and len(warnings) == 1


def test_writes_that_start_failing_disable_the_cache_once(setup, tmp_path):
    config, path = setup
    warnings: list[str] = []
    cache = make_cache(tmp_path / "cache", warnings)
    key = key_of(config, cache=cache)
    (tmp_path / "cache" / key[:2]).write_text("a file where the entry's folder goes")
    cache.put(key, real_evaluation(path))
    cache.put(key, real_evaluation(path))
    assert not cache.enabled
    assert warnings == [f"cache folder {tmp_path / 'cache'} is not writable (File exists); running without a cache"]


def test_a_disabled_cache_misses_and_stores_nothing(setup, tmp_path):
    config, path = setup
    cache = ResultCache(None, warn=pytest.fail)
    assert key_of(config, cache=cache) == "" and cache.get("") is None
    cache.put("", real_evaluation(path))
    assert not cache.enabled


def test_evidence_only_pickle_could_store_leaves_the_model_uncached(setup, tmp_path):
    config, path = setup
    evaluation = evaluate_model(path, "cand")
    sample = evaluation.evidence["acc-roc_auc"].sample
    sample.fields = (np.array([object(), None], dtype=object), *sample.fields[1:])
    warnings: list[str] = []
    cache = make_cache(tmp_path / "cache", warnings)
    key = key_of(config, cache=cache)
    cache.put(key, evaluation)
    assert cache.get(key) is None and not list((tmp_path / "cache").rglob("*.json"))
    assert warnings == [
        "a model result was not cached: the evidence of 'acc-roc_auc', field 0 is an array of Python objects"
    ]


def test_the_default_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("OLIVE_EVAL_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ResultCache.default_folder() == tmp_path / "mine"
    monkeypatch.delenv("OLIVE_EVAL_CACHE_DIR")
    assert ResultCache.default_folder() == tmp_path / "xdg" / "olive-eval"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert ResultCache.default_folder() == tmp_path / "home" / ".cache" / "olive-eval"


def test_a_metric_from_a_user_script_round_trips(toy, tmp_path):
    script = tmp_path / "user_metrics.py"
    write_margin_metric(script, "cache_test_margin")
    metric = {
        "name": "m",
        "type": "accuracy",
        "sub_types": [{"name": "cache_test_margin", "metric_config": {"scale": 2.0}}],
        "user_config": {"user_script": str(script)},
    }
    config = toy.config({"cand": 0.3}, [metric])
    del config["output_dir"]
    original = evaluate_model(config, "cand")
    cache = make_cache(tmp_path / "cache")
    key = key_of(config, cache=cache)
    cache.put(key, original)
    back = cache.get(key)
    assert back is not None and as_json(back.result) == as_json(original.result)
    restored, evidence = back.evidence["m-cache_test_margin"], original.evidence["m-cache_test_margin"]
    np.testing.assert_array_equal(restored.sample.statistics, evidence.sample.statistics)
    np.testing.assert_array_equal(restored.distribution(100, 3), evidence.distribution(100, 3))


@pytest.mark.parametrize("status", ["partial", "failed", "running", "interrupted"])
def test_only_full_evaluations_are_stored(setup, tmp_path, status):
    """A model that failed (a missing package, a transient error) is evaluated again next time."""
    config, path = setup
    evaluation = evaluate_model(path, "cand")
    evaluation.result.status = status
    cache = make_cache(tmp_path / "cache")
    key = key_of(config, cache=cache)
    cache.put(key, evaluation)
    assert cache.get(key) is None and not list((tmp_path / "cache").rglob("*.json"))
