"""One benchmark collection: a (family, bin, seed) world, its documents, questions and
gold tables, made in memory and written to a folder.

Folder layout (``{family}-{bin}-s{seed}/``)::

    documents.jsonl   {id, title, text, kind, subject}: `quaderno kb add NAME documents.jsonl`
    questions.jsonl   one :class:`~.questions.Question` per line (SQL, gold rows, gold answer,
                      hardness knobs, entity count)
    facts.jsonl       {doc_id, sentence, text, facts[]}: what each sentence states
    tables/T.csv      every gold table as CSV, and tables/T.json ({columns, rows})
    manifest.json     seed, generator version, parameters, counts and the SHA-256 of each file
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from quaderno.errors import ConfigError
from quaderno.eval.synth.families import family as get_family
from quaderno.eval.synth.gold import connect, table_columns, table_rows
from quaderno.eval.synth.questions import Question, generate
from quaderno.eval.synth.render import Document, Renderer
from quaderno.eval.synth.templates import ALL_TEMPLATES, KNOWN_TEMPLATES
from quaderno.eval.synth.world import World, build_world

# synth-1.1: template family 4 (TEST_TEMPLATES); families 0-3 render as in synth-1.0
# synth-1.2: template family 5 (FRESH_TEMPLATES); families 0-4 render as in synth-1.1
# synth-1.3: a variance of money records its unit (Gold.money_power 2); nothing else changes
GENERATOR_VERSION = "synth-1.3"


class BinSpec(BaseModel):
    name: str
    lo: int  # fewest entities
    hi: int  # most entities
    default: int


BINS: dict[str, BinSpec] = {
    "set1": BinSpec(name="set1", lo=3, hi=10, default=8),
    "set2": BinSpec(name="set2", lo=11, hi=100, default=40),
    "set3": BinSpec(name="set3", lo=101, hi=1000, default=120),
}


def bin_spec(name: str) -> BinSpec:
    if name not in BINS:
        raise ConfigError(f"unknown bin {name!r}; choose one of {', '.join(BINS)}")
    return BINS[name]


@dataclass
class Collection:
    family: str
    bin: str
    seed: int
    world: World
    documents: list[Document]
    questions: list[Question]
    columns: dict[str, list[tuple[str, str]]]
    rows: dict[str, list[list[Any]]]
    template_families: tuple[int, ...]
    per_type: int
    filler: int = 1

    @property
    def name(self) -> str:
        """``{family}-{bin}-s{seed}``, and ``-t`` with the template families when they are
        not the default (``award-set1-s1-t4``: the held-out test family alone)."""
        tf = "" if self.template_families == ALL_TEMPLATES else \
            "-t" + "".join(map(str, self.template_families))
        return f"{self.family}-{self.bin}-s{self.seed}{tf}"


def _needed(c: Collection, q: Question) -> set[tuple[str, str, str]]:
    """The (table, entity, column) cells a question depends on."""
    fam, w = c.world.family, c.world
    members = q.named or [e.name for e in w.members]
    links = sorted({w.member(m).link or "" for m in members})
    cells = set()
    for tc in q.columns:
        table, col = tc.split(".")
        if table == fam.link_table:
            cells |= {(table, name, col) for name in links}
        else:
            cells |= {(table, name, col) for name in members}
    return cells


def _value(w: World, table: str, entity: str, column: str) -> Any:
    if table == "membership":
        return True
    if table == w.family.members:
        e = w.member(entity)
        return e.link if column == w.family.link_role else e.values.get(column)
    return w.link(entity).values.get(column)


def knobs(c: Collection, q: Question) -> dict[str, Any]:
    """The hardness knobs of ``q`` in collection ``c`` (logged with every question)."""
    w = c.world
    needed = _needed(c, q)
    stated = {cell for cell in needed if _value(w, *cell) is not None}
    per_doc = []
    tfs: set[int] = set()
    for d in c.documents:
        have = {(f.table, f.entity, f.column) for f in d.facts if f.current} & stated
        per_doc.append(len(have))
        tfs |= {f.template_family for f in d.facts if (f.table, f.entity, f.column) in stated
                and f.template_family >= 0}
    involved = sorted({e for (_, e, _) in needed if any(m.name == e for m in w.members)})
    ent = [w.member(e) for e in involved]
    cols = {col for (_, _, col) in needed}
    return {
        "entities_involved": len(involved),
        "cells_needed": len(stated),
        "missing_cells": len(needed) - len(stated),
        "docs_per_entity": round(sum(e.spread for e in ent) / max(len(ent), 1), 2),
        "alias_only_docs": sum(1 for d in c.documents if d.alias_only and d.subject in involved),
        "dated_conflicts": sum(1 for e in ent for col in e.old_values if col in cols),
        "corrections": sum(1 for e in ent for col in e.corrections if col in cols),
        "negated_mentions": sum(1 for e in ent for col in e.negated if col in cols),
        "distractors": dict(sorted(Counter(d.role for d in w.distractors).items())),
        "template_families": sorted(tfs),
        "single_doc_coverage": round(max(per_doc) / max(len(stated), 1), 3),
    }


def make_collection(family: str, bin_name: str, seed: int, *, entities: int | None = None,
                    per_type: int = 5, template_families: tuple[int, ...] = ALL_TEMPLATES,
                    filler: int = 1) -> Collection:
    """The collection of ``family`` in bin ``bin_name`` drawn from ``seed``.

    ``entities`` (the topic's member count) defaults to the bin's default and must lie in
    the bin; ``per_type`` questions of each of the eight types; ``template_families`` the
    paraphrase families documents are rendered with (for the template-leak gate);
    ``filler`` sentences per document (1: one in most documents; more for longer texts)."""
    spec, fam = bin_spec(bin_name), get_family(family)
    n = spec.default if entities is None else entities
    if not spec.lo <= n <= spec.hi:
        raise ConfigError(f"entities={n} is outside bin {bin_name} ({spec.lo}–{spec.hi})")
    if filler < 0:
        raise ConfigError(f"filler must be 0 or more, got {filler}")
    if per_type < 1:
        raise ConfigError(f"per_type must be positive, got {per_type}")
    bad = [t for t in template_families if t not in KNOWN_TEMPLATES]
    if bad or not template_families:
        raise ConfigError(f"template families must be some of {KNOWN_TEMPLATES}, got "
                          f"{template_families}")
    world = build_world(fam, n, seed)
    columns, rows = table_columns(fam), table_rows(world)
    prefix = f"{family}-{bin_name}-s{seed}"
    docs = Renderer(world, random.Random(f"{prefix}:render"), tuple(template_families),
                    filler).render(prefix)
    con = connect(columns, rows)
    try:
        questions = generate(world, con, per_type=per_type, bin_name=bin_name,
                             rng=random.Random(f"{prefix}:questions"), prefix=prefix)
    finally:
        con.close()
    col = Collection(family, bin_name, seed, world, docs, questions, columns, rows,
                     tuple(template_families), per_type, filler)
    for q in questions:
        q.knobs = knobs(col, q)
    return col


# -- writing and reading ----------------------------------------------------------------
def _jsonl(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n" for i in items)


def _csv(cols: list[tuple[str, str]], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c for c, _ in cols])
    writer.writerows([["" if v is None else v for v in r] for r in rows])
    return buf.getvalue()


def files(c: Collection) -> dict[str, str]:
    """Relative path → content of every file of the collection (manifest excluded)."""
    out = {
        "documents.jsonl": _jsonl([{"id": d.id, "title": d.title, "text": d.text,
                                    "kind": d.kind, "subject": d.subject}
                                   for d in c.documents]),
        "questions.jsonl": _jsonl([q.model_dump(mode="json") for q in c.questions]),
        "facts.jsonl": _jsonl([{"doc_id": d.id, "sentence": i, "text": s,
                                "facts": [vars(f) for f in fs]}
                               for d in c.documents for i, (s, fs) in enumerate(d.sentences)
                               if fs]),
    }
    for table, cols in c.columns.items():
        out[f"tables/{table}.csv"] = _csv(cols, c.rows[table])
        out[f"tables/{table}.json"] = json.dumps({"columns": cols, "rows": c.rows[table]},
                                                 ensure_ascii=False) + "\n"
    return out


def manifest(c: Collection, contents: dict[str, str]) -> dict[str, Any]:
    return {
        "generator_version": GENERATOR_VERSION, "family": c.family, "bin": c.bin,
        "seed": c.seed, "entities": len(c.world.members), "per_type": c.per_type,
        "template_families": list(c.template_families), "topic": c.world.topic,
        "filler": c.filler,
        "documents": len(c.documents), "questions": len(c.questions),
        "types": dict(sorted(Counter(q.type for q in c.questions).items())),
        "corr_target": c.world.corr_target,
        "sha256": {p: hashlib.sha256(t.encode()).hexdigest() for p, t in sorted(contents.items())},
    }


def write_collection(c: Collection, out: str | Path) -> Path:
    """Write ``c`` under ``out/{c.name}`` (:attr:`Collection.name`); returns that folder."""
    folder = Path(out) / c.name
    contents = files(c)
    for rel, text in contents.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "manifest.json").write_text(
        json.dumps(manifest(c, contents), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def load_questions(path: str | Path) -> list[Question]:
    """The questions of a collection folder (or of a ``questions.jsonl`` path)."""
    p = Path(path)
    p = p / "questions.jsonl" if p.is_dir() else p
    if not p.is_file():
        raise ConfigError(f"no questions file at {p}")
    return [Question.model_validate_json(line) for line in p.read_text(encoding="utf-8")
            .splitlines() if line.strip()]
