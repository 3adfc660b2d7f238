"""VQA v2 accuracy: the answer normalization and the leave-one-out consensus score of the official evaluation.

Source of the rules: GT-Vision-Lab/VQA ``PythonEvaluationTools/vqaEvaluation/vqaEval.py`` (the script behind the
VQA challenge numbers). An answer is normalized as follows:

1. newlines and tabs become spaces; leading and trailing whitespace is stripped;
2. punctuation ``; : / ' [ ] " ( ) = + \\ _ > < @ ` , ?``: each of these characters is deleted when the answer has
   it next to a space or contains a digit-comma-digit group anywhere, and becomes a space otherwise (the test is on
   the answer as it was before any of the deletions, character by character in that order);
3. a period not followed by a digit is deleted (at most 32 of them: the script passes ``re.UNICODE`` where
   ``re.sub`` takes its count; its period pattern's look-behind is mistyped as a look-ahead that always holds);
4. lowercase; split on whitespace; number words ``none``/``zero`` ... ``ten`` become digits; articles ``a``, ``an``,
   ``the`` are dropped; contractions missing their apostrophe get it back (``dont`` -> ``don’t``, with the
   typographic apostrophe the annotations use); words joined by single spaces.

Digits are ASCII ``[0-9]``, as in the Python 2 script. Differences from the script, both deliberate: the human
answers are normalized exactly like the prediction (the script leaves them to the dataset's own preprocessing and
only strips their punctuation when they disagree), so references written any way compare; and the score is one
division of integers, not a float sum over the ten subsets, so it is the exact fraction correctly rounded.

Score, with ``M`` human answers of which ``k`` equal the prediction: averaged over leaving each human out,
``min(1, matches among the other M - 1 / 3)``, which is ``(k * min(3, k - 1) + (M - k) * min(3, k)) / (3 * M)``.
With ten answers: 0 of 10 -> 0, 1 -> 0.3, 2 -> 0.6, 3 -> 0.9, 4 or more -> 1.0.
With fewer humans the ceiling drops: at most ``min(1, (M - 1) / 3)``, so a single reference answer always scores 0
(use exact_match for single-answer data).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["consensus_scores", "vqa_normalize"]

_PUNCTUATION = ";:/'[]\"()=+\\_><@`,?"
_DIGIT_COMMA_DIGIT = re.compile(r"[0-9],[0-9]")
_PERIOD = re.compile(r"\.(?![0-9])")
_PERIOD_LIMIT = 32  # re.UNICODE's value, which the script passes as the count
_NUMBERS = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5"}
_NUMBERS |= {"six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
_ARTICLES = frozenset(("a", "an", "the"))
# word -> replacement. The script's table also has keys with capitals or a straight apostrophe; words are lowercased
# and straight apostrophes are gone by the time of the lookup, so those entries can never apply and are left out.
_CONTRACTION_PAIRS = """
    aint=ain't arent=aren't cant=can't couldve=could've couldnt=couldn't couldnt’ve=couldn’t’ve didnt=didn’t
    doesnt=doesn’t dont=don’t hadnt=hadn’t hadnt’ve=hadn’t’ve hasnt=hasn’t havent=haven’t hed=he’d hed’ve=he’d’ve
    he’dve=he’d’ve hes=he’s howd=how’d howll=how’ll hows=how’s isnt=isn’t itd=it’d itd’ve=it’d’ve it’dve=it’d’ve
    itll=it’ll let’s=let’s maam=ma’am mightnt=mightn’t mightnt’ve=mightn’t’ve mightn’tve=mightn’t’ve
    mightve=might’ve mustnt=mustn’t mustve=must’ve neednt=needn’t notve=not’ve oclock=o’clock oughtnt=oughtn’t
    ow’s’at=’ow’s’at ’ows’at=’ow’s’at ’ow’sat=’ow’s’at shant=shan’t shed’ve=she’d’ve she’dve=she’d’ve she’s=she’s
    shouldve=should’ve shouldnt=shouldn’t shouldnt’ve=shouldn’t’ve shouldn’tve=shouldn’t’ve somebody’d=somebodyd
    somebodyd’ve=somebody’d’ve somebody’dve=somebody’d’ve somebodyll=somebody’ll somebodys=somebody’s
    someoned=someone’d someoned’ve=someone’d’ve someone’dve=someone’d’ve someonell=someone’ll someones=someone’s
    somethingd=something’d somethingd’ve=something’d’ve something’dve=something’d’ve somethingll=something’ll
    thats=that’s thered=there’d thered’ve=there’d’ve there’dve=there’d’ve therere=there’re theres=there’s
    theyd=they’d theyd’ve=they’d’ve they’dve=they’d’ve theyll=they’ll theyre=they’re theyve=they’ve twas=’twas
    wasnt=wasn’t wed’ve=we’d’ve we’dve=we’d’ve weve=we've werent=weren’t whatll=what’ll whatre=what’re
    whats=what’s whatve=what’ve whens=when’s whered=where’d wheres=where's whereve=where’ve whod=who’d
    whod’ve=who’d’ve who’dve=who’d’ve wholl=who’ll whos=who’s whove=who've whyll=why’ll whyre=why’re whys=why’s
    wont=won’t wouldve=would’ve wouldnt=wouldn’t wouldnt’ve=wouldn’t’ve wouldn’tve=wouldn’t’ve yall=y’all
    yall’ll=y’all’ll y’allll=y’all’ll yall’d’ve=y’all’d’ve y’alld’ve=y’all’d’ve y’all’dve=y’all’d’ve youd=you’d
    youd’ve=you’d’ve you’dve=you’d’ve youll=you’ll youre=you’re youve=you’ve
"""
_CONTRACTIONS = dict(pair.split("=") for pair in _CONTRACTION_PAIRS.split())


def vqa_normalize(answer: str) -> str:
    """The official VQA normalization of one answer (see the module docstring)."""
    text = answer.replace("\n", " ").replace("\t", " ").strip()
    glued = _DIGIT_COMMA_DIGIT.search(text) is not None
    out = text
    for mark in _PUNCTUATION:
        if mark in out:
            delete = glued or mark + " " in text or " " + mark in text
            out = out.replace(mark, "" if delete else " ")
    out = _PERIOD.sub("", out, count=_PERIOD_LIMIT)
    words = (_NUMBERS.get(w, w) for w in out.lower().split())
    return " ".join(_CONTRACTIONS.get(w, w) for w in words if w not in _ARTICLES)


def consensus_scores(matches: np.ndarray, humans: np.ndarray) -> np.ndarray:
    """VQA accuracy from the number of human answers equal to the prediction (``k``) out of ``M`` (float64)."""
    k, m = np.asarray(matches, np.int64), np.asarray(humans, np.int64)
    return (k * np.minimum(3, np.maximum(k - 1, 0)) + (m - k) * np.minimum(3, k)) / (3 * m)
