"""A referenced entity's name written into another column, emptied (an extraction repair).

With ``companies.commission_name`` referring to ``commissions``, the 1.5B measuring model
still wrote the commission into the company's ``sector`` ("Drournlia Markets Commission")
and into its ``chief_executive``, and ``sector = 'energy'`` then missed those companies
(``docsage-references-set2``). A row's TEXT cell that names an entity of a table one of its
foreign keys refers to (another table, not its own, that holds names and nothing else, as
``commissions(commission_name)`` does) is misplaced when the column is not that reference:
the entity the reference names, one the same chunk gives a row of in the referenced table
(or either written as an acronym of three capitals or more, "DMC" or "D.M.C.": the initials
of exactly one of those names; emptied, and not moved into the reference), or, for a row
whose reference is empty, a proper name whose last word is that table's kind of body
("Sopael Markets Commission" for ``commissions``: the commission of a namesake, which no
chunk gives a row; not "Mexico City" for ``cities``). The cell is emptied with a correction
(``reason="misplaced"``); when the reference itself is empty, and no text said it has ended
(:mod:`.ended`), it takes the name. An acronym in a column named for a short form
(``ticker``, ``shortname``) or that is the row's own (its initials, a word of its name, its
key) stays, even where a referenced entity is keyed by it. Key columns and references are
left as they are, and so is a table that refers to itself (a company's parent company is a
company) or to a table with more to say than names (a match's winner rightly names one of
its teams). Applied on every read after :mod:`.ended`, so stored tuples need no new key;
CLEAR applies it again before the merge with the names every chunk gives the referenced
entities, and after its committee (:func:`misplaced_rows`), whose votes re-read the chunk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from quaderno.methods.docsage.ended import ended_columns
from quaderno.methods.docsage.normalize import (BODY_KINDS, BODY_WORDS, COMMON_ACRONYMS,
                                                KIND_WORDS, acronym_hits, fold_text, is_null,
                                                key_columns, key_name, normalize_entity)
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.rekey import named_after, singular
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Schema


def back_links(schema: Schema, name: str, holder: str) -> list[str]:
    """The columns of table ``name`` that name ``holder``'s entity by its key without a
    declared foreign key (``commissions.company_name`` beside the reference
    ``companies.commission_name``): the link the other way round, which ASK leaves
    undeclared (two tables would point at each other, :func:`.joins.named_references`). A
    column that is ``name``'s whole key is no such link."""
    table, other = schema.table(name), schema.table(holder)
    if table is None or other is None or table is other:
        return []
    keys = key_columns(other)
    if len(keys) != 1:
        return []
    declared = {c for fk in table.foreign_keys for c in fk.cols}
    return [c.name for c in table.columns if c.name not in declared
            and [c.name] != key_columns(table) and named_after(c.name, other.name, keys[0])]


def all_back_links(schema: Schema, name: str) -> list[tuple[str, str]]:
    """(column, holder) for each :func:`back_links` column of table ``name``, for every
    table ``holder`` that refers to it."""
    return [(c, holder.name) for holder in schema.tables
            if any(fk.ref_table == name for fk in holder.foreign_keys)
            for c in back_links(schema, name, holder.name)]


def _names_only(schema: Schema, name: str, links: Sequence[str] = ()) -> bool:
    """``name`` is a table of names and nothing else (``commissions(commission_name)``, as
    :mod:`.containers` makes it, or with its members' names beside: ``links``, the
    :func:`back_links` to the table referring to it): what refers to it only says which
    one. A table with more to say (a team's city, a person's birth year) holds entities
    another column may name rightly (a match's winner, a company's founder)."""
    table = schema.table(name)
    return table is not None and \
        set(table.column_names) <= set(key_columns(table)) | set(links)


class _Ref(NamedTuple):
    """A single-column TEXT reference to a table of names: its column, the table, and the
    table's columns naming the referring table's entities back."""

    column: str
    table: str
    links: tuple[str, ...]


def name_references(schema: Schema) -> dict[str, list[_Ref]]:
    """Per table, its references to tables of names and nothing else (read once per
    schema: :func:`misplaced` and :func:`known_names` ask per row)."""
    out: dict[str, list[_Ref]] = {}
    for t in schema.tables:
        for fk in t.foreign_keys:
            if len(fk.cols) != 1 or fk.ref_table == t.name or \
                    t.column(fk.cols[0]).type != "TEXT":
                continue
            links = tuple(back_links(schema, fk.ref_table, t.name))
            if _names_only(schema, fk.ref_table, links):
                out.setdefault(t.name, []).append(_Ref(fk.cols[0], fk.ref_table, links))
    return out


