"""One registry of text transforms: filters, speech normalizers and answer metrics draw from it (issue 19)."""

from __future__ import annotations

import pickle
import random
import string

import pytest

from olive_eval import compute_metric
from olive_eval.config import load_run_config
from olive_eval.data.filters import Repeats, apply_filters, build_filters
from olive_eval.errors import ConfigError
from olive_eval.metrics.speech.normalize import normalize_texts, olive_normalize
from olive_eval.transforms import Chain, build_transform, register_transform, transform_registry


def no_articles(text: str) -> str:  # module level: a filter built from it pickles
    return " ".join(w for w in text.split() if w.lower() not in ("a", "an", "the"))


@pytest.fixture
def user_transform():
    register_transform("no_articles")(no_articles)
    yield "no_articles"
    transform_registry.unregister("no_articles")


def test_every_built_in_is_registered_once():
    assert transform_registry.names() == [
        "lowercase",
        "none",
        "olive",
        "olive_raw",
        "open_asr_leaderboard",
        "regex",
        "remove_punctuation",
        "strip",
        "uppercase",
        "whisper_english",
    ]


def test_a_user_transform_works_as_filter_speech_normalizer_and_answer_normalizer(user_transform):
    # a filter: applied to every prediction, each one of a Repeats
    built = build_filters([{"type": "no_articles"}, {"type": "uppercase"}])
    predictions = ["the cat", Repeats(["a dog", "an owl sat"])]
    assert apply_filters(built, predictions) == ["CAT", ["DOG", "OWL SAT"]]
    assert apply_filters(pickle.loads(pickle.dumps(built)), predictions) == ["CAT", ["DOG", "OWL SAT"]]
    # the speech normalizer: articles no longer count as errors
    assert compute_metric("wer", ["the cat sat"], ["a cat sat"], normalizer="none") == pytest.approx(1 / 3)
    assert compute_metric("wer", ["the cat sat"], ["a cat sat"], normalizer="no_articles") == 0.0
    # the answer metrics' normalizer
    assert compute_metric("exact_match", ["the Paris"], ["paris"]) == 0.0
    assert compute_metric("exact_match", ["the Paris"], ["paris"], normalizer="no_articles") == 1.0


def test_a_list_is_the_composition_in_order():
    rng = random.Random(0)
    texts = ["".join(rng.choice(string.ascii_letters + " ,.!'") for _ in range(rng.randint(0, 30))) for _ in range(200)]
    chain = build_transform(["remove_punctuation", "uppercase", "olive_raw"])
    assert isinstance(chain, Chain)
    expected = [" ".join(t.translate(str.maketrans("", "", string.punctuation)).upper().split()) for t in texts]
    assert chain.many(texts) == [chain(t) for t in texts] == expected
    # the same list as a speech normalizer and as an answer normalizer
    assert normalize_texts(texts, ["remove_punctuation", "uppercase", "olive_raw"]) == expected
    assert compute_metric("exact_match", ["Paris!"], ["paris"], normalizer=["remove_punctuation"]) == 1.0
    assert compute_metric("exact_match", ["Paris!"], ["paris"]) == 0.0


def test_speech_normalizers_are_transforms_everywhere():
    """Olive's WER normalizer as a filter gives what it gives a WER."""
    texts = ["Hello, World!", Repeats(["don't  STOP", "naïve\tcafé"])]
    out = apply_filters(build_filters([{"type": "olive"}]), texts)
    assert out == [olive_normalize("Hello, World!"), [olive_normalize("don't  STOP"), olive_normalize("naïve\tcafé")]]
    assert out == ["hello world", ["don t stop", "naïve café"]]


