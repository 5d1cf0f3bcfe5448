"""DocSage SQL reasoning substrate: the gate's accepted queries, the sandbox, and lineage from
result rows back to tuples and chunk spans (spec §4). The fixture has three tables whose every
row has a known document, chunk and span."""

from __future__ import annotations

import datetime as dt
import statistics

import pytest

from quaderno.errors import ConfigError, SQLExecutionError, SQLRefusedError
from quaderno.methods.docsage.lineage import MAX_SUPPORT_QUERIES, run_with_lineage
from quaderno.methods.docsage.lineage_rewrite import LINEAGE
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox, SQLTimeoutError
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.sqlgate import check_sql

SCHEMA = Schema(tables=[
    Table(name="company", columns=[
        Column(name="name"), Column(name="country"), Column(name="founded", type="INT"),
        Column(name="employees", type="INT"), Column(name="revenue", type="DOUBLE")]),
    Table(name="person", columns=[Column(name="name"), Column(name="company"),
                                  Column(name="age", type="INT")]),
    Table(name="product", columns=[Column(name="name"), Column(name="company"),
                                   Column(name="launched", type="DATE"),
                                   Column(name="price", type="DOUBLE")]),
])
COMPANIES = [("Acme", "US", 1990, 100, 12.5), ("Bolt", "DE", 1985, 50, 3.0),
             ("Cog", "US", 2001, 300, 40.0), ("Dyn", "DE", 1999, 20, 1.5),
             ("Eon", "FR", 2010, 80, 9.0)]
PEOPLE = [("Ann", "Acme", 40), ("Bob", "Cog", 52), ("Cid", "Acme", 31), ("Dee", "Eon", 45)]
PRODUCTS = [("Anvil", "Acme", "2001-05-01", 9.5), ("Cogwheel", "Cog", "2015-01-01", 3.25),
            ("Rocket", "Acme", "1999-12-31", 99.0)]


def _rows() -> list[Row]:
    rows = []
    for i, (n, c, f, e, r) in enumerate(COMPANIES):
        rows.append(Row(table="company", values={"name": n, "country": c, "founded": f,
                                                 "employees": e, "revenue": r},
                        provenance=Provenance(doc_id=f"doc-{n}", chunk_id=f"{n}#{i}",
                                              char_start=10 * i, char_end=10 * i + 7,
                                              extractor="fake")))
    for n, c, a in PEOPLE:
        rows.append(Row(table="person", values={"name": n, "company": c, "age": a},
                        provenance=Provenance(doc_id=f"doc-{n}", chunk_id=f"{n}#p")))
    for n, c, d, p in PRODUCTS:
        rows.append(Row(table="product", values={"name": n, "company": c, "launched": d,
                                                 "price": p},
                        provenance=Provenance(doc_id=f"doc-{n}", chunk_id=f"{n}#x")))
    return rows


@pytest.fixture(scope="module")
def sb():
    with SQLSandbox(SCHEMA, _rows()) as sandbox:
        yield sandbox


def tid(sb: SQLSandbox, table: str, name: str) -> int:
    return next(r.tid for r in sb.rows if r.table == table and r.values["name"] == name)


def tids(sb: SQLSandbox, table: str, *names: str) -> set[int]:
    return {tid(sb, table, n) for n in names}


# -- the gate on good queries -------------------------------------------------------------
def test_gate_qualifies_and_regenerates_the_query() -> None:
    checked = check_sql("select name, count(*) from company c group by name -- note", SCHEMA)
    assert checked.tables == ["company"]
    assert '"c"."name"' in checked.sql and "note" not in checked.sql
    assert checked.sql.startswith("SELECT ")


def test_gate_names_the_unknown_column_and_the_schema_columns() -> None:
    with pytest.raises(SQLRefusedError) as info:
        check_sql("SELECT ceo FROM company", SCHEMA)
    assert info.value.reason == "unknown-column"
    assert "ceo" in str(info.value) and "company(_tid" not in str(info.value)
    assert "company(name, country, founded, employees, revenue)" in str(info.value)


