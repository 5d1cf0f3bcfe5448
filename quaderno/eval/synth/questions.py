"""Questions written SQL-first, executed on the gold DB, kept only when well posed.

A draft from :mod:`.qtemplates` is rejected when its result is empty, all NULL or a zero
count, when its answer rests on a tie (the top value does not beat the runner-up by an
explicit margin: 3 years, 3% or 3 steps for counts and money, one member for counts of
members), when a correlation's coefficient lies within 0.05 of a label boundary, or when
too few rows support it. The kept question's gold is the executed result, its normalized
answer string and the SQL.
"""

from __future__ import annotations

import logging
import math
import random
import re
from collections import Counter
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from quaderno.eval.synth.gold import run
from quaderno.eval.synth.qtemplates import CATEGORIES, TYPES, Ctx, Draft
from quaderno.eval.synth.score import STRENGTH_CUTS, Gold, corr_label
from quaderno.eval.synth.world import World

log = logging.getLogger(__name__)

CORR_BOUNDARY = 0.05
MIN_CORR_ROWS = 5
MAX_SAME_ANSWER = 0.5  # share of a type's yes/no or correlation labels one answer may take


class Question(BaseModel):
    id: str
    question: str
    category: str
    type: str
    bin: str
    family: str
    template: str
    sql: str
    result_columns: list[str]
    rows: list[list[Any]]
    gold: Gold
    columns: list[str]  # "table.column" the answer depends on
    named: list[str] = Field(default_factory=list)
    entities: int  # members of the topic (the bin's entity count)
    knobs: dict[str, Any] = Field(default_factory=dict)


class Rejected(Exception):
    """A draft that does not make a well-posed question (the reason is the message)."""


def _margin_ok(values: list[Any], k: int, draft: Draft) -> bool:
    vals = [v for v in values if v is not None]
    if len(vals) <= k:
        return True  # nothing after the k-th: no tie possible
    top, nxt = float(vals[k - 1]), float(vals[k])
    gap, size = abs(top - nxt), max(abs(top), abs(nxt))
    if draft.margin_sql.lstrip().upper().startswith("SELECT COUNT"):
        return gap >= 1
    if draft.margin_kind == "year":
        return gap >= 3
    if draft.margin_kind == "count":
        return gap >= max(3.0, 0.03 * size)
    if draft.margin_kind == "money":
        return gap >= max(0.3, 0.03 * size)
    return gap >= 0.05 * size  # averages, variances, hypothetical comparisons


def _gold(draft: Draft, cols: list[str], rows: list[list[Any]],
          con: duckdb.DuckDBPyConnection, aliases: dict[str, list[str]]) -> Gold:
    if not rows or all(v is None for r in rows for v in r):
        raise Rejected("empty or all-NULL result")
    first = rows[0][0]
    if draft.kind == "number":
        if first is None or (isinstance(first, float) and math.isnan(first)):
            raise Rejected("NULL number")
        if "COUNT(" in draft.sql.split("FROM")[0] and first == 0:
            raise Rejected("zero count")
        v = float(first)
        text = str(int(v)) if v == int(v) else f"{v:.2f}".rstrip("0").rstrip(".")
        # (a variance of money keeps its bare number, as before its unit was recorded)
        text += " million dollars" if draft.money and draft.money_power == 1 else ""
        return Gold(kind="number", answer=text, value=v, is_year=draft.is_year,
                    money=draft.money, money_power=draft.money_power if draft.money else 1,
                    abs_tol=draft.abs_tol)
    if draft.kind == "correlation":
        r = float(first)
        if any(abs(abs(r) - cut) < CORR_BOUNDARY for cut in STRENGTH_CUTS):
            raise Rejected(f"correlation {r:.3f} too close to a label boundary")
        return Gold(kind="correlation", answer=corr_label(r), value=round(r, 4),
                    items=[corr_label(r)])
    if draft.kind == "boolean":
        return Gold(kind="boolean", answer=str(first), items=[str(first)])
    items = [str(r[0]) for r in rows if r[0] is not None]
    wrong = ([str(r[0]) for r in run(con, draft.wrong_sql)[1] if r[0] is not None]
             if draft.wrong_sql else [])
    wrong = sorted(w for w in dict.fromkeys(wrong) if w not in items)
    # a wrong candidate that contains a gold name (or the reverse) would make matching ambiguous
    if any(w.lower() in i.lower() or i.lower() in w.lower() for w in wrong for i in items):
        raise Rejected("a wrong candidate overlaps a gold item")
    if draft.kind == "names" and not 1 <= len(items) <= 8:
        raise Rejected(f"list of {len(items)} items")
    return Gold(kind=draft.kind, answer=", ".join(items), items=items,
                aliases={i: aliases[i] for i in items if aliases.get(i)}, wrong=wrong)


def finalize(draft: Draft, con: duckdb.DuckDBPyConnection,
             aliases: dict[str, list[str]]) -> tuple[list[str], list[list[Any]], Gold]:
    """Execute ``draft``; its result columns, rows and gold, or :class:`Rejected`."""
    if draft.margin_sql:
        _, mrows = run(con, draft.margin_sql)
        if not _margin_ok([r[0] for r in mrows], draft.margin_k, draft):
            raise Rejected("tie or margin below the threshold")
    if draft.kind == "correlation":
        n = run(con, re.sub(r"CORR\(([^,]+), ([^)]+)\)", r"COUNT(\1 + \2)", draft.sql))[1][0][0]
        if n < MIN_CORR_ROWS:
            raise Rejected(f"correlation over {n} rows")
    cols, rows = run(con, draft.sql)
    rows = [[round(v, 6) if isinstance(v, float) else v for v in r] for r in rows]
    return cols, rows, _gold(draft, cols, rows, con, aliases)


def alias_map(world: World) -> dict[str, list[str]]:
    return {e.name: list(e.aliases) for e in world.members + world.links}


def generate(world: World, con: duckdb.DuckDBPyConnection, *, per_type: int, bin_name: str,
             rng: random.Random, prefix: str, attempts: int = 60) -> list[Question]:
    """``per_type`` questions of each of the eight types (fewer, logged, if the world has
    too few well-posed ones)."""
    ctx = Ctx(world, con, rng)
    aliases = alias_map(world)
    out: list[Question] = []
    seen: set[str] = set()
    for qtype, templates in TYPES.items():
        kept, answers = 0, Counter[str]()
        cap = max(1, math.ceil(per_type * MAX_SAME_ANSWER))
        for attempt in range(attempts * per_type):
            if kept >= per_type:
                break
            template = templates[(kept + attempt) % len(templates)]
            draft = template(ctx)
            if draft is None or draft.sql in seen:
                continue
            seen.add(draft.sql)
            try:
                cols, rows, gold = finalize(draft, con, aliases)
            except Rejected as why:
                log.debug("rejected %s: %s", draft.sql, why)
                continue
            if gold.kind in ("boolean", "correlation") and answers[gold.answer] >= cap \
                    and attempt < attempts * per_type // 2:
                continue  # keep a type's labels balanced: "no" or "no correlation" always
            answers[gold.answer] += 1
            out.append(Question(
                id=f"{prefix}-q{len(out):03d}", question=draft.question,
                category=CATEGORIES[qtype], type=qtype, bin=bin_name,
                family=world.family.key, template=getattr(template, "__name__", "corr"),
                sql=draft.sql, result_columns=cols, rows=rows, gold=gold,
                columns=draft.columns, named=draft.named, entities=len(world.members)))
            kept += 1
        if kept < per_type:
            log.warning("%s: only %d of %d %s questions", prefix, kept, per_type, qtype)
    return out
