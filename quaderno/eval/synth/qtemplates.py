"""Question templates, SQL first, by MEBench type.

:data:`TYPES` maps each of MEBench's eight types to its templates (:mod:`.qcompare`,
:mod:`.qstats`, :mod:`.qrelation`), :data:`CATEGORIES` each type to its category.
Phrasings follow the shapes of MEBench's train questions (``mebench_train.jsonl``, used as a
bank of shapes, never of answers).
"""

from __future__ import annotations

from collections.abc import Callable

from quaderno.eval.synth.qbase import Ctx, Draft
from quaderno.eval.synth.qcompare import (ic_diff, ic_groups, ic_pair, sup_filtered, sup_minmax,
                                          sup_order, sup_top3)
from quaderno.eval.synth.qrelation import (hyp_growth, hyp_leave_after, hyp_link_leave,
                                           hyp_without_group, rel_avg_by_link, rel_count_by_link,
                                           rel_link_of_top, rel_list_by_link)
from quaderno.eval.synth.qstats import (agg_avg, agg_count_above, agg_distinct, agg_sum_joined,
                                        agg_top_group, corr_link, corr_planted, corr_random,
                                        corr_subset, dist_between, dist_buckets, dist_having,
                                        dist_median, dist_share, var_gap, var_group, var_value)

__all__ = ["CATEGORIES", "TYPES", "Ctx", "Draft", "Template"]

Template = Callable[[Ctx], Draft | None]
CATEGORIES = {"Intercomparison": "Comparison", "Superlative": "Comparison",
              "Aggregation": "Statistics", "Distribution Compliance": "Statistics",
              "Correlation Analysis": "Statistics", "Variance Analysis": "Statistics",
              "Descriptive Relationship": "Relationship", "Hypothetical Scenarios": "Relationship"}
TYPES: dict[str, tuple[Template, ...]] = {
    "Intercomparison": (ic_pair, ic_groups, ic_diff),
    "Superlative": (sup_order, sup_minmax, sup_filtered, sup_top3),
    "Aggregation": (agg_avg, agg_sum_joined, agg_count_above, agg_top_group, agg_distinct),
    "Distribution Compliance": (dist_between, dist_buckets, dist_share, dist_median,
                                dist_having),
    "Correlation Analysis": (corr_planted, corr_subset, corr_random, corr_planted, corr_link),
    "Variance Analysis": (var_value, var_group, var_gap),
    "Descriptive Relationship": (rel_link_of_top, rel_count_by_link, rel_list_by_link,
                                 rel_avg_by_link),
    "Hypothetical Scenarios": (hyp_leave_after, hyp_growth, hyp_without_group, hyp_link_leave),
}
