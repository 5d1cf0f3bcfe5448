"""Domain families of the fictional benchmark: what a world holds, as data.

A family names its topic (a consortium, an award, a league …), its members' table with 5–8
typed attributes, a linked table (a president, a city, a sponsor …) reached by a foreign key,
and the membership table (join and leave years). Attribute kinds: ``year``, ``count``,
``money`` (millions of dollars, one decimal), ``category`` and ``text``. Everything is
frozen: a family is a value, and :data:`FAMILIES` is read-only.

The families are split for calibration and template-leak checks: :data:`TRAIN_FAMILIES`
may feed DocSage's labelled extraction data D_1, :data:`TEST_FAMILIES` never do.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from quaderno.errors import ConfigError

Kind = Literal["year", "count", "money", "category", "text"]
NUMERIC: tuple[Kind, ...] = ("year", "count", "money")


@dataclass(frozen=True)
class Attr:
    """One column. ``label`` is how questions name it; ``noun`` how sentences count it
    ("2,300 staff members"); ``event``/``event_noun`` how a year is told ("was founded",
    "founding"); ``phrases`` how a category is told ("is based in {v}")."""

    column: str
    kind: Kind
    label: str
    lo: float = 0.0
    hi: float = 0.0
    step: float = 1.0  # counts are multiples of step (so "2.3k" can be exact)
    categories: tuple[str, ...] = ()  # empty + kind category: the world's countries
    null_rate: float = 0.0
    noun: str = ""
    event: str = ""
    event_noun: str = ""
    phrases: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return self.kind in NUMERIC


@dataclass(frozen=True)
class Family:
    key: str
    topic_patterns: tuple[str, ...]  # "{X} Universities Alliance"
    member: str  # "institution"
    members: str  # "institutions" (also the table name)
    member_patterns: tuple[str, ...]  # "University of {X}"
    attrs: tuple[Attr, ...]
    link_table: str  # "presidents"
    link_role: str  # "president": the members' foreign-key column and its word
    link_is_person: bool
    link_patterns: tuple[str, ...]  # "" for person names
    link_attrs: tuple[Attr, ...]
    join_verb: str  # "joined"
    corr: tuple[str, str]  # planted correlation pair (member columns)
    gap: tuple[str, str]  # planted group-mean gap: (category column, numeric column)
    members_are_people: bool = False

    def attr(self, column: str) -> Attr:
        for a in self.attrs + self.link_attrs:
            if a.column == column:
                return a
        raise ConfigError(f"family {self.key!r} has no column {column!r}")

    def numeric(self) -> list[Attr]:
        return [a for a in self.attrs if a.numeric]

    def categorical(self) -> list[Attr]:
        return [a for a in self.attrs if a.kind == "category"]


def _year(column: str, label: str, lo: int, hi: int, event: str, event_noun: str,
          null: float = 0.0) -> Attr:
    return Attr(column, "year", label, lo, hi, 1, null_rate=null, event=event,
                event_noun=event_noun)


def _count(column: str, label: str, lo: int, hi: int, noun: str, step: int = 10,
           null: float = 0.0) -> Attr:
    return Attr(column, "count", label, lo, hi, step, null_rate=null, noun=noun)


def _money(column: str, label: str, lo: float, hi: float, noun: str,
           null: float = 0.0) -> Attr:
    return Attr(column, "money", label, lo, hi, 0.1, null_rate=null, noun=noun)


def _cat(column: str, label: str, cats: tuple[str, ...], phrases: tuple[str, ...],
         null: float = 0.0) -> Attr:
    return Attr(column, "category", label, categories=cats, null_rate=null, phrases=phrases)


def _text(column: str, label: str, phrases: tuple[str, ...]) -> Attr:
    return Attr(column, "text", label, phrases=phrases)


_COUNTRY = ("is based in {v}", "is located in {v}", "has its seat in {v}")
_NATION = ("is a national of {v}", "holds citizenship of {v}", "comes from {v}")
_GENDER = _cat("gender", "gender", ("female", "male"), ("is {v}", "is listed as {v}"))
_PERSON = (_cat("nationality", "nationality", (), _NATION), _GENDER)

FAMILIES_LIST: tuple[Family, ...] = (
    Family(
        "consortium", ("{X} Universities Alliance", "Consortium of {X} Universities"),
        "institution", "institutions",
        ("University of {X}", "{X} Institute of Technology", "{X} State University",
         "{X} College"),
        (_year("founded", "founding year", 1780, 2005, "was founded", "founding"),
         _count("staff", "staff number", 300, 25000, "staff members", null=0.1),
         _count("students", "student number", 1000, 60000, "students"),
         _money("budget", "annual budget", 20, 4000, "annual budget", null=0.08),
         _cat("type", "type", ("public", "private", "religious"),
              ("is a {v} institution", "is run as a {v} institution")),
         _cat("country", "country", (), _COUNTRY),
         _text("motto", "motto", ("has the motto '{v}'", "carries the motto '{v}'"))),
        "presidents", "president", True, ("",),
        (_cat("nationality", "nationality", (), _NATION),
         _year("birth_year", "birth year", 1940, 1985, "was born", "birth"),
         _GENDER),
        "joined", ("staff", "students"), ("type", "budget")),
    Family(
        "award", ("{X} Prize", "{X} Medal"), "laureate", "laureates", ("",),
        (_year("birth_year", "birth year", 1930, 1990, "was born", "birth"),
         _count("publications", "number of publications", 12, 900, "publications", step=1),
         _money("grant", "research grant", 0.2, 40, "research grant", null=0.1),
         _cat("field", "field of study", ("optics", "virology", "topology", "linguistics",
                                          "ecology"),
              ("works in {v}", "is known for work in {v}")),
         _cat("nationality", "nationality", (), _NATION),
         _GENDER,
         _text("achievement", "achievement", ("is credited with {v}",
                                               "became known for {v}"))),
        "institutions", "affiliation", False, ("{X} Institute", "University of {X}"),
        (_cat("country", "country", (), _COUNTRY),
         _year("founded", "founding year", 1700, 2000, "was founded", "founding"),
         _count("researchers", "number of researchers", 50, 9000, "researchers")),
        "received", ("birth_year", "publications"), ("field", "grant"),
        members_are_people=True),
    Family(
        "league", ("{X} Football League", "{X} Premier Division"), "club", "clubs",
        ("{X} FC", "{X} Rovers", "Athletic {X}", "{X} United"),
        (_year("founded", "founding year", 1860, 2010, "was founded", "founding"),
         _count("capacity", "stadium capacity", 2000, 90000, "seats"),
         _count("titles", "number of league titles", 0, 40, "league titles", step=1),
         _money("payroll", "annual payroll", 5, 400, "annual payroll", null=0.1),
         _cat("ownership", "ownership model", ("member-owned", "private", "municipal"),
              ("is {v}", "operates as a {v} club")),
         _text("nickname", "nickname", ("is nicknamed '{v}'", "goes by the nickname '{v}'"))),
        "cities", "city", False, ("{X}",),
        (_cat("country", "country", (), _COUNTRY),
         _count("population", "population", 50000, 5000000, "inhabitants", step=1000),
         _year("chartered", "charter year", 900, 1900, "was chartered", "charter")),
        "joined", ("capacity", "titles"), ("ownership", "payroll")),
    Family(
        "regulator", ("{X} Financial Authority", "{X} Markets Commission"), "company",
        "companies", ("{X} Holdings", "{X} Systems", "{X} Energy", "{X} Bank"),
        (_year("founded", "founding year", 1850, 2015, "was founded", "founding"),
         _count("employees", "number of employees", 50, 200000, "employees", null=0.1),
         _money("revenue", "annual revenue", 1, 90000, "annual revenue", null=0.08),
         _count("offices", "number of offices", 1, 400, "offices", step=1),
         _cat("sector", "sector", ("banking", "insurance", "energy", "telecom", "mining"),
              ("operates in {v}", "is active in the {v} sector")),
         _cat("country", "country", (), _COUNTRY),
         _text("slogan", "slogan", ("advertises with the slogan '{v}'",
                                    "uses the slogan '{v}'"))),
        "executives", "ceo", True, ("",), _PERSON + (
            _year("birth_year", "birth year", 1945, 1990, "was born", "birth"),),
        "registered with", ("employees", "revenue"), ("sector", "offices")),
    Family(
        "registry", ("{X} Clinical Trials Registry", "{X} Trials Register"), "trial",
        "trials", ("{X}-1 trial", "{X}-2 trial", "{X}-3 trial"),
        (_year("start_year", "start year", 1995, 2023, "started", "start"),
         _count("enrollment", "enrollment", 20, 12000, "participants", null=0.1),
         _money("cost", "trial cost", 0.5, 300, "cost", null=0.1),
         _cat("phase", "phase", ("phase I", "phase II", "phase III", "phase IV"),
              ("is a {v} study", "is registered as {v}")),
         _cat("country", "country", (), _COUNTRY),
         _count("sites", "number of sites", 1, 200, "sites", step=1),
         _text("condition", "condition studied", ("studies {v}", "investigates {v}"))),
        "sponsors", "sponsor", False, ("{X} Pharma", "{X} Therapeutics"),
        (_cat("country", "country", (), _COUNTRY),
         _year("founded", "founding year", 1890, 2015, "was founded", "founding"),
         _count("employees", "number of employees", 20, 90000, "employees")),
        "was entered in", ("enrollment", "sites"), ("phase", "cost")),
    Family(
        "network", ("{X} Cities Network", "League of {X} Cities"), "city", "cities",
        ("{X}",),
        (_year("chartered", "charter year", 800, 1950, "was chartered", "charter"),
         _count("population", "population", 20000, 4000000, "inhabitants", step=1000),
         _count("area", "area in square kilometres", 20, 2500, "square kilometres", step=1),
         _money("budget", "municipal budget", 10, 9000, "municipal budget", null=0.1),
         _cat("climate", "climate", ("arid", "temperate", "tropical", "continental"),
              ("has a {v} climate", "lies in a {v} climate zone")),
         _text("landmark", "landmark", ("is famous for {v}", "is known for {v}"))),
        "countries", "country", False, ("Republic of {X}", "{X}"),
        (_cat("continent", "continent", ("Aurelia", "Borea", "Calyx"),
              ("lies on the continent of {v}", "belongs to {v}")),
         _count("population", "population", 1000000, 90000000, "inhabitants", step=100000),
         _year("independence", "independence year", 1800, 1995, "became independent",
               "independence")),
        "joined", ("population", "budget"), ("climate", "area")),
)

FAMILIES: MappingProxyType[str, Family] = MappingProxyType({f.key: f for f in FAMILIES_LIST})
TRAIN_FAMILIES: tuple[str, ...] = ("consortium", "league", "registry")
TEST_FAMILIES: tuple[str, ...] = ("award", "regulator", "network")


def family(key: str) -> Family:
    if key not in FAMILIES:
        raise ConfigError(f"unknown family {key!r}; choose one of {', '.join(FAMILIES)}")
    return FAMILIES[key]
