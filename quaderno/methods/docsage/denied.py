"""A page that says its subject is not the question's group's is another entity's page.

The benchmark plants namesakes: "Systhou Vhyrnbraex is a laureate of the Viandbround Medal.
It is not the laureate of the same name in the Stedrurial Medal. Records give 1939 for the
birth of Systhou Vhyrnbraex." beside the Stedrurial Medal's Systhou Vhyrnbraex, born 1970.
Keyed by the name in ``laureates(name, nationality, birth_year)``, a table with no column
for the medal, the two pages' rows are one key: the functional dependency name -> birth_year
breaks, and CLEAR's committee, unable to settle it, emptied the true 1970
(``abstain-docsage-set1``: the average the question asks for lost one of its three
values). :mod:`.namesakes` keeps such rows apart only when a column names the group each
belongs to; this one reads what the page says.

When a clause of a chunk denies that an entity the chunk's rows key belongs to a group the
question names, the rows of that chunk keyed by that entity are another entity's, and are
set apart before CLEAR (:func:`set_apart_denied`), each with a ``namesake`` correction on
its key quoting the clause (its values unchanged); the run reports them. A denial is one of

* "not the <kind> of the same name in the G" ("namesake", "homonym" for "<kind> of the same
  name");
* "..., not of the G" and "... and not of the G" (after "X is a laureate of the
  Viandbround Medal");
* "not to be confused with the <kind> of the G";
* "is (was) not (never) a <kind> of the G", "is not part of the G", "has never been a
  <kind> of the G": one word for the kind, so "not a founding member" and "not the only
  laureate of the G" deny nothing;

the group followed by the clause's end or a small word, never by a noun ("not a member of
the Stedrurial Medal committee"). The entity is the name a row of the chunk keys that the
clause writes nearest before the denial, never as a preposition's object ("a laureate of the
Viandbround Medal, not of ..."), or, when the clause's subject is "It", "He", "She" or
"They", the name the chunk's title begins with. The group is named by the question, case and
accents aside. Nothing is set apart when the question also names a group the chunk says the
entity does belong to ("X is a laureate of the Viandbround Medal" and a question about both
medals): the rows may be the ones it asks for. Rows of other entities read from the same page (an
institution's country) stay. Known limits: English only; an entity the rows write
differently from the text ("S. Vhyrnbraex" for "Systhou Vhyrnbraex") is not found; a
denial in a chunk without the entity's name or a title is not found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from quaderno.corpus.chunk import Chunk
from quaderno.methods.docsage.ended import PROPER_NAME, clauses, compact, naming
from quaderno.methods.docsage.extract import ChunkResult
from quaderno.methods.docsage.group_keyed import GROUP_END, membership, title_head
from quaderno.methods.docsage.normalize import fold_text, key_columns, normalize_entity
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Schema

_GROUP = rf"(?:the\s+)?(?P<group>(?-i:{PROPER_NAME.pattern})){GROUP_END}"
_DENIALS = [re.compile(p, re.I) for p in (
    r"\bnot\s+(?:the|an?)\s+(?:[\w-]+\s+){0,2}?(?:of\s+the\s+same\s+name|namesake|homonym)"
    rf"\s+(?:in|of|at|from|with)\s+{_GROUP}",
    rf"(?:,|\band)\s+not\s+(?:of|in|from|at|with)\s+{_GROUP}",
    r"\bnot\s+to\s+be\s+confused\s+with\s+(?:the|an?)\s+[^.;,]{0,60}?\b(?:of|in|at|from)"
    rf"\s+{_GROUP}",
    r"\b(?:(?:is|was|are|were)\s+(?:not|never)|has\s+never\s+been|have\s+never\s+been)"
    rf"\s+(?:an?\s+[\w-]+|part)\s+(?:of|in)\s+{_GROUP}")]
_PRONOUN = re.compile(r"\s*(?:It|He|She|They)\s")
_OBJECT = re.compile(r"\b(?:of|in|at|from|with|by|for|to|into)\s+(?:the\s+)?$", re.I)
_NEGATION = re.compile(r"\b(?:not|never|nor|neither)\b", re.I)


def _asks(question: str, name: str) -> bool:
    """``question`` names ``name``, case, accents, punctuation and a leading "the" aside."""
    name = re.sub(r"^the\s+", "", name.strip(), flags=re.I)
    return bool(name) and f" {fold_text(name)} " in f" {fold_text(question)} "


def _belongs_elsewhere(text: str, entity: str, group: str, question: str) -> bool:
    """``text`` says ``entity`` belongs to a group other than ``group`` that ``question``
    names too (clause parts before a denial count: "a laureate of the Viandbround Medal,
    not of the Stedrurial Medal")."""
    for clause in clauses(text):
        denial = _NEGATION.search(clause)
        said = clause[:denial.start()] if denial else clause
        for m in PROPER_NAME.finditer(said):
            other = re.sub(r"^The\s+", "", m[0])
            if compact(other) in (compact(group), compact(entity)) or \
                    not _asks(question, other):
                continue
            if membership(entity, other).search(said):
                return True
    return False


def _subject(before: str, head: str, keys: Sequence[str], group: str) -> str | None:
    """The entity among ``keys`` a denial whose clause begins with ``before`` is said of:
    the title's ``head`` after "It", "He", "She", "They"; else the key written nearest
    before the denial where it is no preposition's object ("of the Viandbround Medal, not
    of ...")."""
    keys = [k for k in keys if compact(k) != compact(group)]
    if _PRONOUN.match(before):
        return next((k for k in keys if normalize_entity(k) == normalize_entity(head)), None)
    best: tuple[int, int, str] | None = None
    for k in keys:
        ends = [m.end() for m in naming(k).finditer(before)
                if not _OBJECT.search(before, 0, m.start())]
        if ends and (best is None or (ends[-1], len(k)) > best[:2]):
            best = (ends[-1], len(k), k)
    return best[2] if best else None


def denied_entity(title: str, text: str, keys: Sequence[str],
                  question: str) -> tuple[str, str] | None:
    """(entity, clause): the entity among ``keys`` (the names the chunk's rows key) that a
    clause of ``text`` says does not belong to a group ``question`` names (module
    docstring), or None."""
    keys = list(dict.fromkeys(k.strip() for k in keys if k and k.strip()))
    head = title_head(title) if title else ""
    for clause in clauses(text):
        for m in (m for p in _DENIALS for m in p.finditer(clause)):
            group = m["group"]
            if not _asks(question, group):
                continue
            entity = _subject(clause[:m.start()], head, keys, group)
            if entity is not None and not _belongs_elsewhere(text, entity, group, question):
                return entity, clause
    return None


def _keyed_by(schema: Schema, row: Row, entity: str) -> str | None:
    """The key column of ``row`` that names ``entity``, or None."""
    table = schema.table(row.table)
    if table is None:
        return None
    return next((k for k in key_columns(table)
                 if normalize_entity(row.values.get(k)) == entity), None)


def _keys(schema: Schema, result: ChunkResult) -> list[str]:
    names: list[str] = []
    for name, rows in result.rows.items():
        table = schema.table(name)
        for r in rows if table is not None else ():
            names += [v for k in key_columns(table)
                      if isinstance(v := r.values.get(k), str) and v.strip()]
    return names


def set_apart_denied(schema: Schema, results: Sequence[ChunkResult],
                     chunks: Mapping[str, Chunk],
                     question: str) -> tuple[list[ChunkResult], list[Row]]:
    """(results, apart): ``results`` without the rows of an entity its chunk (in
    ``chunks``, by id) says does not belong to a group ``question`` names, and those rows,
    each with a ``namesake`` correction on its key quoting the clause."""
    kept: list[ChunkResult] = []
    apart: list[Row] = []
    for result in results:
        chunk = chunks.get(result.chunk_id)
        found = denied_entity(chunk.title, chunk.text, _keys(schema, result),
                              question) if chunk is not None and question else None
        if found is None:
            kept.append(result)
            continue
        entity, clause = normalize_entity(found[0]), found[1]
        rows: dict[str, list[Row]] = {}
        for name, table_rows in result.rows.items():
            rows[name] = []
            for r in table_rows:
                column = _keyed_by(schema, r, entity)
                if column is None:
                    rows[name].append(r)
                else:
                    apart.append(noted(r, [_namesake(column, r.values.get(column), clause)]))
        kept.append(result.model_copy(update={"rows": rows}))
    return kept, apart


def _namesake(column: str, value: Any, clause: str) -> Correction:
    return Correction(column=column, old=value, new=value, reason="namesake", by="as-stated",
                      evidence_quote=clause[:300])


__all__ = ["denied_entity", "set_apart_denied"]