def test_gate_accepts_every_shape_mebench_uses() -> None:
    for sql in ["WITH x AS (SELECT * FROM company) SELECT name FROM x",
                "SELECT name FROM company UNION ALL SELECT name FROM person",
                "SELECT CASE WHEN employees > 60 THEN 'big' ELSE 'small' END FROM company",
                "SELECT name FROM company WHERE name LIKE 'A%' AND founded BETWEEN 1980 AND 2000",
                "SELECT name FROM company WHERE name IN (SELECT company FROM person)",
                "SELECT country, count(DISTINCT name) FROM company GROUP BY country "
                "HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 1",
                "FROM company SELECT name",
                "SELECT c.name, t.n FROM company c JOIN LATERAL (SELECT count(*) AS n FROM "
                "person p WHERE p.company = c.name) t ON true"]:
        check_sql(sql, SCHEMA)


def test_a_comment_after_the_last_semicolon_is_no_second_statement() -> None:
    """The gate refused "SELECT ...; -- a note" as two statements, costing the one repair
    (a MEBench train query has that shape); a statement after the comment is still one."""
    for sql in ("SELECT name FROM company; -- the oldest one",
                "SELECT name FROM company; /* the oldest one */"):
        checked = check_sql(sql, SCHEMA)
        assert checked.sql == check_sql("SELECT name FROM company", SCHEMA).sql
    with pytest.raises(SQLRefusedError, match="found 2 statements"):
        check_sql("SELECT name FROM company; -- a note\nSELECT name FROM person", SCHEMA)


def test_gate_accepts_the_mebench_train_queries(shared_data) -> None:
    """Every query of MEBench's train split (``mebench_train.jsonl``) over a schema of the
    tables and columns it names passes, but those holding two statements. Queries sqlglot
    cannot parse, or naming a table or column no drafted schema can hold, are left out."""
    import json
    import re

    import sqlglot
    from sqlglot import exp

    from quaderno.methods.docsage.identifiers import reserved
    ok, refused, left_out = 0, [], 0
    lines = (shared_data / "mebench" / "mebench_train.jsonl").read_text().splitlines()
    for line in lines:
        sql = json.loads(line)["sql"].strip()
        try:
            tree = sqlglot.parse_one(sql.rstrip(";"), read="duckdb")
        except sqlglot.errors.SqlglotError:
            left_out += 1
            continue
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        aliases = {a.alias_or_name.lower() for a in tree.find_all(exp.Alias)}
        tables = sorted({t.name.lower() for t in tree.find_all(exp.Table)} - ctes)
        columns = sorted({c.name.lower() for c in tree.find_all(exp.Column)} - aliases)
        if not tables or not all(re.fullmatch(r"[a-z][a-z0-9_]{0,62}", n) and not reserved(n)
                                 for n in (*tables, *columns)):
            left_out += 1
            continue
        schema = Schema(tables=[Table(name=t, columns=[Column(name=c) for c in columns]
                                      or [Column(name="x")]) for t in tables])
        try:
            check_sql(sql, schema)
            ok += 1
        except SQLRefusedError as e:
            refused.append((e.reason, sql))
    assert ok >= 3200 and left_out < 150, (ok, left_out)
    assert refused and all(reason == "multiple-statements" and sql.count("SELECT") >= 2
                           for reason, sql in refused), refused


def test_gate_follows_cte_scopes_the_way_sql_does() -> None:
    # chained CTEs, a CTE inside a subquery used there, a recursive CTE naming itself
    for sql in ["WITH a AS (SELECT * FROM company), b AS (SELECT name FROM a) SELECT * FROM b",
                "SELECT name FROM company WHERE name IN "
                "(WITH p AS (SELECT company FROM person) SELECT company FROM p)",
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
                "SELECT n FROM r"]:
        check_sql(sql, SCHEMA)
    # a CTE the scope cannot see: used before it is defined, or outside its subquery
    for sql in ["WITH a AS (SELECT * FROM b), b AS (SELECT name FROM company) SELECT * FROM a",
                "SELECT * FROM p WHERE EXISTS (WITH p AS (SELECT 1 AS x) SELECT x FROM p)"]:
        with pytest.raises(SQLRefusedError) as info:
            check_sql(sql, SCHEMA)
        assert info.value.reason == "unknown-table"
    # a CTE named like a schema table hides it: the query reads no schema table
    assert check_sql("WITH company AS (SELECT 1 AS n) SELECT n FROM company", SCHEMA).tables == []


# -- the sandbox -----------------------------------------------------------------------------
def test_run_returns_columns_and_rows(sb: SQLSandbox) -> None:
    res = sb.run("SELECT name, employees FROM company WHERE country = 'US' ORDER BY name")
    assert res.columns == ["name", "employees"]
    assert res.rows == [["Acme", 100], ["Cog", 300]]
    assert not res.truncated and res.sql.startswith("SELECT")


