"""Entity alias canonicalization and merging, run before CLEAR's Level B checks (spec §3, A7).

The same entity is written many ways across documents ("Xandria University", "University of
Xandria", "XU", "Acme Inc." / "ACME"). Left alone, each spelling is its own entity: a
functional dependency looks satisfied when it is not, or violated when it is not, and
foreign keys dangle. So, per *entity domain* (a table's TEXT key column together with the
foreign-key columns that reference it):

1. every name is normalized (:func:`normalize_entity`: case, accents, punctuation, legal
   suffixes, "University of X" = "X University", an alias table); a one-word acronym that
   matches the initials of exactly one other name in the domain, a name with initials for
   given names ("S. Vhyrnbraex") that exactly one name spells out, or a short form whose
   words all occur in exactly one longer name, joins that name (:func:`alias_map`);
2. every spelling of one entity is rewritten to its most frequent spelling (an
   ``alias-merge`` :class:`Correction` on the row);
3. rows of one table that name the same entity and do not contradict each other are merged
   into one, the cells taken from the other rows recorded as ``alias-merge`` corrections
   with their chunk (the merged rows' own corrections are kept too). Rows that contradict
   each other stay apart: Level B reports them. Rows whose key holds an id (a whole
   number) that neither row's chunk states are one entity only if they give it the same
   name: the model numbers every entity 1, and a row without a name would otherwise join
   whichever entity came first (:func:`merge_entities` with the chunks' texts).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from quaderno.methods.docsage.ended import ended_columns
from quaderno.methods.docsage.spans import mentions
from quaderno.methods.docsage.normalize import (KIND_WORDS, acronym_hits, entity_key,
                                                fold_text, is_null, key_columns,
                                                normalize_entity, normalize_value)
from quaderno.methods.docsage.rekey import id_named, may_add_as_key
from quaderno.methods.docsage.rows import Correction, Row, take_cell, value_chunk, whole_number
from quaderno.methods.docsage.schema import Schema, Table

class AliasGroup(BaseModel):
    """One entity's spellings in one domain, and the one kept."""

    domain: str                 # "table.column" of the entity's key
    canonical: str
    spellings: list[str] = Field(default_factory=list)


def domains(schema: Schema) -> dict[str, list[tuple[str, str]]]:
    """Entity domains: "table.column" of each TEXT key column -> the (table, column) pairs
    holding its names (the key itself and foreign-key columns referencing it)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for t in schema.tables:
        keys = key_columns(t)
        if len(keys) == 1 and t.column(keys[0]).type == "TEXT":
            out[f"{t.name}.{keys[0]}"] = [(t.name, keys[0])]
    for t in schema.tables:
        for fk in t.foreign_keys:
            for col, ref in zip(fk.cols, fk.ref_cols):
                name = f"{fk.ref_table}.{ref}"
                if name in out and t.column(col).type == "TEXT":
                    out[name].append((t.name, col))
    return out


# a name written with dotted initials for its given names ("S. Vhyrnbraex", "J.R. Tolkien",
# "É. Zola": letters of any script, capitals checked by :func:`_dotted`): "K League" or
# "A Division" is no person's name with an initial
_DOTTED = re.compile(r"\s*(?:[^\W\d_]\.\s*)+")


def _dotted(name: str) -> bool:
    """``name`` opens with dotted capital initials before a word (:data:`_DOTTED`)."""
    m = _DOTTED.match(name)
    return m is not None and m.end() < len(name) and name[m.end()].isalpha() \
        and all(ch.isupper() for ch in m[0] if ch.isalpha())


def _initialled(norm: str) -> bool:
    """A person's name with its given names as initials: "s vhyrnbraex" (from "S.
    Vhyrnbraex"), "j r tolkien"."""
    words = norm.split()
    return len(words) >= 2 and len(words[-1]) >= 2 and all(len(w) == 1 for w in words[:-1])


def _expands(short: str, full: str) -> bool:
    """``full`` is ``short`` with its initials written out: the same surname, as many
    given names, each beginning with its initial ("systhou vhyrnbraex" for "s vhyrnbraex")."""
    given, surname = short.split()[:-1], short.split()[-1]
    words = full.split()
    return (len(words) == len(given) + 1 and words[-1] == surname
            and all(len(w) > 1 and w[0] == i for w, i in zip(words, given)))


