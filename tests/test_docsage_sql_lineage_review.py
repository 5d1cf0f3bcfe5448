"""Lineage review fixes (issue 11): sources name every chunk a tuple drew on."""

from __future__ import annotations

import pytest

from quaderno.methods.docsage.aliases import merge_entities
from quaderno.methods.docsage.clear import source_chunk
from quaderno.methods.docsage.correct import apply_cell
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.lineage_rewrite import LINEAGE
from quaderno.methods.docsage.records import RowSource
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox, SQLTimeoutError
from quaderno.methods.docsage.schema import Column, Schema, Table

SCHEMA = Schema(tables=[Table(name="company", primary_key=["name"], columns=[
    Column(name="name"), Column(name="founded", type="INT"), Column(name="staff", type="INT"),
    Column(name="city")])])


def row(chunk: str, conf: dict[str, float], **values) -> Row:
    return Row(table="company", values={"name": None, "founded": None, "staff": None,
                                        "city": None, **values},
               provenance=Provenance(doc_id=chunk.split("#")[0], chunk_id=chunk,
                                     extractor="fake:x", confidence=conf))


def test_a_merged_tuple_cites_the_chunk_of_every_value_it_answers_with() -> None:
    rows = merge_entities(SCHEMA, [row("a#0", {"name": 0.9, "founded": 0.8}, name="Acme",
                                       founded=1874),
                                   row("b#0", {"name": 0.9, "staff": 0.7}, name="Acme",
                                       staff=2300)])
    assert len(rows) == 1
    with SQLSandbox(SCHEMA, rows) as sb:
        traced = run_with_lineage(sb, "SELECT staff FROM company WHERE name = 'Acme'")
    assert [list(r) for r in traced.result.rows] == [[2300]]
    (src,) = traced.lineage[0].sources
    assert src.chunk_id == "a#0"
    assert src.cell_chunks == {"staff": "b#0"}
    assert src.chunk_ids() == ["a#0", "b#0"]
    assert src.extractor == "fake:x"
    assert src.confidence == {"name": 0.9, "founded": 0.8, "staff": 0.7}
    assert [c["by"] for c in src.corrections] == ["alias-merge"]
    # what the answer record keeps (reason.result_table copies every same-named field)
    kept = RowSource(**{k: v for k, v in src.model_dump().items() if k in RowSource.model_fields})
    assert kept.chunk_ids() == ["a#0", "b#0"]


def test_a_cell_fixed_from_another_chunk_is_cited_like_clear_sees_it() -> None:
    fixed = apply_cell(row("a#0", {}, name="Acme", city="Zorn"), "city", "Pax",
                       reason="constraint:fd", by="backtracking", evidence_chunk="c#4",
                       quote="Acme moved to Pax.")
    assert source_chunk(fixed, "city") == "c#4"
    with SQLSandbox(SCHEMA, [fixed]) as sb:
        traced = run_with_lineage(sb, "SELECT city FROM company")
    src = traced.lineage[0].sources[0]
    assert src.cell_chunks == {"city": "c#4"}
    assert src.corrections[0]["evidence_quote"] == "Acme moved to Pax."


def _people_sandbox() -> SQLSandbox:
    schema = Schema(tables=[
        Table(name="company", columns=[Column(name="name"), Column(name="staff", type="INT")]),
        Table(name="person", columns=[Column(name="name"), Column(name="company")])])
    rows = [Row(table="company", values={"name": n, "staff": s},
                provenance=Provenance(chunk_id=f"{n}#0")) for n, s in (("Acme", 5), ("Bolt", 7))]
    rows += [Row(table="person", values={"name": n, "company": c},
                 provenance=Provenance(chunk_id=f"{n}#p")) for n, c in (("Ann", "Acme"),
                                                                         ("Bob", "Zed"))]
    return SQLSandbox(schema, rows)