def table_kind(table: str) -> str:
    """The kind of entity ``table`` holds, its last word singular (``commission`` of
    ``commissions``, of ``market_commissions``)."""
    return singular(slug(table).split("_")[-1])


def of_kind(value: str, table: str) -> bool:
    """``value`` is a proper name whose last word is the kind of body ``table`` holds
    (:data:`BODY_KINDS`: "Sopael Markets Commission" of ``commissions``): a name of that
    table's kind, though no chunk gives it a row (a commission a namesake belongs to)."""
    words, kind = value.split(), table_kind(table)
    return kind in BODY_KINDS and len(words) >= 2 and \
        all(w[:1].isupper() for w in words if len(w) > 3) and \
        singular(fold_text(words[-1])) == kind


def _linked(row: Row, links: Sequence[str]) -> set[str]:
    """The referring entities a row of a names table names back (normalized)."""
    return {normalize_entity(v) for c in links if isinstance(v := row.values.get(c), str)}


# a column meant to hold an abbreviation: an acronym there is its own value. A column's
# name is read by its words ("short_name", "tickers") and by a word joining a short form
# to a name for one ("shortname", "tickersymbol"); not "shortlisted_by" or "codeveloper"
_SHORT_FORMS = frozenset({"acronym", "abbreviation", "abbrev", "abbr", "short", "ticker",
                          "symbol", "code", "initials"})
_SHORT_TAILS = ("name", "form", "symbol", "code")
# one word of capitals ("DMC", "DMC.", "ÖBB") or capitals with dots ("D.M.C.", "D. M. C.")
_ACRONYM_WORD = re.compile(r"[^\W\d_]{2,}\.?|(?:[^\W\d_]\. ?)+[^\W\d_]\.?")


def _acronym_word(value: str) -> str | None:
    """``value`` as an acronym's letters ("D.M.C." -> "DMC"), or None when it is not one."""
    word = value.strip()
    if not _ACRONYM_WORD.fullmatch(word):
        return None
    letters = word.replace(".", "").replace(" ", "")
    return letters if letters.isupper() else None


def _short_form_column(column: str) -> bool:
    return any(singular(t) in _SHORT_FORMS or
               any(t.startswith(s) and t[len(s):] in _SHORT_TAILS for s in _SHORT_FORMS)
               for t in slug(column).split("_"))


def _kept_acronym(value: str, own: str, column: str) -> bool:
    """``value`` is an acronym that stays where it is, whatever names it matches: in a
    column meant for a short form (:data:`_SHORT_FORMS`), or the row's own short form:
    its initials ("Delta Marine Carriers" is DMC too), a word of its name ("DMC
    Holdings"), or its whole name (a row keyed "DMC"). ``own``: the row's name,
    normalized."""
    word = _acronym_word(value)
    if word is None:
        return False
    if _short_form_column(column):
        return True
    short = normalize_entity(word)
    return bool(own) and (short in own.split() or bool(acronym_hits(short, {own})))


def _acronym_of(value: str, names: set[str], own: str, column: str) -> bool:
    """``value`` is written as an acronym, one word of three capitals or more ("DMC",
    "D.M.C."), of exactly one of ``names`` (normalized), and is not an acronym kept where
    it is (:func:`_kept_acronym`): the alias rule :func:`.aliases.alias_map` applies to
    keys, for a free cell only as capitals ("tech" is no acronym) and not as a two-letter
    code (a sector "AI", a country "IT" or "EU"), nor a common one (a country "USA", a
    currency "USD": :data:`.normalize.COMMON_ACRONYMS`)."""
    word = _acronym_word(value)
    if word is None or len(word) < 3 or _kept_acronym(value, own, column):
        return False
    short = normalize_entity(word)
    return short not in COMMON_ACRONYMS and len(acronym_hits(short, names)) == 1


