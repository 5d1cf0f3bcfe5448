"""A member's row keyed by its group's own name is the row of the chunk's subject.

The measuring model drafts Set2's Relationship schema as one table named after the
commission, ``drournliamarketscommission(company_name, employees, chief_executive)``, a row
per member. Reading a member's own page ("Roustoustus Systems (Roustoustus) is a company of
the Drournlia Markets Commission. ... Tallies of employees put the company at 51090. ...
whose chief executive is Distaend Rinbaernvaer") it wrote the commission's name as the
company's, in five documents of 57 (``members-docsage-set2``). CLEAR then took the five rows
for one entity and kept one of their values; without CLEAR one of them was the answer, by
chance.

A group is no member of itself. In a table named after a group (:func:`.ended.group_named`),
a row whose entity column (its one TEXT key column) names the group, read from a chunk whose
title names another entity that the text writes in one clause with the group ("Rastou has
been part of the Drournlia Markets Commission since 2009" under the title "Rastou — news"),
is that entity's row: the cell takes the title's name, with a correction
(``reason="group-name"``, the clause quoted). A clause that denies ("... of the Sopael
Markets Commission, not of the Drournlia Markets Commission") names no member. The row is
left as read when the title names the group itself (a roster page, or a table about the
group, whose own row it is), when no other entity of the title is so written, when two are,
or when the row gives the title's entity in another column (a chief executive's page names
the company's chief executive, not the company). A member that left is renamed too, and then
set apart by :func:`.ended.ended_members`. Applied on every read, before :mod:`.ended` (so
stored tuples need no new key), and to every committee ballot (so the votes find the renamed
row). Known limits: English only; a chunk without a title is not repaired; a group written
in a row by its acronym ("DMC") is not recognized.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.ended import (PROPER_NAME, clauses, compact, group_forms,
                                            group_named, naming)
from quaderno.methods.docsage.normalize import entity_name, key_columns
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Table

_DENIED = re.compile(r"\b(?:not|never|nor|no longer|neither)\b", re.I)
# a clause saying the entity belongs to the group: a word for membership ("became a member
# of", "has been part of", "joined", "The ... admitted", "belongs to", "was welcomed into"),
# or "is a <kind> of the group" ("is a company of the Drournlia Markets Commission"; not
# "is listed as a home institution in the records of", not "is a sponsor of trials in")
_MEMBERSHIP = re.compile(r"\b(?:members?(?:hip)?|part of|joined|rejoined|entered|admitted|"
                         r"registered (?:with|in)|belongs? to|welcomed into|affiliated with)\b",
                         re.I)
_HEAD = re.compile(r"\s+[\u2014\u2013-]\s+|\s*[:(|]\s*")


def _a_kind_of(group: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:is|was|are|were|has been|became|remains)\s+(?:an?|one)\s+"
                      rf"(?:[\w-]+\s+){{1,2}}?(?:of|in)\s+(?:the\s+)?{re.escape(group)}(?!\w)",
                      re.I)


def _is_group(name: str | None, forms: set[str]) -> bool:
    """``name`` is the group's, an article aside ("the Drournlia Markets Commission")."""
    return bool(name) and compact(re.sub(r"^the\s+", "", name, flags=re.I)) in forms


def entity_column(table: Table) -> str | None:
    """The column naming a row's entity: the table's one TEXT key column, else None (a
    key of two names is a link; an id alone names nothing)."""
    names = [k for k in key_columns(table) if table.column(k).type == "TEXT"]
    return names[0] if len(names) == 1 else None


def chunk_subject(group: str, title: str, text: str) -> tuple[str, str] | None:
    """(name, clause): the one entity ``title`` names, other than ``group``, that a clause
    of ``text`` writes (capitalized as in the title) as belonging to ``group``, with no
    denial; None when there is none or more than one (a name inside a longer one found
    beside it, "Rastou" in "Rastou Bank", is the same one)."""
    group_at, kind_of = naming(group), _a_kind_of(group)
    parts = [c for c in clauses(text) if group_at.search(c) and not _DENIED.search(c)
             and (_MEMBERSHIP.search(c) or kind_of.search(c))]
    found: dict[str, str] = {}
    # the title's head, whole ("Drergrex-2 trial" of "Drergrex-2 trial — news"), and the
    # names in it
    head = _HEAD.split(title.strip(), maxsplit=1)[0]
    for candidate in [head, *(m[0] for m in PROPER_NAME.finditer(head))]:
        name = re.sub(r"^The\s+", "", candidate).strip()
        if not name or group_at.search(name) or compact(name) in compact(group):
            continue
        own = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        # the group's own words are no mention of a name inside it ("Drournlia")
        said = next((c for c in parts if own.search(group_at.sub(" ", c))), None)
        if said is not None:
            found.setdefault(name, said)
    names = [n for n in found if not any(len(o) > len(n) and naming(n).search(o)
                                         for o in found)]
    return (names[0], found[names[0]]) if len(names) == 1 else None


def named_for_subject(table: Table, rows: Sequence[Row], title: str, text: str) -> list[Row]:
    """``rows`` of ``table`` with each row keyed by the group the table is named after
    renamed to the chunk's subject (:func:`chunk_subject`), with a ``group-name``
    correction quoting the clause; every other row as it is, in order."""
    column = entity_column(table)
    if column is None or not title or not rows:
        return list(rows)
    forms = group_forms(table)
    keyed = [_is_group(entity_name(r.values.get(column)), forms) for r in rows]
    if not any(keyed):
        return list(rows)
    group = group_named(table, f"{title}\n{text}")
    subject = chunk_subject(group, title, text) if group else None
    if subject is None:
        return list(rows)
    name, clause = subject
    out = []
    for row, by_group in zip(rows, keyed):
        others = {compact(str(v)) for c, v in row.values.items()
                  if c != column and entity_name(v)}
        if by_group and compact(name) not in others:
            fix = Correction(column=column, old=row.values.get(column), new=name,
                             reason="group-name", by="as-stated", evidence_quote=clause[:300])
            row = noted(row, [fix], {**row.values, column: name})
        out.append(row)
    return out


__all__ = ["chunk_subject", "entity_column", "named_for_subject"]
