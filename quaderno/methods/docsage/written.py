"""Numbers as a model's answer (or any text it was shown) writes them in figures.

:func:`~quaderno.methods.docsage.amounts.mentions_in` reads the documents' English amounts
(thousands separators, a scale word or letter). An answer may write a number other ways,
and the number check (:mod:`~quaderno.methods.docsage.grounded`) must read them all alike,
in the answer and in what the model was shown, or it flags a number copied as written:

- an exponent, as JSON shows a very large or small float ("1e-05", "1.2345e+16");
- a decimal comma ("173,75", "1.500,25") or points between thousands ("1.500.000"): read
  with the separators swapped; two numbers a comma joins ("12,45", "2001,2005") may be the
  two numbers, and "1,500" or "1.500" may be read the other way (1.5, 1500) against a cell;
- a scale word of German, French or Spanish for thousands to trillions ("1,5 Mio.", "2,3
  Mrd.", "4 milliards", "3 millones"; not the German "Billion", which English writes too)
  and a percentage written "Prozent", "pour cent" or "por ciento";
- a unit of measure against the digits ("290km²", "12kg", "45mph");
- a minus sign right before it ("-0.83", not the range "1990-2005" or the name "B-52");
- row labels the model was shown ("[2]", "row 2") are no numbers.

Not read: numbers written as words ("two"), ordinals ("3rd"), decades ("the 1990s"), digits
inside a name ("A320"), a multiplier ("3x": the model's own arithmetic, as a difference of
two cells would be).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from quaderno.methods.docsage.amounts import mentions_in

_PERCENT = re.compile(r"[ \u00a0]?(?:%|percent\b|per cent\b|prozent\b|pour cent\b|"
                     r"por ciento\b)", re.I)
# JSON shows a very large or small float with an exponent ("1e-05", "1.2345e+16")
_SCIENTIFIC = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,3})(?!\w)")
# the labels the rows were shown with: "[2]", "row 2", "rows 1 and 3", "rows 2-4"
_ROW_LABEL = re.compile(r"\[(\d+)\]|\brows?\s+\d+(?:\s*(?:,|and|&|-|\u2013|to)\s*\d+)*",
                        re.I)
_DIGITS = re.compile(r"\d+")
# a number with a decimal comma ("173,75", "0,5", "1.500,25") or with points between its
# thousands ("1.500.000"): read with the separators swapped, which keeps every position
_DECIMAL_COMMA = re.compile(r"(?<![\w.,])(?:\d+,\d+|\d{1,3}(?:\.\d{3})+,\d+|"
                            r"\d{1,3}(?:\.\d{3}){2,})(?![\w]|[.,]\d)")
# one separator before three digits reads both ways: "1,500" is 1500 or 1.5, "1.500" 1.5
# or 1500
_EITHER_WAY = re.compile(r"(?<![\w.,])(\d{1,3})([.,])(\d{3})(?![\w]|[.,]\d)")
# a unit of measure written right after the digits, blanked so the number is read
_GLUED = re.compile(r"(?<=\d)(?:km²|km2|kms?|kgs?|cm|mm|mi|mph|kph|kmh|ha|lbs?|oz|ft|sqm|"
                    r"sqft|usd|eur|gbp|yrs?|hrs?|mins?|secs?)(?!\w)", re.I)
# scale words of other languages than the documents' English (amounts.mentions_in)
# ("Billion" alone is not read as German 10^12: English writes it capitalized too)
_OTHER_SCALE = re.compile(r"[ \u00a0](?P<word>tsd|tausend|mio|millionen|mrd|milliarden?|"
                          r"milliards?|billionen|millones|mill[oó]n)(?:\.|(?!\w))", re.I)
_OTHER_SCALES = {"tsd": 3, "tausend": 3, "mio": 6, "millionen": 6, "millones": 6,
                 "millon": 6, "millón": 6, "mrd": 9, "milliarde": 9, "milliarden": 9,
                 "milliard": 9, "milliards": 9, "billionen": 12}
_SWAP = str.maketrans(".,", ",.")


class Written(NamedTuple):
    """A number as a text writes it: its digits, the power of ten they are scaled by (a
    scale word's or letter's, or an exponent), and whether that is a word."""

    text: str
    start: int
    digits: Decimal
    scale: int
    word: bool
    percent: bool
    negative: bool = False        # a minus sign right before it ("-0.83")
    other: Decimal | None = None  # its digits read the other way ("1,500": 1.5)
    parts: tuple[Decimal, ...] = ()  # the numbers its separators may part ("12,45": 12, 45)

    @property
    def value(self) -> Decimal:
        return self.digits.scaleb(self.scale)

    @property
    def half(self) -> Decimal:
        """Half a unit of the last digit written, in the digits' scale."""
        return Decimal(5).scaleb(self.digits.as_tuple().exponent - 1)

    def read_otherwise(self) -> Written | None:
        """This number with its digits read the other way, if they read both ways."""
        return None if self.other is None else self._replace(digits=self.other, other=None)


