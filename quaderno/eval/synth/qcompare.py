"""Comparison questions: Intercomparison and Superlative (margins make ties impossible)."""

from __future__ import annotations

from quaderno.eval.synth.qbase import (Ctx, Draft, cat_attr, groups_of, num_attr, q,
                                       sup_word, two)


def ic_pair(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    pair = two(c, a)
    if not pair:
        return None
    x, y = pair
    more = "later" if a.kind == "year" else "higher"
    return Draft(f"Which has the {more} {a.label}, {x} or {y}?",
                 f"SELECT name FROM {f.members} WHERE name IN ({q(x)}, {q(y)}) "
                 f"ORDER BY {a.column} DESC LIMIT 1", "name", [f"{f.members}.{a.column}"],
                 [x, y], f"SELECT {a.column} FROM {f.members} WHERE name IN ({q(x)}, {q(y)}) "
                 f"ORDER BY 1 DESC", wrong_sql=f"SELECT name FROM {f.members} WHERE name IN "
                 f"({q(x)}, {q(y)})", margin_kind=a.kind)


def ic_groups(c: Ctx) -> Draft | None:
    f, a, g = c.fam, num_attr(c, ("count", "money")), cat_attr(c)
    groups = groups_of(c, g.column)
    if len(groups) < 2:
        return None
    x, y = c.rng.sample(groups, 2)
    avg = f"(SELECT AVG({a.column}) FROM {f.members} WHERE {g.column} = {{}})"
    return Draft(f"Do {f.members} of the {c.world.topic} whose {g.label} is {x} have a higher "
                 f"average {a.label} than those whose {g.label} is {y}?",
                 f"SELECT CASE WHEN {avg.format(q(x))} > {avg.format(q(y))} THEN 'yes' "
                 "ELSE 'no' END", "boolean", [f"{f.members}.{a.column}",
                                              f"{f.members}.{g.column}"],
                 margin_sql=f"SELECT AVG({a.column}) FROM {f.members} WHERE {g.column} IN "
                 f"({q(x)}, {q(y)}) GROUP BY {g.column} ORDER BY 1 DESC")


def ic_diff(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    pair = two(c, a)
    if not pair:
        return None
    x, y = pair
    val = f"(SELECT {a.column} FROM {f.members} WHERE name = {{}})"
    return Draft(f"What is the difference in {a.label} between {x} and {y}?",
                 f"SELECT ABS({val.format(q(x))} - {val.format(q(y))})", "number",
                 [f"{f.members}.{a.column}"], [x, y], money=a.kind == "money",
                 is_year=a.kind == "year")


def sup_order(c: Ctx) -> Draft | None:
    f, a, high = c.fam, num_attr(c), c.rng.random() < 0.5
    order = "DESC" if high else "ASC"
    return Draft(f"Which {f.member} of the {c.world.topic} has the {sup_word(a, high)} {a.label}?",
                 f"SELECT name FROM {f.members} WHERE {a.column} IS NOT NULL "
                 f"ORDER BY {a.column} {order} LIMIT 1", "name", [f"{f.members}.{a.column}"],
                 margin_sql=f"SELECT {a.column} FROM {f.members} WHERE {a.column} IS NOT NULL "
                 f"ORDER BY 1 {order} LIMIT 2",
                 wrong_sql=f"SELECT name FROM {f.members} WHERE {a.column} IS NOT NULL "
                 f"ORDER BY {a.column} {order} LIMIT 3 OFFSET 1", margin_kind=a.kind)


def sup_minmax(c: Ctx) -> Draft | None:
    f, a, high = c.fam, num_attr(c), c.rng.random() < 0.5
    fn = "MAX" if high else "MIN"
    return Draft(f"What is the {sup_word(a, high)} {a.label} among the {f.members} of the "
                 f"{c.world.topic}?", f"SELECT {fn}({a.column}) FROM {f.members}", "number",
                 [f"{f.members}.{a.column}"], money=a.kind == "money", is_year=a.kind == "year")


def sup_filtered(c: Ctx) -> Draft | None:
    f, a, g, high = c.fam, num_attr(c), cat_attr(c), c.rng.random() < 0.5
    groups = groups_of(c, g.column)
    if not groups:
        return None
    v, order = c.rng.choice(groups), "DESC" if high else "ASC"
    where = f"{g.column} = {q(v)} AND {a.column} IS NOT NULL"
    return Draft(f"Among the {f.members} whose {g.label} is {v}, which has the "
                 f"{sup_word(a, high)} {a.label}?",
                 f"SELECT name FROM {f.members} WHERE {where} ORDER BY {a.column} {order} "
                 "LIMIT 1", "name", [f"{f.members}.{a.column}", f"{f.members}.{g.column}"],
                 margin_sql=f"SELECT {a.column} FROM {f.members} WHERE {where} ORDER BY 1 "
                 f"{order} LIMIT 2", wrong_sql=f"SELECT name FROM {f.members} WHERE {where} "
                 f"ORDER BY {a.column} {order} LIMIT 3 OFFSET 1", margin_kind=a.kind)


def sup_top3(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c, ("count", "money"))
    base = f"FROM {f.members} WHERE {a.column} IS NOT NULL ORDER BY {a.column} DESC"
    return Draft(f"Name the three {f.members} of the {c.world.topic} with the highest "
                 f"{a.label}.", f"SELECT name {base} LIMIT 3", "names",
                 [f"{f.members}.{a.column}"], margin_sql=f"SELECT {a.column} {base} LIMIT 4",
                 margin_k=3, wrong_sql=f"SELECT name {base} OFFSET 3", margin_kind=a.kind)
