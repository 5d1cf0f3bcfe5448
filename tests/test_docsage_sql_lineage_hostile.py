"""A model-written query cannot choose the chunks its rows cite, nor multiply its time limit
through the subqueries lineage traces (review 15 of the SQL gate and sandbox)."""

from __future__ import annotations

import time

import pytest

from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.lineage_rewrite import LINEAGE, lineage_name
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Column, Schema, Table

SCHEMA = Schema(tables=[Table(name="company", primary_key=["name"], columns=[
    Column(name="name"), Column(name="staff", type="INT")])])
ROWS = [Row(table="company", values={"name": f"c{i}", "staff": i},
            provenance=Provenance(doc_id=f"d{i}", chunk_id=f"d{i}#0")) for i in range(10)]

# a struct whose field names are strings passed every check of the names a query writes, and
# the rewrite read that field as the derived table's lineage
FORGED = [
    "SELECT d.name FROM (SELECT name, UNNEST(from_json('{{\"{n}\": [7, 8]}}', "
    "'{{\"{n}\": \"BIGINT[]\"}}')) FROM company WHERE name = 'c0') AS d",
    "SELECT d.name FROM (SELECT name, UNNEST(json_transform('{{\"{n}\": [7, 8]}}', "
    "'{{\"{n}\": \"BIGINT[]\"}}')) FROM company WHERE name = 'c0') AS d",
    "WITH d AS (SELECT name, UNNEST(from_json('{{\"{n}\": [7, 8]}}', "
    "'{{\"{n}\": \"BIGINT[]\"}}')) FROM company WHERE name = 'c0') SELECT name FROM d",
    # an empty lineage instead
    "SELECT d.name FROM (SELECT name, UNNEST(regexp_extract('7', '(\\d+)', ['{n}'])) "
    "FROM company WHERE name = 'c0') AS d",
]


@pytest.mark.parametrize("sql", FORGED)
def test_a_struct_field_named_like_the_lineage_column_cites_nothing_it_did_not_read(sql):
    with SQLSandbox(SCHEMA, ROWS) as sb:
        honest = run_with_lineage(sb, "SELECT name FROM company WHERE name = 'c0'")
        traced = run_with_lineage(sb, sql.format(n=LINEAGE))
    assert traced.result.rows == honest.result.rows == [["c0"]]
    assert [lin.tids for lin in traced.lineage] == [lin.tids for lin in honest.lineage]
    assert [[s.chunk_id for s in lin.sources] for lin in traced.lineage] == [["d0#0"]]
    assert not traced.partial


def test_the_lineage_column_is_named_anew_for_every_run():
    names = {lineage_name() for _ in range(50)}
    assert len(names) == 50 and all(n.startswith(LINEAGE + "_") for n in names)


def test_a_name_with_the_reserved_prefix_is_refused():
    with SQLSandbox(SCHEMA, ROWS) as sb, pytest.raises(Exception, match="reserved-name"):
        run_with_lineage(sb, f'SELECT name AS "{LINEAGE}_x" FROM company')


class Slow(SQLSandbox):
    """Every query that reads ``person`` (the subqueries) takes ``delay`` seconds, and the
    time limit each one was given is recorded."""

    delay = 0.3

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.limits: list[float] = []

    def run_checked(self, checked, *, timeout_s=5.0, max_rows=10_000):
        if "person" in checked.sql and "company" not in checked.sql:
            self.limits.append(timeout_s)
            time.sleep(self.delay)
        return super().run_checked(checked, timeout_s=timeout_s, max_rows=max_rows)


def test_the_subqueries_lineage_traces_share_one_time_limit():
    """Eight IN subqueries of a query that ran at once were each given the whole limit: 8.2 s
    at a limit of 1 s (review 15)."""
    schema = Schema(tables=[*SCHEMA.tables, Table(name="person", columns=[
        Column(name="name"), Column(name="employer")])])
    rows = [*ROWS, *(Row(table="person", values={"name": f"p{i}", "employer": f"c{i}"},
                         provenance=Provenance(chunk_id=f"p{i}#0")) for i in range(3))]
    ins = " OR ".join(f"name IN (SELECT employer FROM person WHERE name = 'p{i % 3}')"
                      for i in range(8))
    with Slow(schema, rows) as sb:
        traced = run_with_lineage(sb, f"SELECT name FROM company WHERE {ins}", timeout_s=0.5)
    assert sorted(r[0] for r in traced.result.rows) == ["c0", "c1", "c2"]
    # each was given what was left of the one limit, and after it was spent none ran
    assert len(sb.limits) == 2 and sb.limits[0] <= 0.5 and sb.limits[1] < 0.5 - 0.25
    assert traced.partial
    assert "6 of 8 subqueries not traced (their 0.5 s were spent)" in traced.notes


