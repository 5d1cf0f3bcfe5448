"""Scoring of answers against synthetic gold: numbers, names, lists, correlation, yes/no."""

from __future__ import annotations

import pytest

from quaderno.errors import ConfigError
from quaderno.eval.synth.score import Gold, corr_label, numbers, score


def test_numbers_in_every_notation():
    assert numbers("2,300 staff") == [2300]
    assert numbers("about 2.3k staff") == [2300]
    assert numbers("2.3 thousand") == [2300]
    assert numbers("$12.5 million") == [12.5e6]
    assert numbers("USD 12.5M") == [12.5e6]
    assert numbers("r = -0.82") == [-0.82]
    # how Python and DocSage's synthesis write a large float
    assert numbers("a variance of 1.1627e+15") == [1.1627e15]
    assert numbers("1.16E15 and Fe3 and 12e") == [1.16e15, 12]


def test_number_tolerance_years_exact_and_money_units():
    g = Gold(kind="number", answer="2345.6", value=2345.6)
    assert score(g, "The average is 2,350 staff.") == 1.0  # within 1%
    assert score(g, "The average is 2,400.") == 0.0
    year = Gold(kind="number", answer="1874", value=1874, is_year=True)
    assert score(year, "It was founded in 1874.") == 1.0
    assert score(year, "1875") == 0.0
    avg_year = Gold(kind="number", answer="1950.4", value=1950.4, abs_tol=0.5)
    assert score(avg_year, "about 1950.2") == 1.0 and score(avg_year, "1955") == 0.0
    money = Gold(kind="number", answer="12.5", value=12.5, money=True)
    assert score(money, "$12,500,000") == 1.0 and score(money, "12.5 million dollars") == 1.0
    assert score(g, "2345.6 or 10 or 20 or 30") == 0.0  # no shotgun answers


def test_a_variance_of_money_in_square_dollars():
    """The sample variance of a research grant is in square millions of dollars; DocSage
    reads "$3,500,000" as dollars and computes it in square dollars (10¹² times more),
    which is as right (held-out Set1 q005)."""
    var = Gold(kind="number", answer="1162.7 square million dollars", value=1162.7,
               money=True, money_power=2)
    for right in ("1162.7", "1,162,700,000,000,000", "1.1627e15", "1162700000000000.0"):
        assert score(var, right) == 1.0, right
    for wrong in ("1162.7 million", "1,162,700,000", "8000000000000.0"):
        assert score(var, wrong) == 0.0, wrong
    # written only where it is not 1: other questions' lines are unchanged
    assert var.model_dump()["money_power"] == 2
    assert "money_power" not in Gold(kind="number", answer="12.5", value=12.5,
                                     money=True).model_dump(mode="json")
    assert Gold.model_validate(var.model_dump()) == var
    with pytest.raises(ValueError):
        Gold(kind="number", answer="1", value=1.0, money=True, money_power=3)


def test_names_with_aliases_and_wrong_candidates():
    g = Gold(kind="name", answer="Vorland Institute of Technology",
             items=["Vorland Institute of Technology"],
             aliases={"Vorland Institute of Technology": ["VIT"]}, wrong=["Kessaro College"])
    assert score(g, "The Vorland Institute of Technology.") == 1.0
    assert score(g, "It is VIT") == 1.0
    assert score(g, "VIT or Kessaro College") == 0.0
    assert score(g, "Kessaro College") == 0.0
    assert score(g, "VITAL") == 0.0  # whole phrases only


def test_lists_by_set_f1():
    g = Gold(kind="names", answer="A1 Co, B2 Co", items=["Alpha Co", "Beta Co"],
             wrong=["Gamma Co", "Delta Co"])
    assert score(g, "Alpha Co and Beta Co") == 1.0
    assert score(g, "Alpha Co") == pytest.approx(2 / 3)
    assert score(g, "Alpha Co, Beta Co, Gamma Co") == pytest.approx(0.8)
    assert score(g, "none") == 0.0


def test_correlation_labels_and_coefficients():
    assert corr_label(0.82) == "strong positive" and corr_label(-0.45) == "moderate negative"
    assert corr_label(0.1) == "no clear correlation"
    g = Gold(kind="correlation", answer="strong positive", value=0.82, items=["strong positive"])
    assert score(g, "There is a strong positive correlation.") == 1.0
    assert score(g, "r = 0.79") == 1.0
    assert score(g, "a moderate positive relationship") == 0.5
    assert score(g, "a strong negative correlation") == 0.0
    assert score(g, "no correlation") == 0.0
    none = Gold(kind="correlation", answer="no clear correlation", value=0.05)
    assert score(none, "There is no clear correlation.") == 1.0


def test_booleans_and_unknown_kinds():
    g = Gold(kind="boolean", answer="yes", items=["yes"])
    assert score(g, "Yes, it would.") == 1.0 and score(g, "No.") == 0.0
    assert score(g, "") == 0.0
    assert score(g.model_dump(), "yes") == 1.0  # the gold object of a questions.jsonl line
    with pytest.raises(ConfigError, match="nope"):
        score({"kind": "nope", "answer": "1"}, "1")
