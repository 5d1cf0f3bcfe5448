"""A value its chunk gives as another attribute, emptied (an extraction repair).

"As for slogan, Riandgiax Systems is recorded under Power from Krildyr." The 1.5B measuring
model wrote that slogan into the company's ``sector`` (at f8d275e), its ``commission_name``
(at 89e616c) and its ``chief_executive`` (``docsage-values-set2``); the commission split the
company into two namesakes and its 269 offices never reached the average. The words are in
the chunk, so :mod:`.unstated` keeps them; the chunk says what they are, and it is not what
the column holds.

:class:`Labels` reads, for each place a chunk writes a value, the attribute the sentence gives
it (English):

* a sentence opening "As for L," ("As to", "Regarding", "Concerning", "With regard to", "In
  terms of") that the value closes (the entity it opens with is no L);
* "L: value" at the start of a sentence or after a semicolon ("Slogan: Power from Krildyr, in
  the case of ...");
* "L is value", "L of <entity> is value", "whose L was value";
* "the L 'value'": a quoted value right after its label ("advertises with the slogan '...'");
* "value as (its) L" and "value (L)" ("lists D. Rinbaernvaer as its ceo").

Labels are read in small letters (a capitalized word is a name, "Riandgiax Systems is ...",
not a label), except after "As for" and before a colon. "As for L," labels a value only
when a copula ("is", "is recorded under", "is listed as") comes right before it, and "as L"
only when L ends the clause or a preposition follows it ("as the energy sector boomed" is
a conjunction). A possessor is no part of a label ("the university's rector" is a rector).

A TEXT cell is emptied (``reason="other-attribute"``, the label quoted as evidence) when every
place the chunk writes its value is labelled, no label is the column's (:func:`names_column`:
a word of its name or description, a five-letter stem, a singular, initials: "ceo" for
``chief_executive_officer``) and one of them is another attribute for sure:

* another TEXT column of the table, not its key, by a word of its name ("country" beside
  ``country``, for a value read into ``headquarters``);
* or free text, which is never a category, a name or a reference (:data:`FREE_TEXT`: a
  slogan, a motto, a tagline), for a column that is no such text.

A label naming nothing in the schema otherwise says nothing: "ceo" for a ``chief_executive``
column is the same attribute written another way, and stays. Applied with :mod:`.unstated`,
on every read and after CLEAR's committee, so stored tuples need no new key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.normalize import fold_text, initials, key_columns
from quaderno.methods.docsage.rekey import singular
from quaderno.methods.docsage.schema import Column, Table
from quaderno.methods.docsage.terms import GENERIC

# attributes whose values are free text: never a category, a name or a reference
FREE_TEXT = frozenset("slogan motto tagline catchphrase strapline watchword jingle epigraph "
                      "inscription".split())

# words before a label that are no part of it ("whose slogan", "the company's motto")
_FUNCTION = frozenset("a an the its their his her our whose which that this these those of "
                      "with and for to by as in on at s is was since from until during after "
                      "before when while it he she they there we you who".split())
_STEM = 5

_W = r"[a-z][a-z'’-]*"                       # a word in small letters
_LABEL = rf"((?:{_W}\s+){{0,2}}{_W})"         # one to three of them
_OPEN_Q = r"['\"‘“]"
_CLOSE_Q = r"['\"’”]"
# "As for slogan," opening the sentence (any case: it starts the sentence) ...
_OPENING = re.compile(rf"^\s*(?:as\s+for|as\s+to|as\s+regards|regarding|concerning|"
                      rf"with\s+regard\s+to|in\s+terms\s+of)\s+{_LABEL}\s*,", re.I)
# ... when a copula (and "recorded under", "listed as") comes right before the value: "As
# for its sector, X is an energy firm based in Gepaethar" labels nothing
_RECORDED = re.compile(rf"\b(?:is|was|are|were)(?:\s+(?:recorded|listed|filed|registered|"
                       rf"classified|entered|given))?(?:\s+(?:under|as|in|at))?\s+{_OPEN_Q}?$")
# "Slogan: " at the start of the sentence or after a semicolon
_COLON = re.compile(rf"(?:^|;)\s*{_LABEL}\s*:\s*{_OPEN_Q}?$", re.I)
# "slogan is ", "slogan of Riandgiax Systems is ", "whose ceo was "; the entity after "of"
# holds no verb and no "and" (the clause before it is not this value's)
_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Prof|Sir)\.?\s+)"   # "is Dr. Anna Li"
_VERB = r"\b(?:is|was|are|were|reads|remains|and)\b"
_COPULA = re.compile(rf"(?<![\w'’]){_LABEL}(?:\s+of\s+(?:(?!{_VERB})[^,;:()]){{1,80}}?)?\s+"
                     rf"(?:is|was|reads|remains)\s+{_TITLE}?{_OPEN_Q}?$")
# "the slogan '"
_QUOTED = re.compile(rf"(?<![\w'’]){_LABEL}\s+{_OPEN_Q}$")
# " as its ceo", " (ceo)" after the value; the label ends the clause or a preposition follows
# it ("as its ceo since 2001"), else "as" is a conjunction ("as the energy sector boomed")
_AS = re.compile(rf"^{_CLOSE_Q}?\s+as\s+(?:(?:its|the|their|his|her|a|an)\s+)?"
                 rf"({_W}(?:\s+{_W})?)(?=\s*(?:[,.;:()!?]|$)|\s+(?:for|of|since|in|at|from|"
                 rf"until|to|behind|with)\b)")
_PAREN = re.compile(rf"^{_CLOSE_Q}?\s*\(\s*({_W}(?:\s+{_W}){{0,2}})\s*\)")
# a sentence ends at a full stop, "!" or "?" before a space (not a capital's "D." of an
# initial, nor a title's "Dr."), or at a line break
_END = re.compile(r"(?<![\s(][A-Z])(?<!\bDr)(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bProf)(?<!\bSt)"
                  r"(?<!\bJr)(?<!\bSr)(?<!\bInst)(?<!\bCo)[.!?](?=\s|$)|\n")
_SPACES = r"\s+"


class Label(NamedTuple):
    """The attribute a sentence gives a value: its words, and the words that say so."""

    words: tuple[str, ...]
    quote: str


def _label(phrase: str, quote: str, lead: bool = True) -> Label | None:
    """The label a matched ``phrase`` writes: the words after its last function word
    (``lead``: "with the slogan" -> "slogan") or before its first (the words after "as"),
    folded, generic words aside; None when nothing is left."""
    # the words after a possessor ("the university's rector" -> "rector")
    phrase = re.split(r"['’]s\s+", phrase)[-1]
    words = fold_text(phrase).split()
    if lead:
        cut = max((i + 1 for i, w in enumerate(words) if w in _FUNCTION), default=0)
        words = words[cut:]
    else:
        words = words[:next((i for i, w in enumerate(words) if w in _FUNCTION), len(words))]
    words = [w for w in words if len(w) >= 2 and w not in GENERIC]
    return Label(tuple(words), quote.strip()) if words else None


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence holding ``text[start:end]``."""
    first = 0
    for m in _END.finditer(text, 0, start):
        first = m.end()
    m = _END.search(text, end)
    return first, (m.start() if m else len(text))


