"""DocSage's tuple store: extraction is paid once (issue 11, item 5), and a kill -9 never
damages what was stored."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.errors import IndexFormatError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest
from quaderno.methods.docsage.clear import ClearConfig, run_clear
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.store import TupleStore, join_rows, store_dir

COMPANY = {"name": "company", "primary_key": ["name"],
           "columns": [{"name": "name"}, {"name": "founded", "type": "INT"}]}
CITY = {"name": "city", "primary_key": ["name"], "columns": [{"name": "name"},
                                                             {"name": "country"}]}
Q1 = Schema.model_validate({"tables": [COMPANY, CITY]})
# another question: the same company table (other keys and constraints do not matter)
Q2 = Schema.model_validate({"tables": [{**COMPANY, "primary_key": []}],
                            "constraints": [{"kind": "range", "table": "company",
                                             "column": "founded", "low": 1000}]})
NONE = ExtractionSettings(confidence="none")
CHUNKS = [Chunk(id=f"d{i}#0", text=f"Company C{i} was founded in {1900 + i} in city T{i}.")
          for i in range(10)]


def oracle() -> FakeLLM:
    """Extracts whatever tables the prompt's schema names, from the chunk's sentence."""
    def respond(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        i = int(prompt.split("Company C")[1].split(" ")[0])
        out = {}
        if "TABLE company" in prompt:
            out["company"] = [{"name": f"C{i}", "founded": 1900 + i}]
        if "TABLE city" in prompt:
            out["city"] = [{"name": f"T{i}", "country": None}]
        return json.dumps(out)
    return FakeLLM(respond=respond)


def test_second_question_sharing_a_table_costs_at_most_30_percent_of_the_first(
        tmp_path: Path) -> None:
    store = TupleStore(store_dir(tmp_path / "kb"))
    first = oracle()
    r1 = asyncio.run(run_clear(LM(first), Q1, CHUNKS, store=store, settings=NONE,
                               config=ClearConfig(level_a=False)))
    assert r1.report.llm_calls_extract == len(first.requests) == 10
    assert r1.report.cache_misses == 20 and r1.report.cache_hits == 0
    # the second question reads the same entities plus two new documents
    more = CHUNKS + [Chunk(id="d10#0", text="Company C10 was founded in 1910 in city T10."),
                     Chunk(id="d11#0", text="Company C11 was founded in 1911 in city T11.")]
    second = oracle()
    r2 = asyncio.run(run_clear(LM(second), Q2, more, store=store, settings=NONE,
                               config=ClearConfig(level_a=False)))
    assert r2.report.llm_calls_extract == len(second.requests) == 2
    assert r2.report.llm_calls_extract <= 0.3 * r1.report.llm_calls_extract
    assert r2.report.cache_hits == 10 and r2.report.cache_misses == 2
    assert all("TABLE city" not in r.messages[-1].content for r in second.requests)
    assert sorted(r.values["name"] for r in r2.rows) == sorted(f"C{i}" for i in range(12))
    stats = store.stats()
    assert (stats.hits, stats.misses, stats.entries) == (10, 22, 22)
    assert [t.name for t, _ in store.known_tables()] == ["company", "city"]


def test_what_reading_empties_is_not_offered_though_stored_as_written(tmp_path: Path) -> None:
    """The store keeps a reply as the model wrote it; a company named as its own chief
    executive and a founding year 0 are emptied when read, so neither column is offered
    to the next question as one the stored tuples fill (the review of 37c9f62)."""
    store = TupleStore(tmp_path)
    schema = Schema.model_validate({"tables": [
        {"name": "company", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "chief_executive"},
                     {"name": "founded_year", "type": "INT"}]}]})
    fake = FakeLLM(respond=lambda r: json.dumps({"company": [
        {"name": "Acme", "chief_executive": "Acme", "founded_year": 0}]}))
    chunk = Chunk(id="a#0", text="Acme makes anvils.")
    (row,) = all_rows(asyncio.run(extract(LM(fake), [chunk], schema, NONE, store=store)))
    assert row.values == {"name": "Acme", "chief_executive": None, "founded_year": None}
    (stored,) = store.get(chunk, schema.tables[0], LM(fake).model_id, NONE)
    assert stored.values["chief_executive"] == "Acme"          # as written
    ([(offered, _)]) = store.known_tables(filled=True)
    assert offered.column_names == ["name"]


def test_entries_without_a_readable_filled_list_are_read_by_their_rows(tmp_path: Path) -> None:
    """Written before ``tuple_filled`` existed, or with a damaged list there: what the entry
    fills is read from its rows, and nothing is hidden (the review of a2d9ed9). A store of
    the old layout gains the table at open, and the old positional write still works."""
    table = Table.model_validate(COMPANY)
    store = TupleStore(tmp_path)
    row = Row(table="company", values={"name": "C0", "founded": 1900},
              provenance=Provenance(chunk_id="d0#0"))
    store.put(CHUNKS[0], table, "m", NONE, [row])
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT columns FROM tuple_filled").fetchall() == [
            ('["founded", "name"]',)]
        for damaged in ("not json", '"founded"', '[["founded"]]', "7"):
            conn.execute("UPDATE tuple_filled SET columns = ?", (damaged,))
            conn.commit()
            ([(offered, _)]) = store.known_tables(filled=True)
            assert offered.column_names == ["name", "founded"], damaged
        conn.execute("DROP TABLE tuple_filled")            # the layout before it
    del store
    store = TupleStore(tmp_path)
    ([(offered, _)]) = store.known_tables(filled=True)
    assert offered.column_names == ["name", "founded"]
    assert store.get(CHUNKS[0], table, "m", NONE)[0].values["founded"] == 1900
    with sqlite3.connect(store.path) as conn:                # an older quaderno's write
        conn.execute("INSERT INTO tuples VALUES ('k', 'd9#0', 'h', 'company', 's', 'm', "
                     "'x', '[]', 0, '{}')")
        # and a store a newer layout gave one more column is still written by this one
        conn.execute("ALTER TABLE tuples ADD COLUMN later TEXT")
    store.put(CHUNKS[1], table, "m", NONE, [row])
    assert store.get(CHUNKS[1], table, "m", NONE)[0].values["name"] == "C0"


def test_rereads_that_found_nothing_persist_and_an_older_store_gains_their_table(
        tmp_path: Path) -> None:
    """A re-read of a table alone that found no row is kept across opens (extract.py asks
    it no more); a store of the layout before ``tuple_rereads`` gains the table at open,
    with its entries intact."""
    table = Table.model_validate(COMPANY)
    store = TupleStore(tmp_path)
    store.put(CHUNKS[0], table, "m", NONE, [])
    with sqlite3.connect(store.path) as conn:
        conn.execute("DROP TABLE tuple_rereads")            # the layout before it
    del store
    store = TupleStore(tmp_path)
    assert store.get(CHUNKS[0], table, "m", NONE) == []
    assert store.rereads_none(CHUNKS[0], table, "m", NONE) == set()
    store.reread_none(CHUNKS[0], table, "m", NONE, "greedy")
    store.reread_none(CHUNKS[0], table, "m", NONE, "greedy")     # once is enough
    del store
    store = TupleStore(tmp_path)
    assert store.rereads_none(CHUNKS[0], table, "m", NONE) == {"greedy"}
    # per entry: the same table under another key shares it (as it shares the rows);
    # another chunk, model or column set has none
    assert store.rereads_none(CHUNKS[0], Q2.tables[0], "m", NONE) == {"greedy"}
    assert store.rereads_none(CHUNKS[1], table, "m", NONE) == set()
    assert store.rereads_none(CHUNKS[0], table, "n", NONE) == set()
    wider = Table.model_validate({**COMPANY, "columns": [*COMPANY["columns"],
                                                         {"name": "city"}]})
    assert store.rereads_none(CHUNKS[0], wider, "m", NONE) == set()


def test_a_record_of_a_reread_waits_out_another_writers_lock(tmp_path: Path,
                                                              monkeypatch) -> None:
    """The review of 962f15a: ``reread_none`` wrote once, so a lock held past the
    connection's timeout failed the whole question after its call was paid."""
    import threading

    import quaderno.llm.sqlite_conn as sqlite_conn
    monkeypatch.setattr(sqlite_conn, "TIMEOUT_S", 0.05)
    table = Table.model_validate(COMPANY)
    store = TupleStore(tmp_path / "s")
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    released = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    released.start()
    store.reread_none(CHUNKS[0], table, "m", NONE, "greedy")
    released.join()
    other.close()
    assert store.rereads_none(CHUNKS[0], table, "m", NONE) == {"greedy"}


