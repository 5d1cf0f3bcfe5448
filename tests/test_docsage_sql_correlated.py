"""A subquery selecting or ordering by the enclosing query's columns is refused with what to
change (``docsage-rosters-set2``: 14 companies came back for "the company with the fewest
employees"); a correlated subquery that only filters by them runs."""

from __future__ import annotations

import pytest

from quaderno.errors import SQLRefusedError
from quaderno.methods.docsage.lineage import run_with_lineage
from quaderno.methods.docsage.reason import gate_repairs
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.sandbox import SQLSandbox
from quaderno.methods.docsage.schema import Schema
from quaderno.methods.docsage.sqlgate import check_sql

SCHEMA = Schema.model_validate({"tables": [
    {"name": "companies", "primary_key": ["company_name"],
     "columns": [{"name": "company_name"}, {"name": "employees", "type": "INT"},
                 {"name": "chief_executive"}, {"name": "commission_name"}]},
    {"name": "commissions", "primary_key": ["commission_name"],
     "columns": [{"name": "commission_name"}, {"name": "founded", "type": "INT"}]}]})


def test_the_measuring_models_subquery_over_the_wrong_table_is_refused() -> None:
    sql = ("SELECT chief_executive FROM companies WHERE company_name = (SELECT company_name "
           "FROM commissions WHERE commission_name = 'Drournlia Markets Commission' "
           "ORDER BY employees LIMIT 1)")
    with pytest.raises(SQLRefusedError) as err:
        check_sql(sql, SCHEMA)
    assert err.value.reason == "outer-column"
    message = str(err.value)
    assert "subquery over commissions selects company_name and orders by employees" in message
    assert "employees is a column of companies" in message


@pytest.mark.parametrize("sql", [
    "SELECT commission_name FROM commissions m WHERE founded = (SELECT MIN(founded) "
    "FROM commissions) ORDER BY 1",
    "SELECT c.chief_executive FROM companies c WHERE c.employees = (SELECT MIN(c2.employees) "
    "FROM companies c2 WHERE c2.commission_name = c.commission_name)",
    "SELECT company_name FROM companies c WHERE EXISTS (SELECT 1 FROM commissions m "
    "WHERE m.commission_name = c.commission_name)",
    "SELECT chief_executive FROM companies WHERE company_name = (SELECT company_name FROM "
    "companies WHERE commission_name = 'D' ORDER BY employees LIMIT 1)",
])
def test_subqueries_reading_their_own_rows_run(sql) -> None:
    assert check_sql(sql, SCHEMA).sql


def test_ordering_a_subquery_by_an_outer_column_alone_is_refused() -> None:
    sql = ("SELECT company_name FROM companies WHERE commission_name IN (SELECT commission_name "
           "FROM commissions ORDER BY employees LIMIT 1)")
    with pytest.raises(SQLRefusedError, match="orders by employees"):
        check_sql(sql, SCHEMA)


# the Set2 shape at docsage-head: a keyless roster of pairs beside the companies
ROSTER = Schema.model_validate({"tables": [
    {"name": "commissions",
     "columns": [{"name": "commission_name"}, {"name": "company_name"}]},
    {"name": "companies",
     "columns": [{"name": "company_name"}, {"name": "employees", "type": "INT"},
                 {"name": "chief_executive"}]}]})
MEMBERS_BY_OUTER_ORDER = (
    "SELECT chief_executive FROM companies WHERE company_name IN ( SELECT company_name FROM "
    "commissions WHERE commission_name = 'Drournlia Markets Commission' GROUP BY company_name "
    "ORDER BY employees ASC LIMIT 1 )")


