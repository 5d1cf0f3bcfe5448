"""A number marked multi-valued in a table that says nothing of when is one value per
entity (the measuring model's Set2 companies: two revenues of one company made two rows,
neither merged nor checked)."""

from __future__ import annotations

import pytest

from quaderno.methods.docsage.ask import _drafted
from quaderno.methods.docsage.draft import SchemaDraft
from quaderno.methods.docsage.single_numbers import single_numbers

# docsage-references-set2's companies, as the model marked them
COMPANIES = {"name": "companies", "primary_key": ["company_name"], "columns": [
    {"name": "company_name"}, {"name": "sector", "single_valued": False},
    {"name": "employees", "type": "INT", "single_valued": False},
    {"name": "revenue", "type": "DOUBLE", "single_valued": False},
    {"name": "products", "single_valued": False}]}


def test_numbers_of_an_entity_table_without_a_time_column_are_one_value_each() -> None:
    schema, notes = _drafted(SchemaDraft.model_validate({"tables": [COMPANIES]}))
    table = schema.table("companies")
    assert {c.name for c in table.columns if not c.single_valued} == {"sector", "products"}
    # keyed by its own id, as the model drew it before ASK re-keyed it by name
    by_id = {**COMPANIES, "primary_key": ["id"],
             "columns": [{"name": "id", "type": "INT"}, *COMPANIES["columns"]]}
    draft, _ = single_numbers(SchemaDraft.model_validate({"tables": [by_id]}))
    assert [c.single_valued for c in draft.tables[0].columns[3:5]] == [True, True]
    assert notes == ["table 'companies': employees, revenue marked single-valued: one number "
                     "per entity, since no column says when"]


def test_a_column_saying_when_or_a_composite_key_keeps_the_marks() -> None:
    yearly = {**COMPANIES, "columns": [*COMPANIES["columns"],
                                       {"name": "fiscal_year", "type": "INT"}]}
    dated = {**COMPANIES, "columns": [*COMPANIES["columns"],
                                      {"name": "reported", "type": "DATE"}]}
    keyed = {**COMPANIES, "primary_key": ["company_name", "sector"]}
    for table in (yearly, dated, keyed):
        draft, notes = single_numbers(SchemaDraft.model_validate({"tables": [table]}))
        assert notes == []
        assert not draft.tables[0].columns[2].single_valued      # employees


@pytest.mark.parametrize("table", [
    # keyed by the laureate, not by the award: one prize money per award (review of d74d0b8)
    {"name": "awards", "primary_key": ["laureate"], "columns": [
        {"name": "laureate"}, {"name": "award_name", "single_valued": False},
        {"name": "prize_money", "type": "INT", "single_valued": False}]},
    # keyed by another entity's id
    {"name": "awards", "primary_key": ["laureate_id"], "columns": [
        {"name": "laureate_id", "type": "INT"},
        {"name": "prize_money", "type": "INT", "single_valued": False}]},
    # no key at all
    {"name": "awards", "columns": [{"name": "laureate"},
                                   {"name": "prize_money", "type": "INT",
                                    "single_valued": False}]},
    # a price per product
    {"name": "companies", "primary_key": ["company_name"], "columns": [
        {"name": "company_name"}, {"name": "product", "single_valued": False},
        {"name": "product_price", "type": "DOUBLE", "single_valued": False}]},
])
def test_numbers_that_may_be_one_per_value_of_something_else_keep_the_mark(table) -> None:
    draft, notes = single_numbers(SchemaDraft.model_validate({"tables": [table]}))
    assert notes == [] and not draft.tables[0].columns[-1].single_valued