def alias_map(names: Sequence[str], aliases: Mapping[str, str] | None = None,
              acronyms: bool = True) -> dict[str, str]:
    """Normalized name -> normalized entity for one domain's ``names`` (surface forms).
    Besides the alias table: a one-word acronym joins the one name whose initials it is
    ("xu" -> "xandria university"), and a short form joins the one longer name holding
    all its words ("drusnuven" from "Drusnuven Co." -> "drusnuven university"); with two
    candidates neither rule merges (no guessing between entities), and a name written
    with dotted initials ("S. Vhyrnbraex") joins the one name that spells them out
    ("systhou vhyrnbraex")."""
    norms = {normalize_entity(n, aliases) for n in names} - {""}
    out = {n: n for n in norms}
    if not acronyms:
        return out
    for n in norms:
        words = set(n.split())
        hits = acronym_hits(n, norms)
        if not hits and words - KIND_WORDS:
            hits = [m for m in norms if words < set(m.split())]
        if len(hits) == 1:
            out[n] = hits[0]
    for name in names:          # initials as written: "S. Vhyrnbraex", "J.R. Tolkien"
        n = normalize_entity(name, aliases)
        spelled = fold_text(str(name))   # "J.R. Tolkien" -> "j r tolkien"
        if out.get(n) != n or not _dotted(str(name)) or not _initialled(spelled):
            continue
        hits = [m for m in norms if m != n and _expands(spelled, m)]
        if len(hits) == 1:
            out[n] = hits[0]
    return out


def canonicalize(schema: Schema, rows: Sequence[Row], aliases: Mapping[str, str] | None = None,
                 *, acronyms: bool = True) -> tuple[list[Row], list[AliasGroup]]:
    """Rows with every entity name rewritten to its entity's most frequent spelling, and the
    alias groups found (only groups with more than one spelling)."""
    rows = list(rows)
    groups: list[AliasGroup] = []
    for domain, cols in domains(schema).items():
        spellings = [r.values.get(c) for r in rows for t, c in cols if r.table == t]
        spellings = [s for s in spellings if isinstance(s, str) and normalize_entity(s)]
        amap = alias_map(spellings, aliases, acronyms)
        by_entity: dict[str, Counter[str]] = {}
        for s in spellings:
            by_entity.setdefault(amap[normalize_entity(s, aliases)], Counter())[s] += 1
        canonical = {ent: max(c.items(), key=lambda kv: (kv[1], len(kv[0])))[0]
                     for ent, c in by_entity.items()}
        for ent, counter in by_entity.items():
            if len(counter) > 1:
                groups.append(AliasGroup(domain=domain, canonical=canonical[ent],
                                         spellings=sorted(counter)))
        for i, r in enumerate(rows):
            changes = {}
            for t, c in cols:
                v = r.values.get(c)
                if r.table != t or not isinstance(v, str) or not normalize_entity(v):
                    continue
                new = canonical[amap[normalize_entity(v, aliases)]]
                if new != v:
                    changes[c] = (v, new)
            if changes:
                prov = r.provenance.model_copy(update={"corrections": [
                    *r.provenance.corrections,
                    *(Correction(column=c, old=o, new=n, reason="alias", by="alias-merge",
                                 evidence_chunk=r.provenance.chunk_id)
                      for c, (o, n) in changes.items())]})
                rows[i] = r.model_copy(update={
                    "values": {**r.values, **{c: n for c, (_, n) in changes.items()}},
                    "provenance": prov})
    return rows, groups


def compatible(a: Mapping[str, Any], b: Mapping[str, Any], types: Mapping[str, str]) -> bool:
    """No column where both rows have a value and the values differ."""
    for col, typ in types.items():
        x, y = normalize_value(a.get(col), typ), normalize_value(b.get(col), typ)
        if x is not None and y is not None and x != y:
            return False
    return True


def stated_in(row: Row, column: str, texts: Mapping[str, str]) -> bool | None:
    """Whether the chunk ``row``'s value of ``column`` was read from (:func:`value_chunk`)
    states it as a whole number; None when that chunk's text is not in ``texts`` (chunk id
    -> text) or the cell is empty."""
    value = row.values.get(column)
    chunk = value_chunk(row.provenance.chunk_id, row.provenance.corrections, column)
    if is_null(value) or chunk not in texts:
        return None
    return mentions(texts[chunk], value, "INT")


def unstated_ids(table: Table, row: Row, texts: Mapping[str, str]) -> list[str]:
    """``row``'s key columns holding an id (a whole number in a column named as one:
    ``laureate_id``, not a ``year``) whose value its chunk does not state."""
    return [k for k in key_columns(table)
            if table.column(k).type == "INT" and id_named(k, table.name)
            and stated_in(row, k, texts) is False]


def name_columns_of(table: Table, ids: Sequence[str]) -> list[str]:
    """The columns naming the entity ``table``'s ``ids`` number (``name``,
    ``laureate_name`` for ``laureate_id``: :func:`.rekey.may_add_as_key`), in the key or
    not."""
    return [c.name for c in table.columns
            if c.type == "TEXT" and any(may_add_as_key(c.name, table.name, k) for k in ids)]


def _same_name(names: Mapping[str, str], row: Row, aliases: Mapping[str, str] | None) -> bool:
    """``row`` gives the entity the same ``names`` (column -> normalized name, the other
    row's) in some column and a different one in none."""
    pairs = [(x, normalize_entity(row.values.get(c), aliases)) for c, x in names.items()]
    return any(x and x == y for x, y in pairs) and not any(x and y and x != y
                                                           for x, y in pairs)


def _same(a: Any, b: Any) -> bool:
    """Two cells give the same value: the same text, or the same whole number (1, "1.0")."""
    if str(a).strip().casefold() == str(b).strip().casefold():
        return True
    n = whole_number(a)
    return n is not None and n == whole_number(b)