def test_only_what_the_stored_tuples_hold_is_offered_and_is_still_re_used(
        tmp_path: Path) -> None:
    """A Set2 draft kept ``companies.grounlenkreenergy_id`` (a column for a table merged
    away): no chunk ever filled it, yet every later draft was offered it and copied it.
    Offered tables keep their key and the columns some stored row fills; a table no chunk
    gave a row of is not offered; the cut table still re-uses every stored tuple."""
    store = TupleStore(tmp_path)
    company = Table.model_validate({**COMPANY, "columns": [
        *COMPANY["columns"], {"name": "grounlenkreenergy_id", "type": "INT"}]})
    harbour = Table.model_validate({"name": "harbour", "primary_key": ["name"],
                                    "columns": [{"name": "name"}, {"name": "depth"}]})
    asyncio.run(extract(LM(oracle()), CHUNKS[:3], Schema(tables=[company]), NONE,
                        store=store))
    for chunk in CHUNKS[:3]:
        store.put(chunk, harbour, "m", NONE, [])      # asked, and stated by no chunk
    assert [(t.name, t.column_names) for t, _ in store.known_tables()] == [
        ("company", ["name", "founded", "grounlenkreenergy_id"]),
        ("harbour", ["name", "depth"])]
    ([(offered, n)]) = store.known_tables(filled=True)
    assert (offered.name, offered.column_names, n) == ("company", ["name", "founded"], 3)
    # a damaged entry (get() reads it as a miss) adds nothing and breaks nothing
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE tuples SET rows = ? WHERE table_name = 'harbour' AND "
                     "chunk_id = 'd0#0'", ('["x", {"values": "y"}, {"values": {"depth": 3}',))
        conn.execute("UPDATE tuples SET rows = ? WHERE table_name = 'harbour' AND "
                     "chunk_id = 'd1#0'", ('["x", {"values": "y"}, 7]',))
    assert [t.name for t, _ in store.known_tables(filled=True)] == ["company"]
    again = FakeLLM(respond=lambda r: "{}")
    results = asyncio.run(extract(LM(again), CHUNKS[:3], Schema(tables=[offered]), NONE,
                                  store=store))
    assert not again.requests
    assert sorted(r.values["founded"] for r in all_rows(results)) == [1900, 1901, 1902]