def test_database_errors_are_typed_and_repairable(sb: SQLSandbox) -> None:
    with pytest.raises(SQLExecutionError) as info:
        sb.run("SELECT CAST(name AS INT) FROM company")
    assert info.value.kind == "database" and "ConversionException" in str(info.value)
    assert not isinstance(info.value, SQLTimeoutError)


def test_timeout_is_typed(sb: SQLSandbox) -> None:
    with pytest.raises(SQLTimeoutError):
        sb.run("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
               "SELECT max(n) FROM r", timeout_s=0.2)
    assert sb.run("SELECT count(*) FROM person").rows == [[4]]


def test_bad_limits_are_config_errors(sb: SQLSandbox) -> None:
    with pytest.raises(ConfigError, match="timeout_s"):
        sb.run("SELECT 1", timeout_s=0)
    with pytest.raises(ConfigError, match="max_rows"):
        sb.run("SELECT 1", max_rows=0)
    with pytest.raises(ConfigError, match="memory_limit"):
        SQLSandbox(SCHEMA, [], memory_limit="1GB'; SET threads=8; --")


def test_trusted_queries_take_bound_parameters(sb: SQLSandbox) -> None:
    res = sb.run_trusted("SELECT count(*) FROM company WHERE founded < ?", [1995])
    assert res.rows == [[2]]


# -- every aggregate runs, and a global aggregate traces to the rows it read ----------------
US_DE = [c for c in COMPANIES if c[1] in ("US", "DE")]
EMP = [c[3] for c in US_DE]
st = statistics
AGGREGATES = [
    ("count(*)", len(EMP)), ("count(DISTINCT country)", 2), ("avg(employees)", st.mean(EMP)),
    ("sum(employees)", sum(EMP)), ("min(employees)", min(EMP)), ("max(employees)", max(EMP)),
    ("median(employees)", st.median(EMP)), ("variance(employees)", st.variance(EMP)),
    ("var_samp(employees)", st.variance(EMP)), ("var_pop(employees)", st.pvariance(EMP)),
    ("stddev(employees)", st.stdev(EMP)), ("stddev_pop(employees)", st.pstdev(EMP)),
    ("corr(founded, employees)", st.correlation([c[2] for c in US_DE], EMP)),
]


@pytest.mark.parametrize(("agg", "expected"), AGGREGATES, ids=[a for a, _ in AGGREGATES])
def test_every_aggregate_runs_and_traces(sb: SQLSandbox, agg: str, expected: float) -> None:
    traced = run_with_lineage(sb, f"SELECT {agg} AS v FROM company "
                                  "WHERE country IN ('US', 'DE')")
    assert traced.result.columns == ["v"]
    assert traced.result.rows[0][0] == pytest.approx(expected)
    (lin,) = traced.lineage
    assert lin.mode == "group" and not lin.partial
    assert set(lin.tids) == tids(sb, "company", "Acme", "Bolt", "Cog", "Dyn")
    assert {s.chunk_id for s in lin.sources} == {"Acme#0", "Bolt#1", "Cog#2", "Dyn#3"}