def test_regex_transform_with_params_inline_or_under_params():
    inline = build_transform({"type": "regex", "pattern": r"#### (\d+)", "fallback": "?"})
    nested = build_transform({"type": "regex", "params": {"pattern": r"#### (\d+)", "fallback": "?"}})
    for text, expected in [("so #### 42", "42"), ("no answer", "?")]:
        assert inline(text) == nested(text) == expected
    assert compute_metric("exact_match", ["it is #### 7"], ["7"], normalizer={"type": "regex", "pattern": r"\d+"}) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("lowercse", "normalizer.type: unknown text transform 'lowercse'; did you mean 'lowercase'?"),
        (5, "normalizer: expected a transform name, an object with a 'type' or a list, got 5"),
        ({"pattern": "a"}, "normalizer.type: expected a transform name, got null"),
        ({"type": "regex"}, "normalizer.pattern: missing required key"),
        ({"type": "regex", "pattern": "("}, "normalizer.pattern: invalid regular expression '('"),
        (["strip", {"type": "lowercase", "x": 1}], "normalizer[1].x: unknown key; valid: type"),
    ],
)
def test_bad_transform_spec(spec, message):
    with pytest.raises(ValueError) as info:
        build_transform(spec)
    assert str(info.value).startswith(message)


def test_an_unknown_answer_normalizer_is_a_config_error_with_its_path():
    config = {
        "input_model": {"type": "PythonModel", "user_script": "m.py", "model_loader": "load"},
        "data_configs": [{"name": "d", "load_dataset_config": {"data_name": "json", "data_files": "d.jsonl"}}],
        "metrics": [
            {
                "name": "qa",
                "type": "accuracy",
                "data_config": "d",
                "sub_types": [{"name": "exact_match", "priority": 1, "metric_config": {"normalizer": "lowercse"}}],
            }
        ],
    }
    with pytest.raises(ConfigError) as info:
        load_run_config(config, check_files=False)
    assert "metrics[0].sub_types[0].metric_config.normalizer: " in str(info.value)
    assert "unknown text transform 'lowercse'; did you mean 'lowercase'?" in str(info.value)


def test_an_unknown_speech_normalizer_lists_the_speech_names_and_the_other_transforms():
    with pytest.raises(ValueError) as info:
        normalize_texts(["a"], "kaldi")
    assert str(info.value) == (
        "unknown text normalizer 'kaldi'; choose one of olive, olive_raw, none, whisper_english, "
        "open_asr_leaderboard, or a registered text transform (lowercase, regex, remove_punctuation, strip, uppercase)"
    )


def test_a_filter_type_naming_a_transform_takes_its_params():
    built = build_filters([{"type": "regex", "pattern": "a"}, {"type": "olive_raw"}])
    assert apply_filters(built, ["  a  "]) == ["a"]
    with pytest.raises(ValueError) as info:
        build_filters([{"type": "olive", "x": 1}])
    assert str(info.value) == "filters[0].x: unknown key; valid: type"


def test_a_transform_is_a_token_sort_ratio_processor(user_transform):
    from rapidfuzz import fuzz

    preds, refs = ["the cat sat on a mat", "An owl"], [["mat cat sat on"], ["owl", "an owl flew"]]
    got = compute_metric(
        "word_sort_ratio", preds, refs, method="token_sort_ratio", processor=["no_articles", "lowercase"]
    )
    want = [
        max(fuzz.token_sort_ratio(p, a, processor=lambda s: no_articles(s).lower()) for a in alternatives) / 100
        for p, alternatives in zip(preds, refs, strict=True)
    ]
    assert got == pytest.approx(sum(want) / len(want), rel=1e-12)
    assert want[0] == 1.0 and want[1] == 1.0  # articles dropped: both match
    with pytest.raises(ValueError) as info:
        compute_metric("word_sort_ratio", preds, refs, method="token_sort_ratio", processor="lower")
    assert "processor must be one of ['default', 'none'] or a registered text transform, got 'lower'" in str(info.value)


def test_the_transform_registry_sits_below_data_and_metrics():
    """Filters (data) and normalizers (metrics) both draw from it, so it imports neither."""
    from tests.test_layers import ROOT, imports_of

    assert imports_of(ROOT / "transforms.py") <= {
        "olive_eval.registry",
        "olive_eval.registry.Registry",
        "olive_eval.registry.RegistryError",
        "olive_eval.registry_function",
        "olive_eval.registry_function.FunctionStep",
        "olive_eval.registry_function.register_step",
        "olive_eval.registry_spec",
        "olive_eval.registry_spec.SpecForm",
        "olive_eval.strict_model",
        "olive_eval.strict_model.StrictModel",
        "olive_eval.strict_model.shown_json",
        "olive_eval.strict_model.unknown_choice_hint",
    }
