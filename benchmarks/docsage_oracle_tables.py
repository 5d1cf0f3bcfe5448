"""DocSage's reasoning over the gold tables: the upper bound extraction leaves to SQL.

    .venv/bin/python benchmarks/docsage_oracle_tables.py --llm measuring \
        --questions questions-ordered.jsonl --limit 3 \
        --cache /tmp/quaderno-docsage/cache/llm.sqlite \
        /tmp/quaderno-docsage/collections/award-set1-s0 ...

The spec's recommended upper bound (docs: ``../shared/notes/specs/docsage.md`` §7, "oracle
table"): each question of a generated collection is answered by DocSage's own reasoning
steps over the collection's gold tables (``tables/*.json``, the tables its questions were
written from) instead of extracted ones. ``sql`` is DocSage's reasoning
(:class:`.reason.SQLReasoner`: compile, gate, run, repair, synthesize); ``tables`` is the
"w/o SQL reasoning" ablation (:func:`.reason.answer_from_tables`: the tables in the
context). A question the model gets wrong here is lost to reasoning, whatever extraction
does; one it gets right and the method loses is lost to extraction (or to schema
discovery, whose tables the model reasons over instead).

The gold tables keep the generator's column names and units (a grant in millions), and the
gold answers are computed over them, so a right query over them scores 1; a column named
with a word SQL reads as a keyword gets the trailing underscore DocSage's drafts give it
(``grant_``: named ``grant``, the gate refuses a query naming it unquoted). Every folder and
questions file is read before the first call. The tables say what they hold, as a
discovered schema does (:func:`descriptions`, from the collection's manifest: the members'
table holds the topic's current members only); ``--bare`` leaves that out, as the first run
(ba7124a) had it. Printed: one line
per question and reasoning (answer, score, LLM calls and seconds), then the share right per
reasoning and category. ``--out`` writes the lines as JSON too, with every query tried.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from collections import defaultdict
from pathlib import Path

from quaderno.errors import ConfigError
from quaderno.eval.synth import score
from quaderno.eval.synth.collection import load_questions
from quaderno.eval.synth.families import family
from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.lm import LM
from quaderno.methods.docsage.reason import SQLReasoner, answer_from_tables, finds_nothing
from quaderno.methods.docsage.draft import slug
from quaderno.methods.docsage.records import SQLAttempt
from quaderno.methods.docsage.rows import Provenance, Row
from quaderno.methods.docsage.schema import Column, Schema, Table
from quaderno.methods.docsage.synthesis import NOT_FOUND
from quaderno.methods.episode import Episode

log = logging.getLogger("docsage_oracle_tables")
TYPES = {"INTEGER": "INT", "BIGINT": "INT", "DOUBLE": "DOUBLE", "VARCHAR": "TEXT",
         "BOOLEAN": "BOOLEAN", "DATE": "DATE"}
REASONING = ("sql", "tables")


def descriptions(folder: Path) -> dict[str, tuple[str, dict[str, tuple[str, str]]]]:
    """What the gold tables hold, in words, from the collection's manifest: per table, its
    description and per column (description, unit). The gold database keeps only the
    topic's current members in the members' table and says the group nowhere (it is the
    collection's ``topic``); a discovered schema says what its tables hold, and a bare gold
    schema left the model filtering ``laureates.achievement`` by the medal (the run of
    ba7124a)."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise SystemExit(f"{path}: no manifest (a folder quaderno's generator wrote has one; "
                         "--bare reads the tables without it)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        fam = family(manifest["family"])
        topic = f"the {manifest['topic']}"
    except (ValueError, KeyError, TypeError, ConfigError) as e:
        raise SystemExit(f"{path}: not a manifest naming a family and a topic ({e})") from e
    they, that = ("they", "who") if fam.members_are_people else ("it", "that")

    def attrs(attrs, *first: tuple[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        return dict([*first, *((a.column, (a.label, "million dollars" if a.kind == "money"
                                           else "")) for a in attrs)])
    return {
        fam.members: (f"every current member of {topic}, one row each (former members "
                      "are in membership only)",
                      attrs(fam.attrs, ("name", (f"the {fam.member}'s name", "")))
                      | {fam.link_role: (f"the {fam.link_role}, as {fam.link_table}.name "
                                         "names it", "")}),
        fam.link_table: (f"the {fam.link_table} the members' {fam.link_role} names",
                         attrs(fam.link_attrs, ("name", (f"the {fam.link_role}'s name",
                                                         "")))),
        "membership": (f"every {fam.member} {that} {fam.join_verb} {topic}, current and "
                       "former",
                       {"member": (f"the {fam.member}'s name", ""),
                        "joined": (f"the year {they} {fam.join_verb} {topic}", ""),
                        "left_year": (f"the year {they} left; NULL for a current member",
                                      "")}),
    }


def gold_database(folder: Path, described: bool = True) -> tuple[Schema, list[Row]]:
    """The collection's gold tables as a DocSage schema and rows (each row's provenance
    names its table and line, ``gold:laureates#3``); ``described``: with what each table
    and column holds (:func:`descriptions`)."""
    tables, rows = [], []
    paths = sorted((folder / "tables").glob("*.json"))
    if not paths:
        raise SystemExit(f"{folder}: no tables/*.json (a folder quaderno's generator wrote)")
    said = descriptions(folder) if described else {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        what, cols = said.get(path.stem, ("", {}))
        # a column named with an SQL keyword is renamed as DocSage's own draft renames it
        # ("grant" -> "grant_"), or the gate would refuse every query naming it
        columns = [Column(name=slug(c), type=TYPES.get(t, "TEXT"),
                          description=cols.get(c, ("", ""))[0], unit=cols.get(c, ("", ""))[1])
                   for c, t in data["columns"]]
        tables.append(Table(name=path.stem, description=what, columns=columns))
        for i, values in enumerate(data["rows"]):
            rows.append(Row(table=path.stem,
                            values=dict(zip((c.name for c in columns), values,
                                           strict=True)),
                            provenance=Provenance(chunk_id=f"gold:{path.stem}#{i}")))
    return Schema(tables=tables), rows


async def answer(lm: LM, question: str, schema: Schema, rows: list[Row],
                 reasoning: str) -> tuple[str, list[SQLAttempt], Episode]:
    """DocSage's answer to ``question`` from ``rows``, as its reasoning step gives it, and
    the queries it tried (none over the tables in the context)."""
    ep = Episode(question, method=f"docsage-oracle-{reasoning}", lm=lm)
    if reasoning == "tables":
        text, _ = await answer_from_tables(ep, schema, rows)
        return text, [], ep
    reasoner = SQLReasoner()
    table, attempts = await reasoner.run(ep, schema, rows)
    if table is None or finds_nothing(table, schema, rows):
        return NOT_FOUND, attempts, ep
    ran = next((a.sql for a in reversed(attempts) if a.stage == "ok"), "")
    return (await reasoner.synthesize(ep, ran, table)).answer, attempts, ep


def _questions(folder: Path, name: str) -> list:
    """The questions of ``folder/name``; a missing or unreadable file ends the run naming it."""
    path = folder / name
    if not path.is_file():
        raise SystemExit(f"{path}: no such questions file (--questions names a file in "
                         "every collection folder)")
    try:
        return load_questions(path)
    except (ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"{path}: not a questions file quaderno's generator wrote ({e})") \
            from e


async def run(lm: LM, folders: list[Path], questions: str, limit: int,
              reasonings: list[str], described: bool = True) -> list[dict]:
    # every folder and questions file is read before the first paid call: a bad second
    # folder must not end the run after the first one's answers were bought
    loaded = [(folder, *gold_database(folder, described),
               _questions(folder, questions)[:limit]) for folder in folders]
    out = []
    for folder, schema, rows, asked in loaded:
        for q in asked:
            for reasoning in reasonings:
                start = time.perf_counter()
                text, attempts, ep = await answer(lm, q.question, schema, rows, reasoning)
                summary = ep.trace.summary()
                out.append({"collection": folder.name, "id": q.id, "category": q.category,
                            "bin": q.bin, "reasoning": reasoning, "question": q.question,
                            "gold": q.gold.answer, "answer": text,
                            "score": score(q.gold, text), "calls": summary["llm_calls"],
                            "cached": summary["cached_calls"],
                            "sql": [{"stage": a.stage, "sql": a.sql, "error": a.error}
                                    for a in attempts],
                            "seconds": round(time.perf_counter() - start, 1)})
                log.info("%s %s %s: %s (%s)", folder.name, q.id, reasoning, text,
                         out[-1]["score"])
    return out


def report(lines: list[dict]) -> str:
    rows = ["| collection | question | category | reasoning | answer (gold) | score | calls "
            "(cached) | s |", "|---|---|---|---|---|---|---|---|"]
    for x in lines:
        rows.append(f"| {x['collection']} | {x['id']} | {x['category']} | {x['reasoning']} | "
                    f"{x['answer'][:60]} ({x['gold']}) | {x['score']:.2f} | {x['calls']} "
                    f"({x['cached']}) | {x['seconds']} |")
    shares: dict[tuple[str, str], list[float]] = defaultdict(list)
    for x in lines:
        shares[(x["reasoning"], x["category"])].append(x["score"])
        shares[(x["reasoning"], "all")].append(x["score"])
    rows += ["", "| reasoning | category | questions | mean score |", "|---|---|---|---|"]
    rows += [f"| {r} | {c} | {len(v)} | {sum(v) / len(v):.2f} |"
             for (r, c), v in sorted(shares.items())]
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collections", type=Path, nargs="+",
                    help="collection folders the generator wrote (tables/ and questions)")
    ap.add_argument("--questions", default="questions.jsonl",
                    help="questions file in each folder (default questions.jsonl)")
    ap.add_argument("--limit", type=int, default=3, help="questions per collection")
    ap.add_argument("--reasoning", nargs="+", choices=REASONING, default=list(REASONING))
    ap.add_argument("--llm", choices=["measuring", "embedded"], default="measuring")
    ap.add_argument("--cache", type=Path, default=None, help="LLM response cache (sqlite)")
    ap.add_argument("--bare", action="store_true",
                    help="gold tables without descriptions (as the run of ba7124a had them)")
    ap.add_argument("--out", type=Path, default=None, help="write the lines as JSON here")
    args = ap.parse_args()
    if args.limit < 1:
        ap.error(f"--limit must be at least 1, got {args.limit}")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    cfg = (LLMConfig(backend="openai", model="measuring", base_url="http://127.0.0.1:8800/v1",
                     timeout=900) if args.llm == "measuring" else LLMConfig())
    lm = make_lm(cfg, cache_path=args.cache)
    lines = asyncio.run(run(lm, args.collections, args.questions, args.limit, args.reasoning,
                            described=not args.bare))
    if args.out is not None:
        args.out.write_text(json.dumps(lines, indent=1, ensure_ascii=False) + "\n",
                            encoding="utf-8")
    sys.stdout.write(report(lines) + "\n")


if __name__ == "__main__":
    main()
