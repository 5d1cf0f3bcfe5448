"""The PAGER paper's analyses over saved runs, for ``quaderno report``.

- :func:`degeneration_lines`: per run, the outline-fallback rate, the outline-repair rate, the
  distinct-document share and the sub-query re-ask rate
  (:func:`quaderno.methods.pager.stats.degeneration`): when PAGER fell back to vanilla RAG.
- :func:`knowledge_split_lines`: Table 3's split. With a closed-book run (``vanilla-llm``) of a
  dataset present, its questions split into those the LLM answers right without retrieval
  (knowledge *conflict*: retrieval can only hurt) and the rest (knowledge *utilization*:
  retrieval must help); each other run's mean of the metric on both parts.
- Accuracy by the number of fill iterations (Fig. 6) is the report's by-rounds table/plot.
"""

from __future__ import annotations

import statistics
from typing import Any

from quaderno.eval.records import read_results
from quaderno.methods.pager.stats import degeneration


def degeneration_lines(runs: list[dict[str, Any]], labels: list[str]) -> list[str]:
    rows = []
    for run, label in zip(runs, labels):
        results = read_results(_results(run))
        if not any(getattr(r.details, "kind", None) == "pager" for r in results):
            continue
        d = degeneration(results)
        rows.append(f"| {label} | {run['config']['dataset']} | {d['n']} | "
                    f"{d['outline_fallback_rate'] * 100:.0f}% | "
                    f"{d['outline_repair_rate'] * 100:.0f}% | "
                    f"{d['distinct_doc_share'] * 100:.0f}% | "
                    f"{d['subquery_reask_rate'] * 100:.0f}% |")
    if not rows:
        return []
    return ["## PAGER: did it degenerate to vanilla RAG?", "",
            "Outline fallback: the page fell back to one section (unusable or empty outline); "
            "repair: any outline repair; distinct documents: distinct retrieved chunks over all "
            "retrieved; re-asks: sub-queries that repeated the question or an earlier one.", "",
            "| method | dataset | n | outline fallback | outline repaired | distinct documents | "
            "sub-query re-asks |", "|---|---|---|---|---|---|---|", *rows, ""]


def knowledge_split_lines(runs: list[dict[str, Any]], labels: list[str],
                          metric: str) -> list[str]:
    closed = {r["config"]["dataset"]: r for r in runs if r["config"]["method"] == "vanilla-llm"}
    rows = []
    for run, label in zip(runs, labels):
        ref = closed.get(run["config"]["dataset"])
        if ref is None or run is ref:
            continue
        known = {q for q, m in ref["scores"].items() if m.get(metric, 0.0) > 0}
        parts: dict[str, list[float]] = {"conflict": [], "utilization": []}
        for q, m in run["scores"].items():
            if q in ref["scores"] and metric in m:
                parts["conflict" if q in known else "utilization"].append(m[metric])
        cells = [f"{statistics.mean(v) * 100:.1f} (n={len(v)})" if v else "–"
                 for v in parts.values()]
        rows.append(f"| {label} | {run['config']['dataset']} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    return [f"## Knowledge conflict and utilization ({metric}; PAGER Table 3)", "",
            "Questions the closed-book run (vanilla-llm) answers right (conflict: retrieved "
            "knowledge competes with what the LLM knows) and the rest (utilization: the answer "
            "must come from retrieval).", "",
            "| method | dataset | conflict | utilization |", "|---|---|---|---|", *rows, ""]


def _results(run: dict[str, Any]):  # noqa: ANN202 - a path
    from pathlib import Path

    return Path(run["dir"]) / "results.jsonl"
