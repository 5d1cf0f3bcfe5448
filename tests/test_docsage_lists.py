"""A roster the model wrote into one cell becomes a row per name on read (the measuring
model's "Riaska, Gouqin Energy, BS, ..." as one company, ``docsage-case-set2``)."""

from __future__ import annotations

import json

import pytest
from docsage_fakes import read_twice

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.methods.docsage.lists import items, split_lists
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.store import TupleStore

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "employees", "type": "INT"},
                 {"name": "commission_name"}],
     "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                       "ref_cols": ["commission_name"]}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}, {"name": "member", "single_valued": False},
                 {"name": "founded", "type": "INT"}],
     "foreign_keys": [{"cols": ["member"], "ref_table": "companies",
                       "ref_cols": ["company_name"]}]}]})

ROSTER = ("Members of the Drournlia Markets Commission (DMC) include Riaska, Gouqin Energy, BS, "
          "Roustoustus. Former members: Gedroun Bank (left 2009), Vykaexfun Holdings (left "
          "1992), Zorn Bank (left 1990). Acme, Inc. and Smith, John are mentioned too.")


@pytest.mark.parametrize(("value", "names"), [
    ("Riaska, Gouqin Energy, BS, Roustoustus", ["Riaska", "Gouqin Energy", "BS", "Roustoustus"]),
    ("riaska; gouqin energy and BS.", ["riaska", "gouqin energy", "BS"]),
    ("Riaska, Gouqin Energy", None),                 # two: "Smith, John" reads so too
    ("Acme, Inc., Riaska", None),                    # a legal suffix is no name
    ("Riaska, Gouqin Energy, Kelvo Trust", None),    # the chunk names no Kelvo Trust
    ("Riaska", None),
    ("Gouq, Riaska, BS", None),                      # "Gouq" only inside a longer word
])
def test_a_list_is_three_names_or_more_the_chunk_writes(value, names) -> None:
    assert items(value, ROSTER) == names


def row(table: str, **values) -> Row:
    return Row(table=table, values=values,
               provenance=Provenance(chunk_id="d10#0", confidence={"employees": 0.4}))


def test_a_list_in_a_key_is_a_row_per_name_with_the_group_and_nothing_else() -> None:
    [roster] = [row("companies", company_name="Riaska, Gouqin Energy, BS", employees=0,
                    commission_name="Drournlia Markets Commission")]
    out = split_lists(SCHEMA.table("companies"), [roster], ROSTER)
    assert [r.values for r in out] == [
        {"company_name": n, "employees": None,
         "commission_name": "Drournlia Markets Commission"}
        for n in ("Riaska", "Gouqin Energy", "BS")]
    assert [(c.column, c.old, c.new, c.reason) for c in out[1].provenance.corrections] == [
        ("company_name", "Riaska, Gouqin Energy, BS", "Gouqin Energy", "list"),
        ("employees", 0, None, "list")]
    assert all(r.provenance.chunk_id == "d10#0" for r in out)
    # a row that is no list stays as it is
    single = row("companies", company_name="Riaska", employees=5)
    assert split_lists(SCHEMA.table("companies"), [single], ROSTER) == [single]


def test_a_list_in_a_multi_valued_reference_keeps_every_other_value() -> None:
    r = row("commissions", commission_name="Drournlia Markets Commission",
            member="Riaska, Gouqin Energy and Roustoustus", founded=1950)
    out = split_lists(SCHEMA.table("commissions"), [r], ROSTER)
    assert [(x.values["member"], x.values["founded"]) for x in out] == [
        ("Riaska", 1950), ("Gouqin Energy", 1950), ("Roustoustus", 1950)]


def test_every_read_splits_then_ends_former_members(tmp_path) -> None:
    """Split before ended.py: the former members' row per name loses its commission, the
    members' rows keep theirs; the store's second read gives the same rows."""
    reply = {"companies": [
        {"company_name": "Riaska, Gouqin Energy, BS, Roustoustus", "employees": 0,
         "commission_name": "Drournlia Markets Commission"},
        {"company_name": "Gedroun Bank, Vykaexfun Holdings, Zorn Bank", "employees": None,
         "commission_name": "Drournlia Markets Commission"}], "commissions": []}
    fake = FakeLLM(respond=lambda request: json.dumps(reply))
    chunk = Chunk(id="d10#0", text=ROSTER)

    first, again = read_twice(fake, chunk, SCHEMA, TupleStore(tmp_path))
    assert len(fake.requests) == 1
    for rows in (first, again):
        got = {r.values["company_name"]: r.values["commission_name"] for r in rows}
        assert got == {"Riaska": "Drournlia Markets Commission",
                       "Gouqin Energy": "Drournlia Markets Commission",
                       "BS": "Drournlia Markets Commission",
                       "Roustoustus": "Drournlia Markets Commission",
                       "Gedroun Bank": None, "Vykaexfun Holdings": None, "Zorn Bank": None}
        assert all(r.values["employees"] is None for r in rows)


@pytest.mark.parametrize(("text", "value"), [
    ("Crosby, Stills, Nash & Young released an album.", "Crosby, Stills, Nash & Young"),
    ("He lives at 10 Downing St, London, UK now.", "10 Downing St, London, UK"),
    ("Unilever, Johnson and Johnson, Nestle and Johnson sell soap.",
     "Johnson, Johnson, Johnson"),
])
def test_a_name_written_whole_without_a_roster_cue_is_one_name(text, value) -> None:
    """The review of bdc3fc2: a band, an address, repeated parts are no roster."""
    assert items(value, text) is None


def test_a_list_after_a_roster_cue_is_split_though_written_whole() -> None:
    text = "Members of the league include Oslo, Bergen, Trondheim."
    assert items("Oslo, Bergen, Trondheim", text) == ["Oslo", "Bergen", "Trondheim"]


def test_a_roster_in_a_back_link_is_a_row_per_member(tmp_path) -> None:
    """The Set2 shape: ``commissions(commission_name, company_name)``, no key, beside
    ``companies.commission_name``; the roster written into ``company_name`` of one row is a
    row per member, each keeping the commission, on every read."""
    schema = Schema.model_validate({"tables": [
        {"name": "commissions",
         "columns": [{"name": "commission_name"}, {"name": "company_name"}]},
        {"name": "companies", "primary_key": ["company_name"],
         "columns": [{"name": "company_name"}, {"name": "commission_name"}],
         "foreign_keys": [{"cols": ["commission_name"], "ref_table": "commissions",
                           "ref_cols": ["commission_name"]}]}]})
    reply = {"commissions": [{"commission_name": "Drournlia Markets Commission",
                              "company_name": "Riaska, Gouqin Energy, BS, Roustoustus"}],
             "companies": []}
    fake = FakeLLM(respond=lambda request: json.dumps(reply))
    first, again = read_twice(fake, Chunk(id="d10#0", text=ROSTER), schema,
                              TupleStore(tmp_path))
    for rows in (first, again):
        assert sorted((r.values["commission_name"], r.values["company_name"]) for r in rows
                      if r.table == "commissions") == [
            ("Drournlia Markets Commission", n)
            for n in sorted(["Riaska", "Gouqin Energy", "BS", "Roustoustus"])]
