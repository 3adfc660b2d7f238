"""Many answers as one buffer: Olive's normalization, pairwise equality and word ids for whole lists at once.

Olive normalizes an answer as ``" ".join(s.strip().lower().split())``. :class:`Segments` does it for a list of
strings at once, with a handful of C-level ``str`` calls on the joined text (join, lower, replace) instead of four
calls per string; comparisons and word tokens are then numpy over the UTF-8 bytes. Each string ends with a NUL.

Why the result equals the per-string one:

* ``str.lower`` is context-free except for the Greek capital sigma, whose final form depends on the neighbouring
  characters up to the first one that is neither cased nor case-ignorable. NUL is neither, so it ends the context
  exactly as the end of a string does; so is "|", which lets a ``|``-joined reference be lowercased whole before
  it is cut into its answers (:mod:`.blocks`).
* ``str.split()`` splits on the characters for which ``str.isspace()`` holds (:data:`SPACES`). Replacing them by a
  space, collapsing runs of spaces and leaving the spaces next to a NUL outside the string's span leaves every
  string as its words joined by single spaces.
* An answer that itself contains NUL has it replaced by a private-use character found in no answer, so separators
  stay unambiguous and word identity is unchanged (:meth:`Segments.strings` puts the NUL back).

Lone surrogates are encoded with ``surrogatepass``: they are characters like any other.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SPACES", "Segments", "dense_ids", "normalized_bytes", "words_at"]

SPACES = tuple(chr(c) for c in range(0x3001) if chr(c).isspace())  # none lies above U+3000 (a test checks)
_SEP = "\x00"
_PAD = b"\x00" * 16  # lets a 16-byte window start at any byte of the text
_OTHER_SPACES = tuple(c for c in SPACES if c != " ")
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], np.uint64)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier
_LONG_WORD = 256  # bytes; words longer than this get their ids from a dict over their bytes


def _private_chars() -> Iterator[str]:
    for lo, hi in ((0xE000, 0xF900), (0xF0000, 0xFFFFE), (0x100000, 0x10FFFE)):
        yield from map(chr, range(lo, hi))


def _joined(strings: Sequence[str], nul: str | None) -> str:
    if not strings:
        return ""
    if nul is not None:
        strings = [s.replace(_SEP, nul) for s in strings]
    return (_SEP.join(strings) + _SEP).lower()


def _other_spaces_to_space(text: str) -> str:
    for space in _OTHER_SPACES:
        if space in text:  # a memchr; O(1) when the text holds only narrower characters
            text = text.replace(space, " ")
    return text


def normalized_bytes(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray, str | None]:
    """``strings`` lowercased, their whitespace runs as single spaces, each ended by NUL, as UTF-8 bytes.

    Returns the bytes (16 zero bytes of padding follow the last NUL), the position of every string's NUL, and
    the private-use character that stands for NUL inside a string (None when no string holds one). A space at a
    string's start or end is still there. Raises TypeError when an item is not a ``str`` (from ``str.join``).
    """
    nul = None
    while True:
        text = _other_spaces_to_space(_joined(strings, nul))
        buf = np.frombuffer(text.encode("utf-8", "surrogatepass") + _PAD, np.uint8)
        other = buf != 32
        keep = np.empty(buf.size, bool)  # collapse runs of spaces: drop every space that follows a space
        keep[0] = True
        np.logical_or(other[1:], other[:-1], out=keep[1:])
        if not keep.all():
            buf = buf[keep]
        ends = np.flatnonzero(buf[: buf.size - len(_PAD)] == 0)
        if ends.size == len(strings):
            return buf, ends, nul
        # a string contains NUL: stand a private-use character found in no string for it
        nul = next(c for c in _private_chars() if c not in text)


@dataclass(frozen=True)
class Segments:
    """Olive-normalized strings as UTF-8 bytes: string ``i`` is ``buf[starts[i] : starts[i] + lengths[i]]``.

    In ``buf`` every string is lowercased, its whitespace runs are single spaces, and it ends with a NUL; 16 zero
    bytes of padding follow the last one. A leading or trailing space is left in ``buf`` but outside the span.
    """

    buf: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    nul: str | None = None

    @classmethod
    def of(cls, strings: Sequence[str]) -> Segments:
        """Normalize ``strings``."""
        return cls.ending_at(*normalized_bytes(strings))

    @classmethod
    def ending_at(cls, buf: np.ndarray, ends: np.ndarray, nul: str | None = None) -> Segments:
        """The segments of :func:`normalized_bytes` output that end at the NUL bytes ``ends`` (in order).

        A segment starts after the previous one's end; its spaces at either end are left outside its span.
        """
        starts = np.empty_like(ends)
        starts[:1] = 0
        starts[1:] = ends[:-1] + 1
        lengths = ends - starts
        lead = buf[starts] == 32  # an empty string's first byte is its NUL
        starts, lengths = starts + lead, lengths - lead
        lengths -= (lengths > 0) & (buf[starts + lengths - 1] == 32)
        return cls(buf, starts, lengths, nul)

    @property
    def n(self) -> int:
        return int(self.starts.size)

    def text(self) -> str:
        """The decoded buffer: every string followed by NUL (a space at a string's end is still there)."""
        return self.buf[: self.buf.size - len(_PAD)].tobytes().decode("utf-8", "surrogatepass")

    def strings(self) -> list[str]:
        """The normalized strings."""
        parts = self.text().split(_SEP)
        parts.pop()  # the empty tail after the last NUL
        edges = (self.buf[self.starts - 1] == 32) | (self.buf[self.starts + self.lengths] == 32)  # [-1]: padding
        for i in np.flatnonzero(edges).tolist():
            parts[i] = parts[i].strip(" ")
        return parts if self.nul is None else [p.replace(self.nul, _SEP) for p in parts]

    def equal(self, left: np.ndarray | slice, right: np.ndarray | slice) -> np.ndarray:
        """Is string ``left[k]`` equal to string ``right[k]``, for every k? (Index arrays, or slices: cheaper.)

        Pairs of equal length are compared 8 bytes at a time as integers; a pair leaves at its first difference.
        The last 8 bytes of a string are read ending at its end (overlapping the previous ones), so only a string
        shorter than 8 bytes needs a mask.
        """
        size = self.lengths[left]
        pairs = size.size
        todo = np.flatnonzero(size == self.lengths[right])
        size = size[todo]
        sa, sb = self.starts[left][todo], self.starts[right][todo]
        words = words_at(self.buf)
        same = ((words[sa] ^ words[sb]) & _LOW_BYTES[np.minimum(size, 8)]) == 0
        go = np.flatnonzero(same & (size > 8))
        read = 8
        while go.size:
            offset = np.minimum(read, size[go] - 8)
            ok = words[sa[go] + offset] == words[sb[go] + offset]
            same[go[~ok]] = False
            read += 8
            go = go[ok & (size[go] > read)]
        equal = np.zeros(pairs, bool)
        equal[todo[same]] = True
        return equal

    def words(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Byte spans ``(starts, ends)`` of all words, in order, and the string each belongs to."""
        text = self.buf[: self.buf.size - len(_PAD)]
        cuts = np.flatnonzero((text == 32) | (text == 0))  # only spaces and NULs separate words now
        starts = np.concatenate(([0], cuts[:-1] + 1))[: cuts.size]
        is_end = text[cuts] == 0
        segment = np.cumsum(is_end) - is_end  # NULs strictly before each cut
        word = cuts > starts  # leading, trailing and empty strings give empty spans
        return starts[word], cuts[word], segment[word]

    def word_ids(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """An int64 id for every word span: equal ids exactly when the words' bytes are equal.

        Words are read 8 bytes at a time as integers (exact: words hold no NUL, so zero padding is unambiguous)
        and numbered by :func:`dense_ids`; a longer word continues with ``(its id so far, next bytes)``.
        """
        if starts.size == 0:
            return np.zeros(0, np.int64)
        words = words_at(self.buf)
        size = ends - starts
        ids, vocab = dense_ids(_window_keys(words, starts, size, 0, 8))
        todo = np.flatnonzero(size > 8)
        prev, offset, base = ids[todo], 8, vocab
        while todo.size:
            if offset >= _LONG_WORD:
                ids[todo] = base + _ids_of_bytes(self.buf, starts[todo], ends[todo])
                break
            width = min(7, (64 - vocab.bit_length()) // 8)  # (previous id, next `width` bytes) fits 64 bits
            chunk = _window_keys(words, starts[todo], size[todo], offset, width)
            round_ids, vocab = dense_ids((prev.astype(np.uint64) << np.uint64(8 * width)) | chunk)
            offset += width
            done = size[todo] <= offset
            ids[todo[done]] = base + round_ids[done]
            base += vocab
            todo, prev = todo[~done], round_ids[~done]
        return ids


def words_at(buf: np.ndarray) -> np.ndarray:
    """Element ``k`` is ``buf[k : k + 8]`` as a little-endian uint64 (an unaligned view with a 1-byte stride).

    The 16 bytes of padding let an element start at any byte of the text.
    """
    return np.ndarray((buf.size - 7,), "<u8", buffer=buf, strides=(1,))


def _window_keys(words: np.ndarray, starts: np.ndarray, size: np.ndarray, offset: int, width: int) -> np.ndarray:
    """The ``width`` bytes of each word from ``offset`` on (fewer at its end) as a little-endian uint64."""
    return words[starts + offset] & _LOW_BYTES[np.minimum(size - offset, width)]


def _ids_of_bytes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    table: dict[bytes, int] = {}
    view = memoryview(buf)
    spans = zip(starts.tolist(), ends.tolist(), strict=True)
    return np.fromiter((table.setdefault(bytes(view[s:e]), len(table)) for s, e in spans), np.int64, starts.size)


def dense_ids(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Number the distinct uint64 ``keys`` 0..V-1 (in sorted order); return every key's number and V.

    ``np.unique(return_inverse=True)`` argsorts, which is slow; this sorts the values only, then finds each key in
    an open-addressing hash table (linear probing, load at most 1/2) with vectorized probes.
    """
    if keys.size == 0:
        return np.zeros(0, np.int64), 0
    vocab = np.sort(keys)
    vocab = vocab[np.concatenate(([True], vocab[1:] != vocab[:-1]))]
    bits = max(1, (2 * vocab.size - 1).bit_length())
    mask, shift = (1 << bits) - 1, np.uint64(64 - bits)
    table = np.full(1 << bits, -1, np.int64)
    todo = np.arange(vocab.size)
    slot = ((vocab * _GOLDEN) >> shift).astype(np.int64)
    while todo.size:  # insert: every entry takes the first free slot from its home slot on
        free = table[slot] < 0
        table[slot[free]] = todo[free]  # several may write one slot: one of them wins it
        lost = table[slot] != todo
        todo, slot = todo[lost], (slot[lost] + 1) & mask
    slot = ((keys * _GOLDEN) >> shift).astype(np.int64)
    ids = table[slot]  # never -1: the slots from a key's home slot to its own are all taken
    miss = np.flatnonzero(vocab[ids] != keys)
    while miss.size:
        slot[miss] = (slot[miss] + 1) & mask
        ids[miss] = table[slot[miss]]
        miss = miss[vocab[ids[miss]] != keys[miss]]
    return ids, int(vocab.size)
