"""Numbers read as the text states them, scale included (spec §3, "unit/semantic mismatch").

One collection writes the same kind of amount as "$42.8107 billion", "USD 54860M", "43789.5
million dollars" and "$1,791,100,000". Asking the model for plain numbers makes it do the
arithmetic, and small models get it wrong by powers of ten (one wrote 42.8107 for "$42.8107
billion", its committee 428107000000). So the model copies the digits, and code reads the
scale from the chunk: a numeric cell is matched to a number the chunk writes, and takes that
number's scale word. In order:

1. the model's digits as written ("42.8107", "54860"): the scale of the text's number with
   those digits (billion, M), when every such number in the chunk has the same one;
2. a value the text states already scaled (42810700000 for "$42.8107 billion"): kept;
3. a power-of-ten slip (42810.7, or 428107000000, for "$42.8107 billion"): the one number of
   the chunk with the same significant digits, when there is exactly one.

A value the chunk does not state stays as the model wrote it. The number is then put into
the column's unit: "USD million" divides by 10^6, a unit without a scale word keeps whole
units (dollars); a plain number below one of the column's units, without a currency sign
("Revenue (USD million): 54860"), is taken as counted in that unit already. Key columns
and year columns are never rescaled. Every change is a
:class:`~quaderno.methods.docsage.rows.Correction` (``reason="scale"``, ``by="as-stated"``)
quoting the text's number. A column that counts people or things (population, employees;
which columns count or hold money is :mod:`.column_kinds`) never takes a number the text
writes as money or as a measure ("$3.2616 billion", "283 square kilometres": the 1.5B model
put both into a city's population), and a column of money (revenue, budget, a currency
unit) never takes a number written as a count of people or things ("75,440 employees":
three companies' revenues on Set2; "has 413 publications", a laureate's research grant on
Set1); a count of people never takes a number written as a count of things (offices,
branches, stores, plants), nor the other way round ("183 offices" as a company's
employees, "60600 employees" as its offices, both on Set2); such a cell becomes
NULL (``reason="unit"``). A calendar year (a column named so) below 1000 that the text does
not state (0 for "not given", which the 1.5B model wrote for 8 of 23 Set1 rows) becomes NULL
(``reason="placeholder"``): an average birth year must not count it. So does a 0 in any
numeric column but a key that the text writes neither as 0 nor with a word that may mean
none (``no``, ``not``, ``zero``, ``free``, ``winless``, ...): the same model wrote 0
employees for companies whose chunks give no count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from quaderno.methods.docsage.column_kinds import (AGENT_WORDS, THING_PLURALS, UNIT_LETTER,
                                                   WORKS_COUNTED, column_kind, counted_kind,
                                                   counts, money, rescalable)
from quaderno.methods.docsage.normalize import is_year_column, key_columns
from quaderno.methods.docsage.rows import Correction, exact_number
from quaderno.methods.docsage.schema import Column, Table

_WORDS = {"thousand": 3, "million": 6, "mn": 6, "mln": 6, "billion": 9, "bn": 9,
          "trillion": 12}
_ATTACHED = {"k": 3, "K": 3, "M": 6, "m": 6, "B": 9, "bn": 9, "Bn": 9, "BN": 9}
_CURRENCY = re.compile(r"(?:[$€£¥]|\b(?:USD|EUR|GBP|US\$))\s?$")
# a number as text writes it, with thousands separators, then an optional scale: attached
# ("54860M", "2.3k", "$5bn") or a word after a space ("42.8 billion", "3 millions")
_MENTION = re.compile(
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:(?P<attached>bn|Bn|BN|[kKMmB])(?!\w)"
    r"|[ \u00a0]?(?P<word>(?i:thousand|million|mln|mn|billion|bn|trillion))s?(?!\w)"
    r"|(?![\w]|[.,]\d))")
# a measure written right after a number: "283 square kilometres", "12 %", "4.5 km"
_MEASURE = re.compile(r"[ \u00a0]?(?:%|°|percent\b|per cent\b|degrees?\b|square\b|sq\b|"
                      r"km\b|km2\b|km²|kilomet|metres?\b|meters?\b|miles?\b|hectares?\b|"
                      r"acres?\b|kg\b|kilograms?\b|tonnes?\b|tons?\b)", re.I)
# the words of such a measure, to quote it
_MEASURE_WORDS = re.compile(r"[ \u00a0]?(?:(?:square|sq|per|cubic)[ \u00a0])?[^\s.,;:()]+")
# a count of people or things written right after a number, one word between at most
# ("75,440 employees", "21 regional offices", "360 researchers"): never an amount of money
_COUNTED = re.compile(r"[ \u00a0]+(?:[a-z-]+[ \u00a0]+)?(?:employees|staff|workers|"
                      r"inhabitants|residents|people|persons|members|students|visitors|seats|"
                      r"players|" + "|".join((*THING_PLURALS, *WORKS_COUNTED))
                      + rf"|{AGENT_WORDS})\b", re.I)
_UNIT_WORD = re.compile(r"(?i)(?<![a-z])(thousand|million|mln|mn|billion|bn|trillion)s?(?![a-z])")


# a calendar year as a text writes one: four digits after "in", "since", "until", "born"...
# and before no noun ("It was in 1967 that ...", "Born in 1970,"; not "in 1500 casualties"),
# or before "marks the founding", "for the founding of" ("1981 marks the founding of
# Bryskound", "Records give 1980 for the founding of TI"): never a count or an amount,
# whatever column the model put it in. "from", "circa" and "c." are left out: counts and
# amounts follow them as often as years ("grew from 1200 to 3000", "circa 1500 staff")
_YEAR_BEFORE = re.compile(r"\b(?:in|since|until|till|during|born|founded|established|died|"
                          r"the year)\s+$", re.I)
_EVENTS = r"(?:founding|foundation|birth|death|charter|independence|establishment|opening)"
_YEAR_AFTER = re.compile(rf"\s+(?:marks\s+the\s+{_EVENTS}|was\s+the\s+year|for\s+the\s+"
                         rf"{_EVENTS})\b", re.I)
# a word in small letters right after the number, other than a small function word, is
# what it counts ("in 1500 casualties")
_NOUN_AFTER = re.compile(r"\s+(?!(?:that|when|and|but|or|as|after|before|until|while|the|a|"
                         r"an|it|its|he|she|they|this|to|in|on|at|by|for|of|with|was|is|"
                         r"were)\b)[a-z]")


def _as_year(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where ``text`` writes the number at ``start:end`` as a calendar year, its context
    included; None when it does not."""
    digits = text[start:end]
    if len(digits) != 4 or not digits.isdigit() or not 1000 <= int(digits) <= 2100:
        return None
    after = _YEAR_AFTER.match(text, end)
    if after:
        return start, after.end()
    before = _YEAR_BEFORE.search(text[max(0, start - 16):start])
    if before and not _NOUN_AFTER.match(text, end):
        return start - (min(start, 16) - before.start()), end
    return None


