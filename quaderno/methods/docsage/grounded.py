"""An answer's numbers, checked against the result it was written from.

The synthesis step is told to answer from the query result only, and nothing but code can
hold it to that: SmolLM2, shown the one row ``2 | 2 | "gonal"``, answered "... is 1.15".
:func:`ungrounded` returns every number an answer writes in figures (read by
:mod:`~quaderno.methods.docsage.written`: separators, a scale word, an exponent, a decimal
comma, a sign) that nothing the model was shown gives, read the same way:

- a result row it was shown: a numeric cell, a number written inside a text or date cell, or
  in the documents' own words for a cell (a stated quote): rounded as written (1.15 gives
  "1.2", 63907400000.0 gives "63.9 billion": within half a unit of the last digit written),
  in other thousands with a scale word ("63907.4 million" or "63.9 billion" for 63907.4; not
  "2 billion" for 2005, a one-digit number must then be exact), or as a percentage of a
  share ("33%" for 0.333); "1,500" or "1.500", which read both ways, either way;
- the row count, how many rows were shown and how many not, a number in a column name
  (``pop_2010``), the question or the SQL that ran ("founded after 1990", "LIMIT 3"), as
  written;
- two numbers a comma joins ("12,45") when each of them is given.

:func:`unsaid_value` catches the answer that gives no number at all from a result of one
number (a MAX, an AVG): a name instead of the value asked for.

A bare number is never read in other thousands: "2" is not 2,300. The caller asks once more
naming the numbers, then answers with the rows themselves (:mod:`.synthesis`); an
explanation is checked the same way, and left out when it gives such a number. A minus
sign needs a negative number (the size of one may be written without: "fell by 5"); and a
number the answer computes from the rows (a difference of two cells) counts as the model's
own: the SQL is where arithmetic belongs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, localcontext
from typing import Any, NamedTuple

from quaderno.methods.docsage.records import ResultTable
from quaderno.methods.docsage.written import Written, numbers_in, written_numbers

_THOUSANDS = range(-12, 13, 3)  # re-expressions of a number in thousands, millions, ...


def _cell_numbers(value: Any) -> Iterable[Decimal]:
    """The numbers a result cell holds: its value (with its sign), or those its text writes
    (either sign: the text's sign is not read)."""
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [Decimal(int(value))]
    if isinstance(value, float):
        return [Decimal(str(float(value)))] if math.isfinite(value) else []
    if isinstance(value, Decimal):
        return [value] if value.is_finite() else []
    if isinstance(value, list | tuple):
        return [n for v in value for n in _cell_numbers(v)]
    return numbers_in(str(value))


class Given(NamedTuple):
    """What an answer may give: the shown rows' numbers, and the other numbers the model
    was shown (counts, column names, the question, the SQL)."""

    cells: set[Decimal]
    other: set[Decimal]


def given_numbers(table: ResultTable, shown: int, *texts: str) -> Given:
    """The numbers of the first ``shown`` rows (their cells and the quotes stated for them);
    apart, the row count, how many rows were shown and how many not, the numbers in the
    column names and those of ``texts``."""
    cells: set[Decimal] = set()
    for row in table.rows[:shown]:
        for cell in row:
            cells.update(_cell_numbers(cell))
    cells.update(n for s in table.stated if s.row <= shown for n in numbers_in(s.quote))
    other = {Decimal(len(table.rows)), Decimal(min(len(table.rows), shown)),
             Decimal(max(len(table.rows) - shown, 0))}
    names = " ".join(re.sub(r"[_\W]+", " ", c) for c in table.columns)
    # one way only: "1,500" in the question is no 1.5
    other.update(n for text in (names, *texts) for n in numbers_in(text, both_ways=False))
    return Given(cells, other)


def _gives(candidate: Decimal, written: Written, cell: bool) -> bool:
    """True when ``candidate`` is the number ``written`` writes, rounded as written; other
    thousands and percentages only for a cell's number. A number written with a minus
    sign needs a negative one; one written without may give a negative's size ("fell by
    5" for -5)."""
    half = written.half
    digits = -written.digits if written.negative else written.digits
    candidate = candidate if written.negative else abs(candidate)
    if abs(digits - candidate.scaleb(-written.scale)) <= half:
        return True
    if not cell:
        return False
    if written.percent and abs(digits - candidate * 100) <= half:
        return True
    if not written.word:
        return False
    # a scale word may count in other thousands than the result; one significant digit
    # ("2 billion") must then be exact, or any year would give it
    half = half if len(written.digits.normalize().as_tuple().digits) > 1 else Decimal(0)
    return any(abs(digits - candidate.scaleb(k)) <= half for k in _THOUSANDS)


def ungrounded(answer: str, table: ResultTable, *, shown: int,
               question: str = "", sql: str = "") -> list[str]:
    """The numbers ``answer`` writes (as written, once each) that nothing the model was
    shown gives: the first ``shown`` rows of ``table``, its row count, ``question`` or
    ``sql`` (module docstring)."""
    with localcontext() as ctx:
        ctx.prec = 80           # a DECIMAL(38) or HUGEINT compared exactly
        given = given_numbers(table, shown, question, sql)
        out: list[str] = []
        for w in written_numbers(answer, min(shown, len(table.rows))):
            if not _given(w, given) and w.text not in out:
                out.append(w.text)
        return out


def _given(w: Written, given: Given) -> bool:
    """True when what the model was shown gives ``w``: as written (a cell's number also
    rounded, in other thousands, as a percentage), or its digits read the other way by a
    cell, or each of the numbers its comma may join."""
    if any(_gives(c, w, True) for c in given.cells) or \
            any(_gives(c, w, False) for c in given.other):
        return True
    other = w.read_otherwise()
    if other is not None and any(_gives(c, other, True) for c in given.cells):
        return True
    return bool(w.parts) and all(
        any(_gives(c, part, True) for c in given.cells) or
        any(_gives(c, part, False) for c in given.other)
        for part in (Written(str(p), w.start, p, 0, False, False) for p in w.parts))


# words that say a number, or answer a question a number decides ("yes", "none", "never"):
# an answer saying one of these may rest on a one-value result without writing it in
# figures; "the one with ..." says none
_SAYS_A_NUMBER = re.compile(
    r"(?i)\b(?:yes|no|not|never|neither|nor|none|nothing|nobody|zero|"
    r"(?<!\bthe\s)(?<!\bthis\s)(?<!\bthat\s)one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|"
    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|"
    r"trillion|dozens?|half|once|twice)\b")


def unsaid_value(answer: str, table: ResultTable) -> str | None:
    """The value of a result of one numeric cell (a MAX, an AVG, a COUNT) when ``answer``
    says no number: none in figures and none in words, no "yes" or "no"; else None. The
    grounding check reads the numbers an answer gives, so an answer giving none passed it:
    over the gold tables the measuring model answered "Drournlia Markets Commission" from
    the one cell 63907.4 (regulator-set2 q001)."""
    if len(table.rows) != 1 or len(table.rows[0]) != 1:
        return None
    (cell,) = table.rows[0]
    if isinstance(cell, bool) or not isinstance(cell, int | float | Decimal) or \
            not _cell_numbers(cell) or (isinstance(cell, int) and cell in (0, 1)):
        return None             # a count of 0 or 1 may answer "is it?" in words
    if written_numbers(answer, 1) or _SAYS_A_NUMBER.search(answer):
        return None
    return str(cell)


def rows_answer(table: ResultTable, rows: Sequence[int], most: int = 5) -> str:
    """The result rows (1-based) as the answer: their values, row by row, at most ``most``
    of them and then how many they were (the first row when ``rows`` names none)."""
    picked = [i for i in rows if 1 <= i <= len(table.rows)] or [1][:len(table.rows)]
    text = "; ".join(", ".join("NULL" if v is None else str(v) for v in table.rows[i - 1])
                     for i in picked[:most])
    if len(picked) > most:
        text += f" ({most} of {len(picked)} rows)"
    return text


__all__ = ["Given", "given_numbers", "rows_answer", "ungrounded", "unsaid_value"]