def labels_at(text: str, start: int, end: int) -> Label | None:
    """The attribute the sentence gives the value written at ``text[start:end]``, or None
    where it gives none (module docstring)."""
    first, last = _sentence(text, start, end)
    before, after = text[first:start], text[end:last]
    # "As for slogan, <entity> is recorded under <value>.": the value closes the sentence
    # (the entity it opens with is no slogan)
    closes = not after.strip(" \t'\"’”")
    for pattern in (_OPENING, _COLON, _COPULA, _QUOTED):
        if pattern is _OPENING and not (closes and _RECORDED.search(before)):
            continue
        if (m := pattern.search(before)) and (label := _label(m.group(1), m.group(0))):
            return label
    for pattern in (_AS, _PAREN):
        if (m := pattern.search(after)) and (label := _label(m.group(1), m.group(0),
                                                             lead=False)):
            return label
    return None


class Labels:
    """What one chunk calls each value it writes, read once per value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._seen: dict[str, list[Label | None]] = {}

    def of(self, value: str) -> list[Label | None]:
        """The label of each place the chunk writes ``value`` (case and spacing aside, whole
        words), None for a place with none; empty when it is written nowhere as such."""
        value = value.strip().strip("'\"‘’“”")       # a value read with its quotes
        key = " ".join(value.split()).casefold()
        if key not in self._seen:
            written = _SPACES.join(re.escape(w) for w in value.split())
            found = re.finditer(rf"(?<!\w){written}(?!\w)", self.text,
                                re.I) if written else ()
            self._seen[key] = [labels_at(self.text, m.start(), m.end()) for m in found]
        return self._seen[key]


@lru_cache(maxsize=4096)
def _column_words(name: str, description: str) -> frozenset[str]:
    words = [w for w in slug(name).split("_") if w]
    words += [w for w in fold_text(description).split() if len(w) >= 3]
    return frozenset(w for w in words if w not in GENERIC)


def names_column(label: Label, column: Column, loose: bool = True) -> bool:
    """Whether ``label`` is ``column``'s attribute: a word of its name (or, ``loose``, of its
    description too, or the same first five letters), the same singular, or the initials of
    either's words. The column a value was read into is matched loosely (a value stays on
    the least hint); another column strictly, by its name ("founding" is no ``founder``,
    "county" no ``country``)."""
    name_words = [w for w in slug(column.name).split("_") if w and w not in GENERIC]
    own = _column_words(column.name, column.description or "") if loose else \
        frozenset(name_words)
    for w in label.words:
        for c in own:
            if w == c or singular(w) == singular(c) or \
                    (loose and len(w) >= _STEM and len(c) >= _STEM and w[:_STEM] == c[:_STEM]):
                return True
        if w == initials(name_words):
            return True
    return initials(label.words) in own


def other_attribute(table: Table, column: Column, labels: Sequence[Label | None]) -> \
        Label | None:
    """The label that makes a value of ``column`` another attribute, or None (module
    docstring): every place labelled, none by the column, one by another TEXT column of the
    table (its key aside) or as free text."""
    if not labels or any(lab is None for lab in labels):
        return None
    if any(names_column(lab, column) for lab in labels):
        return None
    keys = set(key_columns(table))
    others = [c for c in table.columns
              if c.name != column.name and c.name not in keys and c.type == "TEXT"]
    free = set(_column_words(column.name, column.description or "")) & FREE_TEXT
    for lab in labels:
        if any(names_column(lab, c, loose=False) for c in others):
            return lab
        if not free and FREE_TEXT & set(lab.words):
            return lab
    return None


__all__ = ["FREE_TEXT", "Label", "Labels", "labels_at", "names_column", "other_attribute"]
