"""A seeded fictional world: the topic, its members, linked entities and distractors.

:func:`build_world` draws everything from one :class:`random.Random` seeded by the caller,
so a (family, entity count, seed) triple always gives the same world. Planted structure:
a target Pearson r between the family's correlation pair, group-mean gaps between the
groups of one category for one numeric column, controlled NULL rates, and explicit margins
between the largest two and the smallest two values of every numeric member column (no
superlative rests on a tie or flips under a ±1 extraction error).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from quaderno.errors import ConfigError
from quaderno.eval.synth.families import Attr, Family
from quaderno.eval.synth.names import NameBook, acronym

Role = Literal["member", "former", "outsider", "namesake", "link"]
NOW = 2024
CORR_TARGETS = (0.9, 0.8, 0.45, -0.85, -0.7, -0.45)
GAP_FACTORS = (1.0, 1.7, 2.6, 3.5, 4.5)


@dataclass
class Entity:
    name: str
    role: Role
    values: dict[str, Any]
    aliases: list[str] = field(default_factory=list)
    link: str | None = None  # the linked entity's name (members' foreign key)
    joined: int | None = None
    left: int | None = None
    old_values: dict[str, tuple[Any, int]] = field(default_factory=dict)  # column → (value, as of)
    corrections: dict[str, Any] = field(default_factory=dict)  # column → the wrong value
    negated: dict[str, Any] = field(default_factory=dict)  # column → a value denied in text
    spread: int = 1  # documents the attributes are spread over
    topic: str = ""  # the topic it belongs to (other topics for distractors)


@dataclass
class World:
    family: Family
    seed: int
    topic: str
    topic_alias: str
    rival_topic: str
    founded: int
    countries: list[str]
    members: list[Entity]
    links: list[Entity]
    distractors: list[Entity]
    corr_target: float
    gap_factors: dict[str, float]

    def member(self, name: str) -> Entity:
        for e in self.members:
            if e.name == name:
                return e
        raise ConfigError(f"no member named {name!r}")

    def link(self, name: str) -> Entity:
        for e in self.links:
            if e.name == name:
                return e
        raise ConfigError(f"no linked entity named {name!r}")


def _pattern_name(book: NameBook, rng: random.Random, patterns: tuple[str, ...],
                  person: bool) -> str:
    if person or patterns == ("",):
        return book.person()
    return rng.choice(patterns).format(X=book.fresh())


def _aliases(name: str, rng: random.Random, person: bool) -> list[str]:
    if person:
        first, last = name.split(" ", 1)
        return [f"{first[0]}. {last}", f"Dr. {last}"]
    if name.endswith(" trial"):
        return [name.removesuffix(" trial").upper()]
    acr = acronym(name)
    generic = {"University", "Institute", "Technology", "State", "College", "of", "FC",
               "Rovers", "Athletic", "United", "Holdings", "Systems", "Energy", "Bank",
               "Republic", "Pharma", "Therapeutics"}
    stem = max((w for w in name.split() if w not in generic), key=len, default=name)
    if acr != name:
        return [acr, f"{stem} {rng.choice(('Univ.', 'Inst.'))}"
                if "Univ" in name or "Institute" in name or "College" in name else stem]
    return [name[:4].upper() if len(name) > 6 else name.upper()]


def _dedupe_aliases(entities: list[Entity]) -> None:
    """An alias two entities would share (or that is another entity's name) is dropped."""
    seen = Counter(a for e in entities for a in set(e.aliases))
    names = {e.name for e in entities}
    for e in entities:
        e.aliases = [a for a in dict.fromkeys(e.aliases)
                     if a != e.name and seen[a] == 1 and a not in names]


def _step(value: float, a: Attr) -> Any:
    if a.kind == "money":
        return round(max(value, a.lo), 1)
    v = int(round(value / a.step) * a.step)
    if a.kind == "year":
        return int(min(max(v, a.lo), min(a.hi, NOW)))
    return max(v, int(a.lo) if a.lo >= a.step else int(a.step))


def _draw(a: Attr, rng: random.Random, countries: list[str]) -> Any:
    if a.kind == "category":
        return rng.choice(a.categories or tuple(countries))
    if a.kind == "year":
        return rng.randint(int(a.lo), int(a.hi))
    if a.kind in ("count", "money"):  # log-uniform: sizes spread over orders of magnitude
        lo = max(a.lo, a.step)
        return _step(math.exp(rng.uniform(math.log(lo), math.log(a.hi))), a)
    raise ConfigError(f"cannot draw a {a.kind} value for {a.column!r}")


def _margin(a: Attr, value: float) -> float:
    if a.kind == "year":
        return 3
    if a.kind == "money":
        return max(0.3, abs(value) * 0.03)
    return max(3 * a.step, abs(value) * 0.03)


def _plant_margins(entities: list[Entity], a: Attr) -> None:
    """Top-1 and bottom-1 values get an explicit margin over the runner-up."""
    vals = sorted((e.values[a.column], i) for i, e in enumerate(entities)
                  if e.values.get(a.column) is not None)
    if len(vals) < 3:
        return
    (v2, _), (v1, i1) = vals[-2], vals[-1]
    if v1 - v2 < _margin(a, v2):
        entities[i1].values[a.column] = _step(v2 + _margin(a, v2) * 1.5 + a.step, a)
    (b1, j1), (b2, _) = vals[0], vals[1]
    if b2 - b1 < _margin(a, b2):
        low = b2 - _margin(a, b2) * 1.5 - a.step
        if a.kind != "year" and low <= 0:
            low = b2 / 2
        entities[j1].values[a.column] = _step(low, a) if a.kind != "year" else int(low)


def _plant_corr(rng: random.Random, entities: list[Entity], a: Attr, b: Attr,
                r: float) -> None:
    """Affine maps of correlated normals: Pearson r survives up to rounding and clipping."""
    for e in entities:
        z1, z2 = rng.gauss(0, 1), rng.gauss(0, 1)
        za, zb = z1, r * z1 + math.sqrt(1 - r * r) * z2
        for attr, z in ((a, za), (b, zb)):
            mid, sd = (attr.lo + attr.hi) / 2, (attr.hi - attr.lo) / 7
            e.values[attr.column] = _step(min(max(mid + sd * z, attr.lo), attr.hi), attr)


def _text_value(book: NameBook, rng: random.Random, a: Attr) -> str:
    frames = {"motto": ("Light through {X}", "Onward to {X}", "Knowledge for {X}"),
              "nickname": ("the {X}s", "the {X} Lions", "the Old {X}"),
              "slogan": ("Power from {X}", "{X} moves you", "Trust {X}"),
              "achievement": ("the {X} theorem", "the {X} effect", "the {X} method"),
              "condition": ("{X} syndrome", "{X} fever", "{X} disease"),
              "landmark": ("the {X} bridge", "the {X} tower", "the {X} market")}
    return rng.choice(frames.get(a.column, ("{X}",))).format(X=book.fresh(syllables=(2, 2)))


def _values(fam: Family, book: NameBook, rng: random.Random,
            countries: list[str]) -> dict[str, Any]:
    return {a.column: (_text_value(book, rng, a) if a.kind == "text" else
                       _draw(a, rng, countries)) for a in fam.attrs}


def build_world(fam: Family, n_entities: int, seed: int) -> World:
    """The world of ``fam`` with ``n_entities`` current members, drawn from ``seed``."""
    if n_entities < 3:
        raise ConfigError(f"n_entities must be at least 3, got {n_entities}")
    rng = random.Random(f"{fam.key}:{n_entities}:{seed}")
    book = NameBook(rng)
    stem = book.fresh()
    topic = rng.choice(fam.topic_patterns).format(X=stem)
    rival = rng.choice(fam.topic_patterns).format(X=book.fresh())
    n_countries = 4 if n_entities <= 10 else 6
    countries = [book.fresh(suffix=True) for _ in range(n_countries)]
    founded = rng.randint(1950, 1995)
    person = fam.members_are_people
    members = []
    for _ in range(n_entities):
        name = _pattern_name(book, rng, fam.member_patterns, person)
        members.append(Entity(name, "member", _values(fam, book, rng, countries),
                              _aliases(name, rng, person), topic=topic,
                              spread=rng.choice((1, 2, 2, 3))))
    # planted structure: a correlation, a group-mean gap, NULLs, margins
    r = rng.choice(CORR_TARGETS)
    _plant_corr(rng, members, fam.attr(fam.corr[0]), fam.attr(fam.corr[1]), r)
    cat_col, num_col = fam.gap
    cats = list(fam.attr(cat_col).categories or countries)
    factors = dict(zip(cats, rng.sample(GAP_FACTORS, len(cats)), strict=False))
    num_attr = fam.attr(num_col)
    for e in members:
        e.values[num_col] = _step(e.values[num_col] * factors[e.values[cat_col]], num_attr)
    for a in fam.attrs:
        if a.null_rate:
            k = round(a.null_rate * n_entities)
            for e in rng.sample(members, k):
                e.values[a.column] = None
        if a.numeric:
            _plant_margins(members, a)
    # linked entities
    n_links = n_entities if fam.link_is_person else (
        n_countries if fam.link_table == "countries" else max(2, n_entities // 3 + 1))
    links = []
    for i in range(n_links):
        if fam.link_table == "countries":
            name = countries[i]
        else:
            name = _pattern_name(book, rng, fam.link_patterns, fam.link_is_person)
        values = {a.column: _draw(a, rng, countries) for a in fam.link_attrs}
        links.append(Entity(name, "link", values, _aliases(name, rng, fam.link_is_person),
                            topic=topic, spread=1))
    for i, e in enumerate(members):
        e.link = links[i].name if fam.link_is_person else rng.choice(links).name
    # membership years after the topic's start and the member's own start
    start_col = next(a.column for a in fam.attrs if a.kind == "year")
    for e in members:
        own = e.values.get(start_col) or founded
        lo = max(founded, own + (25 if person else 1))
        e.joined = rng.randint(min(lo, NOW), NOW)
    # dated conflicts (old value, gold = current) and explicit corrections
    counts = [a for a in fam.attrs if a.kind in ("count", "money")]
    years = [a for a in fam.attrs if a.kind == "year"]
    for e in rng.sample(members, max(1, n_entities // 4)):
        a = rng.choice(counts)
        if e.values.get(a.column) is not None:
            old = _step(e.values[a.column] * rng.uniform(0.6, 0.85), a)
            if old != e.values[a.column]:
                e.old_values[a.column] = (old, rng.randint(2009, 2018))
    for e in rng.sample(members, max(1, n_entities // 8)):
        a = rng.choice(years)
        if e.values.get(a.column) is not None:
            e.corrections[a.column] = e.values[a.column] + rng.choice((-3, -2, 2, 3))
    for e in rng.sample(members, max(1, n_entities // 8)):  # hedged / negated mentions
        a = rng.choice(counts)
        if e.values.get(a.column) is not None and a.column not in e.old_values:
            e.negated[a.column] = _step(e.values[a.column] * rng.uniform(1.25, 1.6), a)
    distractors = _distractors(fam, book, rng, countries, members, topic, rival, founded)
    _dedupe_aliases(members + links + [d for d in distractors if d.role != "namesake"])
    return World(fam, seed, topic, acronym(topic), rival, founded, countries, members, links,
                 distractors, r, factors)


def _distractors(fam: Family, book: NameBook, rng: random.Random, countries: list[str],
                 members: list[Entity], topic: str, rival: str,
                 founded: int) -> list[Entity]:
    """Former members, members of a rival topic, and same-name entities of that topic."""
    n = len(members)
    person = fam.members_are_people
    out = []
    for _ in range(max(1, n // 8)):
        name = _pattern_name(book, rng, fam.member_patterns, person)
        joined = rng.randint(founded, 2015)
        out.append(Entity(name, "former", _values(fam, book, rng, countries),
                          _aliases(name, rng, person), joined=joined,
                          left=rng.randint(joined + 1, NOW - 1), topic=topic))
    for _ in range(max(1, n // 10)):
        name = _pattern_name(book, rng, fam.member_patterns, person)
        out.append(Entity(name, "outsider", _values(fam, book, rng, countries),
                          _aliases(name, rng, person), joined=rng.randint(founded, NOW),
                          topic=rival))
    for twin in rng.sample(members, max(1, n // 10)):
        out.append(Entity(twin.name, "namesake", _values(fam, book, rng, countries),
                          [], joined=rng.randint(founded, NOW), topic=rival))
    return out
