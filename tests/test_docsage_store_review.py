"""Tuple store review fixes (issue 11): no stale tuples across descriptions, prompts, keys."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage import extract_call as extract_mod
from quaderno.methods.docsage.extract import ExtractionSettings, extract, prompt_fingerprint
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.store import TupleStore

NONE = ExtractionSettings(confidence="none")
CHUNK = Chunk(id="d0#0", text="Acme (1874, 2300 staff) and Bolt (1995, 40 staff).")


def table(description: str, *cols: str) -> Table:
    columns = [{"name": "name"}] + [{"name": c, "type": "INT"} for c in cols]
    return Table.model_validate({"name": "company", "description": description,
                                 "primary_key": ["name"], "columns": columns})


def row(name: str, **values) -> Row:
    return Row(table="company", values={"name": name, **values},
               provenance=Provenance(chunk_id=CHUNK.id))


def test_cover_does_not_reuse_rows_extracted_for_another_description(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    recent = table("companies founded after 1990", "founded", "staff")
    store.put(CHUNK, recent, "m", NONE, [row("Bolt", founded=1995, staff=40)])
    # the same description, a column fewer: assembled from the stored entry
    same = store.cover(CHUNK, table("companies founded after 1990", "founded"), "m", NONE)
    assert same is not None and [r.values["name"] for r in same[0]] == ["Bolt"]
    # "all companies": Bolt alone would be a stale, filtered answer
    assert store.cover(CHUNK, table("all companies", "founded"), "m", NONE) is None


def test_settings_key_follows_the_instruction_and_output_schema(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = NONE.key()
    assert "prompt_version" not in ExtractionSettings.model_fields
    changed = dataclasses.replace(extract_mod.EXTRACT,
                                  instruction=extract_mod.EXTRACT.instruction + " Be brief.")
    monkeypatch.setattr(extract_mod, "EXTRACT", changed)
    prompt_fingerprint.cache_clear()
    try:
        assert NONE.key() != before
    finally:
        monkeypatch.undo()
        prompt_fingerprint.cache_clear()
    assert NONE.key() == before
    json_types = {**extract_mod._JSON_TYPES, "DATE": "integer"}
    monkeypatch.setattr(extract_mod, "_JSON_TYPES", json_types)
    prompt_fingerprint.cache_clear()
    try:
        assert NONE.key() != before           # the output JSON schema changed
    finally:
        monkeypatch.undo()
        prompt_fingerprint.cache_clear()


def test_prompt_change_makes_stored_tuples_miss(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    store = TupleStore(tmp_path)
    t = table("a company", "founded")
    store.put(CHUNK, t, "m", NONE, [row("Acme", founded=1874)])
    assert store.get(CHUNK, t, "m", NONE) is not None
    monkeypatch.setattr(extract_mod, "EXTRACT", dataclasses.replace(
        extract_mod.EXTRACT, instruction=extract_mod.EXTRACT.instruction + " New rule."))
    prompt_fingerprint.cache_clear()
    try:
        assert store.get(CHUNK, t, "m", NONE) is None
        assert store.cover(CHUNK, table("a company"), "m", NONE) is None
    finally:
        monkeypatch.undo()
        prompt_fingerprint.cache_clear()


def test_extraction_prompt_shows_no_keys_so_it_is_what_the_signature_covers() -> None:
    prompts: list[str] = []

    def respond(request: ChatRequest) -> str:
        prompts.append(request.messages[-1].content)
        return json.dumps({"company": [], "city": []})

    schema = Schema.model_validate({"tables": [
        {"name": "city", "primary_key": ["name"], "columns": [{"name": "name"}]},
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "city"}],
         "foreign_keys": [{"cols": ["city"], "ref_table": "city", "ref_cols": ["name"]}]}]})
    keyless = Schema.model_validate({"tables": [
        {"name": "city", "columns": [{"name": "name"}]},
        {"name": "company", "columns": [{"name": "name"}, {"name": "city"}]}]})
    for s in (schema, keyless):
        asyncio.run(extract(LM(FakeLLM(respond=respond)), [CHUNK], s, NONE))
    assert "PRIMARY KEY" not in prompts[0] and "FOREIGN KEY" not in prompts[0]
    assert prompts[0] == prompts[1]
    assert [t.signature() for t in schema.tables] == [t.signature() for t in keyless.tables]