def test_an_order_by_the_outer_rows_over_a_list_of_them_moves_out() -> None:
    """docsage-head-set2: refused, the model repeated this query word for word. Its one
    reading, the members ordered by their headcount, is what the refusal said to write."""
    def row(table, chunk, **values):
        return Row(table=table, values=values, provenance=Provenance(chunk_id=chunk))
    dmc = "Drournlia Markets Commission"
    rows = [row("commissions", "r", commission_name=dmc, company_name=n)
            for n in ("Rastou Bank", "Roustoustus Systems")]
    rows += [row("companies", f"c{i}", company_name=n, employees=e, chief_executive=ceo)
             for i, (n, e, ceo) in enumerate([("Rastou Bank", 97040, "Grernril Nyrkrar"),
                                              ("Roustoustus Systems", 51090,
                                               "Distaend Rinbaernvaer"),
                                              ("Viathpox Systems", 5950, "Not A Member")])]
    checked = check_sql(MEMBERS_BY_OUTER_ORDER, ROSTER)
    assert checked.hoisted == ['ORDER BY "companies"."employees" ASC LIMIT 1']
    assert checked.sql.endswith('GROUP BY "commissions"."company_name") '
                                'ORDER BY "companies"."employees" ASC LIMIT 1')
    with SQLSandbox(ROSTER, rows) as sb:
        traced = run_with_lineage(sb, MEMBERS_BY_OUTER_ORDER)
    assert traced.result.rows == [["Distaend Rinbaernvaer"]]
    assert traced.hoisted == checked.hoisted
    assert "moved out to it: ORDER BY" in gate_repairs([], [], traced.hoisted)


@pytest.mark.parametrize("sql", [
    # the outer query orders or limits itself: two orders, no one reading
    MEMBERS_BY_OUTER_ORDER[:-1] + ") ORDER BY chief_executive",
    MEMBERS_BY_OUTER_ORDER[:-1] + ") LIMIT 5",
    # the outer query aggregates: the order would sort one row
    MEMBERS_BY_OUTER_ORDER.replace("SELECT chief_executive", "SELECT COUNT(*)", 1),
    # no LIMIT: the order was only cosmetic, and is still no reading of the inner rows
    MEMBERS_BY_OUTER_ORDER.replace(" LIMIT 1", ""),
    # an = test, not IN (the rosters-set2 query): moving the LIMIT out leaves many rows
    MEMBERS_BY_OUTER_ORDER.replace(" IN (", " = (", 1),
    # the IN test is on no key of the outer table: the list is of other things
    "SELECT chief_executive FROM companies WHERE chief_executive IN (SELECT company_name "
    "FROM commissions ORDER BY employees LIMIT 1)",
    # the review of 02dfbed: the IN test is not the whole WHERE, or not in it
    MEMBERS_BY_OUTER_ORDER.replace(" IN (", " NOT IN (", 1),
    MEMBERS_BY_OUTER_ORDER + " OR employees > 5",
    MEMBERS_BY_OUTER_ORDER + " AND employees > 5",
    "SELECT chief_executive, company_name IN (SELECT company_name FROM commissions "
    "ORDER BY employees LIMIT 1) AS member FROM companies",
    # a join may give several rows per member; DISTINCT; a LIMIT that runs a query
    "SELECT c.chief_executive FROM companies c JOIN commissions m ON m.company_name = "
    "c.company_name WHERE c.company_name IN (SELECT company_name FROM commissions "
    "ORDER BY employees LIMIT 1)",
    MEMBERS_BY_OUTER_ORDER.replace("SELECT chief_executive", "SELECT DISTINCT chief_executive",
                                   1),
    MEMBERS_BY_OUTER_ORDER.replace("LIMIT 1", "LIMIT (SELECT COUNT(*) FROM commissions)"),
    # a scalar subquery inside an IN list
    "SELECT chief_executive FROM companies WHERE company_name IN ((SELECT company_name FROM "
    "commissions ORDER BY employees LIMIT 1), 'x')",
])
def test_no_other_shape_is_moved(sql) -> None:
    with pytest.raises(SQLRefusedError, match="outer-column|orders by employees"):
        check_sql(sql, ROSTER)

