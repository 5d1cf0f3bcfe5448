"""Completing what the question needs: one search per entity whose needed cells are empty.

A collection states an entity's facts in several documents ("Rastou Bank is regulated by the
Drournlia Markets Commission" in one, its revenue in another; the benchmark spreads them on
purpose). The extraction scope is the question's hits and each table's, cut at
``max_chunks``, and what it reads is the documents that look like the question: at 16
companies and 12 chunks the measuring model read the commission's members and few of their
revenues (``docsage-measures-set2``). After the scope is extracted, the cells the question
needs are checked per entity the rows name (:mod:`.needed_cells`: the schema's required
attributes, what the question measures, the references on its join path, the columns it
names). For each entity with such a cell empty, and each entity a row of a table on the
join path refers to that has no row of its own (a member city named only in the league's
roster), one search names the entity and what is missing ("Rastou Bank annual revenue", "Gilyx
population"; a text filter's column with the value asked, "Bryskound Holdings sector
energy", as the text writes it), deep enough to reach past the chunks already read, and its
first hit not read that names the entity (:func:`_names`) joins the scope, up to ``budget``
in the order of the entities' rows (the members of a group the question names first, and an
entity whose row shows it fails the question's filter last: a sector of "banking" when it
asks for "energy"), with at most twice ``budget`` searches a round. The method extracts them
and searches again, up to three rounds, for the cells still empty: Bryskound Holdings'
search for its sector found its offices (``docsage-values-set2``), and one hit per entity
and round reaches the next of its documents only when the first did not state what was
missing. An entity named by a number only (an id) is not searched for. Before those
searches, up to a quarter of the budget goes to the rosters of the groups the question names
(:func:`rosters`: "Drournlia Markets Commission members"), extracted first, so that a member
only a roster names has a row whose empty cells are then searched for. Each new chunk costs
one extraction call; the scope's own extraction is handed to CLEAR and not paid again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from quaderno.index.hits import Hit
from quaderno.methods.docsage.aliases import canonicalize, merge_entities
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.misplaced import name_references, other_kind_rows, table_kind
from quaderno.methods.docsage.needed_cells import (entity_references, missing_in_merged,
                                                   missing_words, needed_columns)
from quaderno.methods.docsage.normalize import (ACRONYM, BODY_KINDS, BODY_WORDS, COMMON_ACRONYMS,
                                                LEGAL_SUFFIXES,
                                                acronym_hits, body_name, entity_name,
                                                fold_text, folded_name, initials,
                                                key_columns, key_name, normalize_entity)
from quaderno.methods.docsage.rekey import singular
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.terms import filter_values

Search = Callable[[str, int], Awaitable[Sequence[Hit]]]


def _groups_tables(schema: Schema) -> tuple[set[str], dict[str, list[str]]]:
    """The tables of names and nothing else whose entities are bodies one is a member of
    (:data:`.normalize.BODY_KINDS`: commissions, leagues) or that the question's join path
    holds, and per table referring to them, its columns that do."""
    path = set(schema.requirements.join_path)
    tables: set[str] = set()
    referring: dict[str, list[str]] = {}
    for holder, refs in name_references(schema).items():
        for ref in refs:
            if table_kind(ref.table) in BODY_KINDS or ref.table in path:
                tables.add(ref.table)
                referring.setdefault(holder, []).append(ref.column)
    return tables, referring


def _plain_text(table: Table) -> list[str]:
    """``table``'s TEXT columns named after a kind of body (``commission``,
    ``league_name``) that are no key and no reference."""
    fixed = set(key_columns(table)) | {c for fk in table.foreign_keys for c in fk.cols}
    return [c.name for c in table.columns if c.type == "TEXT" and c.name not in fixed
            and BODY_KINDS & {singular(w) for w in slug(c.name).split("_")}]


def named_groups(schema: Schema, rows: Sequence[Row], question: str) -> list[str]:
    """The groups the question names, as the rows write them, in the question's order: the
    entities of a table of bodies (:func:`_groups_tables`), from its rows' keys and the
    references to it, matched folded ("U.S. Markets Commission" as "u s markets
    commission"); a name inside a longer one matched too ("Markets Commission") is dropped.
    A schema that holds the group in a plain text column named after a kind of body
    (``companies.commission``, no reference) names it too, when the value is the proper name
    of a body (:data:`.normalize.BODY_KINDS`: "Drournlia Markets Commission", "League of
    Merounddian Cities"; not "Credit union" in a sector). A word of capitals in the question
    ("the DMC", "D.M.C.") names the one group whose initials it is
    (:func:`.normalize.acronym_hits`), when no group the rows write is that word itself."""
    tables, referring = _groups_tables(schema)
    asked = f" {' '.join(fold_text(question).split())} "
    groups: dict[str, str] = {}          # folded name -> as the first row writes it
    for r in rows:
        t = schema.table(r.table)
        values = [r.values.get(k) for k in key_columns(t)] if t is not None and \
            r.table in tables else []
        values += [r.values.get(c) for c in referring.get(r.table, [])]
        bodies = [v for c in _plain_text(t) if isinstance(v := r.values.get(c), str)
                  and body_name(v)] if t is not None else []
        for v in [*values, *bodies]:
            if isinstance(v, str) and (f := folded_name(v)):
                groups.setdefault(f, v.strip())
    # folded name -> where the question names it
    at = {f: asked.index(f" {f} ") for f in groups if f" {f} " in asked}
    words = question.split()
    # a question in capitals writes every word so: none is an acronym
    shouting = sum(bool(ACRONYM.fullmatch(w.strip("?,.!;:"))) for w in words) > len(words) / 2
    for m in ACRONYM.finditer(question) if not shouting else ():   # "DMC", "D.M.C."
        short = fold_text(m[0]).replace(" ", "")
        hits = acronym_hits(short, groups)
        if short not in groups and short not in COMMON_ACRONYMS and len(hits) == 1:
            # where the question writes it ("us" the pronoun is no "US")
            at.setdefault(hits[0], len(f" {' '.join(fold_text(question[:m.start()]).split())} "
                                       ) - 1)
    kept = [f for f in at if not any(f != g and f" {f} " in f" {g} " for g in at)]
    return [groups[f] for f in sorted(kept, key=lambda f: at[f])]


async def rosters(search: Search, groups: Sequence[str], read: Sequence[str], *,
                  budget: int, searched: list[dict] | None = None) -> list[Hit]:
    """Up to ``budget`` chunks not in ``read`` listing the members of each group the
    question names ("Drournlia Markets Commission members"), searched deep enough to reach
    past the chunks already read: a member named only by its group's roster has no row, and
    :func:`completion` searches only for entities some row names (``docsage-fixes-set2``:
    Roustoustus Systems, the Relationship answer, was named only in a roster part no search
    reached). No search without a budget. Each search made is appended to ``searched`` with
    the chunks it gave."""
    seen, out = set(read), []
    for group in groups:
        if len(out) >= budget:
            break
        query, took = f"{group} members", []
        for hit in await search(query, min(budget + len(seen), 50)):
            if hit.chunk.id not in seen and len(out) < budget:
                seen.add(hit.chunk.id)
                out.append(hit)
                took.append(hit.chunk.id)
        _record(searched, query, took)
    return out


def _record(searched: list[dict] | None, query: str, chunks: list[str]) -> None:
    """A search and the chunks it gave, for the trace and the answer's details."""
    if searched is not None:
        searched.append({"query": query, "chunks": chunks})


_JOINING = frozenset({"of", "the", "and", "de", "du", "la", "le", "di", "van", "von"}) | \
    LEGAL_SUFFIXES


def _names(entity: str, hit: Hit) -> bool:
    """Whether the chunk (its title too) names ``entity``: writes a word of its name that is
    no kind word ("Bryskound" of "Bryskound Holdings", "Li" of "Anna Li"; any word of a name
    made only of kind words), or an alias in capitals that is its initials or the start of
    one of those words ("DMC", "SKOR" for Skorfirdraen). Text is folded alike on both sides
    ("Booking.com"). A word the name shares with other entities ("Technology") is enough:
    the search that found the chunk named the entity."""
    words = [w for w in fold_text(entity).split() if w not in _JOINING]
    own = [w for w in words if w not in BODY_WORDS] or words
    render = hit.chunk.render()
    text = f" {fold_text(render)} "
    if any(f" {w} " in text for w in own):
        return True
    letters = initials(words)
    for alias in ACRONYM.findall(render):
        a = fold_text(alias).replace(" ", "")
        if a == letters or (len(a) >= 3 and any(w.startswith(a) for w in own)):
            return True
    return False


def _members(schema: Schema, rows: Sequence[Row], canonical: Sequence[Row],
             question: str) -> set[str]:
    """The entities (normalized names, spellings canonicalized) a row ties to a group the
    question names (:func:`named_groups`): a cell of the row is the group's name, as the
    question writes it or as canonicalization rewrote it (an acronym the rows use more
    often), and the row's entity is a member, or, for a link row (a league's
    ``league_city``), the entities it refers to. ``canonical``: ``rows`` canonicalized
    (:func:`.aliases.canonicalize` keeps their order)."""
    groups = {folded_name(g) for g in named_groups(schema, rows, question)}
    if not groups:
        return set()
    # each raw row beside its canonical form; the group as the rows write it once
    # canonicalized ("DMC" for the commission) names it too
    pairs = list(zip(rows, canonical, strict=True))
    groups |= {folded_name(v) for raw, r in pairs for c, v in r.values.items()
               if isinstance(v, str) and isinstance(raw.values.get(c), str)
               and folded_name(raw.values[c]) in groups}
    out = set()
    for _, r in pairs:
        table = schema.table(r.table)
        if table is None or not any(isinstance(v, str) and folded_name(v) in groups
                                    for v in r.values.values()):
            continue
        names = [key_name(table, r.values)]
        names += [entity_name(r.values.get(c)) for c, _ in entity_references(schema, table)]
        out |= {normalize_entity(n) for n in names if n}
    return out


def _filters(schema: Schema, question: str) -> list[tuple[str, str, str]]:
    """(table, column, value asked for) of each TEXT column holding a text filter of the
    question ("whose sector is energy": every ``sector`` column, "energy"): a word of the
    column's name is the filter's head word; of several filters, the longest every word of
    whose phrase the name writes ("whose birth country is X and whose country is Y": X for
    ``birth_country``, Y for ``country``; "sector code" over "sector" for ``sector_code``),
    else the first."""
    filters = filter_values(question)
    out = []
    for t in schema.tables:
        for c in t.columns:
            words = {singular(w) for w in slug(c.name).split("_")}
            held = [(m, v) for m, v in filters if c.type == "TEXT" and singular(m.head) in words]
            whole = sorted(((m, v) for m, v in held
                            if all(singular(w) in words for w in m.words)),
                           key=lambda f: -len(f[0].words))
            if held:
                out.append((t.name, c.name, (whole or held)[0][1]))
    return out


def _failing(schema: Schema, merged: Sequence[Row],
             filters: Sequence[tuple[str, str, str]]) -> set[str]:
    """The entities (normalized names) whose row, of ``merged`` (rows canonicalized and
    merged), holds in the column of a text filter of the question (:func:`_filters`: "whose
    sector is energy", ``sector``) another value than the one asked for ("banking"): the
    question leaves them out whatever else they miss."""
    out = set()
    for r in merged:
        table = schema.table(r.table)
        name = key_name(table, r.values) if table is not None else None
        if not name:
            continue
        for t, c, value in filters:
            cell, asked = r.values.get(c), fold_text(value)
            if t == r.table and isinstance(cell, str) and cell.strip() and \
                    asked not in fold_text(cell) and fold_text(cell) not in asked:
                out.add(normalize_entity(name))
    return out


async def completion(search: Search, schema: Schema, rows: Sequence[Row], question: str,
                     read: Sequence[str], *, budget: int, k: int = 1,
                     searched: list[dict] | None = None,
                     expects: dict[str, tuple[str, ...]] | None = None) -> list[Hit]:
    """Up to ``budget`` chunks not in ``read`` (chunk ids): per entity with a needed cell
    empty, one search deep enough to reach past the chunks read, and its first ``k`` hits not
    read that name the entity; at most ``2 * budget`` searches. The caller extracts them and
    asks again for what is still empty (:meth:`.DocSage._complete`): an entity's second
    document is searched for only when its first did not state what was missing. Each search
    made is appended to ``searched`` with the chunks it gave (the trace shows them), and
    each chunk taken is set in ``expects`` to the tables the entity it was found for misses
    cells of (the caller reads each again when the chunk gives no row of it:
    :func:`.extract.extract`)."""
    seen, out = set(read), []
    # a row CLEAR leaves out as an entity of another kind is searched for by no one (the
    # commission's own row of companies took two of s7-docsage-set2's searches)
    rows = other_kind_rows(schema, rows)[0]
    # the rows canonicalized and merged once, for every ordering below
    canonical = canonicalize(schema, rows)[0]
    merged = merge_entities(schema, canonical)
    missing = missing_in_merged(schema, merged, needed_columns(schema, question))
    # members of a group the question names first (the rows tie them to it), then the
    # rest; within each, entities missing what the question measures or requires first,
    # then those missing only a column it names (named_columns: a filter, the answer's)
    core = {missing_words(schema, t, c) for t, c in needed_columns(schema, question, named=False)}
    members = _members(schema, rows, canonical, question)
    # an entity the rows show fails the question's filter needs nothing more: last
    filters = _filters(schema, question)
    failing = _failing(schema, merged, filters)
    missing.sort(key=lambda m: (normalize_entity(m[0]) in failing,
                                normalize_entity(m[0]) not in members,
                                not any(w in core for w in m[1])))
    # a filter's column is searched for with the value asked ("sector energy"): the text
    # says "operates in energy", and never "sector" (docsage-*-set2's Bryskound Holdings)
    asked = {w: f"{w} {v}" for w, v in ((missing_words(schema, t, c), v) for t, c, v in filters)}
    for entity, what, tables in missing[:2 * budget]:
        if len(out) >= budget:
            break
        query, took = f"{entity} {' '.join(asked.get(w, w) for w in what)}", []
        for hit in await search(query, min(k + len(seen), 50)):
            if len(took) < k and hit.chunk.id not in seen and len(out) < budget and \
                    _names(entity, hit):
                seen.add(hit.chunk.id)
                out.append(hit)
                took.append(hit.chunk.id)
                if expects is not None:
                    expects[hit.chunk.id] = tables
        _record(searched, query, took)
    return out


__all__ = ["completion", "named_groups", "rosters"]
