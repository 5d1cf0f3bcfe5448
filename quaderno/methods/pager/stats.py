"""When PAGER degenerated to vanilla RAG, over a set of answers (or saved result records).

- ``outline_fallback_rate``: share of questions whose outline was unusable or had no
  sections (the page fell back to one section: PAGER became one retrieval and a fill);
- ``outline_repair_rate``: share whose outline needed any repair (``PagerDetails``'
  ``outline_fallbacks``: numbered list, template echo, placeholders restored, …);
- ``distinct_doc_share``: distinct retrieved chunk ids over all retrieved ids, pooled over
  the questions (1.0: every retrieval brought new documents; sub-queries that repeat the
  question bring the same ones again);
- ``subquery_reask_rate``: share of sub-queries re-asked because they repeated the question
  or an earlier one.

Input: :class:`~quaderno.methods.answer.Answer` objects or result records (dicts with
``details`` and ``retrieval_rounds``, as ``results.jsonl`` stores them). Answers of other
methods count for the distinct-document share only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

DEGENERATE = ("unusable", "no_sections")


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def degeneration(answers: Iterable[Any]) -> dict[str, float]:
    n = pager_n = degenerate = repaired = 0
    distinct = total = fills = reasks = 0
    for a in answers:
        n += 1
        ids = [i for r in (_get(a, "retrieval_rounds") or []) for i in r]
        distinct += len(set(ids))
        total += len(ids)
        details = _get(a, "details")
        if details is None or _get(details, "kind") != "pager":
            continue
        pager_n += 1
        repairs = _get(details, "outline_fallbacks") or []
        degenerate += any(r in DEGENERATE for r in repairs)
        repaired += bool(repairs)
        reasks += len(_get(details, "subquery_reasks") or [])
        fills += _get(details, "fills") or 0
    return {"n": n,
            "outline_fallback_rate": degenerate / pager_n if pager_n else 0.0,
            "outline_repair_rate": repaired / pager_n if pager_n else 0.0,
            "distinct_doc_share": distinct / total if total else 0.0,
            "subquery_reask_rate": reasks / fills if fills else 0.0}