class Mention(NamedTuple):
    """A number the text writes: its digits as written, its scale (a power of ten), where
    it is, whether a currency sign or code is written right before it, and whether a measure
    (square kilometres, %, kg) right after it."""

    digits: Decimal
    scale: int
    start: int
    end: int
    currency: bool = False
    measure: bool = False
    counted: bool = False     # a count of people or things after it ("75,440 employees")
    noun: str = ""            # ... and what it counts ("employees")
    year: bool = False        # a calendar year ("in 1967", "1981 marks the founding")

    @property
    def value(self) -> Decimal:
        return self.digits.scaleb(self.scale)

    def as_written(self, text: str) -> str:
        """The number in ``text`` with its currency sign before it and its measure or what
        it counts after it ("$3.2616 billion", "283 square kilometres", "75,440
        employees")."""
        start, end = self.start, self.end
        if self.currency:
            before = text[max(0, start - 5):start]
            start -= len(before) - _CURRENCY.search(before).start()
        if self.measure:
            end = _MEASURE_WORDS.match(text, end).end()
        elif self.counted:
            end = _COUNTED.match(text, end).end()
        return text[start:end]

    def in_unit_of(self, scale: int) -> bool:
        """True when this number is already counted in a unit of 10^``scale``: written
        without a scale word or currency sign and below one such unit ("Revenue (USD
        million): 54860"); "$1,791,100,000" and "2,300,000" are whole units."""
        return scale > 0 and self.scale == 0 and not self.currency and \
            self.digits < Decimal(10) ** scale


def mentions_in(text: str) -> list[Mention]:
    """Every number ``text`` writes, with the scale word that follows it. A lone "m" is a
    scale only after a currency sign ("$5m"; "5m" may be metres)."""
    out = []
    for m in _MENTION.finditer(text):
        currency = bool(_CURRENCY.search(text[max(0, m.start() - 5):m.start()]))
        scale = 0
        if m["attached"]:
            if m["attached"] != "m" or currency:
                scale = _ATTACHED[m["attached"]]
        elif m["word"]:
            scale = _WORDS[m["word"].lower()]
        measure = bool(_MEASURE.match(text, m.end()))
        what = None if scale else _COUNTED.match(text, m.end())
        year = not (scale or currency or measure or what) and \
            _as_year(text, m.start(), m.end()) is not None
        out.append(Mention(Decimal(m["num"].replace(",", "")), scale, m.start(), m.end(),
                           currency, measure, what is not None,
                           what.group(0).split()[-1].lower() if what else "", year))
    return out


