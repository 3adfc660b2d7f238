"""Metric filters: every built-in on hand-computed cases, lm-evaluation-harness's documented GSM8K filter chains,
Repeats, user filters registered by decorator, and each bad input with its exact message.

Independent references in the same test: Python's ``re.finditer`` for ``regex`` on random text, the ``regex``
package's own Unicode database (``\\p{P}``) for ``remove_punctuation``.
"""

from __future__ import annotations

import pickle
import random
import re
import string
import sys
import unicodedata
from typing import Any

import pytest
import regex as regex_module

from olive_eval.data import filters as filters_module
from olive_eval.data.builtin_filters import RegexFilter
from olive_eval.data.filters import (
    Filter,
    FilterParams,
    PredictionFilter,
    Repeats,
    apply_filters,
    build_filters,
    filter_registry,
    register_filter,
)
from olive_eval.registry import RegistryError
from olive_eval.strict_model import StrictModel

BUILTINS = "lowercase, majority_vote, map, regex, remove_punctuation, strip, take_first, uppercase"
GSM8K_STRICT = r"#### (\-?[0-9\.\,]+)"  # lm_eval/tasks/gsm8k/gsm8k.yaml, filter "get-answer"
COT_STRICT = r"The answer is (\-?[0-9\.\,]+)."  # gsm8k-cot.yaml, filter "strict-match"
COT_FLEXIBLE = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"  # gsm8k-cot.yaml, filter "flexible-extract" (group_select -1)
SELF_CONSISTENCY = r"The answer is (\-?[0-9\.\,]*[0-9]+)"  # gsm8k-cot-self-consistency.yaml


def run(specs: list[Any], predictions: list[Any]) -> list[Any]:
    return apply_filters(build_filters(specs), predictions)


def error(specs: Any, exc: type[Exception] = ValueError) -> str:
    with pytest.raises(exc) as info:
        build_filters(specs)
    return str(info.value)


# --------------------------------------------------------------------------------------------- regex


def test_gsm8k_get_answer_chain():
    """gsm8k.yaml: regex "#### (\\-?[0-9\\.\\,]+)" then take_first, over one generation per example."""
    specs = [{"type": "regex", "pattern": GSM8K_STRICT}, {"type": "take_first"}]
    generations = [
        Repeats(["Natalia sold 48/2 = 24 clips in May.\nShe sold 48+24 = 72 clips.\n#### 72"]),
        Repeats(["Weng earns 12/60 = $0.2 per minute.\n#### 10"]),
        Repeats(["The total is #### 1,234.50 dollars"]),
        Repeats(["She lost #### -3 apples"]),
        Repeats(["The answer is 18."]),  # no "####": lm-eval's fallback
    ]
    assert run(specs, generations) == ["72", "10", "1,234.50", "-3", "[invalid]"]


def test_cot_strict_match():
    """gsm8k-cot.yaml "strict-match": the trailing "." of the pattern is any character, so the greedy group
    gives back the sentence's full stop."""
    out = run(
        [{"type": "regex", "pattern": COT_STRICT}],
        ["16 - 3 - 4 = 9 eggs, 9 * 2 = 18. The answer is 18.", "The answer is 1,000.5 .", "The answer is eighteen."],
    )
    assert out == ["18", "1,000.5", "[invalid]"]


@pytest.mark.parametrize(
    ("group_select", "expected"),
    [(0, "3"), (1, "$1,200"), (2, "5."), (-1, "5."), (-2, "$1,200"), (-3, "3"), (3, "[invalid]"), (-4, "[invalid]")],
)
def test_cot_flexible_extract_group_select(group_select, expected):
    """gsm8k-cot.yaml "flexible-extract": two groups, so each match yields its first non-empty group.
    Matches in the text: ('', '3'), ('$1,200', ''), ('5.', ''); group_select indexes them, negative from the end;
    past either end is the fallback."""
    text = "I had 3 apples and $1,200 , total 5."
    assert run([{"type": "regex", "pattern": COT_FLEXIBLE, "group_select": group_select}], [text]) == [expected]


def test_self_consistency_majority_chain():
    """gsm8k-cot-self-consistency.yaml "maj@64": regex, majority_vote, take_first pastes unchanged."""
    specs = [{"type": "regex", "pattern": SELF_CONSISTENCY}, {"type": "majority_vote"}, {"type": "take_first"}]
    generations = [
        Repeats(["The answer is 18.", "The answer is 20.", "The answer is 18.", "I don't know"]),
        Repeats(["no", "nope", "The answer is 7."]),  # two fallbacks outvote the one answer
        Repeats(["The answer is 5.", "The answer is 6."]),  # a tie: the first seen
    ]
    assert run(specs, generations) == ["18", "[invalid]", "5"]


