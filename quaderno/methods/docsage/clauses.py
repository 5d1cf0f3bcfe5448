"""A text's clauses: its sentences, split again at semicolons, "but" and "while".

The unit :mod:`.ended`, :mod:`.denied` and :mod:`.group_keyed` read a statement in: what one
clause says of an entity and a group is said together. A sentence does not end at a title
("Dr. Moskia") or at an initial the text writes out elsewhere ("S. Kelskyrn" beside "Skoustil
Kelskyrn"), and splitting stays linear in the text however it is written.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_SPACES = re.compile(r"[ \t\u00a0]+")
# a sentence ends at ". ", but not after a title ("Dr. Moskia"); an initial is mended in
# clauses() ("S. Kelskyrn")
_CLAUSE = re.compile(r"(?<=[.!?])(?-i:(?<!\b(?:Dr|Mr|Ms)\.)(?<!\bMrs\.)) "
                     r"|\n+|; ?| but |,? (?:while|whereas) ", re.I)
# one letter and a period ending a piece, no letter or period before it ("(S.", "(É.",
# not "U.S."), a capital (checked by str.isupper: any script's)
_INITIAL_END = re.compile(r"(?<![\w.])([^\W\d_])\.$")
_LONE_INITIAL = re.compile(r"[^\W\d_]\.$")
_WORD_OR_DOT = re.compile(r"[\w.]")
_WORD_RUN = re.compile(r"\w+")
_IS_WORD = re.compile(r"\w")
_NEXT_WORD = re.compile(r"[^\W\d_][\w'-]*")


def clauses(text: str) -> list[str]:
    """The sentences of ``text``, split again at semicolons, "but" and "while" (runs of
    spaces collapsed first, so no pattern backtracks over them). None ends at a title ("Dr.
    Moskia") or at an initial the text writes out before the same word elsewhere ("S.
    Kelskyrn" beside "Skoustil Kelskyrn", "É. Zola" beside "Émile Zola") or inside a run
    of initials ("J. R. R. Tolkien": two or more before the name); "in the U.S. Rastou"
    and "Plan B. Rastou" end there. Linear in the text: a clause being mended keeps its
    pieces and the run of initials it ends with, and the words written out after a word of
    each first letter are indexed once (:func:`_written_out`)."""
    text = _SPACES.sub(" ", text)
    parts: list[list[str]] = []     # each clause's pieces, joined by a space at the end
    run = _Run(0, False, False)     # the run of initials the last clause ends with
    written: _Written | None = None  # indexed once, at the first initial
    for piece in _CLAUSE.split(text):
        piece = piece.strip() if piece else ""
        if not piece:
            continue
        # the last clause's end: its last piece, and the space joining it to the one before
        tail = (" " if parts and len(parts[-1]) > 1 else "") + parts[-1][-1] if parts else ""
        initial = _INITIAL_END.search(tail) if parts else None
        if initial and not initial[1].isupper():
            initial = None
        word = _NEXT_WORD.match(piece) if initial else None
        if word and not word[0][:1].isupper():
            word = None
        if word and written is None:
            written = _written_out(text)
        if word and (_writes_out(written, text, initial[1], word[0])
                     or _LONE_INITIAL.fullmatch(piece) or run.names_one):
            parts[-1].append(piece)
            run = run.then(piece)
        else:
            parts.append([piece])
            run = _Run.of(piece)
    return [" ".join(p) for p in parts]


#: the longest word :func:`_written_out` keeps whole; a longer one is kept by its hash
_INDEXED = 64
_HASH_BASE, _HASH_MOD = 911_382_323, (1 << 61) - 1


def _hashed(word: str) -> int:
    """``word``'s polynomial hash, as :func:`_written_out` rolls it over a word's prefixes."""
    h = 0
    for ch in word:
        h = (h * _HASH_BASE + ord(ch)) % _HASH_MOD
    return h


class _Written(NamedTuple):
    """What :func:`_written_out` indexes: (letter, word) for words of up to
    :data:`_INDEXED` characters; (letter, length, hash) -> where such a word starts, for
    longer ones."""

    short: set[tuple[str, str]]
    long: dict[tuple[str, int, int], int]


def _written_out(text: str) -> _Written:
    """Each (letter, word) where ``text`` writes a word of two letters or more opening with
    the letter, a space, and the word ("S", "Kelskyrn" of "Skoustil Kelskyrn"): every
    (initial, word) the search ``\\b{initial}\\w+ {word}\\b`` finds in ``text``, where the
    word is as :data:`_NEXT_WORD` reads one ("Kelskyrn-Ba" also gives "Kelskyrn"), indexed
    in one pass instead of a search of the whole text per initial. A word of up to
    :data:`_INDEXED` characters is kept whole, a longer one by its length and hash, rolled
    over its prefixes: kept whole, a word with a word's end at every character ("a-a-a-...")
    cost its length squared (the review of 6946658: 0.5 GB at 32,000 characters), and
    searched for, a text of long words cost its length squared in time (the review of
    e67b013: 21 s at 276,000 characters)."""
    out = _Written(set(), {})
    for first in _WORD_RUN.finditer(text):
        after = first.end()
        if first.end() - first.start() < 2 or text[after:after + 1] != " ":
            continue
        word = _NEXT_WORD.match(text, after + 1)
        if word is None:
            continue
        w, letter, h = word[0], first[0][0], 0
        # every prefix of the word that ends where a word ends (the search's \b)
        for k in range(1, len(w) + 1):
            if k > _INDEXED:
                h = (h * _HASH_BASE + ord(w[k - 1])) % _HASH_MOD
            elif k == _INDEXED and len(w) > _INDEXED:
                h = _hashed(w[:k])
            inside = _IS_WORD.match(w[k - 1]) is not None
            nxt = w[k] if k < len(w) else text[word.end():word.end() + 1]
            if inside != (nxt != "" and _IS_WORD.match(nxt) is not None):
                if k <= _INDEXED:
                    out.short.add((letter, w[:k]))
                else:
                    out.long.setdefault((letter, k, h), word.start())
    return out


def _writes_out(written: _Written | None, text: str, letter: str, word: str) -> bool:
    """Whether ``text`` writes a word of two letters or more opening with ``letter``, a
    space, and ``word`` (``written``: :func:`_written_out` of ``text``). A long word whose
    hash is another's (the place kept does not hold it) is searched for."""
    if written is None:
        return False
    if len(word) <= _INDEXED:
        return (letter, word) in written.short
    start = written.long.get((letter, len(word), _hashed(word)))
    if start is None:
        return False
    return text.startswith(word, start) or \
        re.search(rf"\b{re.escape(letter)}\w+ {re.escape(word)}\b", text) is not None


class _Run(NamedTuple):
    """The run of initials a clause ends with ("J. R.", "J. R. R.": what the pattern
    ``(?:^|\\(|, )(?:[^\\W\\d_]\\. )+[^\\W\\d_]\\.$`` finds at its end): how many,
    whether it opens the clause or follows "(" or ", " ("the U. K." names no one), and
    whether all are capitals."""

    units: int
    anchored: bool
    upper: bool

    @property
    def names_one(self) -> bool:
        """Two or more capitals, opening the clause or after "(" or ", ": a name's given
        names ("J. R.")."""
        return self.units >= 2 and self.anchored and self.upper

    @classmethod
    def of(cls, piece: str) -> _Run:
        """The run a clause of the one ``piece`` ends with. A piece holds no ". " (the
        clause split there, but after a title), so its run is one initial at most."""
        end = _LONE_INITIAL.search(piece)
        if end is None or (len(piece) > 2 and _WORD_OR_DOT.match(piece[-3])):
            return cls(0, False, False)
        before = piece[:-2]
        return cls(1, before == "" or before.endswith(("(", ", ")), piece[-2].isupper())

    def then(self, piece: str) -> _Run:
        """The run once ``piece`` is joined on with a space: one more initial when it is one
        ("R."), else the piece's own run, which no longer opens the clause."""
        if _LONE_INITIAL.fullmatch(piece) and self.units:
            return _Run(self.units + 1, self.anchored, self.upper and piece[0].isupper())
        own = _Run.of(piece)
        return own._replace(anchored=own.anchored and piece[:-2] != "")


__all__ = ["clauses"]