# -- lineage -----------------------------------------------------------------------------------
def test_plain_select_traces_each_row_to_its_chunk_span(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT name FROM company WHERE founded > 1995 ORDER BY name")
    assert traced.result.rows == [["Cog"], ["Dyn"], ["Eon"]]
    assert LINEAGE not in traced.result.columns and traced.result.columns == ["name"]
    assert not traced.partial
    first = traced.lineage[0]
    assert first.mode == "row" and first.tids == [tid(sb, "company", "Cog")]
    (src,) = first.sources
    assert (src.table, src.doc_id, src.chunk_id, src.char_start, src.char_end, src.extractor) \
        == ("company", "doc-Cog", "Cog#2", 20, 27, "fake")
    assert src.values == {"name": "Cog", "country": "US", "founded": 2001, "employees": 300,
                          "revenue": 40.0}


def test_order_by_limit_traces_the_top_rows(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT name, employees FROM company "
                                  "ORDER BY employees DESC LIMIT 2")
    assert traced.result.rows == [["Cog", 300], ["Acme", 100]]
    assert [lin.tids for lin in traced.lineage] == [[tid(sb, "company", "Cog")],
                                                    [tid(sb, "company", "Acme")]]


def test_join_traces_both_tables(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT p.name, c.country FROM person p JOIN company c "
                                  "ON p.company = c.name WHERE p.age > 35 ORDER BY p.name")
    assert traced.result.rows == [["Ann", "US"], ["Bob", "US"], ["Dee", "FR"]]
    assert [set(lin.tids) for lin in traced.lineage] == [
        {tid(sb, "person", "Ann"), tid(sb, "company", "Acme")},
        {tid(sb, "person", "Bob"), tid(sb, "company", "Cog")},
        {tid(sb, "person", "Dee"), tid(sb, "company", "Eon")}]
    assert {s.table for s in traced.lineage[0].sources} == {"person", "company"}


def test_group_by_having_traces_each_group(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT country, count(*) AS n, avg(revenue) FROM company "
                                  "GROUP BY country HAVING count(*) > 1 ORDER BY country")
    assert traced.result.columns[:2] == ["country", "n"]
    assert [r[:2] for r in traced.result.rows] == [["DE", 2], ["US", 2]]
    assert [set(lin.tids) for lin in traced.lineage] == [tids(sb, "company", "Bolt", "Dyn"),
                                                         tids(sb, "company", "Acme", "Cog")]
    assert all(lin.mode == "group" for lin in traced.lineage)


def test_join_group_by_traces_both_sides_per_group(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT c.name, count(p.name) FROM company c JOIN person p "
                                  "ON p.company = c.name GROUP BY c.name "
                                  "ORDER BY 2 DESC, 1 LIMIT 1")
    assert traced.result.rows == [["Acme", 2]]
    assert set(traced.lineage[0].tids) == ({tid(sb, "company", "Acme")}
                                           | tids(sb, "person", "Ann", "Cid"))


def test_case_like_between_trace_rows(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT name, CASE WHEN employees > 60 THEN 'big' ELSE "
                                  "'small' END AS size FROM company WHERE name LIKE '%o%' AND "
                                  "founded BETWEEN 1980 AND 2005 ORDER BY name")
    assert traced.result.rows == [["Bolt", "small"], ["Cog", "big"]]
    assert [lin.tids for lin in traced.lineage] == [[tid(sb, "company", "Bolt")],
                                                    [tid(sb, "company", "Cog")]]


def test_distinct_becomes_groups(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT DISTINCT company FROM person ORDER BY company")
    assert traced.result.rows == [["Acme"], ["Cog"], ["Eon"]]
    assert set(traced.lineage[0].tids) == tids(sb, "person", "Ann", "Cid")


def test_in_and_scalar_subqueries_add_support(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT name FROM company WHERE name IN "
                                  "(SELECT company FROM product WHERE price > 5) ORDER BY name")
    assert traced.result.rows == [["Acme"]]
    assert traced.lineage[0].tids == [tid(sb, "company", "Acme")]
    assert set(traced.lineage[0].support_tids) == tids(sb, "product", "Anvil", "Rocket")
    assert not traced.partial
    scalar = run_with_lineage(sb, "SELECT name FROM company WHERE employees > "
                                  "(SELECT avg(employees) FROM company)")
    assert scalar.result.rows == [["Cog"]]  # avg is 110
    assert set(scalar.lineage[0].support_tids) == {r.tid for r in sb.rows if r.table == "company"}


def test_cte_lineage_flows_through(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "WITH big AS (SELECT name, country FROM company WHERE "
                                  "employees >= 80) SELECT country, count(*) FROM big "
                                  "GROUP BY country ORDER BY country")
    assert traced.result.rows == [["FR", 1], ["US", 2]]
    assert [set(lin.tids) for lin in traced.lineage] == [tids(sb, "company", "Eon"),
                                                         tids(sb, "company", "Acme", "Cog")]
    assert not traced.partial


def test_derived_table_lineage(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT s.company, s.total FROM (SELECT company, sum(price) "
                                  "AS total FROM product GROUP BY company) AS s "
                                  "ORDER BY s.total DESC LIMIT 1")
    assert traced.result.rows == [["Acme", 108.5]]
    assert set(traced.lineage[0].tids) == tids(sb, "product", "Anvil", "Rocket")


def test_union_all_traces_each_branch(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT name FROM company WHERE country = 'FR' UNION ALL "
                                  "SELECT name FROM product WHERE launched > DATE '2010-01-01'")
    assert traced.result.rows == [["Eon"], ["Cogwheel"]]
    assert [lin.tids for lin in traced.lineage] == [[tid(sb, "company", "Eon")],
                                                    [tid(sb, "product", "Cogwheel")]]


def test_parenthesised_union_all_branches_are_not_each_others_support(sb: SQLSandbox) -> None:
    for sql in ["(SELECT name FROM company WHERE country = 'FR') UNION ALL "
                "(SELECT name FROM product WHERE launched > DATE '2010-01-01')",
                "WITH x AS ((SELECT name FROM company WHERE country = 'FR') UNION ALL "
                "(SELECT name FROM product WHERE launched > DATE '2010-01-01')) "
                "SELECT name FROM x"]:
        traced = run_with_lineage(sb, sql)
        assert traced.result.rows == [["Eon"], ["Cogwheel"]]
        assert [lin.tids for lin in traced.lineage] == [[tid(sb, "company", "Eon")],
                                                        [tid(sb, "product", "Cogwheel")]]
        assert all(lin.support_tids == [] for lin in traced.lineage), sql
        assert not traced.partial


def test_the_right_side_of_except_is_support_not_a_source(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "(SELECT name FROM company) EXCEPT "
                                  "(SELECT company FROM person)")
    # EXCEPT cannot be traced per row (partial), but what it filtered by is support
    assert traced.partial
    assert sorted(traced.result.rows) == [["Bolt"], ["Dyn"]]
    assert all(set(lin.support_tids) == tids(sb, "person", "Ann", "Bob", "Cid", "Dee")
               for lin in traced.lineage)


def test_lateral_subqueries_run_and_trace_each_outer_row(sb: SQLSandbox) -> None:
    # "each company's oldest person": a LATERAL join, the shape DuckDB offers for top-1 per
    # group; every row cites its company and the person the lateral subquery picked
    for join in (", LATERAL", " JOIN LATERAL", " CROSS JOIN LATERAL"):
        on = " ON true" if join == " JOIN LATERAL" else ""
        traced = run_with_lineage(sb, f"SELECT c.name, o.name AS oldest FROM company c{join} "
                                      "(SELECT p.name FROM person p WHERE p.company = c.name "
                                      f"ORDER BY p.age DESC LIMIT 1) o{on} ORDER BY c.name")
        assert traced.result.rows == [["Acme", "Ann"], ["Cog", "Bob"], ["Eon", "Dee"]], join
        assert [set(lin.tids) for lin in traced.lineage] == [
            {tid(sb, "company", "Acme"), tid(sb, "person", "Ann")},
            {tid(sb, "company", "Cog"), tid(sb, "person", "Bob")},
            {tid(sb, "company", "Eon"), tid(sb, "person", "Dee")}], join
        assert not traced.partial and all(lin.support_tids == [] for lin in traced.lineage)
    # an aggregate inside the lateral subquery traces the rows it counted
    counted = run_with_lineage(sb, "SELECT c.name, s.n FROM company c, LATERAL (SELECT "
                                   "count(*) AS n FROM person p WHERE p.company = c.name) s "
                                   "WHERE s.n > 1")
    assert counted.result.rows == [["Acme", 2]]
    assert set(counted.lineage[0].tids) == ({tid(sb, "company", "Acme")}
                                            | tids(sb, "person", "Ann", "Cid"))


def test_a_query_cannot_choose_the_tuples_its_rows_cite(sb: SQLSandbox) -> None:
    # the rewrite concatenates each derived table's __lineage column: a model-written column
    # of that name would make every row cite whatever tids it lists
    for sql in ["SELECT c.name, t.x FROM company c, LATERAL (SELECT [1, 2, 3] AS __lineage, "
                "p.name AS x FROM person p WHERE p.company = c.name) t",
                'SELECT d.name FROM (SELECT name, [1, 2] AS "__LINEAGE" FROM company) d']:
        with pytest.raises(SQLRefusedError) as info:
            run_with_lineage(sb, sql)
        assert info.value.reason == "reserved-name" and LINEAGE in str(info.value)


def test_deeply_nested_filters_trace_the_outermost_and_say_the_rest_are_not(
        sb: SQLSandbox) -> None:
    # a small model once nested NOT IN 33 deep: each filter subquery runs on its own, so
    # only the first MAX_SUPPORT_QUERIES are traced
    depth = MAX_SUPPORT_QUERIES + 4
    sql = ("SELECT name FROM company WHERE name IN "
           + "(SELECT company FROM person WHERE company IN " * depth
           + "(SELECT company FROM person)" + ")" * depth)
    traced = run_with_lineage(sb, sql)
    assert sorted(traced.result.rows) == [["Acme"], ["Cog"], ["Eon"]]
    assert traced.partial and all(lin.partial for lin in traced.lineage)
    assert f"5 of {depth + 1} subqueries not traced (too many)" in traced.notes
    assert set(traced.lineage[0].support_tids) == tids(sb, "person", "Ann", "Bob", "Cid", "Dee")


def test_a_shape_sqlglot_cannot_qualify_is_refused_not_a_crash() -> None:
    with pytest.raises(SQLRefusedError) as info:
        check_sql("SELECT * FROM company c, (SELECT name FROM person) t, "
                  "(PIVOT product ON name USING count(*)) pv", SCHEMA)
    assert info.value.reason == "unsupported" and "SELECT *" in str(info.value)


def test_what_cannot_be_traced_is_marked_partial_not_guessed(sb: SQLSandbox) -> None:
    union = run_with_lineage(sb, "SELECT company FROM person UNION SELECT company FROM product "
                                 "ORDER BY 1")
    assert union.result.rows == [["Acme"], ["Cog"], ["Eon"]]
    assert union.partial and all(lin.partial and not lin.tids for lin in union.lineage)
    assert union.notes == ["UNION (without ALL) is not traced row by row"]
    except_all = run_with_lineage(sb, "SELECT name FROM company EXCEPT ALL "
                                      "SELECT company FROM person")
    assert except_all.partial and except_all.notes[0] == "EXCEPT is not traced row by row"
    correlated = run_with_lineage(sb, "SELECT c.name, (SELECT count(*) FROM person p WHERE "
                                      "p.company = c.name) AS staff FROM company c ORDER BY 1")
    assert correlated.result.rows[0] == ["Acme", 2]
    assert correlated.partial
    assert correlated.lineage[0].tids == [tid(sb, "company", "Acme")]


def test_dates_and_typed_values_reach_the_sources(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT min(launched) FROM product")
    assert traced.result.rows == [[dt.date(1999, 12, 31)]]
    values = {s.values["name"]: s.values["launched"] for s in traced.lineage[0].sources}
    assert values["Rocket"] == dt.date(1999, 12, 31)


def test_sources_are_capped_per_row(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT count(*) FROM company", max_sources=2)
    (lin,) = traced.lineage
    assert len(lin.tids) == 5 and len(lin.sources) == 2 and lin.sources_truncated


def test_duckdb_only_aggregates_are_traced_as_groups(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT fsum(employees), kurtosis(employees), "
                                  "count_if(employees > 60) FROM company")
    assert traced.result.rows[0][0] == 550.0 and traced.result.rows[0][2] == 3
    assert traced.lineage[0].mode == "group" and len(traced.lineage[0].tids) == 5
    assert not traced.partial


def test_left_join_and_window_functions(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT c.name, p.name AS person FROM company c LEFT JOIN "
                                  "person p ON p.company = c.name WHERE c.country = 'DE' "
                                  "ORDER BY 1")
    assert traced.result.rows == [["Bolt", None], ["Dyn", None]]
    assert [lin.tids for lin in traced.lineage] == [[tid(sb, "company", "Bolt")],
                                                    [tid(sb, "company", "Dyn")]]
    window = run_with_lineage(sb, "SELECT name, rank() OVER (ORDER BY employees DESC) AS r "
                                  "FROM company QUALIFY r = 1")
    assert window.result.rows == [["Cog", 1]]
    assert window.lineage[0].tids == [tid(sb, "company", "Cog")]


def test_a_query_without_tables_has_nothing_to_trace(sb: SQLSandbox) -> None:
    traced = run_with_lineage(sb, "SELECT 1 + 1 AS two")
    assert traced.result.rows == [[2]] and not traced.partial
    assert traced.lineage[0].mode == "none" and traced.lineage[0].tids == []


def test_a_rewrite_that_does_not_run_falls_back_to_the_query(
        sb: SQLSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    from quaderno.methods.docsage import lineage_rewrite
    monkeypatch.setattr(lineage_rewrite, "_is_aggregate", lambda select: False)  # break the rewrite
    traced = run_with_lineage(sb, "SELECT max(employees) FROM company")
    assert traced.result.rows == [[300]] and traced.result.columns == ["MAX(employees)"]
    assert traced.partial and traced.lineage[0].tids == []
    assert any("did not run" in note for note in traced.notes)


def test_traced_and_plain_runs_name_columns_alike(sb: SQLSandbox) -> None:
    sql = "SELECT country, count(*), avg(employees) FROM company GROUP BY country"
    assert run_with_lineage(sb, sql).result.columns == sb.run(sql).columns \
        == ["country", "COUNT(*)", "AVG(employees)"]


def test_an_unknown_column_refusal_says_where_the_column_is() -> None:
    """The measuring model repeated a refused query word for word when told only that
    'commissionname' could not be resolved: the refusal now names the table that has it."""
    s = Schema.model_validate({"tables": [
        {"name": "commissions", "columns": [{"name": "commissionid"},
                                            {"name": "commissionname"}]},
        {"name": "companies", "columns": [{"name": "companyid"}, {"name": "companyname"},
                                          {"name": "commissionid"}]}]})

    def refusal(sql: str) -> str:
        with pytest.raises(SQLRefusedError) as info:
            check_sql(sql, s)
        assert info.value.reason == "unknown-column"
        return str(info.value)

    assert refusal("SELECT companyname FROM companies WHERE commissionname = 'x'").endswith(
        "commissionname is a column of commissions, which the query does not read: "
        "join commissions ON commissions.commissionid = companies.commissionid (columns of "
        "the same name; no foreign key declares them), or write the query without "
        "commissionname")
    # read, but qualified with the wrong table: the gate moves it (test_docsage_sql_requalify)
    assert check_sql("SELECT c.commissionname FROM companies c, commissions m",
                     s).requalified == ["c.commissionname -> m.commissionname"]
    assert "No table has commission_name; the closest: commissions.commissionname" in \
        refusal("SELECT c.commission_name FROM companies c")
    assert refusal("SELECT city_id FROM companies").endswith("No table has city_id")


def test_a_table_nothing_links_is_no_join_to_ask_for() -> None:
    """abstain-docsage-set1: told to "join stedrurial_medal", a table no foreign key or
    shared column links to laureates, the 1.5B model wrote its refused query twice more and
    the question went unanswered. The refusal now says the table cannot be joined, and that
    the query must do without the column."""
    s = Schema.model_validate({"tables": [
        {"name": "stedrurial_medal", "columns": [{"name": "award_name"},
                                                 {"name": "year", "type": "INT"}]},
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "nationality"},
                                          {"name": "birth_year", "type": "INT"}],
         "primary_key": ["name"]}]})
    with pytest.raises(SQLRefusedError) as info:
        check_sql("SELECT avg(birth_year) FROM laureates WHERE nationality = 'Kraxryndia' "
                  "AND award_name = 'Stedrurial Medal'", s)
    assert str(info.value).endswith(
        "award_name is a column of stedrurial_medal, which the query does not read, and no "
        "foreign key or column naming the same entity links stedrurial_medal to laureates: "
        "it cannot be joined; write the query without award_name")


def test_the_refusal_names_a_join_through_a_link_table_or_any_owner() -> None:
    """Review of 4263deb: with laureates <- awards -> medals the hint said medals "cannot be
    joined" (an answer over every laureate for a model that obeys); with the column in two
    tables only the first was tried; a medal's ``name`` was joined to a laureate's."""
    def hint(schema: dict, sql: str) -> str:
        with pytest.raises(SQLRefusedError) as info:
            check_sql(sql, Schema.model_validate(schema))
        return str(info.value)
    linked = {"tables": [
        {"name": "laureates", "primary_key": ["name"],
         "columns": [{"name": "name"}, {"name": "birth_year", "type": "INT"}]},
        {"name": "medals", "primary_key": ["medal_id"],
         "columns": [{"name": "medal_id", "type": "INT"}, {"name": "medal_name"}]},
        {"name": "awards", "columns": [{"name": "laureate_name"},
                                       {"name": "medal_id", "type": "INT"}],
         "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                           "ref_cols": ["name"]},
                          {"cols": ["medal_id"], "ref_table": "medals",
                           "ref_cols": ["medal_id"]}]}]}
    assert hint(linked, "SELECT avg(birth_year) FROM laureates WHERE medal_name = 'X'").endswith(
        "medal_name is a column of medals, which the query does not read: join awards ON "
        "awards.laureate_name = laureates.name, then medals ON awards.medal_id = "
        "medals.medal_id")
    two = {"tables": [
        {"name": "laureates", "columns": [{"name": "laureate_name"}, {"name": "birth_year"}]},
        {"name": "viandbround_medal", "columns": [{"name": "winner"}, {"name": "award_name"}]},
        {"name": "stedrurial_medal", "columns": [{"name": "laureate_name"},
                                                 {"name": "award_name"}]}]}
    assert hint(two, "SELECT birth_year FROM laureates WHERE award_name = 'X'").endswith(
        "join stedrurial_medal ON stedrurial_medal.laureate_name = laureates.laureate_name "
        "(columns of the same name; no foreign key declares them), or write the query "
        "without award_name")
    generic = {"tables": [
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "year"}]},
        {"name": "stedrurial_medal", "columns": [{"name": "name"}, {"name": "year"},
                                                 {"name": "award_name"}]}]}
    assert hint(generic, "SELECT name FROM laureates WHERE award_name = 'X'").endswith(
        "it cannot be joined; write the query without award_name")
    # of two joins as short, the one foreign keys declare (review of 2d53934)
    both = {"tables": [
        {"name": "laureates", "primary_key": ["laureate_name"],
         "columns": [{"name": "laureate_name"}, {"name": "birth_year", "type": "INT"}]},
        {"name": "prize_mentions", "columns": [{"name": "laureate_name"},
                                               {"name": "medal_name"}]},
        {"name": "awards", "columns": [{"name": "laureate_name"}, {"name": "medal_name"}],
         "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                           "ref_cols": ["laureate_name"]},
                          {"cols": ["medal_name"], "ref_table": "medals",
                           "ref_cols": ["medal_name"]}]},
        {"name": "medals", "primary_key": ["medal_name"],
         "columns": [{"name": "medal_name"}, {"name": "country"}]}]}
    assert hint(both, "SELECT birth_year FROM laureates WHERE country = 'X'").endswith(
        "join awards ON awards.laureate_name = laureates.laureate_name, then medals ON "
        "awards.medal_name = medals.medal_name")


