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

When a clause of a chunk says that an entity the chunk's rows key is not the namesake that
belongs to a group the question names, the rows of that chunk keyed by that entity or
referring to it by a foreign key (and its ended rows) are another entity's, and are set
apart before CLEAR (:func:`set_apart_denied`), each with a ``namesake`` correction on that
column quoting the clause (its values unchanged); the run reports them. Only the
unambiguous forms count:

* "<entity> is (was) not the <kind> of the same name in the G" ("the namesake in", "the
  homonym in": "the namesake of the G" may be the one the G is named after), "is not to be
  confused with the <kind> of the same name in the G", and ", not to be confused with ..."
  after the entity;
* "<entity> is (was) a <kind> of the R, not of the G" (", and not of", "not in").

The entity is written directly before the denial's verb (a parenthesis or an apposition
between them: "Systhou Vhyrnbraex (S. Vhyrnbraex) is not ..."; in "Gryrnstu Pougryrn said
that Systhou Vhyrnbraex is not ..." it is Systhou Vhyrnbraex), or is "It", "He", "She" or
"They" opening the clause, which is the entity the chunk's title begins with; "Systhou
Vhyrnbraex's brother is not ..." names no entity of the page. The group ends the clause or
comes before a comma, "and", "but" or "or" ("not the laureate of the same name in the G
until 1995" denies nothing), and the question names it, case and accents aside. Plain
denials ("is not a member of the G", "has never been a laureate of the G") are left alone:
a member can be "not a juror of" or "not a laureate of the G until 1995".

Nothing is set apart when a clause of the chunk without a negation says the entity belongs
to the G ("X is a laureate of the G", "X won the G"), when the question has a negation
("not", "never", "without", "except", "other than": it may count those who are not of a
group), or when the question names a group the chunk says the entity is a <kind> of, of the
same kind as the denial's ("X is a laureate of the Viandbround Medal" and a question about
both medals): the rows may then be the ones it asks for. Rows of other entities read from
the same page (an institution's country) stay. Known limits: English only; an entity the
rows write differently from the text ("S. Vhyrnbraex" for "Systhou Vhyrnbraex") is not
found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from quaderno.corpus.chunk import Chunk
from quaderno.methods.docsage.clauses import clauses
from quaderno.methods.docsage.extract import ChunkResult
from quaderno.methods.docsage.group_keyed import membership, title_head
from quaderno.methods.docsage.group_names import PROPER_NAME, compact
from quaderno.methods.docsage.normalize import (fold_text, folded_name, key_columns,
                                                normalize_entity)
from quaderno.methods.docsage.rows import Correction, Row, noted
from quaderno.methods.docsage.schema import Schema

# the group of a denial ends its clause or comes before a comma or a conjunction, never
# before a time ("until 1995") or a noun ("committee")
_GROUP = (rf"(?:the\s+)?(?P<group>(?-i:{PROPER_NAME.pattern}))"
          r"(?=\s*(?:$|[.,;:)(\u2014\u2013]|(?:and|but|or)\b))")
# "the namesake of the G" may be the one the G is named after: a namesake is "in" a group
_SAME_NAME = (r"(?:the|an?)\s+(?:(?P<kind>[\w-]+)\s+of\s+the\s+same\s+name\s+(?:in|of|at|from|with)"
              r"|(?:namesake|homonym)\s+(?:in|at|from|with))\s+")
_BE = r"(?:is|was)\s+"
# "<entity> is not (to be confused with) the <kind> of the same name in the G"
_NAMESAKE = re.compile(rf"{_BE}not\s+(?:to\s+be\s+confused\s+with\s+)?{_SAME_NAME}{_GROUP}",
                       re.I)
# "<entity>, not to be confused with the <kind> of the same name in the G"
_APPOSITION = re.compile(rf",\s*not\s+to\s+be\s+confused\s+with\s+{_SAME_NAME}{_GROUP}", re.I)
# "<entity> is a <kind> of the R, not of the G"
_CONTRAST = re.compile(rf"(?:,|\s+and)\s+not\s+(?:of|in)\s+{_GROUP}", re.I)
_RIVAL = (r"(?:an?|one)\s+(?P<kind>[\w-]+)\s+(?:of|in)\s+(?:the\s+)?"
          rf"(?P<rival>(?-i:{PROPER_NAME.pattern}))\s*$")
_PRONOUN = r"^\s*(?-i:It|He|She|They)\s+"
# a parenthesis or an apposition between the entity and its verb
_AFTER_NAME = r"(?:\s*\([^()]{0,60}\))?(?:\s*,[^,.;]{1,60},)?\s+"
_NEGATION = re.compile(r"\b(?:not|never|nor|neither)\b|n't\b", re.I)
_ASKS_NEGATION = re.compile(r"\b(?:not|never|without|except|excluding|other\s+than|"
                            r"outside|neither|nor)\b|n't\b", re.I)


def _asks(question: str, name: str) -> bool:
    """``question`` names ``name``, case, accents, punctuation and a leading "the" aside."""
    return bool(f := folded_name(name)) and f" {f} " in f" {fold_text(question)} "


def _written(key: str) -> str:
    return rf"(?<![\w'\u2019])(?-i:{re.escape(key)})"


def _subject(before: str, head: str, keys: Sequence[str], group: str, *,
             tail: str) -> tuple[str, re.Match[str]] | None:
    """(entity, match): the entity among ``keys`` that ``before`` (a clause up to a
    denial) ends with, followed by ``tail`` (what comes between the entity and the denial:
    its verb, or the rest of the clause saying what it is); "It", "He", "She" or "They"
    opening the clause is the title's ``head``. Longer names first ("Rastou Bank" before
    "Rastou")."""
    keys = sorted((k for k in keys if compact(k) != compact(group)), key=len, reverse=True)
    said = re.match(_PRONOUN + tail, before, re.I)
    if said:
        entity = next((k for k in keys if normalize_entity(k) == normalize_entity(head)), None)
        return (entity, said) if entity is not None else None
    for k in keys:
        said = re.search(_written(k) + _AFTER_NAME + tail, before, re.I)
        if said:
            return k, said
    return None


def _denials(clause: str, head: str, keys: Sequence[str],
             question: str) -> list[tuple[str, str, str, str]]:
    """(entity, group, kind, rival) of each denial in ``clause`` of a group ``question``
    names ("" for a kind or a rival the clause does not say)."""
    out = []
    for m in _NAMESAKE.finditer(clause):
        found = _subject(clause[:m.start()], head, keys, m["group"], tail=r"$")
        if found and _asks(question, m["group"]):
            out.append((found[0], m["group"], m["kind"] or "", ""))
    for m in _APPOSITION.finditer(clause):
        found = _subject(clause[:m.start()] + " ", head, keys, m["group"], tail=r"$")
        if found and _asks(question, m["group"]):
            out.append((found[0], m["group"], m["kind"] or "", ""))
    for m in _CONTRAST.finditer(clause):
        found = _subject(clause[:m.start()], head, keys, m["group"], tail=_BE + _RIVAL)
        if found and _asks(question, m["group"]):
            out.append((found[0], m["group"], found[1]["kind"], found[1]["rival"]))
    return out


def _belongs(text: str, entity: str, group: str, kind: str, question: str,
             pronoun: bool) -> bool:
    """A clause of ``text`` with no negation says ``entity`` belongs to ``group`` (is a
    <kind> of it, won it, or :func:`.group_keyed.membership`), or says it is a ``kind``
    (any kind, for "") of, or won, another group ``question`` names. ``pronoun``: the
    entity is the title's, so a clause opening with "It", "He", "She" or "They" says it."""
    subject = (rf"(?:{_written(entity)}{_AFTER_NAME}|{_PRONOUN})" if pronoun
               else _written(entity) + _AFTER_NAME)
    said = re.compile(subject + rf"(?:{_BE}(?:an?|one)\s+(?P<kind>[\w-]+)\s+(?:of|in)\s+|"
                      r"(?:won|received|holds|held|was\s+awarded)\s+)(?:the\s+)?"
                      rf"(?P<group>(?-i:{PROPER_NAME.pattern}))", re.I)
    member = membership(entity, group)
    for c in (c for c in clauses(text) if not _NEGATION.search(c)):
        if member.search(c):
            return True
        for m in said.finditer(c):
            named = re.sub(r"^The\s+", "", m["group"])
            if compact(named) == compact(group):
                return True
            if _asks(question, named) and (not kind or not m["kind"] or m["kind"] == kind):
                return True
    return False


def denied_entity(title: str, text: str, keys: Sequence[str],
                  question: str) -> tuple[str, str] | None:
    """(entity, clause): the entity among ``keys`` (the names the chunk's rows key) that a
    clause of ``text`` says is not the namesake of a group ``question`` names (module
    docstring), or None."""
    if not question.strip() or _ASKS_NEGATION.search(question):
        return None
    keys = list(dict.fromkeys(k.strip() for k in keys if k and k.strip()))
    head = title_head(title) if title else ""
    for clause in clauses(text):
        for entity, group, kind, rival in _denials(clause, head, keys, question):
            if rival and _asks(question, rival):
                continue
            if not _belongs(text, entity, group, kind, question,
                            pronoun=normalize_entity(entity) == normalize_entity(head)):
                return entity, clause
    return None


def _keyed_by(schema: Schema, row: Row, entity: str) -> str | None:
    """The column of ``row`` that names ``entity`` as its own or as the entity it refers to
    (a key column, or a foreign key's: the namesake's ``stedrurial_medal`` row of the
    Viandbround Medal, ``laureate_name`` its laureate), or None."""
    table = schema.table(row.table)
    if table is None:
        return None
    columns = [*key_columns(table), *(c for fk in table.foreign_keys for c in fk.cols)]
    return next((k for k in columns if normalize_entity(row.values.get(k)) == entity), None)


def _keys(schema: Schema, result: ChunkResult) -> list[str]:
    names: list[str] = []
    for r in [*(r for rows in result.rows.values() for r in rows), *result.ended]:
        table = schema.table(r.table)
        names += [v for k in (key_columns(table) if table is not None else ())
                  if isinstance(v := r.values.get(k), str) and v.strip()]
    return names


def set_apart_denied(schema: Schema, results: Sequence[ChunkResult],
                     chunks: Mapping[str, Chunk],
                     question: str) -> tuple[list[ChunkResult], list[Row]]:
    """(results, apart): ``results`` without the rows (ended ones too) of an entity its
    chunk (in ``chunks``, by id) says is not the namesake of a group ``question`` names, and
    those rows, each with a ``namesake`` correction on its key quoting the clause."""
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

        def others(rows: Sequence[Row]) -> list[Row]:
            mine = []
            for r in rows:
                column = _keyed_by(schema, r, entity)
                if column is None:
                    mine.append(r)
                else:
                    apart.append(noted(r, [_namesake(column, r.values.get(column), clause)]))
            return mine
        # the namesake's ended links too: they would end the member's (ended.py)
        kept.append(result.model_copy(update={
            "rows": {name: others(rows) for name, rows in result.rows.items()},
            "ended": others(result.ended)}))
    return kept, apart


def _namesake(column: str, value: Any, clause: str) -> Correction:
    return Correction(column=column, old=value, new=value, reason="namesake", by="as-stated",
                      evidence_quote=clause[:300])


__all__ = ["denied_entity", "set_apart_denied"]
