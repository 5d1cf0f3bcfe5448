"""Statistics questions: Aggregation, Distribution Compliance, Correlation Analysis and
Variance Analysis (COUNT/AVG/SUM, GROUP BY, HAVING, CASE buckets, BETWEEN, MEDIAN, CORR,
VAR_SAMP)."""

from __future__ import annotations

from quaderno.eval.synth.qbase import (Ctx, Draft, cat_attr, cut, fmt, groups_of, num_attr, q)
from quaderno.eval.synth.templates import ROLE_WORDS, an

def agg_avg(c: Ctx) -> Draft | None:
    f, a, g = c.fam, num_attr(c, ("count", "money", "year")), cat_attr(c)
    groups = groups_of(c, g.column)
    if not groups:
        return None
    v = c.rng.choice(groups)
    return Draft(f"What is the average {a.label} of the {f.members} in the {c.world.topic} "
                 f"whose {g.label} is {v}?",
                 f"SELECT ROUND(AVG({a.column}), 2) FROM {f.members} WHERE {g.column} = {q(v)}",
                 "number", [f"{f.members}.{a.column}", f"{f.members}.{g.column}"],
                 money=a.kind == "money",
                 abs_tol=0.5 if a.kind == "year" else None)


def agg_sum_joined(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c, ("count", "money"))
    years = sorted(c.values("SELECT joined FROM membership WHERE left_year IS NULL"))
    if len(years) < 4:
        return None
    y = years[len(years) // 2]
    return Draft(f"What is the total {a.label} of the {f.members} that {f.join_verb} the "
                 f"{c.world.topic} in {y} or later?",
                 f"SELECT SUM(t.{a.column}) FROM {f.members} t JOIN membership m ON "
                 f"m.member = t.name WHERE m.left_year IS NULL AND m.joined >= {y}", "number",
                 [f"{f.members}.{a.column}", "membership.joined"], money=a.kind == "money")


def agg_count_above(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    t = cut(c, a)
    if t is None:
        return None
    word = "after" if a.kind == "year" else "above"
    return Draft(f"How many {f.members} of the {c.world.topic} have {an(a.label)} {word} "
                 f"{fmt(a, t)}?", f"SELECT COUNT(*) FROM {f.members} WHERE {a.column} > {t}",
                 "number", [f"{f.members}.{a.column}"])


def agg_top_group(c: Ctx) -> Draft | None:
    f, g = c.fam, cat_attr(c)
    return Draft(f"Which {g.label} is most common among the {f.members} of the "
                 f"{c.world.topic}?",
                 f"SELECT {g.column} FROM {f.members} WHERE {g.column} IS NOT NULL GROUP BY "
                 f"{g.column} ORDER BY COUNT(*) DESC LIMIT 1", "category",
                 [f"{f.members}.{g.column}"], margin_sql=f"SELECT COUNT(*) FROM {f.members} "
                 f"WHERE {g.column} IS NOT NULL GROUP BY {g.column} ORDER BY 1 DESC LIMIT 2",
                 wrong_sql=f"SELECT DISTINCT {g.column} FROM {f.members}")


def agg_distinct(c: Ctx) -> Draft | None:
    f, g = c.fam, cat_attr(c)
    return Draft(f"How many different {g.label} values occur among the {f.members} of the "
                 f"{c.world.topic}?", f"SELECT COUNT(DISTINCT {g.column}) FROM {f.members}",
                 "number", [f"{f.members}.{g.column}"])


def dist_between(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    t1, t2 = cut(c, a), cut(c, a)
    if t1 is None or t2 is None or t1 == t2:
        return None
    lo, hi = min(t1, t2), max(t1, t2)
    return Draft(f"How many {f.members} of the {c.world.topic} have {an(a.label)} between "
                 f"{fmt(a, lo)} and {fmt(a, hi)}?",
                 f"SELECT COUNT(*) FROM {f.members} WHERE {a.column} BETWEEN {lo} AND {hi}",
                 "number", [f"{f.members}.{a.column}"])


def dist_buckets(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    t1, t2 = cut(c, a), cut(c, a)
    if t1 is None or t2 is None or t1 == t2:
        return None
    lo, hi = min(t1, t2), max(t1, t2)
    case = (f"CASE WHEN {a.column} < {lo} THEN 'below {fmt(a, lo)}' WHEN {a.column} <= {hi} "
            f"THEN '{fmt(a, lo)} to {fmt(a, hi)}' ELSE 'above {fmt(a, hi)}' END")
    src = f"FROM {f.members} WHERE {a.column} IS NOT NULL GROUP BY bucket"
    return Draft(f"Grouping the {f.members} of the {c.world.topic} by {a.label} into below "
                 f"{fmt(a, lo)}, {fmt(a, lo)} to {fmt(a, hi)}, and above {fmt(a, hi)}, "
                 "which group is the largest?",
                 f"SELECT {case} AS bucket {src} ORDER BY COUNT(*) DESC LIMIT 1", "category",
                 [f"{f.members}.{a.column}"],
                 margin_sql=f"SELECT COUNT(*), {case} AS bucket {src} ORDER BY 1 DESC LIMIT 2",
                 wrong_sql=f"SELECT {case} AS bucket {src}")


def dist_share(c: Ctx) -> Draft | None:
    f, g = c.fam, cat_attr(c)
    groups = groups_of(c, g.column)
    if not groups:
        return None
    v = c.rng.choice(groups)
    return Draft(f"What percentage of the {f.members} of the {c.world.topic} have {v} as "
                 f"their {g.label}?", f"SELECT ROUND(100.0 * COUNT(*) FILTER (WHERE {g.column} "
                 f"= {q(v)}) / COUNT(*), 2) FROM {f.members}", "number",
                 [f"{f.members}.{g.column}"])


def dist_median(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    return Draft(f"What is the median {a.label} of the {f.members} of the {c.world.topic}?",
                 f"SELECT MEDIAN({a.column}) FROM {f.members}", "number",
                 [f"{f.members}.{a.column}"], money=a.kind == "money",
                 abs_tol=0.5 if a.kind == "year" else None)


def dist_having(c: Ctx) -> Draft | None:
    f, g = c.fam, cat_attr(c)
    counts = sorted(c.values(f"SELECT COUNT(*) FROM {f.members} WHERE {g.column} IS NOT NULL "
                             f"GROUP BY {g.column}"))
    if len(counts) < 3:
        return None
    k = counts[len(counts) // 2]
    src = f"FROM {f.members} WHERE {g.column} IS NOT NULL GROUP BY {g.column}"
    return Draft(f"Which {g.label} values are shared by at least {k} {f.members} of the "
                 f"{c.world.topic}?", f"SELECT {g.column} {src} HAVING COUNT(*) >= {k} "
                 f"ORDER BY 1", "names", [f"{f.members}.{g.column}"],
                 wrong_sql=f"SELECT {g.column} {src} HAVING COUNT(*) < {k}")


def corr_pair(c: Ctx, planted: bool) -> Draft | None:
    f = c.fam
    if planted:
        x, y = (f.attr(col) for col in f.corr)
    else:
        x, y = c.rng.sample(f.numeric(), 2)
    return Draft(f"Is there a correlation between the {x.label} and the {y.label} of the "
                 f"{f.members} in the {c.world.topic}?",
                 f"SELECT CORR({x.column}, {y.column}) FROM {f.members}", "correlation",
                 [f"{f.members}.{x.column}", f"{f.members}.{y.column}"])


def corr_planted(c: Ctx) -> Draft | None:
    return corr_pair(c, True)


def corr_random(c: Ctx) -> Draft | None:
    return corr_pair(c, False)


def corr_subset(c: Ctx) -> Draft | None:
    """The planted pair within the members of one group (different SQL, often the same r)."""
    f, g = c.fam, cat_attr(c)
    groups = groups_of(c, g.column)
    if not groups:
        return None
    v = c.rng.choice(groups)
    x, y = (f.attr(col) for col in f.corr)
    return Draft(f"Among the {f.members} of the {c.world.topic} whose {g.label} is {v}, is "
                 f"there a correlation between {x.label} and {y.label}?",
                 f"SELECT CORR({x.column}, {y.column}) FROM {f.members} WHERE {g.column} = "
                 f"{q(v)}", "correlation", [f"{f.members}.{x.column}",
                                            f"{f.members}.{y.column}",
                                            f"{f.members}.{g.column}"])


def corr_link(c: Ctx) -> Draft | None:
    f, x = c.fam, num_attr(c, ("count", "money"))
    ys = [a for a in f.link_attrs if a.numeric]
    if not ys:
        return None
    y, role = c.rng.choice(ys), ROLE_WORDS[f.link_role]
    return Draft(f"How does the {x.label} of the {f.members} in the {c.world.topic} relate "
                 f"to the {y.label} of their {role}: is there a correlation?",
                 f"SELECT CORR(t.{x.column}, l.{y.column}) FROM {f.members} t JOIN "
                 f"{f.link_table} l ON t.{f.link_role} = l.name", "correlation",
                 [f"{f.members}.{x.column}", f"{f.members}.{f.link_role}",
                  f"{f.link_table}.{y.column}"])


def var_value(c: Ctx) -> Draft | None:
    f, a = c.fam, num_attr(c)
    return Draft(f"What is the sample variance of the {a.label} across the {f.members} of "
                 f"the {c.world.topic}?", f"SELECT ROUND(VAR_SAMP({a.column}), 2) FROM "
                 f"{f.members}", "number", [f"{f.members}.{a.column}"],
                 money=a.kind == "money", money_power=2)


def var_group(c: Ctx) -> Draft | None:
    f, a, g = c.fam, num_attr(c, ("count", "money")), cat_attr(c)
    src = (f"FROM {f.members} WHERE {a.column} IS NOT NULL AND {g.column} IS NOT NULL "
           f"GROUP BY {g.column} HAVING COUNT(*) >= 3")
    return Draft(f"Which {g.label} group of the {f.members} in the {c.world.topic} shows the "
                 f"largest variance in {a.label}?",
                 f"SELECT {g.column} {src} ORDER BY VAR_SAMP({a.column}) DESC LIMIT 1",
                 "category", [f"{f.members}.{a.column}", f"{f.members}.{g.column}"],
                 margin_sql=f"SELECT VAR_SAMP({a.column}) {src} ORDER BY 1 DESC LIMIT 2",
                 wrong_sql=f"SELECT {g.column} {src}")


def var_gap(c: Ctx) -> Draft | None:
    f = c.fam
    g, a = f.attr(f.gap[0]), f.attr(f.gap[1])
    src = f"FROM {f.members} WHERE {g.column} IS NOT NULL GROUP BY {g.column}"
    return Draft(f"Does the {a.label} differ between {g.label} groups of the {f.members} in "
                 f"the {c.world.topic}? Which {g.label} has the highest average {a.label}?",
                 f"SELECT {g.column} {src} ORDER BY AVG({a.column}) DESC LIMIT 1", "category",
                 [f"{f.members}.{a.column}", f"{f.members}.{g.column}"],
                 margin_sql=f"SELECT AVG({a.column}) {src} ORDER BY 1 DESC LIMIT 2",
                 wrong_sql=f"SELECT {g.column} {src}")
