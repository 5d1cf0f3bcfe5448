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
can say it there. Once ended, a cell stays ended: CLEAR's committee does not vote it back,
alias merging does not fill it from another row, and completion does not search for it.

A link table's reference is part of its key (``league_city(league_name, city_name)``, the
measuring model's Set3 schema): it cannot be emptied, and the row says nothing but the
relationship. :func:`ended_links` takes such a row out when the same rule holds for the
reference and the rest of the key, and returns it apart with an ``ended`` correction on the
reference (its value kept), so the run can show what it left out and why; CLEAR then leaves
out every row of the same link read from other chunks (:func:`without_ended_links`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.normalize import (entity_key, entity_name, is_null, key_columns,
                                                key_name)
from quaderno.methods.docsage.rows import Correction, Row
from quaderno.methods.docsage.schema import Schema, Table

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


def ended_links(table: Table, rows: Sequence[Row], text: str) -> tuple[list[Row], list[Row]]:
    """(kept, ended): ``rows`` of ``table`` read from ``text``, with apart those whose key
    holds a reference the text says has ended (module docstring); each ended row carries
    an ``ended`` correction quoting the clause, its values unchanged."""
    if not ends_relationships(table):
        return list(rows), []
    keys = key_columns(table)
    linked = [fk.cols[0] for fk in table.foreign_keys if len(fk.cols) == 1
              and fk.cols[0] in keys]
    if not linked:
        return list(rows), []
    parts = clauses(text)
    kept, ended = [], []
    for row in rows:
        correction = None
        for col in linked:
            ref = entity_name(row.values.get(col))
            own = entity_name(" ".join(str(row.values[k]).strip() for k in keys
                                       if k != col and not is_null(row.values.get(k))))
            quote = _ended(parts, own, ref) if own and ref else None
            if quote is not None:
                correction = Correction(column=col, old=row.values[col], new=None,
                                        reason="ended", by="as-stated",
                                        evidence_quote=quote[:300])
                break
        if correction is None:
            kept.append(row)
            continue
        prov = row.provenance.model_copy(update={
            "corrections": [*row.provenance.corrections, correction]})
        ended.append(row.model_copy(update={"provenance": prov}))
    return kept, ended


def without_ended_links(schema: Schema, rows: Sequence[Row],
                        ended: Sequence[Row]) -> tuple[list[Row], list[Row]]:
    """(kept, dropped): ``rows`` without the link rows another chunk says have ended (the
    same key as one of ``ended``, entity names compared normalized), each dropped row given
    that chunk's ``ended`` correction. Whichever chunk says a relationship ended, it stays
    ended, as an emptied reference does."""
    said: dict[tuple[str, tuple[str, ...]], Correction] = {}
    for r in ended:
        table = schema.table(r.table)
        if table is not None:
            said.setdefault((r.table, entity_key(table, r.values)), r.provenance.corrections[-1]
                            .model_copy(update={"evidence_chunk": r.provenance.chunk_id}))
    kept, dropped = [], []
    for r in rows:
        table = schema.table(r.table)
        hit = said.get((r.table, entity_key(table, r.values))) if table and said else None
        if hit is None:
            kept.append(r)
            continue
        prov = r.provenance.model_copy(update={"corrections": [*r.provenance.corrections,
                                                               hit]})
        dropped.append(r.model_copy(update={"provenance": prov}))
    return kept, dropped


def ended_columns(row: Row) -> set[str]:
    """The columns of ``row`` emptied because the text said the relationship ended."""
    return {c.column for c in row.provenance.corrections if c.reason == "ended"}


__all__ = ["clauses", "ended_columns", "ended_links", "ended_references", "ends_relationships",
           "without_ended_links"]
