"""What DocSage tests share: the synthesis reply that reads the query result's first row, as a
model answering only from the result would; a schema from its draft form; a row with only its
chunk as provenance; the SQL step run over given rows with a fake model."""

from __future__ import annotations

import asyncio
import json
import re

from fake_retriever import ChunkListRetriever
from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.docsage.draft import SchemaDraft, to_schema
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.reason import SQLReasoner
from quaderno.methods.docsage.records import ResultTable, SQLAttempt
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.store import TupleStore
from quaderno.methods.episode import Episode

SYNTHESIS_PROMPT = "Answer the question from the query result"
LAUREATES_QUESTION = ("What is the average birth year of the laureates in the Stedrurial Medal "
                      "whose nationality is Kraxryndia?")


def reason_over(respond, schema: Schema, rows: list[Row], question: str = LAUREATES_QUESTION
                ) -> tuple[ResultTable | None, list[SQLAttempt], Episode]:
    """:class:`SQLReasoner` over ``rows`` with a fake model replying by ``respond``: the
    result table, the attempts and the episode (its trace)."""
    ep = Episode(question, method="docsage", lm=LM(FakeLLM(respond=respond)),
                 retriever=ChunkListRetriever([]))
    table, attempts = asyncio.run(SQLReasoner().run(ep, schema, rows))
    return table, attempts, ep


def first_row_answer(prompt: str) -> str:
    """The synthesis step's reply: the first quoted value of result row [1], cited; "not
    found" when the result has no row."""
    first = re.search(r"\[1\] \"([^\"]+)\"", prompt)
    return json.dumps({"answer": first[1] if first else "not found",
                       "cited_rows": [1] if first else []})


def schema_of(draft: dict) -> Schema:
    """The validated schema of a draft (what the schema step's JSON becomes)."""
    return to_schema(SchemaDraft.model_validate(draft))[0]


def read_twice(fake, chunk: Chunk, schema: Schema,
               store: TupleStore) -> tuple[list[Row], list[Row]]:
    """The rows of ``chunk`` extracted twice through ``store`` (the second read from the
    store, when the first stored it): the read-time repairs must give both the same."""
    async def twice():
        settings = ExtractionSettings(confidence="none")
        first = await extract(LM(fake), [chunk], schema, settings, store=store)
        again = await extract(LM(fake), [chunk], schema, settings, store=store)
        return all_rows(first), all_rows(again)
    return asyncio.run(twice())


def row(table: str, chunk: str, **values) -> Row:
    """A row of ``table`` extracted from ``chunk``."""
    return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))


def drafts_and_reads_nothing(draft: dict):
    """A reply function that drafts (and revises to) ``draft``, extracts no rows, and fails
    the test on any other prompt: ASK's code repairs, with nothing the documents say."""
    def respond(request) -> str:
        user = request.messages[-1].content
        if user.startswith(("Design the smallest", "Revise this relational schema")):
            return json.dumps(draft)
        if user.startswith("Extract into the tables"):
            return "{}"
        raise AssertionError(f"unexpected prompt {user[:60]!r}")
    return respond


class DraftOnly:
    """A model that drafts ``draft`` as the schema and fails the test on any other prompt
    (ASK must repair by code, asking the documents nothing); records what it was sent."""

    def __init__(self, draft: dict) -> None:
        self.draft = draft
        self.prompts: list[str] = []

    def __call__(self, request) -> str:
        user = request.messages[-1].content
        self.prompts.append(user)
        if user.startswith("Design the smallest"):
            return json.dumps(self.draft)
        raise AssertionError(f"unexpected prompt {user[:60]!r}")


# five companies c0..c4 with staff 0..4, one chunk each: the sandbox tests' database
COMPANY_SCHEMA = Schema(tables=[Table(name="company", columns=[
    Column(name="name"), Column(name="staff", type="INT")])])
COMPANY_ROWS = [Row(table="company", values={"name": f"c{i}", "staff": i},
                    provenance=Provenance(chunk_id=f"d{i}#0")) for i in range(5)]
