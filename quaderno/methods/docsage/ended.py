"""A relationship the text says has ended is not a current reference.

"Kelvo Trust was a company of the Drournlia Markets Commission from 1990 until it left in
2005" and a roster's "Former members: Kelvo Trust (left 2005)" both name the commission and the
company, and the measuring model wrote the commission into the company's ``commissionname``
from either: a former member then counts among "the companies of the commission"
(``docsage-measures-24-set2``). A schema that keys membership by a plain reference has no
place for its end, so such a cell is emptied (a correction quoting the clause,
``reason="ended"``), by code, when the chunk says so of this entity and this reference:

* a clause naming both the row's entity and the referenced one says the relationship ended
  ("until it left in 2005", "left the commission in 2005", "former member", "no longer",
  "ceased to be"), and no clause naming both says a present one ("is", "joined", "since",
  "regulates"); or
* the referenced entity is named in no clause with the row's entity, and the row's entity is
  listed after "former members" ("Former members: Kelvo Trust (left 2005)").

What the text says of one of them alone ("the commission no longer publishes reports", "the
bank's founder left in 1990") ends nothing. A clause is a sentence or a part of one between
semicolons or a "but". A table with a column that can hold the end (a ``left_year``,
``until``, ``status`` or ``former`` token in a column name) keeps its references: the model
can say it there. A link table's reference is part of its key and is kept (not handled yet).
Once ended, a cell stays ended: CLEAR's committee does not vote it back, alias merging does
not fill it from another row, and completion does not search for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.normalize import entity_name, key_columns, key_name
from quaderno.methods.docsage.rows import Correction, Row
from quaderno.methods.docsage.schema import Table

_ENDED = re.compile(
    r"\bformer(?:ly)?\s+(?:an?\s+)?(?:members?|parts?|affiliates?|participants?|"
    r"constituents?|signator(?:y|ies))\b"
    r"|\buntil\b[^.;]{0,120}?\b(?:left|withdrew|exited|resigned|was expelled)\b"
    r"|\bleft(?:\s+in)?\s+\d{4}\b|\bleft\s+the\s[^.;]{0,80}?\bin\s+\d{4}\b"
    r"|\b(?:no longer|ceased to be|withdrew from|was expelled from)\b", re.I)
# a clause that says a present relationship too is left alone
_CURRENT = re.compile(r"\b(?:joined|rejoined|became|is|are|remains|belongs|since|has been|"
                      r"regulat\w*|oversees|supervis\w*|governs)\b", re.I)
_FORMER_LIST = re.compile(r"\bformer members?\b", re.I)
_SPACES = re.compile(r"[ \t\u00a0]+")
_CLAUSE = re.compile(r"(?<=[.!?]) |\n+|; ?| but ", re.I)
# column-name tokens for the end of a relationship ("left_year", "status", "member_until")
_END_TOKEN = re.compile(r"(?:^|_)(?:left|until|end|ended|exit|exited|former|status|active|"
                        r"current|to)(?:_|$)", re.I)


def clauses(text: str) -> list[str]:
    """The sentences of ``text``, split again at semicolons and "but" (runs of spaces
    collapsed first, so no pattern backtracks over them)."""
    return [c.strip() for c in _CLAUSE.split(_SPACES.sub(" ", text)) if c and c.strip()]


def _naming(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.I)


def _ended(parts: Sequence[str], entity: str, ref: str) -> str | None:
    """The clause saying the relationship of ``entity`` to ``ref`` ended, or None."""
    own, other = _naming(entity), _naming(ref)
    both = [c for c in parts if own.search(c) and other.search(c)]
    if both:
        if all(_ENDED.search(c) and not _CURRENT.search(c) for c in both):
            return both[0]
        return None
    for c in parts:                      # "Former members: Kelvo Trust (left 2005), ..."
        listed = _FORMER_LIST.search(c)
        if listed and own.search(c, listed.end()):
            return c
    return None


def ends_relationships(table: Table) -> bool:
    """False for a table with a column that can hold a relationship's end."""
    return bool(table.foreign_keys) and not any(_END_TOKEN.search(c)
                                                for c in table.column_names)


def ended_references(table: Table, rows: Sequence[Row], text: str) -> list[Row]:
    """``rows`` of ``table`` read from ``text``, each reference the text says has ended
    emptied with a correction quoting the clause (module docstring)."""
    if not ends_relationships(table):
        return list(rows)
    parts = clauses(text)
    keys = key_columns(table)
    out = []
    for row in rows:
        own = key_name(table, row.values)
        changes = []
        for fk in table.foreign_keys:
            col = fk.cols[0]
            ref = entity_name(row.values.get(col))
            if own is None or ref is None or len(fk.cols) != 1 or col in keys:
                continue
            quote = _ended(parts, own, ref)
            if quote is not None:
                changes.append(Correction(column=col, old=row.values[col], new=None,
                                          reason="ended", by="as-stated",
                                          evidence_quote=quote[:300]))
        if changes:
            values = {**row.values, **{c.column: None for c in changes}}
            prov = row.provenance.model_copy(update={
                "corrections": [*row.provenance.corrections, *changes]})
            row = row.model_copy(update={"values": values, "provenance": prov})
        out.append(row)
    return out


def ended_columns(row: Row) -> set[str]:
    """The columns of ``row`` emptied because the text said the relationship ended."""
    return {c.column for c in row.provenance.corrections if c.reason == "ended"}


__all__ = ["clauses", "ended_columns", "ended_references", "ends_relationships"]