def test_regex_without_groups_gives_the_whole_match():
    assert run([{"type": "regex", "pattern": r"\d+"}], ["a 12 b 345"]) == ["12"]
    assert run([{"type": "regex", "pattern": r"\d+", "group_select": -1}], ["a 12 b 345"]) == ["345"]


def test_regex_empty_groups():
    """One group: the group even when empty (lm-eval's findall). Several, all empty: the fallback."""
    assert run([{"type": "regex", "pattern": r"x=(\d*)"}], ["x= and more"]) == [""]
    assert run([{"type": "regex", "pattern": r"(a*)(b*)c"}], ["c"]) == ["[invalid]"]
    assert run([{"type": "regex", "pattern": r"(a*)(b*)c"}], ["bbc"]) == ["bb"]


def test_regex_strips_the_match_not_the_fallback():
    spec = {"type": "regex", "pattern": r"answer:(.*)", "fallback": " N/A "}
    assert run([spec], ["answer:   B \t", "no"]) == ["B", " N/A "]


def test_regex_on_repeats_keeps_length_and_type():
    out = run([{"type": "regex", "pattern": GSM8K_STRICT}], [Repeats(["#### 1", "nothing", "#### 2"]), "#### 3"])
    assert out == [["1", "[invalid]", "2"], "3"]
    assert type(out[0]) is Repeats and type(out[1]) is str


def test_regex_olive_params_form_equals_inline():
    texts = ["I had 3 apples and $1,200 , total 5.", "none"]
    inline = run([{"type": "regex", "pattern": COT_FLEXIBLE, "group_select": -1, "fallback": "?"}], texts)
    olive = run([{"type": "regex", "params": {"pattern": COT_FLEXIBLE, "group_select": -1, "fallback": "?"}}], texts)
    assert inline == olive == ["5.", "?"]


def _reference_regex(pattern: str, text: str, k: int, fallback: str) -> str:
    """lm-eval's rule written over ``re.finditer`` and ``Match.groups`` instead of ``findall``."""
    found = list(re.finditer(pattern, text))
    if not -len(found) <= k < len(found):
        return fallback
    match = found[k]
    groups = match.groups()
    if not groups:
        return match.group(0).strip()
    if len(groups) == 1:
        return (groups[0] or "").strip()
    non_empty = [g for g in groups if g]
    return non_empty[0].strip() if non_empty else fallback


def test_regex_matches_a_finditer_reference_on_random_text():
    rng = random.Random(7)
    patterns = [r"\d+", r"#+ ?(\d*)", r"(a+)|(\d+)", r"(a*)(b*)#", r"[ab]\s?", r"(?:x)(y?)"]
    texts = ["".join(rng.choice("ab12 #xy\t") for _ in range(rng.randint(0, 20))) for _ in range(300)]
    for pattern in patterns:
        for k in (-3, -1, 0, 1, 2):
            out = run([{"type": "regex", "pattern": pattern, "group_select": k}], texts)
            assert out == [_reference_regex(pattern, t, k, "[invalid]") for t in texts], (pattern, k)


def test_regex_pattern_is_compiled_at_build_time(monkeypatch):
    built = build_filters([{"type": "regex", "pattern": r"(\d+)"}])

    def refuse(*args, **kwargs):
        raise AssertionError("re.compile called while applying")

    monkeypatch.setattr(filters_module.re, "compile", refuse)
    assert apply_filters(built, ["a1", Repeats(["22", "b"])]) == ["1", ["22", "[invalid]"]]


# --------------------------------------------------------------------------------------------- text filters


def test_lowercase_uppercase_strip():
    texts = ["ÀB Straße", Repeats(["  \t yes \n\u00a0", "İ"])]
    assert run([{"type": "lowercase"}], texts) == ["àb straße", ["  \t yes \n\u00a0", "i̇"]]
    assert run([{"type": "uppercase"}], texts) == ["ÀB STRASSE", ["  \t YES \n\u00a0", "İ"]]
    assert run([{"type": "strip"}], texts) == ["ÀB Straße", ["yes", "İ"]]


def test_remove_punctuation_hand_cases():
    out = run(
        [{"type": "remove_punctuation"}],
        ["¿Qué?", "«hola» — dijo", "你好，世界。", "$5 + 3 = 8!", "a_b-c (d) [e] {f} 'g' \"h\"", "€5 © 10° ✓"],
    )
    assert out == ["Qué", "hola  dijo", "你好世界", "5  3  8", "abc d e f g h", "€5 © 10° ✓"]


