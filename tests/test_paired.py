"""Paired differences between two runs: bootstrap CI, better/worse/tied counts, McNemar."""

from __future__ import annotations

import math

import pytest

from quaderno.errors import ConfigError
from quaderno.eval.paired import bootstrap_ci, mcnemar_exact, paired_difference


def scores(values):
    return {f"q{i}": float(v) for i, v in enumerate(values)}


def test_identical_runs_differ_by_zero_with_a_zero_interval():
    run = scores([1, 0, 1, 1, 0, 0, 1, 0] * 10)
    d = paired_difference(run, dict(run), metric="cover_em", label_a="x", label_b="y")
    assert (d.n, d.diff, d.ci_low, d.ci_high) == (80, 0.0, 0.0, 0.0)
    assert (d.better, d.worse, d.tied) == (0, 0, 80)
    assert d.mcnemar_p == 1.0 and d.mean_a == d.mean_b == 0.5
    assert (d.metric, d.a, d.b) == ("cover_em", "x", "y")


def test_a_constant_difference_has_that_mean_and_a_point_interval():
    a = scores([0.75, 0.5, 1.0, 0.25] * 5)
    b = {q: v - 0.25 for q, v in a.items()}
    d = paired_difference(a, b)
    assert d.diff == pytest.approx(0.25)
    assert (d.ci_low, d.ci_high) == (pytest.approx(0.25), pytest.approx(0.25))
    assert (d.better, d.worse, d.tied) == (20, 0, 0)
    assert d.mcnemar_p is None  # not a 0/1 metric


def test_known_mean_and_an_interval_as_wide_as_the_normal_approximation():
    a = scores([1] * 30 + [0] * 70)  # a right on 30 questions more than b
    b = scores([0] * 100)
    d = paired_difference(a, b)
    assert d.diff == pytest.approx(0.30) and (d.better, d.worse, d.tied) == (30, 0, 70)
    half = 1.96 * math.sqrt(0.3 * 0.7 / 100)  # ±9.0 points
    assert d.ci_low == pytest.approx(0.30 - half, abs=0.02)
    assert d.ci_high == pytest.approx(0.30 + half, abs=0.02)
    assert d.mcnemar_p == pytest.approx(2 / 2 ** 30)
    again = paired_difference(a, b)  # the seed is fixed
    assert (again.ci_low, again.ci_high) == (d.ci_low, d.ci_high)
    swapped = paired_difference(b, a)
    assert swapped.diff == pytest.approx(-d.diff)
    assert (swapped.ci_low, swapped.ci_high) == (pytest.approx(-d.ci_high),
                                                 pytest.approx(-d.ci_low))
    spread = scores([(i * 37 % 101) / 101 for i in range(60)])  # a continuous metric
    zero = scores([0.0] * 60)
    assert bootstrap_ci(list(spread.values()), seed=1) != bootstrap_ci(list(spread.values()))
    assert paired_difference(spread, zero, seed=1).ci_low == bootstrap_ci(
        list(spread.values()), seed=1)[0]


def test_questions_are_matched_by_id():
    a = {"q1": 1.0, "q2": 0.0, "q3": 1.0, "only-a": 1.0}
    b = {"q3": 0.0, "q2": 1.0, "q1": 1.0, "only-b": 0.0}
    d = paired_difference(a, b)
    assert d.n == 3 and (d.better, d.worse, d.tied) == (1, 1, 1)  # q3 better, q2 worse
    assert d.diff == 0.0 and d.mean_a == pytest.approx(2 / 3)
    assert paired_difference({"x": 1.0}, {"y": 1.0}) is None


def test_mcnemar_exact_known_values():
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    assert mcnemar_exact(6, 1) == pytest.approx(2 * 8 / 128)
    assert mcnemar_exact(1, 6) == mcnemar_exact(6, 1)
    assert mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 0) == 1.0
    with pytest.raises(ConfigError, match="-1"):
        mcnemar_exact(-1, 2)


def test_bootstrap_refuses_bad_settings_naming_the_value():
    with pytest.raises(ConfigError, match="resamples must be at least 1, got 0"):
        bootstrap_ci([0.1, 0.2], resamples=0)
    with pytest.raises(ConfigError, match="got 95"):
        bootstrap_ci([0.1, 0.2], confidence=95)
    with pytest.raises(ConfigError, match="share no scored question"):
        bootstrap_ci([])


def test_bootstrap_batches_give_every_resample():
    low, high = bootstrap_ci([0.0, 1.0] * 50, resamples=1001)  # not a multiple of the batch
    assert 0.35 < low < 0.5 < high < 0.65