def _agreed(base: Row, other: Row, corrections: Sequence[Correction]
            ) -> dict[str, dict[str, Any]]:
    """``base``'s record of the chunks that gave each of its values, with ``other`` merged
    in (``corrections``: the merged row's): for each column both give the same value, the
    chunk ``other``'s came from, with its value (and those ``other`` had itself agreed
    with); and where a correction ``other`` brought moves the cell's chunk, the chunk it
    came from before. Never the chunk the merged cell's value comes from."""
    out = {c: dict(chunks) for c, chunks in base.provenance.agreed.items()}
    for c, mine in base.values.items():
        if mine is None:
            continue
        before = value_chunk(base.provenance.chunk_id, base.provenance.corrections, c)
        after = value_chunk(base.provenance.chunk_id, corrections, c)
        add: dict[str, Any] = {}
        v = other.values.get(c)
        if v is not None and _same(v, mine):
            add = {**other.provenance.agreed.get(c, {}),
                   value_chunk(other.provenance.chunk_id, other.provenance.corrections, c): v}
        if before != after:
            add[before] = mine
        if add:
            out[c] = {x: w for x, w in {**out.get(c, {}), **add}.items() if x != after}
    return {c: chunks for c, chunks in out.items() if chunks}


def merge_entities(schema: Schema, rows: Sequence[Row],
                   aliases: Mapping[str, str] | None = None,
                   texts: Mapping[str, str] | None = None) -> list[Row]:
    """Rows of one table naming the same entity merged where they do not contradict each
    other; a cell filled from another row keeps that row's chunk and confidence in an
    ``alias-merge`` correction. Rows without a key, and tables without a key, stay as
    they are. Given the chunks' ``texts`` (chunk id -> text), rows whose key holds a whole
    number that neither row's chunk states (:func:`stated_in`) merge only where they give
    the entity the same name (:func:`_same_name`); without a name column they stay apart.
    Order: the first row of each merged group keeps its place."""
    out: list[Row] = []
    clusters: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    unstated: dict[int, list[str]] = {}   # out index -> its key's unstated ids
    for r in rows:
        table = schema.table(r.table)
        key = entity_key(table, r.values, aliases) if table is not None else ()
        if table is None or not any(key):
            out.append(r)
            continue
        types = {c.name: c.type for c in table.columns}
        invented = unstated_ids(table, r, texts) if texts else []
        names = {c: normalize_entity(r.values.get(c), aliases)
                 for c in name_columns_of(table, invented)}

        def one_entity(i: int) -> bool:
            # an id neither row's chunk states aligns them only by the entity's name
            if any(k in unstated[i] for k in invented) and not _same_name(names, out[i],
                                                                          aliases):
                return False
            return compatible(out[i].values, r.values, types)
        target = next((i for i in clusters.get((r.table, key), []) if one_entity(i)), None)
        if target is None:
            clusters.setdefault((r.table, key), []).append(len(out))
            # a merge fills empty cells only: the kept row's key, and its chunk, stay
            unstated[len(out)] = invented
            out.append(r)
            continue
        base = out[target]
        # a reference one text says has ended stays empty (ended.py), whichever row says so
        ended = ended_columns(base) | ended_columns(r)
        filled = {c: v for c, v in r.values.items()
                  if c in types and base.values.get(c) is None and v is not None
                  and c not in ended}
        cleared = {c: None for c in ended_columns(r) if base.values.get(c) is not None}
        conf = dict(base.provenance.confidence)
        kinds = dict(base.provenance.confidence_kind)
        # a filled cell comes from the chunk r's value came from (a backtracking fix's
        # evidence, else r's own chunk), with r's score for it
        notes = [take_cell(conf, kinds, r.provenance, c, v, "alias-merge")
                 for c, v in filled.items()]
        for c, p in r.provenance.confidence.items():  # agreeing evidence: keep the higher
            # of two scores on one scale only (token probabilities vs sample agreement)
            if (c not in filled and c in conf and base.values.get(c) is not None
                    and kinds.get(c) == r.provenance.confidence_kind.get(c)):
                conf[c] = max(conf[c], p)
        # the merged row's own history stays with the entity where it describes what the
        # entity keeps: its spelling, the cells it filled, and fixes whose value the entity
        # has (a conflict settled by backtracking keeps its quoted evidence); the history of
        # a value the merge did not take (one the committee set to NULL, say) would point the
        # kept value at a chunk that does not state it
        kept = [c for c in r.provenance.corrections
                if c not in base.provenance.corrections
                and (c.column in filled or c.evidence_chunk is None
                     or (c.new is not None and c.new == base.values.get(c.column)))]
        corrections = [*base.provenance.corrections, *kept, *notes]
        prov = base.provenance.model_copy(update={
            "confidence": conf, "confidence_kind": kinds,
            "agreed": _agreed(base, r, corrections), "corrections": corrections})
        out[target] = base.model_copy(update={"values": {**base.values, **filled, **cleared},
                                              "provenance": prov})
    return out