def test_remove_punctuation_matches_unicode_categories_and_ascii_punctuation():
    """Every code point Python's Unicode database assigns, against the ``regex`` package's own \\p{P}."""
    assigned = "".join(
        chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"
    )
    kept = regex_module.sub(r"\p{P}", "", assigned).translate(str.maketrans("", "", string.punctuation))
    assert run([{"type": "remove_punctuation"}], [assigned]) == [kept]
    assert len(kept) < len(assigned) - 800  # the reference did remove the punctuation


def test_map_default_none_keeps_the_input_and_a_value_replaces_it():
    answers = ["A", "B", "C", Repeats(["B", "Z"])]
    assert run([{"type": "map", "mapping": {"A": 0, "B": 1}}], answers) == [0, 1, "C", [1, "Z"]]
    assert run([{"type": "map", "mapping": {"A": 0, "B": 1}, "default": -1}], answers) == [0, 1, -1, [1, -1]]
    assert run([{"type": "map", "mapping": {"yes": None}, "default": "no"}], ["yes", "maybe"]) == [None, "no"]


def test_map_compares_keys_as_they_are():
    """From Python, keys keep their type; from JSON they are strings and do not match an int prediction."""
    assert run([{"type": "map", "mapping": {0: "neg", 1: "pos"}}], [1, 0, 2]) == ["pos", "neg", 2]
    assert run([{"type": "map", "mapping": {"0": "neg"}}], [0, "0"]) == [0, "neg"]


# --------------------------------------------------------------------------------------------- selection


def test_take_first():
    predictions = [Repeats(["a", "b"]), "c", ["d", "e"], Repeats([["f"], ["g"]])]
    # a plain list is one prediction (tokens, boxes), not repeats: it stays whole
    assert run([{"type": "take_first"}], predictions) == ["a", "c", ["d", "e"], ["f"]]


@pytest.mark.parametrize(
    ("repeats", "expected"),
    [
        (["x", "y", "y"], "y"),
        (["b", "a", "a", "b", "c"], "b"),  # a tie between b and a (2 each): b appears first
        (["a", "b", "b", "a"], "a"),
        (["c", "b", "a"], "c"),  # all tied: the first
        ([3, 1, 1, 3, 1], 1),
        (["only"], "only"),
    ],
)
def test_majority_vote(repeats, expected):
    assert run([{"type": "majority_vote"}], [Repeats(repeats)]) == [expected]


def test_majority_vote_leaves_a_single_prediction_alone():
    assert run([{"type": "majority_vote"}], ["a", ["b", "b", "c"]]) == ["a", ["b", "b", "c"]]


@pytest.mark.parametrize("name", ["take_first", "majority_vote"])
def test_selection_of_empty_repeats_is_an_error(name):
    with pytest.raises(ValueError) as info:
        run([{"type": name}], [Repeats(["a"]), Repeats([])])
    assert str(info.value) == f"filter '{name}': example 1 has no predictions (an empty Repeats)"


def test_prediction_filters_keep_empty_repeats():
    out = run([{"type": "lowercase"}, {"type": "regex", "pattern": "a"}], [Repeats([])])
    assert out == [[]] and type(out[0]) is Repeats


# --------------------------------------------------------------------------------------------- applying


def test_filters_apply_in_order_and_leave_the_input_alone():
    predictions = [" The answer is B. ", Repeats(["answer: a", "answer: c"])]
    snapshot = [predictions[0], list(predictions[1])]
    chain = [
        {"type": "regex", "pattern": r"answer[: ]+(?:is )?(\w)", "fallback": "?"},
        {"type": "uppercase"},
        {"type": "map", "mapping": {"A": 0, "B": 1}},
    ]
    assert run(chain, predictions) == [1, [0, "C"]]
    assert run([chain[2], chain[1]], ["a", "b"]) == ["A", "B"]  # map first: lowercase keys miss
    assert [predictions[0], list(predictions[1])] == snapshot and type(predictions[1]) is Repeats


def test_no_filters():
    assert build_filters(None) == [] and build_filters([]) == []
    assert apply_filters([], ["a", Repeats(["b"])]) == ["a", ["b"]]


def test_a_built_filter_passes_through_build_filters():
    built = RegexFilter(RegexFilter.Params(type="regex", pattern=r"(\d)"))
    assert build_filters([built, {"type": "take_first"}])[0] is built
    assert repr(built) == "RegexFilter(pattern='(\\\\d)', group_select=0, fallback='[invalid]')"