def test_the_refusal_names_the_join_a_foreign_key_gives() -> None:
    """The 1.5B model's Set1 Statistics query after the re-key (docsage-wholenames-set1):
    told to join stedrurial_medal, it wrote stedrurial_medal.award_name without the join.
    Where one foreign key gives the join the gate now adds it (test_docsage_sql_autojoin);
    where two tables have the column and both could be joined, the refusal names the join
    condition of the first."""
    s = Schema.model_validate({"tables": [
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "nationality"},
                                          {"name": "birth_year", "type": "INT"}],
         "primary_key": ["name"]},
        {"name": "stedrurial_medal", "columns": [{"name": "laureate_name"},
                                                 {"name": "award_name"}],
         "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                           "ref_cols": ["name"]}]},
        {"name": "other_medal", "columns": [{"name": "laureate_name"},
                                            {"name": "award_name"}],
         "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                           "ref_cols": ["name"]}]}]})
    with pytest.raises(SQLRefusedError) as info:
        check_sql("SELECT avg(birth_year) FROM laureates WHERE nationality = 'Kraxryndia' "
                  "AND award_name = 'Stedrurial Medal'", s)
    assert str(info.value).endswith(
        "award_name is a column of stedrurial_medal and other_medal, which the query does not "
        "read: join stedrurial_medal ON stedrurial_medal.laureate_name = laureates.name")
    # the other way round: the read table holds the key to the table with the column
    other = Schema.model_validate({"tables": [
        {"name": "laureates", "columns": [{"name": "name"}, {"name": "birth_year"}],
         "primary_key": ["name"]},
        {"name": "honorees", "columns": [{"name": "name"}, {"name": "birth_year"}],
         "primary_key": ["name"]},
        {"name": "medal", "columns": [{"name": "laureate_name"}, {"name": "honoree_name"}],
         "foreign_keys": [{"cols": ["laureate_name"], "ref_table": "laureates",
                           "ref_cols": ["name"]},
                          {"cols": ["honoree_name"], "ref_table": "honorees",
                           "ref_cols": ["name"]}]}]})
    with pytest.raises(SQLRefusedError) as info:
        check_sql("SELECT laureate_name FROM medal WHERE birth_year > 1960", other)
    assert str(info.value).endswith(
        "join laureates ON medal.laureate_name = laureates.name")
