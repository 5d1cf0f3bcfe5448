"""Extraction is paid once (issue 11, item 5), end to end: answer two questions over the same
entities with the whole DocSage method through one fresh tuple store, and print each one's
reading calls (extraction calls that read a chunk for the question's tables: ASK's trials,
the completion reads and CLEAR's, never the committee's re-reads), store hits, all calls,
and the second's reading calls over the first's (the target is at most 0.30).

    .venv/bin/python benchmarks/docsage_reuse.py --llm measuring \\
        --collection /tmp/quaderno-docsage/collections/award-set1-s1-t4 --kb ds-set1-t4 \\
        --home /tmp/quaderno-docsage --opt max_chunks=12 --opt probe_size=6 ...

The two questions default to the collection's first Comparison and first Statistics
question (``--first``/``--second`` take ids). The store is a new folder each run (``--store``
to keep it), so the first question finds nothing stored; the LLM cache of ``--home`` is used,
so calls replayed from it still count as calls (seconds are then not comparable).
Whether the second question re-uses a table depends on its draft keeping the stored table's
name, description and key: ``offer_known`` (on unless ``--opt offer_known=false``) offers it
the stored tables its words touch. Each question's tables and their signatures are printed
so that a miss can be read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from quaderno.ask import aask
from quaderno.eval.runner import code_version
from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.lm import LM
from quaderno.llm.trace import Span, Trace
from quaderno.methods.answer import Answer
from quaderno.methods.spec import parse_opts
from quaderno.workspace import Workspace

log = logging.getLogger("docsage_reuse")
# spans whose extraction calls are corrections of a question's own cells, not first reads
CORRECTING = ("docsage.clear.committee", "docsage.clear.backtrack")


def _correcting(trace: Trace, span: Span) -> bool:
    parent = span.parent
    while parent is not None and (up := trace.get_span(parent)) is not None:
        if up.name in CORRECTING:
            return True
        parent = up.parent
    return False


def reading(trace: Trace) -> dict[str, int]:
    """Reading calls and store hits of one question: the sums over its ``docsage.extract``
    spans outside the committee and backtracking spans."""
    spans = [s for s in trace.spans
             if s.name == "docsage.extract" and not _correcting(trace, s)]
    return {"reading_calls": sum(int(s.outputs.get("calls", 0)) for s in spans),
            "store_hits": sum(int(s.outputs.get("store_hits", 0)) for s in spans)}


def pick(questions: Sequence[dict], first: str | None, second: str | None) -> list[dict]:
    """The two questions: by id, or the first Comparison and the first Statistics one."""
    by_id = {q["id"]: q for q in questions}
    for wanted in (first, second):
        if wanted is not None and wanted not in by_id:
            raise SystemExit(f"no question {wanted!r} in the collection "
                             f"(ids: {', '.join(list(by_id)[:6])}, ...)")

    def of(category: str) -> dict:
        found = next((q for q in questions if q.get("category") == category), None)
        if found is None:
            raise SystemExit(f"the collection has no {category} question; name one")
        return found
    return [by_id[first] if first else of("Comparison"),
            by_id[second] if second else of("Statistics")]


Answerer = Callable[[str, Trace, Path], Awaitable[Answer]]


async def measure(answer: Answerer, questions: Sequence[dict],
                  store: Path) -> list[dict[str, Any]]:
    """One row per question, answered in order by ``answer(question, trace, store)``
    through the tuple store ``store``."""
    rows = []
    for q in questions:
        trace = Trace(label=q["id"])
        start = time.perf_counter()
        got = await answer(q["question"], trace, store)
        details = got.details.model_dump() if got.details is not None else {}
        schema = details.get("db_schema") or {}
        rows.append({"id": q["id"], "question": q["question"],
                     "gold": (q.get("gold") or {}).get("answer"), "answer": got.answer,
                     **reading(trace), "calls": len(trace.calls),
                     "cached": sum(c.cached for c in trace.calls),
                     "seconds": round(time.perf_counter() - start, 1),
                     "tables": [t.get("name") for t in schema.get("tables", [])],
                     "offered": (details.get("ask") or {}).get("offered", [])})
    return rows


def workspace_answerer(lm: LM, home: Path, kb: str, options: dict[str, Any],
                       mode: str = "hybrid") -> Answerer:
    """DocSage over knowledge base ``kb`` of the workspace at ``home``, as `quaderno ask`."""
    ws = Workspace(home)

    async def answer(question: str, trace: Trace, store: Path) -> Answer:
        return await aask(question, method="docsage", kbs=[kb], mode=mode, lm=lm,
                          workspace=ws, trace=trace,
                          options={**options, "store_dir": str(store)})
    return answer


def ratio_line(rows: Sequence[dict]) -> str:
    """The second question's reading calls over the first's, against the 0.30 target."""
    first, second = rows[0]["reading_calls"], rows[1]["reading_calls"]
    if not first:
        return "the first question made no reading call: no ratio"
    share = second / first
    return (f"second/first reading calls: {second}/{first} = {share:.2f} "
            f"({'within' if share <= 0.3 else 'above'} the 0.30 target)")


def table_lines(rows: Sequence[dict]) -> list[str]:
    out = ["| question | gold | answer | reading calls | store hits | calls (cached) | s | "
           "tables | offered |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['id']} | {r['gold']} | {r['answer'][:60]} | {r['reading_calls']} | "
                   f"{r['store_hits']} | {r['calls']} ({r['cached']}) | {r['seconds']} | "
                   f"{', '.join(map(str, r['tables']))} | "
                   f"{', '.join(map(str, r['offered'])) or '–'} |")
    return out


def record(options: dict[str, Any], rows: Sequence[dict]) -> dict[str, Any]:
    """What ``--out`` keeps: the code version the pair ran at, the options and the rows."""
    return {"code_version": code_version(), "options": options, "rows": list(rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collection", type=Path, required=True,
                    help="a synthetic collection (quaderno synth make)")
    ap.add_argument("--kb", required=True, help="the knowledge base of its documents")
    ap.add_argument("--home", type=Path, required=True, help="the workspace holding --kb")
    ap.add_argument("--first")
    ap.add_argument("--second")
    ap.add_argument("--store", type=Path, help="the tuple store folder (default: a new one)")
    ap.add_argument("--llm", choices=["measuring", "embedded"], default="measuring")
    ap.add_argument("--opt", action="append", default=[], help="a DocSage option key=value")
    ap.add_argument("--out", type=Path, help="also save the rows as JSON")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    questions = [json.loads(line) for line in
                 (args.collection / "questions-ordered.jsonl").read_text().splitlines() if line]
    chosen = pick(questions, args.first, args.second)
    cfg = (LLMConfig(backend="openai", model="measuring", base_url="http://127.0.0.1:8800/v1",
                     timeout=900) if args.llm == "measuring" else LLMConfig())
    lm = make_lm(cfg, cache_path=args.home / "cache" / "llm.sqlite")
    options = parse_opts(args.opt)
    with tempfile.TemporaryDirectory(prefix="docsage-reuse-") as tmp:
        store = args.store or Path(tmp) / "store"
        if store.exists() and any(store.iterdir()):
            raise SystemExit(f"--store {store} is not empty: the first question must find "
                             "nothing stored")
        rows = asyncio.run(measure(workspace_answerer(lm, args.home, args.kb, options),
                                   chosen, store))
    lines = [*table_lines(rows), "", ratio_line(rows)]
    log.info("options: %s", options)
    print("\n".join(lines))
    if args.out:
        args.out.write_text(json.dumps(record(options, rows), indent=1))


if __name__ == "__main__":
    main()
