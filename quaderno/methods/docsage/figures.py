"""What numbers a chunk states: the half of :mod:`.unstated` that reads figures.

A number (INT, DOUBLE) is stated by a chunk when one of its numbers gives it: as written, in
the column's unit (:func:`.amounts.stated_mentions`), with its scale word ("$58.2527
billion" for 58252700000, "3.2m"), as :mod:`.written` reads an answer ("1.234.567", "12,5",
"1,2 Mrd."), as digits inside a word ("FY2019", "3rd", "c.1850"), as a share of a
percentage (0.12 for "12%"), or rounded, when the cell has three significant digits or more
(58.25 for "58.2527"); a whole number may be written as a word ("three offices",
"twenty-one", "a dozen", "third"). A 0 needs a 0 in figures or a word for none beside the
column's own ("no offices", "never won a title"): the committee voted 0 offices for a Set2
company from a chunk that says nothing of offices but "renewed without change"
(``docsage-rosters-set2``). A count whose only mentions are each the one number of a
clause that counts the other kind of thing ("Tallies of offices put Bryskound Holdings at
123") is no count of people. Not read: a number converted into another unit than the
chunk's ("2,500 m" as 2.5 km), or counted from a list.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any

from quaderno.methods.docsage.amounts import measure_follows, mentions_in, unit_scale
from quaderno.methods.docsage.column_kinds import (AGENT_WORDS, THING_NOUNS, THING_PLURALS,
                                                   column_kind, counts)
from quaderno.methods.docsage.rekey import singular
from quaderno.methods.docsage.rows import exact_number
from quaderno.methods.docsage.schema import Column
from quaderno.methods.docsage.written import numbers_in

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
          "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
          "seventeen", "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
             "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"]
_WORD_NUMBERS = {**{w: i for i, w in enumerate(_UNITS)}, **_TENS,
                 **{w: i + 1 for i, w in enumerate(_ORDINALS)},
                 "single": 1, "sole": 1, "once": 1, "twice": 2, "pair": 2, "both": 2,
                 "thrice": 3, "dozen": 12, "hundred": 100, "thousand": 1000}
_COMPOUND = re.compile(rf"\b({'|'.join(_TENS)})[-\s]({'|'.join(_UNITS[1:10])})\b")
# digits anywhere, inside a word too ("FY2019", "3rd", "c.1850"), and a bare "m" scale
_DIGITS = re.compile(r"\d[\d,.]*")
_MILLIONS = re.compile(r"(\d+(?:\.\d+)?)\s?m\b")
_PERCENT = re.compile(r"%|\bper\s?cent|\bpct\b|\bpercentage", re.I)
# words for none ("not" is no such word: "the office count is not known" is no 0)
_NONE_WORDS = frozenset({"no", "zero", "none", "nil", "never", "without", "nobody", "nothing",
                         "neither", "nor"})
# what a clause counts: people or things, as whole words ("workshops" is no shop)
_PEOPLE_WORDS = re.compile(r"(?i)\b(?:employ\w*|staff\w*|workers?|workforce|personnel|people|"
                           r"persons?|residents?|inhabitants?|population|members?|students?|"
                           r"players?|visitors?|headcount|" + AGENT_WORDS + r")\b")
_THING_WORDS = re.compile(r"(?i)\b(?:" + "|".join(THING_PLURALS + THING_NOUNS) + r")\b")
# words of a column's description that say nothing of what it counts
_SKIP_DESC = frozenset({"number", "count", "total", "amount", "value", "with", "that", "from"})


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


class Figures:
    """The numbers one chunk states, read once for all of its cells."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._by_exponent: dict[int, set[Decimal]] = {}
        self._by_scale: dict[int, tuple[set[Decimal], set[Decimal], set[Decimal]]] = {}

    @cached_property
    def mentions(self):
        return mentions_in(self.text)

    @cached_property
    def numbers(self) -> set[Decimal]:
        """Every number the chunk may state, unit aside, as a positive value."""
        out: set[Decimal] = {abs(n) for n in numbers_in(self.text)}
        for m in self.mentions:
            out |= {m.digits, m.value}
        for raw in _DIGITS.findall(self.text):
            raw = raw.strip(".,")
            for form in (raw.replace(",", ""), raw.replace(".", "").replace(",", "."),
                         raw.replace(".", "").replace(",", "")):
                if (d := _decimal(form)) is not None:
                    out.add(d)
        out |= {d * 1_000_000 for x in _MILLIONS.findall(self.text)
                if (d := _decimal(x)) is not None}
        out |= {n for n, _ in self.number_words}
        if _PERCENT.search(self.text):
            out |= {n / 100 for n in list(out)}
        return out

    @cached_property
    def number_words(self) -> list[tuple[Decimal, bool]]:
        """Each number the chunk writes in words ("sixty-five"), and whether a unit of
        measure follows it ("sixty-five square kilometres")."""
        low, out = self.text.casefold(), []
        for m in _COMPOUND.finditer(low):
            out.append((Decimal(_TENS[m[1]] + _UNITS.index(m[2])),
                        measure_follows(low, m.end())))
        for m in re.finditer(r"[a-z]+", low):
            if m[0] in _WORD_NUMBERS:
                out.append((Decimal(_WORD_NUMBERS[m[0]]), measure_follows(low, m.end())))
        return out

    def _only_a_measure(self, size: Decimal, col: Column) -> bool:
        """``size`` is written only in words followed by a unit of measure, and ``col``
        counts people or things: "A total of sixty-five square kilometres was recorded for
        Gonqur" states no population of 65 (:func:`.amounts.foreign` reads digits)."""
        said = [measured for n, measured in self.number_words if n == size]
        return bool(said) and all(said) and counts(col) and size not in self.in_digits

    @cached_property
    def in_digits(self) -> set[Decimal]:
        """The numbers the chunk writes in digits, as read and as scaled."""
        return {abs(n) for n in numbers_in(self.text)} | {
            d for m in self.mentions for d in (m.digits, m.value)}

    def _in_unit(self, scale: int) -> tuple[set[Decimal], set[Decimal], set[Decimal]]:
        """For a column counting in 10^``scale``: the digits of the mentions already in
        that unit, the values of the others, and every mention's value in that unit."""
        if scale not in self._by_scale:
            ms = self.mentions
            self._by_scale[scale] = ({m.digits for m in ms if m.in_unit_of(scale)},
                                     {m.value for m in ms if not m.in_unit_of(scale)},
                                     {m.value.scaleb(-scale) for m in ms} if scale else set())
        return self._by_scale[scale]

    def _rounded(self, exponent: int) -> set[Decimal]:
        """The chunk's numbers rounded to 10^``exponent``."""
        if exponent not in self._by_exponent:
            quantum, out = Decimal(1).scaleb(exponent), set()
            for n in self.numbers:
                try:
                    out.add(n.quantize(quantum))
                except InvalidOperation:   # more digits than the context holds
                    continue
            self._by_exponent[exponent] = out
        return self._by_exponent[exponent]

    def states_number(self, value: Any, col: Column) -> bool:
        v = exact_number(value)
        if v is None:
            return True
        if v == 0:
            return self.states_zero(col)
        size, scale = abs(v), unit_scale(col.unit)
        if self._other_kind(size, scale, col) or self._only_a_measure(size, col):
            return False
        # in the column's unit (as amounts.stated_mentions reads it), else unit aside
        in_unit, whole, scaled = self._in_unit(scale)
        if size in in_unit or size.scaleb(scale) in whole or size in scaled or \
                size in self.numbers:
            return True
        # rounded, to three significant digits or more (58.25 for 58.2527)
        digits = size.normalize()
        exponent = digits.as_tuple().exponent
        return len(digits.as_tuple().digits) >= 3 and isinstance(exponent, int) and \
            digits in self._rounded(exponent)

    @cached_property
    def clauses(self) -> list[tuple[int, str]]:
        """(start, text) of each clause: the text between sentence ends and semicolons."""
        out, start = [], 0
        for m in re.finditer(r"[.;!?](?:\s|$)|\n", self.text):
            out.append((start, self.text[start:m.start()]))
            start = m.end()
        out.append((start, self.text[start:]))
        return out

    def _clause_of(self, at: int) -> tuple[int, str]:
        return next(((s, t) for s, t in reversed(self.clauses) if s <= at), (0, self.text))

    def _other_kind(self, size: Decimal, scale: int, col: Column) -> bool:
        """Every mention of ``size`` is the only number of a clause that counts the other
        kind of thing than ``col`` does and never its own: "Tallies of offices put
        Bryskound Holdings at 123" states no 123 employees (the noun comes before the
        number, which :func:`.amounts.foreign` does not read). A clause with another number
        ("Across its 40 stores, the retailer employs 5,000") or a word of both kinds
        ("employs 5,000 at its three plants") says nothing against it."""
        kind = column_kind(col)
        if not kind:
            return False
        found = [m for m in self.mentions if size in (m.digits, m.value, m.value.scaleb(-scale))]
        if not found:
            return False
        for m in found:
            start, clause = self._clause_of(m.start)
            alone = sum(start <= x.start < start + len(clause) for x in self.mentions) == 1
            people, things = bool(_PEOPLE_WORDS.search(clause)), bool(_THING_WORDS.search(clause))
            if not alone or people == things or (kind == "people") == people:
                return False
        return True

    def states_zero(self, col: Column) -> bool:
        """A 0 is stated by a 0 in figures or a word for none in the clause of the column's
        own word (its name's or description's), the word for none before it ("no
        offices", "never won a title") or after a colon ("offices: none")."""
        words_of = re.split(r"[_\W]+", f"{col.name} {col.description or ''}".casefold())
        forms = {singular(w) for w in words_of if len(w) >= 4 and w not in _SKIP_DESC}
        if not forms:
            return any(m.value == 0 for m in self.mentions)

        def col_word(x: str) -> bool:
            return any(x.startswith(f) for f in forms)
        for clause in re.split(r"[.;!?\n]+", self.text.casefold()):
            toks = re.findall(r"[^\W_]+|:", clause)
            for i, w in enumerate(toks):
                if w in ("0", "zero", "none", "nil") and \
                        any(col_word(x) for x in toks[max(0, i - 3):i + 4]):
                    return True
                if w in _NONE_WORDS and any(col_word(x) for x in toks[i + 1:i + 5]):
                    return True
        return False


def number_stated(text: str, value: Any, col: Column) -> bool:
    """True when ``text`` states the number ``value`` of ``col`` (module docstring); True
    for a value that is no number."""
    return Figures(text).states_number(value, col)


__all__ = ["Figures", "number_stated"]