def test_built_filters_pickle():
    """A metric's filters travel with the unit of work to another process."""
    built = build_filters([{"type": "regex", "pattern": GSM8K_STRICT}, {"type": "map", "mapping": {"7": "seven"}}])
    again = pickle.loads(pickle.dumps(built))
    predictions = [Repeats(["#### 7", "x"]), "#### 8"]
    assert apply_filters(again, predictions) == apply_filters(built, predictions) == [["seven", "[invalid]"], "8"]
    assert pickle.loads(pickle.dumps(Repeats(["a"]))).__class__ is Repeats


# --------------------------------------------------------------------------------------------- user filters


def shout(prediction: str) -> str:  # module level, so a filter built from it pickles
    return prediction.upper() + "!"


@pytest.fixture
def user_filters():
    """Registers nothing itself; unregisters whatever name the test registered, even when it fails."""
    names: list[str] = []
    yield names
    for name in names:
        filter_registry.unregister(name)
    assert filter_registry.names() == BUILTINS.split(", ")


def test_user_filter_class(user_filters):
    @register_filter("truncate")
    class Truncate(PredictionFilter):
        expects = (str, "a string")

        class Params(FilterParams):
            max_chars: int

        def transform(self, prediction: str) -> str:
            return prediction[: self.params.max_chars]

    user_filters.append("truncate")
    assert Truncate.name == "truncate"
    out = run([{"type": "truncate", "params": {"max_chars": 2}}], ["abcd", Repeats(["xyz", ""])])
    assert out == ["ab", ["xy", ""]]
    assert error([{"type": "regex", "pattern": "a"}, {"type": "truncate", "max_char": 2}]) == (
        "filters[1].max_char: unknown key; did you mean 'max_chars'?"
    )
    assert error([{"type": "truncate"}]) == "filters[0].max_chars: missing required key"


def test_user_filter_class_with_its_own_apply(user_filters):
    @register_filter("drop_last")
    class DropLast(Filter):
        def apply(self, predictions):
            return predictions[:-1]

    user_filters.append("drop_last")
    with pytest.raises(ValueError) as info:
        run([{"type": "lowercase"}, {"type": "drop_last"}], ["a", "b"])
    assert str(info.value) == "filter 'drop_last' returned 1 entries for 2 examples"


def test_user_filter_function(user_filters):
    assert register_filter("shout")(shout) is shout
    user_filters.append("shout")
    built = build_filters([{"type": "strip"}, {"type": "shout"}])
    predictions = [" hi ", Repeats(["a", "b "])]
    assert apply_filters(built, predictions) == ["HI!", ["A!", "B!"]]
    assert apply_filters(pickle.loads(pickle.dumps(built)), predictions) == ["HI!", ["A!", "B!"]]
    assert error([{"type": "shout", "volume": 11}]) == "filters[0].volume: unknown key; valid: type"
    assert error([{"type": "shuot"}]) == (
        "filters[0].type: unknown filter type 'shuot'; did you mean 'shout'? Registered: lowercase, majority_vote, "
        "map, regex, remove_punctuation, shout, strip, take_first, uppercase"
    )


def test_registering_a_taken_name_or_a_non_filter_is_an_error(user_filters):
    with pytest.raises(RegistryError, match="filter type 'regex' is registered twice"):
        register_filter("regex")(shout)
    with pytest.raises(TypeError) as info:
        register_filter("thing")(int)
    assert str(info.value) == "@register_filter('thing') needs a Filter subclass or a function, got <class 'int'>"

    class Loose(Filter):
        class Params(StrictModel):  # not a FilterParams
            pass

    with pytest.raises(TypeError) as info:
        register_filter("loose")(Loose)
    assert str(info.value) == "@register_filter('loose'): Loose.Params must subclass FilterParams"


