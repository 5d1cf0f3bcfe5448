"""A member's row keyed by its group's own name is the row of the chunk's subject.

The measuring model drafts Set2's Relationship schema as one table named after the
commission, ``drournliamarketscommission(company_name, employees, chief_executive)``, a row
per member. Reading a member's own page ("Roustoustus Systems (Roustoustus) is a company of
the Drournlia Markets Commission. ... Tallies of employees put the company at 51090. ...
whose chief executive is Distaend Rinbaernvaer") it wrote the commission's name as the
company's, in five documents of 57 (``members-docsage-set2``). CLEAR then took the five rows
for one entity and kept one of their values; without CLEAR one of them was the answer, by
chance.

A group is no member of itself. In a table named after a group (:func:`.group_names.group_named`),
the one row of a chunk whose entity column (the table's one TEXT key column) names the group
is the row of the entity the chunk's title names (its head, before " — ", ":" or "(", or a
capitalized run in it), when a clause of the text says that entity, written as in the
title, belongs to the group:

* "<entity> is (was, has been, became, remains; no longer) a <kind> of the group" ("is a
  company of", "became a member of"), "<entity> is part of the group", "<entity> joined
  (entered, belongs to, registered with, was welcomed into) the group", "the group admitted
  <entity>", "membership of <entity> in the group", the entity perhaps followed by a
  parenthesis or an apposition between commas, the group by the clause's end or a small
  word ("since 2009"), never by a noun ("the DMC board");
* in no clause that denies ("not", "never", "nor", "neither": "... of the Sopael Markets
  Commission, not of the Drournlia Markets Commission").

The cell then takes the title's name, with a correction (``reason="group-name"``, the clause
quoted). The row is left as read when the title names the group itself (a roster page), when
no other entity of the title is so written or two are, when the chunk keys several rows by
the group, when the row gives the title's entity in another column (a chief executive's
page names the company's chief executive, not the company), and when one of its values is
written only in clauses naming the group or another entity and not the title's ("The DMC,
founded in 1950, is headquartered in Ulm": a table about the group, whose own row it is).
A member that left ("no longer a member") is renamed too, and then set apart by
:func:`.ended.ended_members`. Applied on every read, before :mod:`.ended` (so stored tuples
need no new key), and to every committee ballot (so the votes find the renamed row). Known
limits: English only; a chunk without a title is not repaired; a group written in a row by
its acronym ("DMC") is not recognized.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from quaderno.methods.docsage.amounts import stated_mentions
from quaderno.methods.docsage.clauses import clauses
from quaderno.methods.docsage.end_clause import naming
from quaderno.methods.docsage.group_names import PROPER_NAME, compact, group_forms, group_named
from quaderno.methods.docsage.normalize import entity_name, is_null, key_columns
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Table

_DENIED = re.compile(r"\b(?:not|never|nor|neither)\b", re.I)
_HEAD = re.compile(r"\s+[\u2014\u2013-]\s+|\s*[:(|]\s*")
# a parenthesis or an apposition after the entity ("Gouqin Energy (Gouqin) is",
# "Rastou, founded in 1943, is")
_AFTER_NAME = r"(?:\s*\([^()]{0,60}\))?(?:\s*,[^,.;]{1,60},)?\s+"
_BE = (r"(?:is|was|has\s+been|had\s+been|became|becomes|remains|remained)\s+"
       r"(?:(?:no\s+longer|still|also|now|once)\s+)?")
# what may follow the group in a clause saying membership: its end, or a small word
_GROUP_END = (r"(?=\s*(?:$|[.,;:)(\u2014\u2013-])|\s+(?:in|since|from|until|till|and|as|for|on|"
              r"at|by|with|after|before|when|while|which|that|but|of|to)\b)")


def membership(name: str, group: str) -> re.Pattern[str]:
    """Where a clause says ``name`` belongs to ``group`` (module docstring)."""
    n = rf"(?<!\w)(?-i:{re.escape(name)})(?!\w)"
    g = rf"(?:the\s+)?{re.escape(group)}(?!\w)"
    return re.compile(
        rf"{n}{_AFTER_NAME}{_BE}(?:an?|one)\s+(?:[\w-]+\s+){{1,2}}?(?:of|in)\s+{g}{_GROUP_END}"
        rf"|{n}{_AFTER_NAME}{_BE}part\s+of\s+{g}{_GROUP_END}"
        rf"|{n}{_AFTER_NAME}(?:joined|rejoined|entered|belongs\s+to|belonged\s+to|"
        rf"registered\s+(?:with|in)|was\s+(?:welcomed|admitted)\s+(?:into|to))\s+{g}{_GROUP_END}"
        rf"|{g}\s+admitted\s+{n}|\bmembership\s+of\s+{n}\s+in\s+{g}", re.I)


def _is_group(name: str | None, forms: set[str]) -> bool:
    """``name`` is the group's, an article aside ("the Drournlia Markets Commission")."""
    return bool(name) and compact(re.sub(r"^the\s+", "", name, flags=re.I)) in forms