def unit_scale(unit: str) -> int:
    """The power of ten a column's unit counts in: "USD million" and "$M" 6, "thousands of
    people" 3, "USD" or "" 0."""
    word = _UNIT_WORD.search(unit)
    if word:
        return _WORDS[word.group(1).lower()]
    letter = UNIT_LETTER.search(unit)
    if letter:
        return {"k": 3, "m": 6, "b": 9}[(letter.group(1) or letter.group(2)).lower()]
    return 0


def _significant(d: Decimal) -> str:
    return "".join(map(str, abs(d).normalize().as_tuple().digits))


def _has_scale(value: Any) -> bool:
    """True for a string that writes its own scale ("42.8 billion", "54860M"): one that
    reads as another number than its digits alone."""
    return isinstance(value, str) and exact_number(value) != exact_number(
        re.sub(r"[^\d.,+-]", "", value))


def read_stated(value: Any, text: str,
                found: list[Mention] | None = None) -> tuple[Decimal, Mention] | None:
    """(the value the text states, the number stating it) for a numeric cell the model
    wrote as ``value``; None when the chunk does not state it (or states it ambiguously).
    ``found``: the chunk's numbers to match against, when not all of :func:`mentions_in`."""
    v = exact_number(value)
    if v is None:
        return None
    found = mentions_in(text) if found is None else found
    sign = -1 if v < 0 else 1
    size = abs(v)
    if not _has_scale(value):
        # 1. the model copied the digits: the text's scale for them
        same = [m for m in found if m.digits == size]
        if same:
            scales = {m.scale for m in same}
            return (sign * same[0].value, same[0]) if len(scales) == 1 else None
    # 2. already in whole units
    whole = [m for m in found if m.value == size]
    if whole:
        return v, whole[0]
    # 3. a slip by a power of ten: one stated number with the same significant digits
    digits = _significant(size)
    if size == 0 or (len(digits) < 2 and not _has_scale(value)):
        return None
    slips = {m.value: m for m in found if _significant(m.value) == digits}
    if len(slips) == 1:
        (stated, mention), = slips.items()
        return sign * stated, mention
    return None


def measure_follows(text: str, end: int) -> bool:
    """A unit of measure (square kilometres, %, tonnes) follows ``text[:end]``: the number
    ending there is a measure, no count."""
    return bool(_MEASURE.match(text, end))


def foreign(col: Column, m: Mention) -> bool:
    """``m`` is written as something ``col`` cannot hold: money or a measure for a count,
    a count of people or things for money, a count of things for a count of people and the
    other way round ("183 offices" for employees, "60,600 employees" for offices), a
    calendar year for a count or money ("1981 marks the founding of Bryskound" for its
    employees)."""
    if m.year and (counts(col) or money(col)):
        return True
    kind = column_kind(col) if col.type in ("INT", "DOUBLE") else ""
    if kind and m.counted and counted_kind(m.noun) not in ("", kind):
        return True
    if counts(col):
        return m.currency or m.measure
    # (a currency sign makes it money whatever follows: "$5,400,000 from employees")
    return money(col) and m.counted and not m.currency


def in_unit(stated: Decimal, col: Column, mention: Mention | None = None) -> int | float | None:
    """``stated`` (whole units) in the column's unit and type; None when an INT column
    cannot hold it as a whole number. A plain number below one of the column's units
    (:meth:`Mention.in_unit_of`) is taken as counted in that unit already."""
    scale = unit_scale(col.unit)
    value = stated if mention is not None and mention.in_unit_of(scale) else stated.scaleb(-scale)
    if col.type == "INT":
        return int(value) if value == value.to_integral_value() else None
    return float(value)