# --------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            [{"type": "regex", "pattern": "a"}, {"type": "rgex", "pattern": "a"}],
            f"filters[1].type: unknown filter type 'rgex'; did you mean 'regex'? Registered: {BUILTINS}",
        ),
        (
            [{"type": "take_frist"}],
            f"filters[0].type: unknown filter type 'take_frist'; did you mean 'take_first'? Registered: {BUILTINS}",
        ),
        ([{"type": "zzz"}], f"filters[0].type: unknown filter type 'zzz'; valid: {BUILTINS}"),
        ([{"pattern": "a"}], f"filters[0].type: missing required key 'type'; registered: {BUILTINS}"),
        ([{"type": 3}], "filters[0].type: expected a string, got 3"),
        (
            [{"type": "lowercase"}, {"type": "regex", "patern": "a"}],
            "filters[1].patern: unknown key; did you mean 'pattern'?",
        ),
        (
            [{"type": "regex", "params": {"regex_pattern": "a"}}],
            "filters[0].params.regex_pattern: unknown key; did you mean 'pattern'?",
        ),
        ([{"type": "lowercase", "pattern": "a"}], "filters[0].pattern: unknown key; valid: type"),
        ([{"type": "regex"}], "filters[0].pattern: missing required key"),
        (
            [{"type": "regex", "pattern": "a", "group_select": "1"}],
            'filters[0].group_select: expected an integer, got "1"',
        ),
        (
            [{"type": "regex", "pattern": "a", "group_select": True}],
            "filters[0].group_select: expected an integer, got true",
        ),
        (
            [{"type": "regex", "pattern": "a", "group_select": 1.5}],
            "filters[0].group_select: expected an integer, got 1.5",
        ),
        ([{"type": "regex", "pattern": 5}], "filters[0].pattern: expected a string, got 5"),
        ([{"type": "regex", "pattern": "a", "fallback": None}], "filters[0].fallback: expected a string, got null"),
        ([{"type": "map", "mapping": [["a", 1]]}], 'filters[0].mapping: expected an object, got [["a", 1]]'),
        ([{"type": "map"}], "filters[0].mapping: missing required key"),
        (
            [{"type": "regex", "pattern": "a", "params": {"pattern": "b"}}],
            "filters[0].params.pattern: 'pattern' is given both inline and under 'params'",
        ),
        ([{"type": "regex", "params": ["a"]}], 'filters[0].params: expected an object, got ["a"]'),
        (["regex"], "filters[0]: expected an object with a 'type', got \"regex\""),
        ({"type": "regex"}, 'filters: expected a list of filters, got {"type": "regex"}'),
    ],
)
def test_bad_filter_config(specs, message):
    assert error(specs) == message


@pytest.mark.parametrize("pattern", ["(\\d+", "[a-", "*a", "(?P<x>a)(?P<x>b)"])
def test_bad_regex_names_the_pattern(pattern):
    with pytest.raises(re.error) as compiled:
        re.compile(pattern)
    expected = f"filters[1].pattern: invalid regular expression {pattern!r}: {compiled.value}"
    assert error([{"type": "strip"}, {"type": "regex", "params": {"pattern": pattern}}]) == expected.replace(
        "filters[1].pattern", "filters[1].params.pattern"
    )
    assert error([{"type": "strip"}, {"type": "regex", "pattern": pattern}]) == expected


def test_the_path_prefix_is_the_callers():
    assert build_filters([{"type": "strip"}], path="metrics[2].filters")[0].name == "strip"
    with pytest.raises(ValueError) as info:
        build_filters([{"type": "strip", "chars": " "}], path="metrics[2].filters")
    assert str(info.value) == "metrics[2].filters[0].chars: unknown key; valid: type"


@pytest.mark.parametrize("name", ["regex", "lowercase", "uppercase", "strip", "remove_punctuation"])
def test_a_string_filter_refuses_other_types(name):
    spec = {"type": name, "pattern": "a"} if name == "regex" else {"type": name}
    with pytest.raises(TypeError) as info:
        run([spec], ["a", "b", 7])
    assert str(info.value) == f"filter '{name}': the prediction of example 2 is of type int, not a string"
    with pytest.raises(TypeError) as info:
        run([spec], ["a", Repeats(["b", None])])
    assert (
        str(info.value) == f"filter '{name}': the prediction of example 1 (repeat 1) is of type NoneType, not a string"
    )
    with pytest.raises(TypeError) as info:
        run([spec], [["a", "b"]])  # a plain list is one prediction, not repeats
    assert str(info.value) == f"filter '{name}': the prediction of example 0 is of type list, not a string"


def test_map_and_majority_vote_refuse_unhashable_predictions():
    with pytest.raises(TypeError) as info:
        run([{"type": "map", "mapping": {"a": 1}}], ["a", Repeats(["a", {"b": 1}])])
    assert (
        str(info.value) == "filter 'map': the prediction of example 1 (repeat 1) is of type dict, not a hashable value"
    )
    with pytest.raises(TypeError) as info:
        run([{"type": "majority_vote"}], [Repeats([["a"], ["a"]])])
    assert (
        str(info.value)
        == "filter 'majority_vote': the prediction of example 0 (repeat 0) is of type list, not a hashable value"
    )