@pytest.mark.parametrize("sql", ["SELECT to_json(t) AS j FROM (SELECT name FROM company) t",
                                 "SELECT t AS j FROM (SELECT name FROM company) t",
                                 "SELECT list(t) AS l FROM (SELECT name FROM company) t"])
def test_a_derived_tables_whole_row_read_as_a_value_shows_no_lineage_column(sql):
    """The lineage column the rewrite adds to a derived table showed in a value built from
    its whole row (review 16): the plain query's result is the answer, marked untraced."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        traced = run_with_lineage(sb, sql)
        plain = sb.run(sql)
    assert traced.result.rows == plain.rows
    assert LINEAGE not in repr(traced.result.rows)
    assert traced.partial and any("whole row" in n for n in traced.notes)


@pytest.mark.parametrize("sql", [
    # a WITH on a UNION ALL was not seen by the branches' rewrite: the CTE's own row ids
    "WITH company AS (SELECT 6 AS _tid, name FROM company) SELECT name FROM company "
    "UNION ALL SELECT name FROM company WHERE false",
    "SELECT name FROM (SELECT 6 AS _tid, name FROM company) company",
    "WITH company AS (SELECT 6 AS _TID, name, staff FROM company) SELECT name FROM company "
    "WHERE name IN (SELECT name FROM company WHERE staff > 3)",
])
def test_the_row_id_is_a_name_no_query_may_write(sql):
    """Review 17: a CTE shadowing a table with its own ``_tid`` chose the chunks every row
    cites."""
    with SQLSandbox(SCHEMA, ROWS) as sb, pytest.raises(Exception, match="reserved-name"):
        run_with_lineage(sb, sql)


def test_a_with_on_a_set_operation_is_answered_untraced():
    """Without naming ``_tid``, the CTE shadowing ``company`` could still hand the branches'
    rewrite its own columns; the set operation's WITH is now not traced."""
    sql = ("WITH company AS (SELECT name FROM company WHERE name = 'c4') SELECT name FROM "
           "company UNION ALL SELECT name FROM company WHERE false")
    with SQLSandbox(SCHEMA, ROWS) as sb:
        traced = run_with_lineage(sb, sql)
    assert traced.result.rows == [["c4"]]
    assert traced.partial and "WITH on a set operation is not traced" in traced.notes
    assert all(lin.tids == [] for lin in traced.lineage)


@pytest.mark.parametrize("sql", [
    "SELECT m.nm FROM (SELECT unnest(max_by(a, a.staff) OVER ()), a.name AS nm "
    "FROM (SELECT name, staff FROM company) a) m",
    "SELECT m.nm FROM (SELECT unnest(lag(a) OVER (ORDER BY a.name)), a.name AS nm "
    "FROM (SELECT name FROM company) a) m",
    "SELECT m.nm FROM (SELECT unnest(x), nm FROM (SELECT first_value(a) OVER "
    "(ORDER BY a.staff DESC) AS x, a.name AS nm FROM (SELECT name, staff FROM company) a) q) m",
])
def test_a_whole_row_read_anywhere_leaves_the_answer_untraced(sql):
    """Review 17: ``unnest`` of a derived table's whole row recreated a column of the
    lineage column's name, which the outer level read: every row cited one chunk."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        traced = run_with_lineage(sb, sql)
    assert sorted(r[0] for r in traced.result.rows) == [f"c{i}" for i in range(10)]
    assert traced.partial
    assert "a whole row of a table is read as a value; untraced" in traced.notes
    assert all(lin.tids == [] and lin.sources == [] for lin in traced.lineage)


def test_a_column_by_position_is_refused():
    """``SELECT #2`` read the hidden lineage column's row ids as the answer (review 17)."""
    with SQLSandbox(SCHEMA, ROWS) as sb, pytest.raises(Exception, match="positional-column"):
        run_with_lineage(sb, "SELECT #2 AS v FROM (SELECT name FROM company) a")


def test_a_column_named_like_its_derived_table_is_still_traced():
    """A derived table aliased with one of its own columns' names is no whole-row read."""
    with SQLSandbox(SCHEMA, ROWS) as sb:
        traced = run_with_lineage(sb, "SELECT name FROM (SELECT name FROM company "
                                      "WHERE staff = 2) name")
    assert traced.result.rows == [["c2"]] and not traced.partial
    assert [[s.chunk_id for s in lin.sources] for lin in traced.lineage] == [["d2#0"]]