def read_cell(table: Table, col: Column, old: Any, text: str,
              found: list[Mention] | None = None) -> tuple[Any, Correction | None]:
    """One cell as ``text`` states it: (the value to keep, the correction when it changed).
    A cell ``text`` does not state is kept as it is; a count (:func:`counts`) whose number
    the text writes as money or a measure becomes None, with a ``unit`` correction.
    ``found``: the text's numbers, when already read."""
    if old is None or isinstance(old, bool) or not rescalable(table, col):
        return old, None
    found = mentions_in(text) if found is None else found
    usable = [m for m in found if not foreign(col, m)]
    reading = read_stated(old, text, usable)
    if reading is None and len(usable) < len(found):
        # the number the model took is money or a measure ("283 square kilometres" as
        # a population; "$3.2616 billion", a budget), or a headcount taken as money
        # ("75,440 employees" as a revenue): not this column's value
        other = read_stated(old, text, [m for m in found if m not in usable])
        if other is not None:
            m = other[1]
            # a year with the words that make it one ("1981 marks the founding")
            where = _as_year(text, m.start, m.end) if m.year else None
            return None, Correction(column=col.name, old=old, new=None, reason="unit",
                                    by="as-stated", evidence_quote=text[slice(*where)]
                                    if where else m.as_written(text))
        return old, None
    if reading is None:
        return old, None
    new = in_unit(reading[0], col, reading[1])
    if new is None:
        return old, None
    if exact_number(new) == exact_number(old):
        return new, None                  # "42.8 billion" written as the number it is
    mention = reading[1]
    return new, Correction(column=col.name, old=old, new=new, reason="scale", by="as-stated",
                           evidence_quote=text[mention.start:mention.end])


def read_row(table: Table, values: Mapping[str, Any],
             text: str) -> tuple[dict[str, Any], list[Correction]]:
    """``values`` with every rescalable cell read as ``text`` states it, as a number in its
    column's unit (:func:`read_cell`), and a correction per cell whose number changed."""
    out, changes = dict(values), []
    found, keys = mentions_in(text), set(key_columns(table))
    for col in table.columns:
        if col.name not in values:
            continue
        out[col.name], change = read_cell(table, col, values[col.name], text, found)
        if change is None:
            change = _placeholder_year(col, out[col.name], found)
        if change is None and col.name not in keys:
            change = _placeholder_zero(col, out[col.name], found, text)
        if change is not None and change.reason == "placeholder":
            out[col.name] = None
        if change is not None:
            changes.append(change)
    return out, changes


# a column holding one calendar year, by its name (a unit or description saying "years"
# may be a duration: tenure, age)
_CALENDAR_YEAR = re.compile(r"year(?!s)|born|birth|founded|established|died|death", re.I)


def _placeholder_year(col: Column, value: Any, found: list[Mention]) -> Correction | None:
    """The correction emptying a calendar-year cell that holds a number below 1000 (0 for
    "not given") the text does not write; None for any other cell."""
    if col.type != "INT" or not is_year_column(col) or not _CALENDAR_YEAR.search(col.name):
        return None
    v = exact_number(value)
    if v is None or v != v.to_integral_value() or v >= 1000:   # below 1000: no year
        return None
    if any(m.value == abs(v) for m in found):
        return None
    return Correction(column=col.name, old=value, new=None, reason="placeholder",
                      by="as-stated")


# words that may say "none" of something (a real 0): a chunk with any of them keeps its 0s
_NONE = re.compile(r"\b(?:zero|no|none|nil|nobody|nothing|without|never|not|any|free|flat|"
                   r"unchanged|yet|\w+less)\b|n't\b", re.I)


def _placeholder_zero(col: Column, value: Any, found: list[Mention],
                      text: str) -> Correction | None:
    """The correction emptying a numeric cell that holds 0 where the text writes no 0 and
    no word that may mean none ("no", "not", "free", "winless", ...: such a chunk keeps its
    0s) (the 1.5B model's "not stated": 0 employees for three Set2 companies whose chunks
    give no count, which MIN then picked); None for any other cell."""
    if col.type not in ("INT", "DOUBLE"):
        return None
    v = exact_number(value)
    if v is None or v != 0 or any(m.value == 0 for m in found) or _NONE.search(text):
        return None
    return Correction(column=col.name, old=value, new=None, reason="placeholder",
                      by="as-stated")


def stated_mentions(text: str, value: Any, col: Column) -> list[Mention]:
    """The numbers of ``text`` that state a cell's value after it was read into the column's
    unit ("USD 54860M" for 54860000000 dollars)."""
    v = exact_number(value)
    if v is None:
        return []
    scale = unit_scale(col.unit)
    size = abs(v.scaleb(scale))
    return [m for m in mentions_in(text)
            if (m.digits == abs(v) if m.in_unit_of(scale) else m.value == size)]


def stated_spans(text: str, value: Any, col: Column) -> list[tuple[int, int]]:
    """Where ``text`` states a cell's value (:func:`stated_mentions`)."""
    return [(m.start, m.end) for m in stated_mentions(text, value, col)]


__all__ = ["Mention", "foreign", "in_unit", "mentions_in", "read_row", "read_stated",
           "stated_mentions", "stated_spans", "unit_scale"]
