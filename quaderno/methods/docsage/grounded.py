"""An answer's numbers, checked against the result it was written from.

The synthesis step is told to answer from the query result only, and nothing but code can
hold it to that: SmolLM2, shown the one row ``2 | 2 | "gonal"``, answered "... is 1.15".
:func:`ungrounded` returns every number an answer writes in figures that none of these gives:

- a number of a result row the model was shown: a numeric cell, a number written inside a
  text or date cell, or in the documents' own words for a cell (a stated quote);
- the number of rows of the result, or a number of the question or of the SQL that ran
  ("founded after 1990", "LIMIT 3");

where a number "gives" one the answer writes when it rounds to it as written (1.15 to "1.2",
63907400000.0 to "63.9 billion": within half a unit of the last digit written), when the
answer writes it with a scale word in other thousands ("63907.4 million" for 63907.4,
"63.9 billion" for 63907.4), or as a percentage of a share ("33%" for 0.333). A bare number
is never read in other thousands: "2" is not 2,300.

The caller asks once more naming the numbers, then answers with the rows themselves
(:meth:`SQLReasoner.synthesize`). Numbers written as words ("two") are not read, and a number
the answer computes from the rows (a difference of two cells) counts as the model's own: the
SQL is where arithmetic belongs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from quaderno.methods.docsage.amounts import Mention, mentions_in
from quaderno.methods.docsage.records import ResultTable

_PERCENT = re.compile(r"[ \u00a0]?(?:%|percent\b|per cent\b)", re.I)
_THOUSANDS = range(-12, 13, 3)  # re-expressions of a number in thousands, millions, ...


def _cell_numbers(value: Any) -> Iterable[Decimal]:
    """The numbers a result cell holds: its value, or those its text writes."""
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return []
        return [abs(Decimal(repr(value)))]
    if isinstance(value, Decimal):
        return [abs(value)] if value.is_finite() else []
    if isinstance(value, list | tuple):
        return [n for v in value for n in _cell_numbers(v)]
    return [m.value for m in mentions_in(str(value))]


def given_numbers(table: ResultTable, shown: int, *texts: str) -> set[Decimal]:
    """What an answer may give: the numbers of the first ``shown`` rows (their cells and
    the quotes stated for them), the row count, and the numbers of ``texts``."""
    out: set[Decimal] = {Decimal(len(table.rows))}
    for row in table.rows[:shown]:
        for cell in row:
            out.update(_cell_numbers(cell))
    out.update(m.value for s in table.stated if s.row <= shown for m in mentions_in(s.quote))
    out.update(m.value for text in texts for m in mentions_in(text))
    return out


def _gives(candidate: Decimal, written: Mention, percent: bool) -> bool:
    """True when ``candidate`` is the number ``written`` writes, rounded as written."""
    half = Decimal(5).scaleb(written.digits.as_tuple().exponent - 1)
    if abs(written.digits - candidate.scaleb(-written.scale)) <= half:
        return True
    if percent and abs(written.digits - candidate * 100) <= half:
        return True
    # with a scale word, the answer may count in other thousands than the result
    return written.scale > 0 and any(
        abs(written.digits - candidate.scaleb(k)) <= half for k in _THOUSANDS)


def ungrounded(answer: str, table: ResultTable, *, shown: int,
               question: str = "", sql: str = "") -> list[str]:
    """The numbers ``answer`` writes (as written, once each) that no row of the first
    ``shown`` of ``table``, its row count, ``question`` or ``sql`` gives."""
    given = given_numbers(table, shown, question, sql)
    out: list[str] = []
    for m in mentions_in(answer):
        percent = bool(_PERCENT.match(answer, m.end))
        if any(_gives(c, m, percent) for c in given):
            continue
        written = answer[m.start:m.end]
        if written not in out:
            out.append(written)
    return out


def rows_answer(table: ResultTable, rows: Sequence[int], most: int = 5) -> str:
    """The result rows (1-based) as the answer: their values, row by row, at most ``most``
    rows and how many more."""
    picked = [table.rows[i - 1] for i in rows if 1 <= i <= len(table.rows)]
    text = "; ".join(", ".join("NULL" if v is None else str(v) for v in row)
                     for row in picked[:most])
    if len(picked) > most:
        text += f"; and {len(picked) - most} more rows"
    return text


__all__ = ["given_numbers", "rows_answer", "ungrounded"]
