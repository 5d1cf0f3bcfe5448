"""Anti-triviality gates: a template-regex extractor, one-document answerability, the oracle.

- :func:`regex_score`: a regex extractor compiled from the renderer's own templates of the
  *train* template families, instantiated with the attribute words of the *train* domain
  families, fills the gold tables' attribute cells (membership and foreign keys are given to
  it from gold, every alias resolves, and "it" or "the institution" is the document's
  subject: a generous extractor); the questions' SQL then runs on what it extracted.
  Scored on documents rendered from held-out template families of held-out domain
  families, it must score low.
- :func:`single_doc_answerable`: Statistics questions of Set2/Set3 whose needed cells all
  sit in one document (must be none).
- :func:`oracle_score`: the gold tables read back from disk plus each question's SQL give
  the stored rows and a gold answer that scores 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import duckdb

from quaderno.eval.synth.collection import Collection, load_questions
from quaderno.eval.synth.families import FAMILIES, Attr, Family
from quaderno.eval.synth.gold import connect, run
from quaderno.eval.synth.questions import Question
from quaderno.eval.synth.score import Gold, corr_label, numbers, score
from quaderno.eval.synth.templates import CURRENT, TRAIN_TEMPLATES, an, bank

_ENT, _V = "\x00E\x00", "\x00V\x00"
_PREFIX = "(?:" + "|".join(re.escape(p.format(now=0)).replace("0", r"\d{4}")
                           for p in CURRENT) + ")?"


def answer_text(gold: Gold, rows: list[list[Any]]) -> str:
    """What a system that ran the SQL would answer, given its result rows."""
    vals = [v for r in rows for v in r if v is not None]
    if not vals:
        return ""
    if gold.kind == "correlation":
        return corr_label(float(vals[0]))
    if gold.kind == "number":
        v = float(vals[0])
        return str(int(v)) if gold.is_year else f"{v:.4f}".rstrip("0").rstrip(".")
    return ", ".join(str(v) for v in vals)


def _patterns(attrs: list[Attr], families: tuple[int, ...]) -> list[tuple[str, re.Pattern]]:
    out = []
    for a in attrs:
        for tf, tpl in bank(a):
            if tf not in families:
                continue
            phrases = [p.format(v=_V) for p in a.phrases] or [""]
            if "{phrase}" not in tpl:
                phrases = phrases[:1]
            for ph in phrases:
                text = tpl.format(ent=_ENT, v=_V, noun=a.noun, noun_a=an(a.noun) if a.noun
                                  else "", event=a.event, event_noun=a.event_noun,
                                  label=a.label, label_cap=a.label.capitalize(), phrase=ph)
                body = re.escape(text).replace(re.escape(_ENT), r"(?P<ent>.+?)").replace(
                    re.escape(_V), r"(?P<v>.+?)")
                out.append((a.column, re.compile(f"^{_PREFIX}{body}$", re.IGNORECASE)))
    return out


def regex_extractor(train_families: tuple[str, ...],
                    template_families: tuple[int, ...] = TRAIN_TEMPLATES,
                    ) -> dict[str, list[tuple[str, re.Pattern]]]:
    """Per table kind ('members', 'link'): (column, compiled pattern) from the train banks."""
    members: dict[tuple[str, str, str], Attr] = {}
    links: dict[tuple[str, str, str], Attr] = {}
    for key in train_families:
        fam = FAMILIES[key]
        members |= {(a.column, a.kind, a.noun + a.event): a for a in fam.attrs}
        links |= {(a.column, a.kind, a.noun + a.event): a for a in fam.link_attrs}
    return {"members": _patterns(list(members.values()), template_families),
            "link": _patterns(list(links.values()), template_families)}


def _parse(a: Attr, raw: str) -> Any:
    if a.kind in ("category", "text"):
        return raw.strip().strip("'")
    nums = numbers(raw)
    if not nums:
        return None
    v = nums[0]
    return round(v / 1e6, 1) if a.kind == "money" and v >= 1e5 else (
        v if a.kind == "money" else int(v))


def extract_tables(c: Collection, extractor: dict[str, list[tuple[str, re.Pattern]]]
                   ) -> dict[str, list[list[Any]]]:
    """The gold tables with every attribute cell replaced by what the regexes extract."""
    fam: Family = c.world.family
    canon, table_attrs = {}, {}
    for e in c.world.members + c.world.links:
        for n in [e.name] + e.aliases:
            canon[n.lower()] = e.name
        attrs = fam.link_attrs if e.role == "link" else fam.attrs
        table_attrs[e.name] = {a.column: a for a in attrs}
    found: dict[tuple[str, str], Any] = {}
    for d in c.documents:
        for sentence, _ in d.sentences:
            for kind in ("members", "link"):
                for column, pat in extractor[kind]:
                    m = pat.match(sentence)
                    if not m:
                        continue
                    ref = m.group("ent").strip()
                    generic = ref.lower().startswith("the ") or ref.lower() in ("it", "she",
                                                                                 "he")
                    name = d.subject if generic else canon.get(ref.lower())
                    a = table_attrs.get(name or "", {}).get(column)
                    value = _parse(a, m.group("v").rstrip(".")) if a else None
                    if name and value is not None:
                        found[(name, column)] = value
    rows = {t: [list(r) for r in rs] for t, rs in c.rows.items()}
    for table, attrs in ((fam.members, fam.attrs), (fam.link_table, fam.link_attrs)):
        for r in rows[table]:
            for i, a in enumerate(attrs, start=1):
                r[i] = found.get((r[0], a.column))
    return rows


def regex_score(c: Collection, extractor: dict[str, list[tuple[str, re.Pattern]]]) -> float:
    """Mean score of the questions of ``c`` answered by SQL over regex-extracted tables."""
    con = connect(c.columns, extract_tables(c, extractor))
    try:
        scores = []
        for q in c.questions:
            try:
                rows = run(con, q.sql)[1]
            except duckdb.Error:  # SQL over garbage the regexes extracted: a wrong answer
                rows = []
            scores.append(score(q.gold, answer_text(q.gold, rows)))
    finally:
        con.close()
    return sum(scores) / max(len(scores), 1)


def single_doc_answerable(questions: list[Question]) -> list[Question]:
    """Statistics questions of Set2/Set3 whose needed cells all sit in one document."""
    return [q for q in questions if q.category == "Statistics" and q.bin in ("set2", "set3")
            and q.knobs.get("single_doc_coverage", 0.0) >= 1.0]


def oracle_score(folder: str | Path) -> float:
    """Gold tables from disk + each question's SQL: the share of questions whose re-run rows
    equal the stored ones and whose answer text scores 1."""
    folder = Path(folder)
    columns, rows = {}, {}
    for path in sorted((folder / "tables").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        columns[path.stem] = [tuple(c) for c in data["columns"]]
        rows[path.stem] = data["rows"]
    con = connect(columns, rows)
    try:
        ok = 0
        questions = load_questions(folder)
        for q in questions:
            got = [[round(v, 6) if isinstance(v, float) else v for v in r]
                   for r in run(con, q.sql)[1]]
            ok += got == q.rows and score(q.gold, answer_text(q.gold, got)) == 1.0
    finally:
        con.close()
    return ok / max(len(questions), 1)
