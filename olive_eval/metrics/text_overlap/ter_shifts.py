"""The edits that turn a hypothesis into a reference for TER: word shifts, then insertions, deletions and
substitutions, counted as Tercom counts them (Snover et al., 2006) with sacrebleu's limits and tie-breaks.

A shift moves a run of words of the hypothesis elsewhere at the cost of one edit. Shifts are greedy: while some
shift lowers the word edit distance to the reference, the best one is made, best meaning the largest drop, then the
longest run, then the earliest run, then the earliest place it moves to. A run is tried only where it matches the
reference (at most ``MAX_SHIFT_SIZE`` words, its two positions at most ``MAX_SHIFT_DIST`` apart), when some of its
words are wrong where they stand and the reference words it matches are not matched already, and it moves to just
after the hypothesis word aligned with each reference word from the one before the run to the run's last. After
``MAX_SHIFT_CANDIDATES`` tried shifts the search stops, and the shift it was choosing is not made.

The edit distance fills only a beam of ``BEAM_WIDTH`` cells each side of the table's (length-scaled) diagonal, the
last row whole; of equal paths it prefers a match or substitution, then a hypothesis word left out, then a reference
word put in, which fixes the alignment the shifts are found from.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

__all__ = ["ter_edits"]

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
#: The cost of a cell outside the beam.
UNREACHED = 10**16

#: How a cell of the table was reached: the hypothesis word matches or replaces the reference word, the
#: hypothesis word is left out (one row down), or the reference word is put in (one column right).
MATCH, SUBSTITUTE, LEFT_OUT, PUT_IN = range(4)


class EditTable:
    """Word edit distance to one reference, keeping the rows of a base hypothesis so that a shifted copy of it
    computes only the rows after the words they share (every hypothesis here has the base's length)."""

    def __init__(self, reference: list[str]) -> None:
        self.reference = reference
        self.words: list[str] = []
        self.costs: list[list[int]] = [list(range(len(reference) + 1))]
        self.steps: list[list[int]] = [[PUT_IN] * (len(reference) + 1)]

    def _row(self, above: list[int], word: str, i: int, size: int) -> tuple[list[int], list[int]]:
        """Row ``i`` (hypothesis word ``word``, of ``size`` words) from the row above it."""
        reference = self.reference
        width = len(reference) + 1
        ratio = (width - 1) / size
        beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
        diagonal = math.floor(i * ratio)
        low, high = max(0, diagonal - beam), width if i == size else min(width, diagonal + beam)
        costs, steps = [UNREACHED] * width, [MATCH] * width
        for j in range(low, high):
            if j == 0:
                costs[0], steps[0] = above[0] + 1, LEFT_OUT
                continue
            if word == reference[j - 1]:
                cost, step = above[j - 1], MATCH
            else:
                cost, step = above[j - 1] + 1, SUBSTITUTE
            if above[j] + 1 < cost:
                cost, step = above[j] + 1, LEFT_OUT
            if costs[j - 1] + 1 < cost:
                cost, step = costs[j - 1] + 1, PUT_IN
            costs[j], steps[j] = cost, step
        return costs, steps

    def _shared(self, words: list[str]) -> int:
        """How many leading words ``words`` shares with the base (0 for another length)."""
        if len(words) != len(self.words):
            return 0
        shared = 0
        for mine, base in zip(words, self.words, strict=True):
            if mine != base:
                break
            shared += 1
        return shared

    def rebase(self, words: list[str]) -> int:
        """Make ``words`` the base; its edit distance."""
        keep = self._shared(words) + 1
        del self.costs[keep:], self.steps[keep:]
        for i in range(keep, len(words) + 1):
            costs, steps = self._row(self.costs[-1], words[i - 1], i, len(words))
            self.costs.append(costs)
            self.steps.append(steps)
        self.words = list(words)
        return self.costs[-1][-1]

    def distance(self, words: list[str]) -> int:
        """The edit distance of ``words``, the base's rows kept."""
        shared = self._shared(words)
        above = self.costs[shared]
        for i in range(shared + 1, len(words) + 1):
            above = self._row(above, words[i - 1], i, len(words))[0]
        return above[-1]

    def alignment(self) -> tuple[list[int], list[bool], list[bool]]:
        """For the base: the hypothesis position each reference word is aligned with (-1 before the first), and
        which hypothesis words and which reference words are wrong (not matched)."""
        i, j = len(self.words), len(self.reference)
        path: list[int] = []
        while i > 0 or j > 0:
            step = self.steps[i][j]
            path.append(step)
            i -= step != PUT_IN
            j -= step != LEFT_OUT
        aligned, hyp_wrong, ref_wrong = [], [], []
        for step in reversed(path):
            if step != PUT_IN:
                i += 1
                hyp_wrong.append(step != MATCH)
            if step != LEFT_OUT:
                aligned.append(i - 1)
                ref_wrong.append(step != MATCH)
        return aligned, hyp_wrong, ref_wrong


def common_runs(words: list[str], reference: list[str]) -> Iterator[tuple[int, int, int]]:
    """``(hypothesis start, reference start, length)`` of every run the two share: from each pair of starts at most
    ``MAX_SHIFT_DIST`` apart, each length up to the longest match (at most ``MAX_SHIFT_SIZE``)."""
    for start in range(len(words)):
        for ref_start in range(max(0, start - MAX_SHIFT_DIST), min(len(reference), start + MAX_SHIFT_DIST + 1)):
            length = 0
            while start + length < len(words) and ref_start + length < len(reference) and length < MAX_SHIFT_SIZE:
                if words[start + length] != reference[ref_start + length]:
                    break
                length += 1
                yield start, ref_start, length


def moved(words: list[str], start: int, length: int, target: int) -> list[str]:
    """``words`` with the run at ``start`` moved before the word at ``target`` (a target inside or just after the
    run is a count of places to the right)."""
    run = words[start : start + length]
    rest = words[:start] + words[start + length :]
    at = target if target <= start + length else target - length
    return rest[:at] + run + rest[at:]


def best_shift(table: EditTable, tried: int) -> tuple[int, list[str], int]:
    """(drop in edit distance, shifted words, shifts tried so far) of the best shift of the table's base."""
    words, reference = table.words, table.reference
    before = table.costs[-1][-1]
    aligned, hyp_wrong, ref_wrong = table.alignment()
    best: tuple[int, int, int, int] | None = None
    best_words = words
    for start, ref_start, length in common_runs(words, reference):
        if not any(hyp_wrong[start : start + length]) or not any(ref_wrong[ref_start : ref_start + length]):
            continue
        if start <= aligned[ref_start] < start + length:
            continue
        last = -1
        for k in range(ref_start - 1, ref_start + length):
            target = 0 if k < 0 else aligned[k] + 1
            if target == last:
                continue
            last = target
            shifted = moved(words, start, length, target)
            rank = (before - table.distance(shifted), length, -start, -target)
            tried += 1
            if best is None or rank > best:
                best, best_words = rank, shifted
        if tried >= MAX_SHIFT_CANDIDATES:
            break
    return (0, words, tried) if best is None else (best[0], best_words, tried)


def ter_edits(hypothesis: list[str], reference: list[str]) -> int:
    """Shifts plus word edits that turn ``hypothesis`` into ``reference`` (its length when the reference is
    empty)."""
    if not reference:
        return len(hypothesis)
    table = EditTable(reference)
    distance, shifts, tried = table.rebase(hypothesis), 0, 0
    while True:
        drop, shifted, tried = best_shift(table, tried)
        if tried >= MAX_SHIFT_CANDIDATES or drop <= 0:
            return shifts + distance
        shifts += 1
        distance = table.rebase(shifted)
