"""Does CLEAR's committee make the cells it re-reads more right, for one extraction model?

    .venv/bin/python benchmarks/docsage_committee.py --llm measuring \
        --calibration benchmarks/results/docsage-synth-measuring/calibration.json

The paper's committee is "more powerful LLMs"; without one, CLEAR's committee is samples of
the extraction model itself at the sample temperature (spec [R]). Whether such a vote helps
depends on the model.

Held-out D_1 chunks are used: train families, after the ``--skip`` examples the
calibration took. They are extracted greedily, as at question time. Every cell at or below
the calibration's τ_low, the cells Level A flags, is put to the committee's vote
(:func:`committee.committee_ballots`, ``--committee`` samples). Each cell is labelled right or
wrong against what its text states (:func:`calibrate.label_rows`), before and after the
vote. As in CLEAR, a voted value the chunk does not state is emptied.

Four rules are compared on the same ballots:

- ``committee``: the samples alone; without a strict majority, NULL (the paper's rule);
- ``first-read-breaks-ties``: the same, and a tie the greedy read is part of keeps it
  (CLEAR's default);
- ``with-first-read``: the greedy read is one more ballot; without a strict majority, NULL;
- ``keep-first-read``: the same ballots; without a strict majority the greedy value stays.

Printed per rule: flagged cells, right before the vote, right after, fixed (wrong to right)
and broken (right to wrong).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import get_args
from pathlib import Path

from pydantic import BaseModel, Field

from quaderno.corpus.chunk import Chunk
from quaderno.eval import synth
from quaderno.eval.synth.families import TRAIN_FAMILIES
from quaderno.llm.config import LLMConfig, make_lm
from quaderno.llm.lm import LM
from quaderno.methods.docsage.calibrate import label_rows
from quaderno.methods.docsage.committee import VoteRule, committee_ballots, tally, voting_ballots
from quaderno.methods.docsage.extract import ExtractionSettings, all_rows, extract
from quaderno.methods.docsage.normalize import key_columns
from quaderno.methods.docsage.rows import Row
from quaderno.methods.docsage.schema import Schema, Table
from quaderno.methods.docsage.unstated import unstated_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docsage_calibrate import gold_tables, round_robin  # noqa: E402

log = logging.getLogger("docsage_committee")
RULES: tuple[VoteRule, ...] = get_args(VoteRule)


class Tally(BaseModel):
    """Flagged cells under one rule: right before and after the vote, fixed and broken."""

    cells: int = 0
    before: int = 0
    after: int = 0
    fixed: int = 0
    broken: int = 0
    examples: list[str] = Field(default_factory=list)

    def add(self, was: bool, now: bool, what: str) -> None:
        self.cells += 1
        self.before += was
        self.after += now
        self.fixed += now and not was
        self.broken += was and not now
        if was != now and len(self.examples) < 8:
            self.examples.append(what)


def voted(table: Table, row: Row, column: str, ballots: list[list[dict]], rule: VoteRule,
          text: str):
    """``row``'s ``column``, read from ``text``, after the vote under ``rule``, as CLEAR
    counts it (:func:`committee.tally`, the ``vote`` option; an empty ballot abstains for an
    entity the text names, :func:`committee.voting_ballots`; all abstaining, the cell
    stays)."""
    voting = voting_ballots(ballots, table, row.values, text)
    if not voting:
        return row.values.get(column)
    return tally(voting, table, row.values, [column], rule=rule)[column].value


def right(table: Table, row: Row, column: str, gold: dict) -> bool:
    """Whether ``row``'s ``column`` is what the text states (a lone labelled cell); an
    empty cell of a row naming no entity the text states anything of is right."""
    one = row.model_copy(deep=True)
    one.provenance.confidence = {column: 0.0}
    cells = label_rows(table, [one], gold)
    return cells[0].correct if cells else True


async def study(lm: LM, examples: list, tables: dict[str, Table], tau: float,
                settings: ExtractionSettings, n: int) -> dict[str, Tally]:
    out = {rule: Tally() for rule in RULES}
    for e in examples:
        table = tables[e.table]
        schema = Schema(tables=[table.model_copy(update={"foreign_keys": []})])
        chunk = Chunk(id=e.chunk_id, text=e.text)
        [result] = await extract(lm, [chunk], schema, settings)
        rows = all_rows([result])
        keys = key_columns(table)
        flagged = {i: [c for c in table.column_names if c not in keys
                       and (p := r.provenance.confidence.get(c)) is not None and p <= tau]
                   for i, r in enumerate(rows)}
        flagged = {i: cols for i, cols in flagged.items() if cols}
        if not flagged:
            continue
        ballots, _ = await committee_ballots(lm, chunk, table, settings, n=n)
        for rule in RULES:
            after = [r.model_copy(deep=True) for r in rows]
            for i, cols in flagged.items():
                for c in cols:
                    after[i].values[c] = voted(table, rows[i], c, ballots, rule, chunk.text)
            # as in CLEAR: a voted value its chunk does not state is emptied
            after = unstated_rows(schema, after, {chunk.id: chunk.text}, only=flagged)
            for i, cols in flagged.items():
                for c in cols:
                    out[rule].add(right(table, rows[i], c, e.stated),
                                  right(table, after[i], c, e.stated),
                                  f"{e.chunk_id} {c}: {rows[i].values.get(c)!r} -> "
                                  f"{after[i].values.get(c)!r}")
        log.info("%s: %d flagged cells so far", e.chunk_id, out["committee"].cells)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llm", choices=["measuring", "embedded"], default="measuring")
    ap.add_argument("--calibration", type=Path, required=True,
                    help="the calibration JSON whose tau_low flags cells")
    ap.add_argument("--skip", type=int, default=30,
                    help="D_1 examples the calibration used, left out (default 30)")
    ap.add_argument("--examples", type=int, default=30, help="held-out chunks (default 30)")
    ap.add_argument("--committee", type=int, default=3, help="samples per vote (default 3)")
    ap.add_argument("--cache", type=Path, default=None, help="LLM response cache (SQLite)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    cfg = (LLMConfig(backend="openai", model="measuring", base_url="http://127.0.0.1:8800/v1",
                     timeout=900) if args.llm == "measuring" else LLMConfig())
    lm = make_lm(cfg, cache_path=args.cache)
    tau = json.loads(args.calibration.read_text())["tau_low"]
    families = list(TRAIN_FAMILIES)
    every = round_robin(list(synth.calibration_examples(families, bins=("set1",))), 10 ** 6)
    held_out = every[args.skip:args.skip + args.examples]
    out = asyncio.run(study(lm, held_out, gold_tables(families), tau, ExtractionSettings(),
                            args.committee))
    print(f"Committee of {args.committee} samples of {lm.model_id} on {len(held_out)} "
          f"held-out D_1 chunks; cells flagged at tau_low = {tau:.4g}.\n")
    print("| rule | flagged cells | right before | right after | fixed | broken |\n"
          "|---|---|---|---|---|---|")
    for rule, t in out.items():
        print(f"| {rule} | {t.cells} | {t.before} | {t.after} | {t.fixed} | {t.broken} |")
    for rule, t in out.items():
        print(f"\n{rule}, changed cells (first {len(t.examples)}):")
        for x in t.examples:
            print(f"- {x}")


if __name__ == "__main__":
    main()
