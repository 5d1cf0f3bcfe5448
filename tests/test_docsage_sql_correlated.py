"""A subquery selecting or ordering by the enclosing query's columns is refused with what to
change (``docsage-rosters-set2``: 14 companies came back for "the company with the fewest
employees"); a correlated subquery that only filters by them runs."""

from __future__ import annotations

import pytest

from quaderno.errors import SQLRefusedError
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