def written_numbers(text: str, shown: int = 0) -> list[Written]:
    """The numbers ``text`` writes in figures, in order; row labels up to ``shown`` are not
    numbers of it."""
    out: list[Written] = []
    either: dict[int, Decimal | None] = {}  # numbers that read both ways: the other reading
    parts: dict[int, tuple[Decimal, ...]] = {}

    def label(m: re.Match[str]) -> str:
        labels = [int(d) for d in _DIGITS.findall(m[0])]
        return " " * len(m[0]) if all(1 <= n <= shown for n in labels) else m[0]

    def written(start: int, end: int, digits: Decimal, scale: int, word: bool) -> Written:
        minus, percent = _minus(text, start), bool(_PERCENT.match(text, end))
        # a scale or a percent sign belongs to one number: "2,1 Mio." is no 2 and 1
        apart = () if scale or percent else parts.get(start, ())
        return Written(text[start - minus:end], start, digits, scale, word, percent, minus,
                       either.get(start), apart)

    def exponent(m: re.Match[str]) -> str:
        out.append(written(m.start(), m.end(), Decimal(m[1]), int(m[2]), False))
        return " " * len(m[0])

    def swapped(m: re.Match[str]) -> str:
        if m.start() in either:
            return m[0]
        if "." not in m[0]:          # "12,45" may be two numbers
            parts[m.start()] = tuple(Decimal(p) for p in m[0].split(","))
        return m[0].translate(_SWAP)
    rest = _SCIENTIFIC.sub(exponent, _ROW_LABEL.sub(label, text))
    for m in _EITHER_WAY.finditer(rest):
        either[m.start()] = _other_reading(m[1], m[2], m[3])
    rest = _GLUED.sub(lambda m: " " * len(m[0]), _DECIMAL_COMMA.sub(swapped, rest))
    for m in mentions_in(rest):
        end, scale = m.end, m.scale
        other = None if scale else _OTHER_SCALE.match(rest, end)
        if other:
            end, scale = other.end(), _OTHER_SCALES[other["word"].lower()]
        out.append(written(m.start, end, m.digits, scale, scale > 0))
    return sorted(out, key=lambda w: w.start)


def _other_reading(whole: str, separator: str, three: str) -> Decimal | None:
    """"1,500" read as 1.5, "1.500" as 1500; none for "1,000" (a whole number either way
    is one a count or a LIMIT gives too easily) or "0.500"."""
    if separator == ",":
        return None if three == "000" else Decimal(f"{whole}.{three}")
    return None if whole == "0" else Decimal(whole + three)


def _minus(text: str, start: int) -> bool:
    """True when a minus sign is written right before ``start``, not between two numbers
    or words (a range "1990-2005", a name "B-52")."""
    return start > 0 and text[start - 1] in "-\u2212" and (
        start < 2 or not text[start - 2].isalnum())


def numbers_in(text: str, *, both_ways: bool = True) -> list[Decimal]:
    """Every number ``text`` gives, read as :func:`written_numbers` reads an answer, and
    the numbers a comma may join ("DECIMAL(10,2)": 10 and 2), with either sign (a text's
    sign is not read); with ``both_ways``, also "1,500" read the other way (1.5)."""
    out: list[Decimal] = []
    for w in written_numbers(text):
        other = w.read_otherwise() if both_ways else None
        out += [w.value, *([other.value] if other else []), *w.parts]
    return [n for v in out for n in (v, -v)]


__all__ = ["Written", "numbers_in", "written_numbers"]
