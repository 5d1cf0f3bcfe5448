"""How DocSage's extraction cost grows with the number of documents, and what the tuple store
saves: extract a fixed schema (the collection's gold member table) from the first n documents
of a synthetic collection for growing n, through one tuple store, and print calls, tokens,
seconds and tuples per step and per document.

    .venv/bin/python benchmarks/docsage_extraction_cost.py --llm measuring   # the measuring model
    .venv/bin/python benchmarks/docsage_extraction_cost.py --llm embedded    # SmolLM2 (mechanics)

Each step extracts only the documents the previous steps did not cover, so the cumulative
cost is one call per chunk; a final repeat of the largest n must cost no call at all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from pathlib import Path

from quaderno.corpus.chunk import Chunk
from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.trace import Trace
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.store import TupleStore

log = logging.getLogger("docsage_extraction_cost")
TYPES = {"INTEGER": "INT", "BIGINT": "INT", "DOUBLE": "DOUBLE", "VARCHAR": "TEXT",
         "BOOLEAN": "BOOL", "DATE": "DATE"}


def member_table(collection: Path) -> Table:
    """The collection's members table as a schema table (its gold columns and types)."""
    golds = {p.stem: json.loads(p.read_text()) for p in (collection / "tables").glob("*.json")
             if p.stem != "membership"}
    name, gold = max(golds.items(), key=lambda kv: len(kv[1]["columns"]))
    cols = []
    for c in gold["columns"]:
        cname, ctype = (c if isinstance(c, list) else (c, "VARCHAR"))
        cols.append(Column(name=cname, type=TYPES.get(str(ctype).upper(), "TEXT")))
    return Table(name=name, columns=cols, primary_key=[cols[0].name])


def cost_rows(lm, chunks: list[Chunk], schema: Schema, sizes: list[int],
              store_dir: Path) -> list[dict]:
    """One row per size (then a repeat of the largest): the calls, tokens, seconds and tuples
    of extracting the first n chunks through one tuple store. ``tuples`` counts every tuple
    of the first n chunks, the stored ones too; ``new_tuples`` those of the chunks this step
    extracted, which its calls, tokens and seconds paid for."""
    store, rows, done = TupleStore(store_dir), [], 0
    for n in sizes + [sizes[-1]]:
        trace = Trace(label=f"n={n}")
        start = time.perf_counter()
        results = asyncio.run(extract(lm, chunks[:n], schema, ExtractionSettings(),
                                      store=store, trace=trace, concurrency=1))
        usage = trace.usage
        rows.append({"documents": n, "new": n - done, "calls": len(trace.calls),
                     "prompt_tokens": usage.prompt_tokens,
                     "completion_tokens": usage.completion_tokens,
                     "seconds": time.perf_counter() - start,
                     "tuples": len(all_rows(results)),
                     "new_tuples": len(all_rows(results[done:])) if n > done else 0})
        done = max(done, n)
    return rows


def per(amount: float, count: int, digits: int) -> str:
    """``amount / count`` to ``digits`` places; "–" for nothing to divide by."""
    return f"{amount / count:.{digits}f}" if count else "–"


def table_lines(rows: list[dict]) -> list[str]:
    """The markdown table of :func:`cost_rows`: per new document and per new tuple (a tuple
    of a chunk the step extracted, not one the store already held)."""
    out = ["| documents | new docs | calls | prompt tok | completion tok | seconds | tuples | "
           "new tuples | s/new doc | s/new tuple | calls/new tuple | tok/new tuple |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        new, secs, fresh = row["new"], row["seconds"], row["new_tuples"]
        tokens = row["prompt_tokens"] + row["completion_tokens"]
        label = str(row["documents"]) if new else f"{row['documents']} (repeat)"
        out.append(f"| {label} | {new} | {row['calls']} | {row['prompt_tokens']} | "
                   f"{row['completion_tokens']} | {secs:.1f} | {row['tuples']} | {fresh} | "
                   f"{per(secs, new, 1)} | {per(secs, fresh, 2)} | "
                   f"{per(row['calls'], fresh, 2)} | {per(tokens, fresh, 0)} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--collection", type=Path,
                    default=Path("/tmp/quaderno-docsage/collections/regulator-set2-s0"))
    ap.add_argument("--llm", choices=["measuring", "embedded"], default="measuring")
    ap.add_argument("--sizes", default="5,10,20,40")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    cfg = (LLMConfig(backend="openai", model="measuring", base_url="http://127.0.0.1:8800/v1",
                     timeout=900) if args.llm == "measuring" else LLMConfig())
    lm = make_lm(cfg, cache_path=None)
    docs = [json.loads(line) for line in
            (args.collection / "documents.jsonl").read_text().splitlines()]
    chunks = [Chunk(id=d["id"], text=d["text"], title=d.get("title", ""), kb="bench")
              for d in docs]
    schema = Schema(tables=[member_table(args.collection)])
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"# extraction cost vs documents ({args.collection.name}, {args.llm} model, table "
          f"{schema.tables[0].name} with {len(schema.tables[0].columns)} columns)\n")
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(table_lines(cost_rows(lm, chunks, schema, sizes, Path(tmp)))),
              flush=True)


if __name__ == "__main__":
    main()