def misplaced(schema: Schema, rows: Mapping[str, Sequence[Row]],
              known: Mapping[str, set[str]] | None = None,
              references: Mapping[str, list[_Ref]] | None = None) -> dict[str, list[Row]]:
    """One chunk's ``rows`` (table name -> rows) with every misplaced name emptied (module
    docstring); ``known``: per referenced table, normalized names other chunks give it;
    ``references``: :func:`name_references`, when read before. A row of a names table
    that names referring entities back (a roster's ``company_name``) gives its name only to
    the rows of those entities (Kriarngyrtia Energy's sector is not a team's captain's)."""
    references = name_references(schema) if references is None else references
    out = {name: list(rs) for name, rs in rows.items()}
    for name, table_rows in out.items():
        table = schema.table(name)
        refs = references.get(name, [])
        if table is None or not refs:
            continue
        fixed = set(key_columns(table)) | {r.column for r in refs}
        free = [c.name for c in table.columns if c.type == "TEXT" and c.name not in fixed]
        # the names the chunk's rows of each referenced table give, with whom they name back
        stated = {ref.table: [(normalize_entity(n), _linked(r, ref.links))
                              for r in out.get(ref.table, [])
                              if (n := key_name(schema.table(ref.table), r.values))]
                  for ref in refs}
        for i, row in enumerate(table_rows):
            values, notes = dict(row.values), []
            ended = ended_columns(row)
            own = normalize_entity(key_name(table, values) or "")
            for col, ref, _ in refs:
                names = {n for n, back in stated[ref] if not back or own in back}
                if isinstance(values.get(col), str):
                    names.add(normalize_entity(values[col]))
                # names other chunks give: only for a row that names no entity of its own
                if is_null(values.get(col)):
                    names |= set((known or {}).get(ref, set()))
                names.discard("")
                for c in free:
                    value = values.get(c)
                    if not isinstance(value, str) or _kept_acronym(value, own, c):
                        continue
                    # a name of the reference's kind counts only for a row naming none
                    named = normalize_entity(value) in names or \
                        (is_null(values.get(col)) and of_kind(value, ref))
                    if not named and not _acronym_of(value, names, own, c):
                        continue
                    values[c] = None
                    notes.append(Correction(column=c, old=value, new=None, reason="misplaced",
                                            by="as-stated"))
                    # an acronym is not written into the reference: spelled so, it could
                    # become the entity's most frequent spelling at the alias merge (the
                    # review of 7592809), and the reference is searched for when empty
                    if named and values.get(col) is None and col not in ended:
                        values[col] = value
                        notes.append(Correction(column=col, old=None, new=value,
                                                reason="misplaced", by="as-stated"))
            if notes:
                table_rows[i] = noted(row, notes, values)
    return out


def known_names(schema: Schema, rows: Sequence[Row],
                references: Mapping[str, list[_Ref]] | None = None) -> dict[str, set[str]]:
    """Per table of names and nothing else, the normalized names ``rows`` give its entities:
    its own rows' keys (those naming no referring entity back), and what any single-column
    reference to it holds."""
    references = name_references(schema) if references is None else references
    named = {ref.table: ref.links for refs in references.values() for ref in refs}
    out: dict[str, set[str]] = {}
    for r in rows:
        table = schema.table(r.table)
        if table is None:
            continue
        if r.table in named and not _linked(r, named[r.table]) and \
                (n := key_name(table, r.values)):
            out.setdefault(table.name, set()).add(normalize_entity(n))
        for ref in references.get(r.table, []):
            v = r.values.get(ref.column)
            if isinstance(v, str) and ref.column not in ended_columns(r):
                out.setdefault(ref.table, set()).add(normalize_entity(v))
    # a name some row holds in another column beside a reference of its own to another
    # entity is that column's value there ("energy" as the sector of a company of the DMC)
    for r in rows:
        table = schema.table(r.table)
        if table is None:
            continue
        for ref in references.get(r.table, []):
            if ref.table not in out:
                continue
            own = normalize_entity(r.values.get(ref.column))
            if not own:
                continue
            for c in table.columns:
                v = r.values.get(c.name)
                if c.name not in (*key_columns(table), ref.column) and isinstance(v, str) \
                        and (n := normalize_entity(v)) != own:
                    out[ref.table].discard(n)
    for names in out.values():
        names.discard("")
    return out


def misplaced_rows(schema: Schema, rows: Sequence[Row]) -> list[Row]:
    """:func:`misplaced` over rows of many chunks, each chunk's rows together, in the order
    given, with the names every chunk gives the referenced entities (:func:`known_names`:
    Bryskound Holdings' chunk wrote the commission into ``sector`` and named no commission
    of its own, ``docsage-rosters-set2``): CLEAR applies it before the merge, and again
    after its committee, whose votes re-read the chunk and can put the name back."""
    references = name_references(schema)
    known = known_names(schema, rows, references)
    by_chunk: dict[str, dict[str, list[int]]] = {}
    for i, r in enumerate(rows):
        by_chunk.setdefault(r.provenance.chunk_id, {}).setdefault(r.table, []).append(i)
    out = list(rows)
    for places in by_chunk.values():
        fixed = misplaced(schema, {t: [rows[i] for i in idx] for t, idx in places.items()},
                          known, references)
        for t, idx in places.items():
            for i, r in zip(idx, fixed[t]):
                out[i] = r
    return out


