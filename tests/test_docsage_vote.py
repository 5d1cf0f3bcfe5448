"""The committee's voting rule (``vote``): the paper's rule counts the samples alone; CLEAR's
default does too and lets the first read break a tie it is part of; two more rules
benchmarks/docsage_committee.py compares count the first read as a ballot."""

from __future__ import annotations

import asyncio
import json

import pytest
from fake_retriever import ChunkListRetriever

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.confidence import Calibration
from quaderno.errors import ConfigError
from quaderno.methods.docsage.committee import tally
from quaderno.methods.docsage.method import DocSage
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.spec import DocSageOptions
from quaderno.methods.registry import make_method

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "offices", "type": "INT"}]}]})
TABLE = SCHEMA.tables[0]
FIRST = {"company_name": "Rastou Bank", "offices": 12}


def ballot(offices):
    return [{"company_name": "Rastou Bank", "offices": offices}]


@pytest.mark.parametrize(("votes", "rule", "value", "majority"), [
    # one sample repeats the first read, two do not find it
    ([12, None, None], "committee", None, True),
    ([12, None, None], "with-first-read", None, False),     # 2 of 4: no majority, NULL
    ([12, None, None], "keep-first-read", 12, False),       # no majority: the read stays
    # two samples agree on another value
    ([15, 15, 12], "committee", 15, True),
    ([15, 15, 12], "with-first-read", None, False),
    ([15, 15, 12], "keep-first-read", 12, False),
    ([15, 15, 15], "keep-first-read", 15, True),            # a clear majority still wins
    # the first read breaks a tie it is part of, and no other
    ([12, None, None], "first-read-breaks-ties", None, True),
    ([12, None], "committee", None, False),
    ([12, None], "first-read-breaks-ties", 12, False),
    ([15, 12], "first-read-breaks-ties", 12, False),
    ([15, None], "first-read-breaks-ties", None, False),
    ([15, 16, 12], "first-read-breaks-ties", 12, False),    # a three-way tie
    ([15, 15, 12], "first-read-breaks-ties", 15, True),
    # a committee of four or five: the first read breaks only a tie for the most votes
    ([15, 15, 16, 16, 12], "first-read-breaks-ties", None, False),
    ([15, 15, 12, None], "first-read-breaks-ties", None, False),
    ([15, 15, 12, 12], "first-read-breaks-ties", 12, False),
])
def test_each_rule_counts_the_ballots_as_it_says(votes, rule, value, majority) -> None:
    [vote] = tally([ballot(v) for v in votes], TABLE, FIRST, ["offices"], rule=rule).values()
    assert (vote.value, vote.majority) == (value, majority)


def _offices(respond, chunk: Chunk, rule: str):
    """The one row's offices after CLEAR votes every cell under ``rule``, and how many
    cells were left without a strict majority."""
    result = asyncio.run(run_clear(LM(FakeLLM(respond=respond)), SCHEMA, [chunk],
                                   config=ClearConfig(level_b=False, vote=rule),
                                   calibration=Calibration(tau_low=1.0)))
    [row] = result.rows
    return row.values.get("offices"), result.report.unresolved


def test_a_null_first_read_breaks_no_tie() -> None:
    [vote] = tally([ballot(12), ballot(None)], TABLE, {"company_name": "Rastou Bank",
                                                      "offices": None}, ["offices"],
                   rule="first-read-breaks-ties").values()
    assert (vote.value, vote.majority) == (None, False)


def test_a_stated_first_read_survives_a_tie_the_abstaining_ballot_leaves() -> None:
    """s7-docsage-set2: "The company has 183 offices." was read as 183 offices; of the
    committee's three sampled re-reads one gave 183, one no offices (a 0 the chunk does not
    write) and one no row at all, which abstains for an entity the chunk names. The tie
    emptied the cell, and Kriarngyrtia Energy's offices never reached the average."""
    chunk = Chunk(id="d29#0", text="Kriarngyrtia Energy operates in energy. The company has "
                                   "183 offices.")

    def respond(request: ChatRequest) -> str:
        rows = {1000: [{"company_name": "Kriarngyrtia Energy", "offices": 0}],
                1001: [{"company_name": "Kriarngyrtia Energy", "offices": 183}],
                1002: []}.get(request.seed or 0,
                              [{"company_name": "Kriarngyrtia Energy", "offices": 183}])
        return json.dumps({"companies": rows})

    assert _offices(respond, chunk, "committee") == (None, 1)
    assert _offices(respond, chunk, "first-read-breaks-ties") == (183, 1)


def test_clear_votes_by_the_configured_rule() -> None:
    chunk = Chunk(id="d1#0", text="Rastou Bank has 12 offices.")

    def respond(request: ChatRequest) -> str:
        seed = request.seed or 0
        # the greedy read says 12; committee samples 1001 and 1002 find no offices
        offices = None if seed in (1001, 1002) else 12
        return json.dumps({"companies": [{"company_name": "Rastou Bank",
                                          "offices": offices}]})

    assert _offices(respond, chunk, "committee") == (None, 0)
    assert _offices(respond, chunk, "keep-first-read") == (12, 1)


def test_every_default_is_the_tie_rule() -> None:
    lm = LM(FakeLLM(respond=lambda r: "{}"))
    method = DocSage(lm, ChunkListRetriever([]), store=False)
    assert method.clear_config.vote == DocSageOptions().vote == ClearConfig().vote == \
        "first-read-breaks-ties"


def test_an_unknown_rule_is_refused_by_name() -> None:
    lm = LM(FakeLLM(respond=lambda r: "{}"))
    with pytest.raises(ConfigError, match="vote") as err:
        make_method("docsage", lm, ChunkListRetriever([]), {"vote": "majority", "store": False})
    assert "majority" in str(err.value) and "keep-first-read" in str(err.value)
    with pytest.raises(ValueError, match="vote must be one of committee, "
                                         "first-read-breaks-ties, with-first-read, "
                                         "keep-first-read, got 'majority'"):
        DocSage(lm, ChunkListRetriever([]), vote="majority", store=False)