def test_a_question_with_a_new_table_extracts_only_that_table(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    asyncio.run(extract(LM(oracle()), CHUNKS[:3], Schema.model_validate({"tables": [COMPANY]}),
                        NONE, store=store))
    fake = oracle()
    results = asyncio.run(extract(LM(fake), CHUNKS[:3], Q1, NONE, store=store))
    assert len(fake.requests) == 3
    assert all("TABLE company" not in r.messages[-1].content for r in fake.requests)
    assert all(set(r.rows) == {"company", "city"} for r in results)


def _row(i: int) -> Row:
    return Row(table="company", values={"name": f"C{i}", "founded": 1900 + i},
               provenance=Provenance(chunk_id=f"d{i}#0", confidence={"name": 0.9}))


def test_key_covers_chunk_text_table_definition_model_and_settings(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    table = Table.model_validate(COMPANY)
    chunk = CHUNKS[0]
    store.put(chunk, table, "m1", NONE, [_row(0)])
    assert store.get(chunk, table, "m1", NONE) == [_row(0)]
    changed = Chunk(id=chunk.id, text=chunk.text + " It closed in 1950.")
    other_table = Table.model_validate({**COMPANY, "description": "a listed company"})
    assert store.get(changed, table, "m1", NONE) is None
    assert store.get(chunk, other_table, "m1", NONE) is None
    assert store.get(chunk, table, "m2", NONE) is None
    assert store.get(chunk, table, "m1", ExtractionSettings()) is None
    # keys, constraints and descriptions of *other* tables do not change the signature
    assert store.get(chunk, Table.model_validate({**COMPANY, "primary_key": []}), "m1",
                     NONE) == [_row(0)]
    store.put(chunk, table, "m1", ExtractionSettings(), [])    # "nothing here" is kept too
    assert store.get(chunk, table, "m1", ExtractionSettings()) == []


def test_unreadable_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    table = Table.model_validate(COMPANY)
    store.put(CHUNKS[0], table, "m", NONE, [_row(0)])
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE tuples SET rows = '[{\"table\": 1'")
    assert store.get(CHUNKS[0], table, "m", NONE) is None
    store.put(CHUNKS[0], table, "m", NONE, [_row(0)])
    assert store.get(CHUNKS[0], table, "m", NONE) == [_row(0)]


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE name = 'format_version'")
    with pytest.raises(IndexFormatError, match="format version 99"):
        TupleStore(tmp_path)


_WRITER = textwrap.dedent("""
    import os, signal, sys
    from quaderno.corpus.chunk import Chunk
    from quaderno.methods.docsage.extract import ExtractionSettings
    from quaderno.methods.docsage.rows import Provenance, Row
    from quaderno.methods.docsage.schema import Table
    from quaderno.methods.docsage.store import TupleStore
    store = TupleStore(sys.argv[1])
    table = Table.model_validate({COMPANY!r})
    settings = ExtractionSettings(confidence="none")
    def put(i):
        row = Row(table="company", values={{"name": f"C{{i}}", "founded": 1900 + i}},
                  provenance=Provenance(chunk_id=f"d{{i}}#0"))
        store.put(Chunk(id=f"d{{i}}#0", text=f"chunk {{i}}"), table, "m", settings, [row])
    for i in range(5):
        put(i)
    if sys.argv[2] == "mid-write":
        conn = store._conns.get()
        conn.execute("BEGIN")
        conn.execute("INSERT INTO tuples VALUES ('x', 'd9#0', 'h', 'company', 's', 'm', "
                     "'k', '[', 0, '{{}}')")
        os.kill(os.getpid(), signal.SIGKILL)          # dies inside the write
    print("ready", flush=True)
    i = 5
    while True:                                       # writes until killed from outside
        put(i)
        i += 1
""").format(COMPANY=COMPANY)


def _reopen(root: Path) -> tuple[TupleStore, Table]:
    store = TupleStore(root)
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return store, Table.model_validate(COMPANY)


def test_kill_9_inside_a_write_loses_only_that_write(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", _WRITER, str(tmp_path), "mid-write"],
                          capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    store, table = _reopen(tmp_path)
    assert len(store) == 5
    for i in range(5):
        rows = store.get(Chunk(id=f"d{i}#0", text=f"chunk {i}"), table, "m", NONE)
        assert rows is not None and rows[0].values["founded"] == 1900 + i


def test_kill_9_during_a_stream_of_writes_never_corrupts_stored_entries(
        tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), "stream"],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    store, table = _reopen(tmp_path)
    n = len(store)
    assert n >= 5
    with sqlite3.connect(store.path) as conn:
        ids = [r[0] for r in conn.execute("SELECT chunk_id FROM tuples")]
    for cid in ids:                      # every committed entry reads back whole
        i = int(cid[1:].split("#")[0])
        rows = store.get(Chunk(id=cid, text=f"chunk {i}"), table, "m", NONE)
        assert rows is not None and rows[0].values["name"] == f"C{i}"
    assert store.stats().hits == n


# -- column-level re-use --------------------------------------------------------------------------
WIDE = {"name": "company", "primary_key": ["name"],
        "columns": [{"name": "name"}, {"name": "founded", "type": "INT"},
                    {"name": "staff", "type": "INT"}]}


def column_oracle() -> FakeLLM:
    """Answers with exactly the columns the prompt's schema lists."""
    def respond(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        i = int(prompt.split("Company C")[1].split(" ")[0])
        values = {"name": f"C{i}", "founded": 1900 + i, "staff": 10 * i, "city": f"T{i}"}
        cols = [c for c in values if f"\n  {c} " in prompt]
        return json.dumps({"company": [{c: values[c] for c in cols}]})
    return FakeLLM(respond=respond)


def _schema(*cols: dict) -> Schema:
    return Schema.model_validate({"tables": [{"name": "company", "primary_key": ["name"],
                                              "columns": [{"name": "name"}, *cols]}]})


def test_a_pruned_or_widened_table_reuses_the_stored_columns(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    first = column_oracle()
    asyncio.run(extract(LM(first), CHUNKS, Schema.model_validate({"tables": [WIDE]}), NONE,
                        store=store))
    assert len(first.requests) == 10
    # a minimal schema for another question: fewer columns, no call at all
    pruned = column_oracle()
    results = asyncio.run(extract(LM(pruned), CHUNKS, _schema({"name": "founded",
                                                               "type": "INT"}), NONE,
                                  store=store))
    assert not pruned.requests and all(r.hits == 1 for r in results)
    assert results[3].rows["company"][0].values == {"name": "C3", "founded": 1903}
    # a new column: only it (and the key) is asked for, the rest comes from the store
    wider = column_oracle()
    schema = _schema({"name": "founded", "type": "INT"}, {"name": "city"})
    results = asyncio.run(extract(LM(wider), CHUNKS, schema, NONE, store=store))
    assert len(wider.requests) == 10
    prompt = wider.requests[0].messages[-1].content
    assert "\n  city TEXT" in prompt and "\n  founded INT" not in prompt
    assert results[4].rows["company"][0].values == {"name": "C4", "founded": 1904,
                                                    "city": "T4"}
    again = column_oracle()
    asyncio.run(extract(LM(again), CHUNKS, schema, NONE, store=store))
    assert not again.requests                          # the joined rows were stored too
    # a column of the same name but another meaning is not re-used
    other = column_oracle()
    asyncio.run(extract(LM(other), CHUNKS[:2], _schema(
        {"name": "founded", "type": "INT", "description": "year listed on the exchange"}),
        NONE, store=store))
    assert len(other.requests) == 2


def test_join_rows_pairs_rows_by_entity_and_keeps_the_unpaired() -> None:
    table = Table.model_validate(WIDE)

    def r(values, conf, span):
        return Row(table="company", values=values, provenance=Provenance(
            chunk_id="c#0", confidence=conf, char_start=span[0], char_end=span[1]))
    joined = join_rows(table, [
        ([r({"name": "Acme", "founded": 1874}, {"founded": 0.9}, (0, 20)),
          r({"name": "Bolt", "founded": 1901}, {"founded": 0.8}, (30, 40))], {"founded"}),
        ([r({"name": "ACME Inc.", "staff": 5}, {"staff": 0.7}, (10, 50)),
          r({"name": "Cog", "staff": 9}, {"staff": 0.6}, (60, 70))], {"staff"})])
    assert [x.values for x in joined] == [
        {"name": "Acme", "founded": 1874, "staff": 5},
        {"name": "Bolt", "founded": 1901, "staff": None},
        {"name": "Cog", "founded": None, "staff": 9}]
    assert joined[0].provenance.confidence == {"founded": 0.9, "staff": 0.7}
    assert (joined[0].provenance.char_start, joined[0].provenance.char_end) == (0, 50)


def test_a_table_whose_parent_is_stored_is_extracted_alone(tmp_path: Path) -> None:
    store = TupleStore(tmp_path)
    asyncio.run(extract(LM(oracle()), CHUNKS[:2], Schema.model_validate({"tables": [CITY]}),
                        NONE, store=store))
    linked = Schema.model_validate({"tables": [
        CITY, {**COMPANY, "columns": [*COMPANY["columns"], {"name": "city"}],
               "foreign_keys": [{"cols": ["city"], "ref_table": "city", "ref_cols": ["name"]}]}]})
    fake = oracle()
    results = asyncio.run(extract(LM(fake), CHUNKS[:2], linked, NONE, store=store))
    assert len(fake.requests) == 2 and not any(r.failed for r in results)
    assert "TABLE city" not in fake.requests[0].messages[-1].content