def entity_column(table: Table) -> str | None:
    """The column naming a row's entity: the table's one TEXT key column, else None (a
    key of two names is a link; an id alone names nothing)."""
    names = [k for k in key_columns(table) if table.column(k).type == "TEXT"]
    return names[0] if len(names) == 1 else None


def title_head(title: str) -> str:
    """What a chunk's title names first: the part before " — ", ":", "(" or "|"
    ("Drergrex-2 trial" of "Drergrex-2 trial — news")."""
    return _HEAD.split(title.strip(), maxsplit=1)[0]


def chunk_subject(group: str, title: str, text: str) -> tuple[str, str] | None:
    """(name, clause): the one entity ``title`` names, other than ``group``, that a clause
    of ``text`` says belongs to ``group`` (module docstring), with no denial; None when
    there is none or more than one (a name inside a longer one found beside it, "Rastou" in
    "Rastou Bank", is the same one)."""
    group_at = naming(group)
    parts = [c for c in clauses(text) if group_at.search(c) and not _DENIED.search(c)]
    found: dict[str, str] = {}
    # the title's head, whole ("Drergrex-2 trial" of "Drergrex-2 trial — news"), and the
    # names in it
    head = title_head(title)
    for candidate in [head, *(m[0] for m in PROPER_NAME.finditer(head))]:
        name = re.sub(r"^The\s+", "", candidate).strip()
        if not name or group_at.search(name) or compact(name) in compact(group):
            continue
        says = membership(name, group)
        said = next((c for c in parts if says.search(c)), None)
        if said is not None:
            found.setdefault(name, said)
    names = [n for n in found if not any(len(o) > len(n) and naming(n).search(o)
                                         for o in found)]
    return (names[0], found[names[0]]) if len(names) == 1 else None


def _written(clause: str, value: Any, col_type: str, table: Table, column: str) -> bool:
    """``clause`` writes the cell ``value``."""
    if col_type == "TEXT":
        return isinstance(value, str) and bool(naming(value.strip()).search(clause))
    return bool(stated_mentions(clause, value, table.column(column)))


def _others_values(table: Table, row: Row, column: str, name: str, group: str,
                   text: str) -> bool:
    """Whether a value of ``row`` is written only in clauses naming ``group`` or another
    entity of two words or more, and never ``name`` (module docstring)."""
    values = {c: v for c, v in row.values.items() if c != column and not is_null(v)
              and table.column(c) is not None}
    own = {compact(str(v)) for v in values.values() if isinstance(v, str)}
    subject, group_at, group_form = naming(name), naming(group), compact(group)
    parts = clauses(text)

    def others(clause: str) -> bool:
        if group_at.search(clause):
            return True
        return any(len(m[0].split()) > 1 and compact(m[0]) not in own
                   and not subject.search(m[0]) and compact(m[0]) not in group_form
                   for m in PROPER_NAME.finditer(clause))
    for c, v in values.items():
        stating = [p for p in parts if _written(p, v, table.column(c).type, table, c)]
        if stating and all(others(p) and not subject.search(p) for p in stating):
            return True
    return False


def named_for_subject(table: Table, rows: Sequence[Row], title: str, text: str) -> list[Row]:
    """``rows`` of ``table`` with the one row keyed by the group the table is named after
    renamed to the chunk's subject (:func:`chunk_subject`), with a ``group-name``
    correction quoting the clause; every other row as it is, in order."""
    column = entity_column(table)
    if column is None or not title or not rows:
        return list(rows)
    forms = group_forms(table)
    keyed = [i for i, r in enumerate(rows) if _is_group(entity_name(r.values.get(column)),
                                                        forms)]
    if len(keyed) != 1:
        return list(rows)
    group = group_named(table, f"{title}\n{text}")
    subject = chunk_subject(group, title, text) if group else None
    if subject is None:
        return list(rows)
    name, clause = subject
    row = rows[keyed[0]]
    others = {compact(str(v)) for c, v in row.values.items() if c != column and entity_name(v)}
    if compact(name) in others or _others_values(table, row, column, name, group, text):
        return list(rows)
    fix = Correction(column=column, old=row.values.get(column), new=name, reason="group-name",
                     by="as-stated", evidence_quote=clause[:300])
    out = list(rows)
    out[keyed[0]] = noted(row, [fix], {**row.values, column: name})
    return out


__all__ = ["chunk_subject", "entity_column", "membership", "named_for_subject",
           "title_head"]
