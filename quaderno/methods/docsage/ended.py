"""A relationship the text says has ended is not a current reference.

"Kelvo Trust was a company of the Drournlia Markets Commission from 1990 until it left in
2005" and a roster's "Former members: Kelvo Trust (left 2005)" both name the commission and the
company together, and the measuring model wrote the commission into the company's
``commissionname`` from either: a former member then counts among "the companies of the
commission" (``docsage-measures-24-set2``). A schema that keys membership by a plain reference
has no place for its end, so such a cell is emptied (a correction quoting the clause,
``reason="ended"``), by code, when the chunk says so:

* every clause of the chunk naming the referenced entity says the relationship ended
  ("until it left", "left in 2005", "former member", "no longer", "ceased to be"), or
* every clause naming the row's own entity does (the roster's "Former members: ..." names
  the company and not the commission).

A clause is a sentence or a part of one between semicolons or a "but", so "it left the
League of X in 1990; it joined the League of Y" keeps Y, and a clause saying a present
relationship too ("formerly a member of X, it joined Y") ends nothing. A table with a
column that can hold the end (``left_year``, ``until``, ``status``, ``former``) keeps its
references: the model can say it there. "Formerly known as" is a name, not an end. A link
table's reference is part of its key and is kept (not handled yet).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.normalize import is_null, key_columns
from quaderno.methods.docsage.rows import Correction, Row
from quaderno.methods.docsage.schema import Table

_ENDED = re.compile(
    r"\bformer(?:ly)?\s+(?:an?\s+)?(?:members?|parts?|affiliates?|participants?|"
    r"constituents?|signator(?:y|ies))\b"
    r"|\buntil\b[^.;]*\b(?:left|withdrew|exited|resigned|was expelled)\b"
    r"|\bleft(?:\s+in)?\s+\d{4}\b"
    r"|\b(?:no longer|ceased to be|withdrew from|was expelled from)\b", re.I)
# a clause that says both an end and a present relationship is left alone
_CURRENT = re.compile(r"\b(?:joined|rejoined|became|is|are|remains|belongs)\b", re.I)
_CLAUSE = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|\s+but\s+", re.I)
_END_COLUMN = re.compile(r"left|until|end|exit|former|status|active|current|member_to",
                         re.I)


def clauses(text: str) -> list[str]:
    """The sentences of ``text``, split again at semicolons and "but"."""
    return [c.strip() for c in _CLAUSE.split(text) if c and c.strip()]


def _named(parts: Sequence[str], name: str) -> list[str]:
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.I)
    return [c for c in parts if pattern.search(c)]


def _ended(parts: Sequence[str], name: str) -> str | None:
    """The first clause naming ``name`` when every such clause says an end and none says a
    present one too ("formerly a member of X, it joined Y"); else None."""
    named = _named(parts, name)
    if named and all(_ENDED.search(c) and not _CURRENT.search(c) for c in named):
        return named[0]
    return None


def ended_references(table: Table, rows: Sequence[Row], text: str) -> list[Row]:
    """``rows`` of ``table`` read from ``text``, each reference the text says has ended
    emptied with a correction quoting the clause (module docstring)."""
    if not table.foreign_keys or any(_END_COLUMN.search(c) for c in table.column_names):
        return list(rows)
    parts = clauses(text)
    keys = key_columns(table)
    out = []
    for row in rows:
        own = [str(row.values[k]) for k in keys if not is_null(row.values.get(k))]
        changes = []
        for fk in table.foreign_keys:
            col = fk.cols[0]
            ref = row.values.get(col)
            if len(fk.cols) != 1 or col in keys or is_null(ref) or \
                    not any(ch.isalpha() for ch in str(ref)):
                continue
            quote = _ended(parts, str(ref))
            if quote is None and own and any(ch.isalpha() for ch in own[0]):
                quote = _ended(parts, own[0])
            if quote is not None:
                changes.append(Correction(column=col, old=ref, new=None, reason="ended",
                                          by="as-stated", evidence_quote=quote[:300]))
        if changes:
            values = {**row.values, **{c.column: None for c in changes}}
            prov = row.provenance.model_copy(update={
                "corrections": [*row.provenance.corrections, *changes]})
            row = row.model_copy(update={"values": values, "provenance": prov})
        out.append(row)
    return out


__all__ = ["clauses", "ended_references"]
