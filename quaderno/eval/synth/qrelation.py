"""Relationship questions: Descriptive Relationship and Hypothetical Scenarios, over 2-hop
joins (members → linked table, members → membership)."""

from __future__ import annotations

from typing import Any

from quaderno.eval.synth.qbase import (Ctx, Draft, cat_attr, cut, fmt, groups_of, num_attr, q,
                                       sup_word, two)
from quaderno.eval.synth.templates import ROLE_WORDS, an

def _join(f: Any) -> str:
    return f"FROM {f.members} t JOIN {f.link_table} l ON t.{f.link_role} = l.name"


def rel_link_of_top(c: Ctx) -> Draft | None:
    f, a, high = c.fam, num_attr(c), c.rng.random() < 0.5
    order, role = "DESC" if high else "ASC", ROLE_WORDS[f.link_role]
    base = f"{_join(f)} WHERE t.{a.column} IS NOT NULL ORDER BY t.{a.column} {order}"
    return Draft(f"What is the {role} of the {f.member} with the {sup_word(a, high)} {a.label} in "
                 f"the {c.world.topic}?", f"SELECT l.name {base} LIMIT 1", "name",
                 [f"{f.members}.{a.column}", f"{f.members}.{f.link_role}"],
                 margin_sql=f"SELECT t.{a.column} {base} LIMIT 2",
                 wrong_sql=f"SELECT l.name {base} OFFSET 1", margin_kind=a.kind)


def rel_count_by_link(c: Ctx) -> Draft | None:
    f = c.fam
    cats = [a for a in f.link_attrs if a.kind == "category"]
    g, role = c.rng.choice(cats), ROLE_WORDS[f.link_role]
    vals = c.values(f"SELECT DISTINCT l.{g.column} {_join(f)} ORDER BY 1")
    if not vals:
        return None
    v = c.rng.choice(vals)
    return Draft(f"How many {f.members} of the {c.world.topic} have {an(role)} whose {g.label} "
                 f"is {v}?", f"SELECT COUNT(*) {_join(f)} WHERE l.{g.column} = {q(v)}",
                 "number", [f"{f.members}.{f.link_role}", f"{f.link_table}.{g.column}"])


def rel_list_by_link(c: Ctx) -> Draft | None:
    f = c.fam
    ys = [a for a in f.link_attrs if a.kind in ("year", "count")]
    y, role = c.rng.choice(ys), ROLE_WORDS[f.link_role]
    t = cut(c, y, f.link_table)
    if t is None:
        return None
    word = "before" if y.kind == "year" else "below"
    return Draft(f"Which {f.members} of the {c.world.topic} have {an(role)} with {an(y.label)} "
                 f"{word} {fmt(y, t)}?",
                 f"SELECT t.name {_join(f)} WHERE l.{y.column} < {t} ORDER BY 1", "names",
                 [f"{f.members}.{f.link_role}", f"{f.link_table}.{y.column}"],
                 wrong_sql=f"SELECT t.name {_join(f)} WHERE l.{y.column} >= {t}")


def rel_avg_by_link(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c, ("count", "money"))
    g = next(x for x in f.link_attrs if x.kind == "category")
    vals = c.values(f"SELECT l.{g.column} {_join(f)} GROUP BY 1 HAVING COUNT(*) >= 2 "
                    "ORDER BY 1")
    if not vals:
        return None
    v, role = c.rng.choice(vals), ROLE_WORDS[f.link_role]
    return Draft(f"What is the average {a.label} of the {f.members} in the {c.world.topic} "
                 f"whose {role} has {g.label} {v}?",
                 f"SELECT ROUND(AVG(t.{a.column}), 2) {_join(f)} WHERE l.{g.column} = {q(v)}",
                 "number", [f"{f.members}.{a.column}", f"{f.members}.{f.link_role}",
                            f"{f.link_table}.{g.column}"], money=a.kind == "money")


def hyp_leave_after(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c, ("count", "money", "year"))
    years = sorted(c.values("SELECT joined FROM membership WHERE left_year IS NULL"))
    if len(years) < 4:
        return None
    y = years[len(years) * 2 // 3]
    return Draft(f"If every {f.member} that {f.join_verb} the {c.world.topic} after {y} left "
                 f"it, what would the average {a.label} of the remaining {f.members} be?",
                 f"SELECT ROUND(AVG(t.{a.column}), 2) FROM {f.members} t JOIN membership m ON "
                 f"m.member = t.name WHERE m.left_year IS NULL AND m.joined <= {y}", "number",
                 [f"{f.members}.{a.column}", "membership.joined"], money=a.kind == "money",
                 abs_tol=0.5 if a.kind == "year" else None)


def hyp_growth(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c, ("count", "money"))
    pair = two(c, a)
    if not pair:
        return None
    x, y = pair
    pct = c.rng.choice((10, 20, 25, 50))
    val = f"(SELECT {a.column} FROM {f.members} WHERE name = {{}})"
    grown = f"{val.format(q(x))} * {1 + pct / 100}"
    return Draft(f"If the {a.label} of {x} grew by {pct}%, would it exceed that of {y}?",
                 f"SELECT CASE WHEN {grown} > {val.format(q(y))} THEN 'yes' ELSE 'no' END",
                 "boolean", [f"{f.members}.{a.column}"], [x, y],
                 margin_sql=f"SELECT * FROM (SELECT {grown} UNION ALL SELECT "
                 f"{val.format(q(y))}) ORDER BY 1 DESC")


def hyp_without_group(c: Ctx) -> Draft | None:
    f, a, g = c.fam, num_attr(c), cat_attr(c)
    groups = groups_of(c, g.column)
    if not groups:
        return None
    v = c.rng.choice(groups)
    where = f"({g.column} IS NULL OR {g.column} <> {q(v)}) AND {a.column} IS NOT NULL"
    return Draft(f"If the {f.members} whose {g.label} is {v} left the {c.world.topic}, which "
                 f"{f.member} would have the {sup_word(a, True)} {a.label}?",
                 f"SELECT name FROM {f.members} WHERE {where} ORDER BY {a.column} DESC LIMIT 1",
                 "name", [f"{f.members}.{a.column}", f"{f.members}.{g.column}"],
                 margin_sql=f"SELECT {a.column} FROM {f.members} WHERE {where} ORDER BY 1 DESC "
                 "LIMIT 2", wrong_sql=f"SELECT name FROM {f.members} WHERE {where} ORDER BY "
                 f"{a.column} DESC LIMIT 3 OFFSET 1", margin_kind=a.kind)


def hyp_link_leave(c: Ctx) -> Draft | None:
    f = c.fam
    g = next(x for x in f.link_attrs if x.kind == "category")
    vals = c.values(f"SELECT DISTINCT l.{g.column} {_join(f)} ORDER BY 1")
    if not vals:
        return None
    v, role = c.rng.choice(vals), ROLE_WORDS[f.link_role]
    return Draft(f"If all {f.members} whose {role} has {g.label} {v} withdrew from the "
                 f"{c.world.topic}, how many {f.members} would remain?",
                 f"SELECT COUNT(*) {_join(f)} WHERE l.{g.column} IS NULL OR l.{g.column} <> "
                 f"{q(v)}", "number", [f"{f.members}.{f.link_role}",
                                       f"{f.link_table}.{g.column}"])