def test_an_uncorrelated_exists_subquery_is_traced_as_support() -> None:
    with _people_sandbox() as sb:
        traced = run_with_lineage(sb, "SELECT name FROM company WHERE EXISTS "
                                      "(SELECT 1 FROM person WHERE company = 'Acme') "
                                      "ORDER BY name")
        ann = next(r.tid for r in sb.rows if r.values["name"] == "Ann")
    assert [list(r) for r in traced.result.rows] == [["Acme"], ["Bolt"]]
    assert traced.lineage[0].support_tids == [ann]
    assert "Ann#p" in [s.chunk_id for s in traced.lineage[0].sources]
    assert not traced.partial


def test_a_correlated_exists_is_partial_never_full() -> None:
    with _people_sandbox() as sb:
        traced = run_with_lineage(sb, "SELECT c.name FROM company c WHERE EXISTS "
                                      "(SELECT 1 FROM person p WHERE p.company = c.name)")
    assert [list(r) for r in traced.result.rows] == [["Acme"]]
    assert traced.partial and traced.lineage[0].partial


class _SlowRewrite(SQLSandbox):
    """A sandbox where every query carrying the lineage column times out (a slow rewrite),
    and, with ``plain_slow``, every other model-derived query too."""

    plain_slow = False

    def run_checked(self, checked, *, timeout_s: float = 5.0, max_rows: int = 10_000):
        if LINEAGE in checked.sql or self.plain_slow:
            raise SQLTimeoutError(f"query exceeded {timeout_s}s", sql=checked.sql)
        return super().run_checked(checked, timeout_s=timeout_s, max_rows=max_rows)


def test_a_timed_out_lineage_rewrite_falls_back_to_the_plain_query_as_partial() -> None:
    rows = [row("a#0", {}, name="Acme", staff=5), row("b#0", {}, name="Bolt", staff=7)]
    with _SlowRewrite(SCHEMA, rows) as sb:
        traced = run_with_lineage(sb, "SELECT name FROM company WHERE staff > 6")
        assert [list(r) for r in traced.result.rows] == [["Bolt"]]
        assert traced.partial and traced.lineage[0].partial
        assert any("timed out" in n for n in traced.notes)
        sb.plain_slow = True
        with pytest.raises(SQLTimeoutError):
            run_with_lineage(sb, "SELECT name FROM company WHERE staff > 6")


def test_a_merge_cites_the_row_whose_value_survives_not_the_other_rows_history() -> None:
    # A's committee set A's staff to NULL from A's own chunk; B states 2300: the merged
    # staff is B's, and its chunk is B's, not the chunk of A's discarded cell
    a = apply_cell(row("a#0", {}, name="Acme", staff=1), "staff", None,
                   reason="low-confidence", by="committee", evidence_chunk="a#0")
    merged = merge_entities(SCHEMA, [row("b#0", {}, name="Acme", staff=2300), a])
    assert len(merged) == 1 and merged[0].values["staff"] == 2300
    assert source_chunk(merged[0], "staff") == "b#0"
    # ... and where the entity has no value either, the NULL's chunk is not cited for it
    merged = merge_entities(SCHEMA, [row("b#0", {}, name="Acme", founded=1874), a])
    assert merged[0].values["staff"] is None
    assert source_chunk(merged[0], "staff") == "b#0"
    # a cell B settled by backtracking, filled into A's row: cited at its quoted evidence
    b = apply_cell(row("b#0", {}, name="Acme", city="Zorn"), "city", "Pax",
                   reason="constraint:fd", by="backtracking", evidence_chunk="c#4",
                   quote="Acme moved to Pax.")
    merged = merge_entities(SCHEMA, [row("a#0", {}, name="Acme", founded=1874), b])
    assert merged[0].values["city"] == "Pax"
    assert source_chunk(merged[0], "city") == "c#4"
    assert any(c.evidence_quote == "Acme moved to Pax." for c in merged[0].provenance.corrections)
    with SQLSandbox(SCHEMA, merged) as sb:
        src = run_with_lineage(sb, "SELECT city FROM company").lineage[0].sources[0]
    assert src.cell_chunks == {"city": "c#4"}
