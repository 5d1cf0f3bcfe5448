"""Which SQL calls aggregate: shared by the lineage rewrite (a grouped query's rows trace to
every tuple of their group) and the gate's added join (one that may match several rows is
not added under an aggregate, where repeated rows would change the numbers)."""

from __future__ import annotations

from sqlglot import exp

# DuckDB aggregates sqlglot parses as anonymous functions (the rest are exp.AggFunc)
ANON_AGGREGATES = frozenset({
    "fsum", "sumkahan", "kahan_sum", "favg", "product", "mad", "kurtosis", "kurtosis_pop",
    "skewness", "entropy", "histogram", "bool_and", "bool_or", "bit_and", "bit_or", "bit_xor",
    "count_if", "countif", "arbitrary", "first", "last", "max_by", "min_by", "arg_max_null",
    "arg_min_null", "mode", "geomean", "geometric_mean", "weighted_avg", "wavg",
    "reservoir_quantile", "approx_quantile", "quantile", "quantile_cont", "quantile_disc",
    "list", "array_agg", "string_agg", "group_concat", "listagg", "bitstring_agg",
    "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope",
    "regr_sxx", "regr_sxy", "regr_syy", "covar_pop", "covar_samp", "sem", "var_samp",
    "var_pop", "stddev_samp", "stddev_pop", "median", "corr", "any_value", "approx_count_distinct"})


def aggregate_call(node: exp.Expression) -> bool:
    """Whether ``node`` calls an aggregate function."""
    if isinstance(node, exp.AggFunc):
        return True
    return isinstance(node, exp.Anonymous) and str(node.name).lower() in ANON_AGGREGATES


def is_aggregate(select: exp.Select) -> bool:
    """Whether ``select`` groups its rows: GROUP BY, or an aggregate in its SELECT list or
    HAVING (not one inside a subquery or a window)."""
    if select.args.get("group") is not None:
        return True
    scopes = list(select.expressions)
    if select.args.get("having") is not None:
        scopes.append(select.args["having"])
    for scope in scopes:
        for node in scope.walk(prune=lambda n: isinstance(n, (exp.Subquery, exp.Window))):
            if aggregate_call(node):
                return True
    return False


__all__ = ["ANON_AGGREGATES", "aggregate_call", "is_aggregate"]
