"""A value its chunk does not state, emptied (an extraction repair).

Every value is read from one chunk (its provenance), and a value the chunk does not state is
the model's own: the 1.5B measuring model gave Set2 companies whose chunks give no count
100, 160 and 320 employees and a $200,000,000 revenue, and countries ("South Africa",
"Finland") no document names (``docsage-case-set2``); ``ORDER BY employees`` then chose an
invented 100. A cell that is no key and no reference is emptied (``reason="unstated"``) when
its chunk does not state it:

* a number (INT, DOUBLE) that no number of the chunk gives as written, in the column's unit
  (:func:`.amounts.stated_mentions`), with its scale word ("$58.2527 billion" for
  58252700000), as a share of a percentage (0.12 for "12%"), or rounded, when the cell has
  three significant digits or more (58.25 for "58.2527"); a whole number up to twenty may be
  written as a word ("three offices", "a dozen"). A 0 is :func:`.amounts.read_row`'s to
  judge (a chunk saying "no offices" keeps it);
* a text none of whose words the chunk writes (case aside; the words of three letters or
  more that are not "of", "the" or a legal suffix, or their first five letters, so
  "telecom" stands for "telecommunications" and "D. Rinbaernvaer" for "Distaend
  Rinbaernvaer") outside the row's own name: "Dixvhukrand Energy" says nothing of its
  sector, and the model read "energy" from it where the chunk says "insurance".

Keys and references are left: the aliases, :mod:`.rekey` and :mod:`.ended` judge those, and a
membership the question names ("in the Drournlia Markets Commission") is read from a roster
that writes members short. Dates and booleans are left. Applied on every read after
:mod:`.misplaced`, so stored tuples need no new key, and again after CLEAR's committee
(:func:`unstated_rows`), whose votes re-read the chunk; a cell whose value came from another
chunk (a backtracking quote, an alias merge) is checked against that chunk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from quaderno.methods.docsage.amounts import mentions_in, stated_mentions, unit_scale
from quaderno.methods.docsage.normalize import LEGAL_SUFFIXES, is_null, key_columns
from quaderno.methods.docsage.rows import Correction, Row, exact_number, value_chunk
from quaderno.methods.docsage.schema import Column, Schema, Table

_NUMBER_WORDS = {
    "one": 1, "single": 1, "sole": 1, "once": 1, "two": 2, "twice": 2, "pair": 2,
    "both": 2, "three": 3, "thrice": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "dozen": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20}
_WORD = re.compile(r"[^\W\d_]+")
_SKIP = frozenset({"of", "the", "and", "for"}) | LEGAL_SUFFIXES
_STEM = 5


def _rounds_to(value: Decimal, stated: Decimal) -> bool:
    """``value`` is ``stated`` written to fewer digits, with three significant ones at
    least (58.25 for 58.2527; never 100 for 97)."""
    digits = value.normalize()
    if len(digits.as_tuple().digits) < 3 or stated == 0:
        return False
    exponent = digits.as_tuple().exponent
    if not isinstance(exponent, int):
        return False
    try:
        return stated.quantize(Decimal(1).scaleb(exponent)) == digits
    except InvalidOperation:     # more digits than the context holds: no such rounding
        return False


def number_stated(text: str, value: Any, col: Column) -> bool:
    """True when ``text`` states the number ``value`` of ``col`` (module docstring); True
    for a value that is no number, or 0."""
    v = exact_number(value)
    if v is None or v == 0 or stated_mentions(text, value, col):
        return True
    size = abs(v)
    scale = unit_scale(col.unit)
    for m in mentions_in(text):
        for stated in {m.digits, m.value, m.value.scaleb(-scale),
                       *((m.digits / 100,) if m.measure else ())}:
            if stated == size or _rounds_to(size, stated):
                return True
    if size == size.to_integral_value() and size <= 20:
        words = {w.casefold() for w in _WORD.findall(text)}
        return any(_NUMBER_WORDS.get(w) == size for w in words)
    return False


def text_stated(text: str, value: Any) -> bool:
    """True when ``text`` writes a word of ``value`` (module docstring), or ``value`` has
    no word to look for."""
    wanted = [w for w in (x.casefold() for x in _WORD.findall(str(value)))
              if len(w) >= 3 and w not in _SKIP]
    if not wanted:
        return True
    have = {w.casefold() for w in _WORD.findall(text)}
    stems = {w[:_STEM] for w in have if len(w) >= _STEM}
    return any(w in have or (len(w) >= _STEM and w[:_STEM] in stems) for w in wanted)


def _free_columns(table: Table) -> list[Column]:
    """The columns whose values are checked: no key, no reference, TEXT or a number."""
    fixed = set(key_columns(table)) | {c for fk in table.foreign_keys for c in fk.cols}
    return [c for c in table.columns
            if c.name not in fixed and c.type in ("TEXT", "INT", "DOUBLE")]


def _without(text: str, names: Sequence[str]) -> str:
    """``text`` with every writing of ``names`` (case aside) blanked out."""
    for name in names:
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return text


def _stated(col: Column, value: Any, text: str, names: Sequence[str]) -> bool:
    if col.type == "TEXT":
        return not isinstance(value, str) or text_stated(_without(text, names), value)
    return number_stated(text, value, col)


def _emptied(table: Table, row: Row, text_of: Mapping[str, str]) -> Row:
    """``row`` with each free cell its chunk does not state emptied; ``text_of`` maps chunk
    ids to texts (a cell whose chunk is not there is left)."""
    values, notes = dict(row.values), []
    names = [str(values[k]).strip() for k in key_columns(table)
             if isinstance(values.get(k), str) and len(values[k].strip()) >= 4]
    for col in _free_columns(table):
        value = values.get(col.name)
        if is_null(value):
            continue
        chunk = value_chunk(row.provenance.chunk_id, row.provenance.corrections, col.name)
        if chunk in text_of and not _stated(col, value, text_of[chunk], names):
            values[col.name] = None
            notes.append(Correction(column=col.name, old=value, new=None, reason="unstated",
                                    by="as-stated"))
    if not notes:
        return row
    prov = row.provenance.model_copy(update={
        "corrections": [*row.provenance.corrections, *notes]})
    return row.model_copy(update={"values": values, "provenance": prov})


def unstated(schema: Schema, rows: Mapping[str, Sequence[Row]], chunk_id: str,
             text: str) -> dict[str, list[Row]]:
    """One chunk's ``rows`` (table name -> rows) with every value ``text`` does not state
    emptied (module docstring)."""
    out: dict[str, list[Row]] = {}
    for name, table_rows in rows.items():
        table = schema.table(name)
        out[name] = [_emptied(table, r, {chunk_id: text}) if table is not None else r
                     for r in table_rows]
    return out


def unstated_rows(schema: Schema, rows: Sequence[Row], texts: Mapping[str, str]) -> list[Row]:
    """:func:`unstated` over rows of many chunks (``texts``: chunk id -> text), each cell
    against the chunk its value came from: CLEAR applies it after its committee."""
    out = []
    for r in rows:
        table = schema.table(r.table)
        out.append(_emptied(table, r, texts) if table is not None else r)
    return out


__all__ = ["number_stated", "text_stated", "unstated", "unstated_rows"]
