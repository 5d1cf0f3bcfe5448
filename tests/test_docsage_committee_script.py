"""benchmarks/docsage_committee.py: flagged cells labelled before and after the committee's
vote, under CLEAR's rule and the three rules that count the first read."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from benchmark_scripts import load
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage.extract import ExtractionSettings
from quaderno.methods.docsage.schema import Table

CLUBS = Table.model_validate({"name": "clubs", "primary_key": ["name"], "columns": [
    {"name": "name"}, {"name": "founded", "type": "INT"}]})
TEXTS = {"zu": "Zoundno United was founded in 1946; its stadium opened in 1950.",
         "br": "Bolt Rovers was founded in 1900.",
         "xx": "Kelp Athletic, founded in 1901, is no club of this league.",
         "ke": "Kestrel Town was founded in 1888."}
EMPTY = "no row"
# what the greedy read and each committee sample (seeds 1000-1002) say of each club
READS = {"zu": ("Zoundno United", 1950, [1946, 1946, 1950]),
         "br": ("Bolt Rovers", 1900, [1900, None, None]),
         # a distractor the text states nothing of: its 1901 is wrong, NULL right
         "xx": ("Kelp Athletic", 1901, [None, None, 1901]),
         # one sample finds no row at all: it abstains, as in CLEAR, and 1888 ties NULL
         "ke": ("Kestrel Town", 1888, [1888, None, EMPTY])}


def _reader(request: ChatRequest) -> str:
    prompt = request.messages[-1].content
    key = next(k for k, t in TEXTS.items() if t in prompt)
    name, greedy, votes = READS[key]
    seed = request.seed or 0
    founded = votes[seed - 1000] if 1000 <= seed < 1003 else greedy
    return json.dumps({"clubs": [] if founded == EMPTY else [{"name": name,
                                                              "founded": founded}]})


def test_each_rule_counts_the_cells_it_fixes_and_breaks() -> None:
    examples = [SimpleNamespace(chunk_id=f"{k}#0", text=t, table="clubs", cells={},
                                stated={READS[k][0]: {"founded": int(t.split(" in ")[1][:4])}}
                                if k != "xx" else {})
                for k, t in TEXTS.items()]
    out = asyncio.run(load("docsage_committee").study(LM(FakeLLM(respond=_reader)), examples,
                                      {"clubs": CLUBS}, 1.0, ExtractionSettings(), 3))
    got = {rule: (t.cells, t.before, t.after, t.fixed, t.broken) for rule, t in out.items()}
    assert got == {
        # 1950 voted out by two samples of 1946; Bolt's right 1900 voted NULL by two;
        # the distractor's 1901 voted NULL by two; Kestrel's 1888 ties NULL: NULL
        "committee": (4, 2, 2, 2, 2),
        # the same, but Kestrel's tie is the first read's to break: 1888 stays
        "first-read-breaks-ties": (4, 2, 3, 2, 1),
        # with the first read, 1950 ties 1946 and Bolt ties NULL: both NULL; 1901 NULL;
        # 1888 has two ballots of three
        "with-first-read": (4, 2, 2, 1, 1),
        # a tie keeps the first read: nothing changes, the distractor's 1901 ties NULL too
        "keep-first-read": (4, 2, 2, 0, 0)}
    assert "Bolt" not in " ".join(out["committee"].examples)   # chunk ids and values only
    assert out["committee"].examples == ["zu#0 founded: 1950 -> 1946",
                                         "br#0 founded: 1900 -> None",
                                         "xx#0 founded: 1901 -> None",
                                         "ke#0 founded: 1888 -> None"]
