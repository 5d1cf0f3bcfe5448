"""benchmarks/docsage_extraction_cost.py: extraction cost grows with the new documents only."""

from __future__ import annotations

import json

from benchmark_scripts import load
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage.schema import Schema


def _reader(request: ChatRequest) -> str:
    i = int(request.messages[-1].content.split("Company C")[1].split(" ")[0])
    return json.dumps({"company": [{"name": f"C{i}", "founded": 1900 + i}]})


def test_cost_grows_with_new_documents_and_a_repeat_costs_nothing(tmp_path):
    schema = Schema.model_validate({"tables": [{
        "name": "company", "primary_key": ["name"],
        "columns": [{"name": "name"}, {"name": "founded", "type": "INT"}]}]})
    chunks = [Chunk(id=f"d{i}#0", text=f"Company C{i} was founded in {1900 + i}.")
              for i in range(8)]
    rows = load("docsage_extraction_cost").cost_rows(LM(FakeLLM(respond=_reader)), chunks,
                                                     schema, [2, 4, 8], tmp_path)
    assert [(r["documents"], r["new"], r["tuples"]) for r in rows] == \
        [(2, 2, 2), (4, 2, 4), (8, 4, 8), (8, 0, 8)]
    per_doc = rows[0]["calls"] / 2
    assert per_doc >= 1
    assert [r["calls"] for r in rows] == [2 * per_doc, 2 * per_doc, 4 * per_doc, 0]


def test_cost_per_tuple_is_per_new_tuple_not_per_stored_one(tmp_path):
    """Each step's seconds, calls and tokens were divided by every tuple of the first n
    documents, the stored ones too: at a fixed cost per document, s/tuple fell from step to
    step (0.208, 0.102, 0.102 with 0.2 s per call). Per new tuple it holds still."""
    script = load("docsage_extraction_cost")
    schema = Schema.model_validate({"tables": [{
        "name": "company", "primary_key": ["name"],
        "columns": [{"name": "name"}, {"name": "founded", "type": "INT"}]}]})
    chunks = [Chunk(id=f"d{i}#0", text=f"Company C{i} was founded in {1900 + i}.")
              for i in range(8)]
    rows = script.cost_rows(LM(FakeLLM(respond=_reader)), chunks, schema, [2, 4, 8], tmp_path)
    assert [r["new_tuples"] for r in rows] == [2, 2, 4, 0]
    rows = [r | {"seconds": 0.2 * r["calls"]} for r in rows]   # a fixed time per call
    cells = [[c.strip() for c in line.strip("|").split("|")]
             for line in script.table_lines(rows)[2:]]
    head = [c.strip() for c in script.table_lines(rows)[0].strip("|").split("|")]
    per_tuple = [cells_[head.index("s/new tuple")] for cells_ in cells]
    assert len(set(per_tuple[:3])) == 1 and per_tuple[3] == "–"
    assert {cells_[head.index("calls/new tuple")] for cells_ in cells[:3]} == \
        {f"{rows[0]['calls'] / 2:.2f}"}
