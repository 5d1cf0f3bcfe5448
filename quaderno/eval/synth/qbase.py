"""What question templates share: the context, the draft, and helpers.

A template gets a :class:`Ctx` (the world, its gold DB and the rng) and returns a
:class:`Draft` (the SQL, the question asking for it and what its answer depends on) or
``None`` when the world offers nothing for it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import duckdb

from quaderno.eval.synth.families import Attr, Family
from quaderno.eval.synth.gold import run
from quaderno.eval.synth.score import AnswerKind
from quaderno.eval.synth.world import World


@dataclass
class Ctx:
    world: World
    con: duckdb.DuckDBPyConnection
    rng: random.Random

    @property
    def fam(self) -> Family:
        return self.world.family

    def values(self, sql: str) -> list[Any]:
        return [r[0] for r in run(self.con, sql)[1] if r[0] is not None]


@dataclass
class Draft:
    question: str
    sql: str
    kind: AnswerKind
    columns: list[str]  # "table.column" the answer depends on
    named: list[str] = field(default_factory=list)  # members the question names ([]: all)
    margin_sql: str = ""  # ordered key values: the top must beat the runner-up
    margin_k: int = 1  # for top-k lists: compare the k-th and (k+1)-th
    money: bool = False
    money_power: int = 1  # 2: the value is in square millions of dollars (a variance)
    is_year: bool = False
    wrong_sql: str = ""  # names that make a name answer wrong (runner-ups, other groups)
    margin_kind: str = ""  # the kind of the ordered values (year, count, money)
    abs_tol: float | None = None  # averages and medians of years: within half a year


def q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def num_attr(c: Ctx, kinds: tuple[str, ...] = ("year", "count", "money")) -> Attr:
    return c.rng.choice([a for a in c.fam.attrs if a.kind in kinds])


def cat_attr(c: Ctx) -> Attr:
    return c.rng.choice(c.fam.categorical())


def sup_word(a: Attr, high: bool) -> str:
    if a.kind == "year":
        return "latest" if high else "earliest"
    return "highest" if high else "lowest"


def cut(c: Ctx, a: Attr, table: str | None = None) -> float | None:
    """A threshold between two neighbouring values, away from both."""
    vals = sorted(set(c.values(f"SELECT {a.column} FROM {table or c.fam.members}")))
    gaps = [(lo, hi) for lo, hi in zip(vals, vals[1:], strict=False)
            if hi - lo >= (4 if a.kind == "year" else max(0.06 * hi, 2 * a.step))]
    if not gaps:
        return None
    lo, hi = c.rng.choice(gaps[len(gaps) // 5: max(len(gaps) * 4 // 5, 1)] or gaps)
    mid = (lo + hi) / 2
    return round(mid, 1) if a.kind == "money" else int(mid)


def fmt(a: Attr, v: float) -> str:
    return f"${v:g} million" if a.kind == "money" else f"{v:,}" if a.kind == "count" else f"{v}"


def two(c: Ctx, a: Attr) -> list[str] | None:
    names = c.values(f"SELECT name FROM {c.fam.members} WHERE {a.column} IS NOT NULL "
                     "ORDER BY name")
    return c.rng.sample(names, 2) if len(names) >= 2 else None


def groups_of(c: Ctx, col: str) -> list[str]:
    return c.values(f"SELECT {col} FROM {c.fam.members} WHERE {col} IS NOT NULL GROUP BY {col} "
                    f"HAVING COUNT(*) >= 2 ORDER BY {col}")