def other_kind_rows(schema: Schema, rows: Sequence[Row]) -> tuple[list[Row], list[Row]]:
    """``rows`` without those that name, as their own key, a body their table refers to,
    or a body as a person (:func:`_bodies_as_people`), and the rows left out.
    The measuring model gave "Drournlia Markets Commission" a row of ``companies`` beside
    the rows naming it in ``commission_name``; completion then searched for its sector and
    offices. A proper name whose last word is the kind of body a reference of the row's
    table holds (:func:`of_kind`) is no entity of a table of another kind, when it is that
    body: a name the rows give the referenced table (:func:`known_names`: other companies'
    ``commission_name``), or the row's own reference. A single-column key only; a table of
    that kind (a league's parent league) keeps its rows, and so does a member named like a
    body that no row names as one ("Kraxryndia Swimming Federation" of the "World Aquatics
    Federation")."""
    references = name_references(schema)
    known = known_names(schema, rows, references)
    people = _bodies_as_people(schema, rows)
    kept: list[Row] = []
    out: list[Row] = []
    for i, r in enumerate(rows):
        table = schema.table(r.table)
        keys = key_columns(table) if table is not None else []
        name = r.values.get(keys[0]) if len(keys) == 1 else None
        own = normalize_entity(name) if isinstance(name, str) else ""
        if own and (any(
                of_kind(name, ref.table) and table_kind(r.table) != table_kind(ref.table)
                and (own in known.get(ref.table, set())
                     or normalize_entity(r.values.get(ref.column)) == own)
                for ref in references.get(r.table, []))
                or i in people):
            out.append(r)
        else:
            kept.append(r)
    return kept, out


# the kinds of entity a table of people holds, as a word of its name or its key's
# (``laureates``, ``members.laureate_name``): never named like a body
PERSON_KINDS = frozenset("person people laureate player author winner recipient athlete "
                         "scientist researcher artist student employee executive actor writer "
                         "politician nominee honoree".split())
# the last word of a body's name ("Vhithfun Institute", "Stedrurial Medal"), never a person's
_BODY_ENDS = KIND_WORDS | BODY_WORDS | BODY_KINDS | frozenset(
    "institution laboratory corporation medal prize award trust fund ministry".split())


def _kind_words(name: str) -> set[str]:
    """The words of a table's or column's name that can say a kind of entity."""
    return {singular(w) for w in slug(name).split("_") if w and w not in ("name", "id")}


def _held(schema: Schema, rows: Sequence[Row]) -> dict[str, set[str | None]]:
    """Per normalized name, the tables that the TEXT columns holding it in ``rows`` refer
    to: a key its own table (``home_insts.inst_name``), a reference the table it refers
    to, another column None."""
    out: dict[str, set[str | None]] = {}
    for r in rows:
        table = schema.table(r.table)
        if table is None:
            continue
        refers = {c: table.name for c in key_columns(table)} | {
            c: fk.ref_table for fk in table.foreign_keys for c in fk.cols}
        for c in table.columns:
            v = r.values.get(c.name)
            if c.type == "TEXT" and isinstance(v, str) and (n := normalize_entity(v)):
                out.setdefault(n, set()).add(refers.get(c.name))
    return out


def _bodies_as_people(schema: Schema, rows: Sequence[Row]) -> set[int]:
    """The indices of ``rows`` that give a body a row of a table of people: the row's
    single key is a proper name whose last word names a body ("Vhithfun Institute"), in a
    table of people (:data:`PERSON_KINDS`: ``laureates``, ``members.laureate_name``), held
    by a column that is no key of that table nor refers to it (``home_institution``, the
    key of ``home_insts``), and no row of a table of people keyed by that name states
    anything but the name, its references or the name again (grid4-docsage-set1: three
    institutions as laureates, which a count of laureates would count)."""
    held = _held(schema, rows)
    candidates: dict[str, list[int]] = {}
    stating: set[str] = set()
    for i, r in enumerate(rows):
        table = schema.table(r.table)
        keys = key_columns(table) if table is not None else []
        name = r.values.get(keys[0]) if len(keys) == 1 else None
        if not isinstance(name, str) or not PERSON_KINDS & (
                _kind_words(table.name) | _kind_words(keys[0])):
            continue
        own = normalize_entity(name)
        refs = {c for fk in table.foreign_keys for c in fk.cols}
        if any(not is_null(v) and c not in refs and c not in keys and
               normalize_entity(v) != own for c, v in r.values.items()):
            stating.add(own)
        words = name.split()
        if len(words) >= 2 and all(w[:1].isupper() for w in words if len(w) > 3) and \
                singular(fold_text(words[-1])) in _BODY_ENDS and \
                any(ref != table.name for ref in held.get(own, ())):
            candidates.setdefault(own, []).append(i)
    return {i for own, idx in candidates.items() if own not in stating for i in idx}


__all__ = ["all_back_links", "back_links", "known_names", "misplaced", "misplaced_rows",
           "name_references", "of_kind", "other_kind_rows", "table_kind"]
