"""A relationship the text says has ended is not a current reference.

"Kelvo Trust was a company of the Drournlia Markets Commission from 1990 until it left in
2005" and a roster's "Former members: Kelvo Trust (left 2005)" both name the commission and the
company, and the measuring model wrote the commission into the company's ``commissionname``
from either: a former member then counts among "the companies of the commission"
(``docsage-measures-24-set2``). A schema that keys membership by a plain reference has no
place for its end, so such a cell is emptied (a correction quoting the clause,
``reason="ended"``), by code, when the chunk says so of this entity and this reference:

* a clause naming both the row's entity and the referenced one says the relationship ended
  ("until it left in 2005", "left the commission in 2005", "former member", "no longer a
  member", "ceased to be part", "gave up membership of", "departed the commission in 2003":
  the last two added from the held-out Set2 failure of 2026-11-29, to be judged on template
  family 5), and no clause naming both says a present one ("is",
  "joined", "since", "regulates"). The end must be theirs: not of another group ("a former
  member of parliament", "withdrew from the Kessel Forum"), not of something else ("until
  it withdrew the bid", "left the firm in 1990": the verb's object names neither the group
  nor a word for one), not of another entity named just before it ("Trondheim as a former
  member"), nor, when no subject is written before the cue, of another entity of the table
  named after this one with a word standing for it before the cue ("Kelvo Trust bought
  Brin Holdings, which left the commission in 2005", "... until it left": Brin Holdings';
  "Kelvo Trust bought Brin Holdings in 2001 and left ...": either may have, both are
  ended), or named only before it while this one comes after; nor of someone of an entity
  ("whose founder left", "its chief executive left", "the chief of Brin Holdings, who
  left"). After an aside between commas, the cue's subject is the name before the aside
  ("Kelvo Trust, owner of Brin Holdings, left": Kelvo Trust's); or
* the referenced entity is named in no clause with the row's entity but earlier in the text,
  and the row's entity is an item of a list after "former members" or "past members"
  ("Former members: Kelvo Trust (left 2005)"; "York" is no item of "Former members: New
  York").

A name inside a longer name read beside it is no mention of it ("York" in "New York"). The
referenced entity may be written as its acronym of three to six capitals ("left the DMC in
2005"; :func:`.end_clause.referring`).
What the text says of one of them alone ("the commission no longer publishes reports", "the
bank's founder left in 1990") ends nothing. A clause is a sentence or a part of one between
semicolons, a "but" or a "while" ("Oslo stayed in the league, while Trondheim left in 2005"
ends nothing of Oslo's). A table with a column that can hold the end (a ``left_year``,
``until``, ``status`` or ``former`` token in a column name) keeps its references: the model
can say it there. Once ended, a cell stays ended: CLEAR's committee does not vote it back,
alias merging does not fill it from another row, and completion does not search for it.

A link table's references are its key (``league_city(league_name, city_name)``, the
measuring model's Set3 schema: two columns, each a reference): they cannot be emptied, and
the row says nothing but the relationship. :func:`ended_links` takes such a row out when the
same rule holds for one reference and the other, and returns it apart with an ``ended``
correction on the reference (its value kept), so the run can show what it left out and why;
CLEAR then leaves out every row of the same link read from other chunks
(:func:`without_ended_links`). A table named after the group itself
(``drournliamarketscommission(name, employees)``, the measuring model's Set2 draft: a row
per member, no reference) is the same link with one end in its name: :func:`ended_members`
takes out the rows of a member the text says has left, where the group is written as the
table is named (the chunk's title included), and a list of former members only in a text
calling a list the group's members. A link of three entities, or a key with a part that
is not a reference (a product, a season), is left as read. Known limits: the rule reads
English only; a chunk holding two rosters ends a former member of the second in the first
as well; an end said with a pronoun in a sentence of its own ("It left in 2005.") is not
read, and one after a name inside a longer one read beside it is not told apart ("Kelvo
Trust bought Kelvo Trust Bank, which left ..."); a group written with another word first
("Former DMC member"), with "&", or keyed by an id is not found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quaderno.methods.docsage.clauses import clauses
from quaderno.methods.docsage.end_clause import (ends, naming, peers_pattern, referring,
                                                 without)
from quaderno.methods.docsage.group_names import (PROPER_NAME, compact, group_named,
                                                  roster_of)
from quaderno.methods.docsage.normalize import (NAME_JOINERS, body_name, entity_key, entity_name,
                                                key_columns, key_name)
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Schema, Table

# a clause that says a present relationship too is left alone
_CURRENT = re.compile(r"\b(?:joined|rejoined|became|remains|belongs|since|has been|"
                      r"regulat\w*|oversees|supervis\w*|governs|"
                      r"(?:is|are)(?!\s+(?:no longer|not)\b))\b", re.I)
_FORMER_LIST = re.compile(r"\b(?:former|past) members?\b", re.I)
# how a list names an item: after its colon, a comma, "and" or "include" ("Former members:
# Kelvo Trust (left 2005), ..."), never inside a longer name ("New York" is not "York")
_ITEM_BEFORE = r"(?:[:,;]|\b(?:and|include[sd]?|are|were|was))\s*"
_ITEM_AFTER = r"\s*(?=$|[(,;.]|\band\b)"
# column-name tokens for the end of a relationship ("left_year", "status", "member_until")
_END_TOKEN = re.compile(r"(?:^|_)(?:left|until|end|ended|exit|exited|former|status|active|"
                        r"current|to)(?:_|$)", re.I)


def _ended(parts: Sequence[str], entity: str, ref: str, names: Sequence[str] = (),
           peers: re.Pattern[str] | None = None, peers_of_ref: bool = False) -> str | None:
    """The clause saying the relationship of ``entity`` to ``ref`` ended, or None.
    ``names``: the entities read beside them; one that holds the name of either ("New
    York" for "York") is not a mention of it. ``peers``: the other members, of whom a
    clause may say the end (:func:`.end_clause.peers_pattern`): ``entity``'s, or with
    ``peers_of_ref`` (a link read from its group's side) ``ref``'s."""
    own, other = naming(entity), referring(ref, names)
    member = other if peers_of_ref else own
    skip = frozenset({entity.casefold(), ref.casefold()})
    longer = [n for n in names if len(n) > min(len(entity), len(ref))
              and n.lower() not in (entity.lower(), ref.lower())
              and (own.search(n) or other.search(n))]
    if longer:
        parts = [without(c, longer) for c in parts]
    # a name inside the other's is no mention of it ("Oslo" in "the Oslo League")
    both = [c for c in parts
            if own.search(without(c, [ref]) if own.search(ref) else c)
            and other.search(without(c, [entity]) if other.search(entity) else c)]
    if both:
        if all(ends(c, own, ref, peers, member, skip, (own, other))
               and not _CURRENT.search(c) for c in both):
            return both[0]
        return None
    # "Former members: Kelvo Trust (left 2005), ...", in a text that names ``ref`` before
    item = re.compile(_ITEM_BEFORE + re.escape(entity) + _ITEM_AFTER, re.I)
    for i, c in enumerate(parts):
        listed = _FORMER_LIST.search(c)
        if listed and item.search(c, listed.end()) and any(other.search(p) for p in parts[:i]):
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
    names = sorted({n for r in rows for n in (key_name(table, r.values),
                                              *(entity_name(r.values.get(fk.cols[0]))
                                                for fk in table.foreign_keys)) if n})
    peers = peers_pattern([n for r in rows if (n := key_name(table, r.values))])
    out = []
    for row in rows:
        own = key_name(table, row.values)
        changes = []
        for fk in table.foreign_keys:
            col = fk.cols[0]
            ref = entity_name(row.values.get(col))
            if own is None or ref is None or len(fk.cols) != 1 or col in keys:
                continue
            quote = _ended(parts, own, ref, names, peers)
            if quote is not None:
                changes.append(_end(col, row.values[col], quote))
        if changes:
            row = noted(row, changes, values={**row.values,
                                               **{c.column: None for c in changes}})
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
    if len(keys) != 2 or sorted(linked) != sorted(keys):
        return list(rows), []         # not a link of two entities
    parts = clauses(text)
    names = sorted({n for r in rows for k in keys if (n := entity_name(r.values.get(k)))})
    pairs = [(col, next(k for k in keys if k != col)) for col in linked]  # (reference, rest)
    sides = {k: [n for r in rows if (n := entity_name(r.values.get(k)))] for k in keys}
    peers = {k: peers_pattern(v) for k, v in sides.items()}
    # the members' side: the one with more names ("city_name" beside one "league_name"),
    # else the one with fewer names of bodies ("North League"), chosen once, so that both
    # readings of a row take their peers from it
    members = max(keys, key=lambda k: (len(set(sides[k])),
                                       -sum(bool(body_name(n)) for n in set(sides[k]))))
    kept, ended = [], []
    for row in rows:
        correction = None
        for col, rest in pairs:
            ref, own = entity_name(row.values.get(col)), entity_name(row.values.get(rest))
            by_ref = col == members
            quote = _ended(parts, own, ref, names, peers[col if by_ref else rest],
                           by_ref) if own and ref else None
            if quote is not None:
                correction = _end(col, row.values[col], quote)
                break
        if correction is None:
            kept.append(row)
        else:
            ended.append(noted(row, [correction]))
    return kept, ended


_JOINER = "|".join(sorted(NAME_JOINERS))


def ended_members(table: Table, rows: Sequence[Row], text: str) -> tuple[list[Row], list[Row]]:
    """(kept, ended): ``rows`` of ``table``, a table of a group's members (named after the
    group :func:`group_named` finds in ``text``), with apart those whose entity the text
    says has left the group, by the rule a reference's end follows (module docstring:
    "Former members: Vykaexfun Holdings (left 1992)"; "Kelvo Trust was a member of the
    Drournlia Markets Commission until it left in 2005"); each ended row carries an
    ``ended`` correction on its key, its values unchanged. A table with a column that can
    hold the end keeps its rows, and the group's own row is never set apart."""
    if any(_END_TOKEN.search(c) for c in table.column_names):
        return list(rows), []
    group = group_named(table, text)
    if group is None:
        return list(rows), []
    parts = clauses(text)
    # a list of former members ends membership of this group only in a text that calls
    # a list the group's members ("Members of the Drournlia Markets Commission include",
    # "Stedrurial Medal — members, part 1"), not one that lists the group among others'
    if not roster_of(group).search(text):
        parts = [c for c in parts if not _FORMER_LIST.search(c)]
    # a name written around the group's, with no "of" or "the" between
    # ("Drournlia Markets Commission Tower"), is no mention of it
    mention = naming(group)
    longer = {n for m in PROPER_NAME.finditer(text)
              for n in re.split(rf"^The\s+|\s+(?:(?:{_JOINER})\s+)+", m[0])
              if len(n) > len(group) and mention.search(n)}
    members = {n for r in rows if (n := key_name(table, r.values))}
    names = sorted({*members, group, *longer})
    peers = peers_pattern(sorted(members))
    key = key_columns(table)[0]
    kept, ended = [], []
    for row in rows:
        own = key_name(table, row.values)
        quote = _ended(parts, own, group, names, peers) if own and \
            compact(own) != compact(group) else None
        if quote is None:
            kept.append(row)
        else:
            ended.append(noted(row, [_end(key, row.values.get(key), quote)]))
    return kept, ended


def without_ended_links(schema: Schema, rows: Sequence[Row],
                        ended: Sequence[Row]) -> tuple[list[Row], list[Row]]:
    """(kept, dropped): ``rows`` without the link rows another chunk says have ended, and
    without the rows of a member another chunk says has left (the same key as one of
    ``ended``, entity names compared normalized), each dropped row given
    that chunk's ``ended`` correction. Whichever chunk says a relationship ended, it stays
    ended, as an emptied reference does."""
    said: dict[tuple[str, tuple[str, ...]], Correction] = {}
    for r in ended:
        table = schema.table(r.table)
        if table is not None:
            said.setdefault((r.table, entity_key(table, r.values)),
                            ended_by(r).model_copy(update={"evidence_chunk":
                                                           r.provenance.chunk_id}))
    kept, dropped = [], []
    for r in rows:
        table = schema.table(r.table)
        hit = said.get((r.table, entity_key(table, r.values))) if table and said else None
        if hit is None:
            kept.append(r)
        else:
            dropped.append(noted(r, [hit]))
    return kept, dropped


def _end(column: str, old: object, quote: str) -> Correction:
    """The correction recording that the text ends ``column``'s relationship."""
    return Correction(column=column, old=old, new=None, reason="ended", by="as-stated",
                      evidence_quote=quote[:300])


def ended_by(row: Row) -> Correction:
    """The ``ended`` correction of an ended link row (the last, if several)."""
    return next(c for c in reversed(row.provenance.corrections) if c.reason == "ended")


def ended_columns(row: Row) -> set[str]:
    """The columns of ``row`` emptied because the text said the relationship ended."""
    return {c.column for c in row.provenance.corrections if c.reason == "ended"}


__all__ = ["ended_by", "ended_columns", "ended_links", "ended_members", "ended_references",
           "ends_relationships", "naming", "referring", "without_ended_links"]
