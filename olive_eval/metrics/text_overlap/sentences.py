"""Sentences for rougeLsum: nltk's punkt where it can run, else rules written to split plain prose as punkt does.

Unitxt's ``Rouge`` and rouge-score's ``split_summaries=True`` split a text with ``nltk.sent_tokenize`` (the punkt
model for English) before rougeLsum; olive-eval's default splits at newlines only, as rouge-score's default. Punkt's
English model is data nltk downloads (``punkt_tab``), which an offline machine lacks; :func:`sentence_splitter`
then falls back to :func:`rule_sentences`, and says which one it chose.

The rules (facts about punkt's English model, written here from its documented behaviour, not from its code): a
sentence ends after a whitespace-delimited word that ends in ``?`` or ``!``, or in a single ``.`` -- closing quotes
and brackets after the mark stay with the sentence -- except

* a word punkt's English model knows as an abbreviation (:data:`ABBREVIATIONS`: titles, months, company suffixes,
  ``U.S.``; ``e.g.``, ``i.e.`` and ``etc.`` are *not* among them, so they do end a sentence);
* an initial (one letter and a period, as in ``J. Smith``);
* a number with a period (``in 1999.``) followed by a word in lower case;
* an ellipsis (``..`` or more).

Punkt decides the last three cases (and an abbreviation followed by a capitalized word) from how often the next
word was seen capitalized in its training text; the rules cannot know that, so they keep such a sentence whole. A
mark followed by no whitespace (``end."Next``) ends no sentence here; punkt may end one. The tests hold the rules
to punkt on random prose built from these cases (``tests/metrics/test_rouge_sentence_split.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from olive_eval.errors import MissingDependencyError

__all__ = ["ABBREVIATIONS", "SPLITTERS", "Splitter", "rule_sentences", "sentence_splitter"]

Splitter = Callable[[str], list[str]]
SPLITTERS = ("auto", "punkt", "rules")

_TITLES = "mr mrs ms dr prof st jr sr gen sen rep reps lt maj col adm messrs"
_COMPANIES = "inc ltd corp co cos bros"
_DATES = "jan feb aug sep sept oct nov dec tues wed fri a.m p.m"
_OTHERS = "u.s u.k u.n u.s.a ph.d vs ave ft"
#: Common English abbreviations that punkt's English model also treats as abbreviations (a test checks each one
#: against the model), lowercased, without their final period.
ABBREVIATIONS = frozenset(" ".join((_TITLES, _COMPANIES, _DATES, _OTHERS)).split())

_CLOSERS = "\"')]}"
_OPENERS = "\"'([{`:;&#*@-,"  # punkt reads these as tokens of their own before a word
_PUNCTUATION = tuple(";:,!?")  # punkt: after a number or an initial, these do not start a sentence
_NUMBER = re.compile(r"-?[.,]?\d[\d,.-]*")
_CHUNK = re.compile(r"\S+")


def _ends_sentence(word: str, following: str) -> bool:
    """Does a sentence end after ``word`` (one whitespace-delimited chunk), with ``following`` the next chunk?"""
    core = word.rstrip(_CLOSERS)
    if not core or core[-1] not in ".?!":
        return False
    if core[-1] in "?!":
        return True
    if core != word:  # punkt reads the closing mark as the next token
        return not _kept_whole(core, word[len(core) :])
    return not _kept_whole(core, following) or _next_ends_at_a_closer(following)


def _kept_whole(core: str, after: str) -> bool:
    """Whether a word ending in one period keeps its sentence going when ``after`` is the text that follows: an
    ellipsis or an abbreviation always; an initial before a letter, a number before a lower-case letter, and
    either before ``;:,!?`` (punkt's orthographic rule, for words it has seen in lower case)."""
    if core.endswith(".."):
        return True
    stem = core[:-1].lstrip(_OPENERS)
    lowered = stem.lower()
    if lowered in ABBREVIATIONS or lowered.rpartition("-")[2] in ABBREVIATIONS:
        return True
    first = after[:1]
    if len(stem) == 1 and stem.isalpha():
        return first.isalpha() or first in _PUNCTUATION
    if _NUMBER.fullmatch(stem):
        return first.islower() or first in _PUNCTUATION
    return False


def _next_ends_at_a_closer(chunk: str) -> bool:
    """Punkt reads the word after a kept period too, and ends the sentence at that period when the word ends a
    sentence of its own before a closing quote or bracket: ``Mr. Smith."`` is two sentences to punkt."""
    core = chunk.rstrip(_CLOSERS)
    return core != chunk and _ends_sentence(core, chunk[len(core) :])


def rule_sentences(text: str) -> list[str]:
    """``text``'s sentences by the rules of this module, each a slice of ``text`` with the whitespace between them
    left out; a text without a sentence end is one sentence, and one of whitespace only has none."""
    chunks = list(_CHUNK.finditer(text))
    sentences, start = [], None
    for i, chunk in enumerate(chunks):
        if start is None:
            start = chunk.start()
        if i + 1 == len(chunks) or _ends_sentence(chunk.group(), chunks[i + 1].group()):
            sentences.append(text[start : chunk.end()])
            start = None
    return sentences


def _nltk_punkt(required: bool) -> Splitter | None:
    """``nltk.sent_tokenize`` (what Unitxt and rouge-score call) where nltk is installed and its English punkt
    model loads; None otherwise, or an error naming what is missing when ``required``."""
    try:
        import nltk
    except ImportError:
        if required:
            raise MissingDependencyError("nltk", "sentence_splitter 'punkt'", "text") from None
        return None
    try:
        nltk.sent_tokenize("A test.")
    except LookupError:
        if required:
            raise ValueError(
                "sentence_splitter 'punkt': nltk's English punkt model is not installed (python -m nltk.downloader "
                "punkt_tab); 'auto' or 'rules' split without it"
            ) from None
        return None
    return nltk.sent_tokenize  # type: ignore[no-any-return]


def sentence_splitter(which: Literal["auto", "punkt", "rules"]) -> tuple[str, Splitter]:
    """The splitter's name (``nltk_punkt`` or ``rules``) and the splitter: ``auto`` takes punkt where it can run."""
    if which not in SPLITTERS:
        raise ValueError(f"sentence_splitter must be one of {SPLITTERS}, got {which!r}")
    punkt = None if which == "rules" else _nltk_punkt(required=which == "punkt")
    return ("nltk_punkt", punkt) if punkt is not None else ("rules", rule_sentences)
