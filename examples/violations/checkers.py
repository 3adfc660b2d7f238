"""Two rule checkers as ``PythonModel``s: a regex checker and a keyword checker.

Each loader returns an object called with the pre-processed batch (``batch["text"]``: the documents) that returns,
per document, a list of violation dicts: ``span`` (``[start, end)`` offsets), ``rule``, ``category``,
``explanation``, ``correction``.

* ``load_regex``: one pattern per rule, tight spans, the style guide's rule names and corrections;
* ``load_keywords``: a word list per rule, whole sentences for passive voice, its own rule names
  (``typo``, ``forbidden word``, ``passive``) and no corrections: cheaper, and further from the labels.
"""

from __future__ import annotations

import re
from typing import Any

MISSPELT = {
    "recieve": "receive", "seperate": "separate", "occured": "occurred", "definately": "definitely", "teh": "the",
    "adress": "address", "arange": "arrange", "goverment": "government", "beleive": "believe", "untill": "until",
}  # fmt: skip
BANNED = {"utilize": "use", "leverage": "use", "synergy": "cooperation", "very unique": "unique"}
WORDY = {"in order to": "to", "at this point in time": "now", "due to the fact that": "because"}
PARTICIPLE = r"(?:\w+ed|built|sold|left|written|done|made|known|seen)"
PASSIVE = re.compile(
    rf"\b(?:is|are|was|were|been|be)\s+(?:still\s+)?{PARTICIPLE}\b(?:\s+by\s+(?:the\s+|a\s+|an\s+|both\s+)?\w+(?:\s+\w+)?)?"
)


def _cased(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _violation(m: re.Match[str], rule: str, category: str, explanation: str, correction: str) -> dict[str, Any]:
    return {"span": [m.start(), m.end()], "rule": rule, "category": category, "explanation": explanation,
            "correction": correction}  # fmt: skip


def regex_check(text: str) -> list[dict[str, Any]]:
    found = []
    for m in PASSIVE.finditer(text):
        found.append(_violation(m, "passive voice", "grammar", "Passive voice hides who acts.", "use the active voice"))
    for wrong, right in MISSPELT.items():
        for m in re.finditer(rf"\b{wrong}\b", text, re.IGNORECASE):
            found.append(_violation(m, "spelling", "spelling", "Misspelt word.", _cased(right, m.group())))
    for word, instead in BANNED.items():
        for m in re.finditer(rf"\b{word}\b", text, re.IGNORECASE):
            found.append(_violation(m, "banned word", "terminology", f"The style guide bans '{word}'.", instead))
    for phrase, shorter in WORDY.items():
        for m in re.finditer(rf"\b{phrase}\b", text, re.IGNORECASE):
            found.append(_violation(m, "wordiness", "style", "Wordy phrase.", _cased(shorter, m.group())))
    return sorted(found, key=lambda v: v["span"])


KEYWORDS = {"recieve": "typo", "seperate": "typo", "teh": "typo", "occured": "typo", "utilize": "forbidden word",
            "leverage": "forbidden word", "synergy": "forbidden word", "unique": "forbidden word"}  # fmt: skip
CATEGORIES = {"typo": "spelling", "forbidden word": "terminology", "passive": "grammar"}


def keyword_check(text: str) -> list[dict[str, Any]]:
    found = []
    for m in re.finditer(r"\w+", text):
        rule = KEYWORDS.get(m.group().lower())
        if rule is not None:
            found.append(_violation(m, rule, CATEGORIES[rule], "Flagged word.", ""))
    for m in re.finditer(r"[^.]*\b(?:was|were)\b[^.]*", text):
        found.append(_violation(m, "passive", "grammar", "The sentence may be passive.", ""))
    return sorted(found, key=lambda v: v["span"])


class Checker:
    def __init__(self, check: Any) -> None:
        self.check = check

    def __call__(self, batch: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [self.check(text) for text in batch["text"]]


def load_regex(model_path: str | None) -> Checker:
    return Checker(regex_check)


def load_keywords(model_path: str | None) -> Checker:
    return Checker(keyword_check)
