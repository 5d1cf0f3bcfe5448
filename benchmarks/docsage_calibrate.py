"""Calibrate DocSage's Level A threshold (CLEAR's conformal error coverage) for one extraction
model on labelled data D_1 from the synthetic benchmark's *train* families, and save it as
the JSON that the ``calibration`` option of every DocSage method reads.

    .venv/bin/python benchmarks/docsage_calibrate.py --llm measuring \
        --out /tmp/quaderno-docsage/calibration-measuring.json

The examples are taken round-robin over the train families (``--examples`` of them), so a
short budget still covers every family; ``--holdout N`` labels N more examples, of chunks
never calibrated on, and saves the share of their wrong cells the threshold flags (the promise is
at least 1 - alpha) and of their right cells (what re-reading costs). Extraction runs with
DocSage's default settings, so the threshold is on the same confidence scale as at question
time. The test families the
benchmark asks about are never used (``calibration_examples`` refuses them).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
from collections import defaultdict
from pathlib import Path

from quaderno.eval import synth
from quaderno.eval.synth.families import TRAIN_FAMILIES, family
from quaderno.eval.synth.gold import table_columns
from quaderno.llm.config import LLMConfig, make_lm
from quaderno.methods.docsage.calibrate import calibrate_on
from quaderno.methods.docsage.extract import ExtractionSettings
from quaderno.methods.docsage.schema import Column, Table

log = logging.getLogger("docsage_calibrate")
TYPES = {"INTEGER": "INT", "BIGINT": "INT", "DOUBLE": "DOUBLE", "VARCHAR": "TEXT",
         "BOOLEAN": "BOOL", "DATE": "DATE"}


def gold_tables(families: list[str]) -> dict[str, Table]:
    """Every gold table of ``families`` as a schema table (the columns D_1 is labelled on)."""
    out = {}
    for fam in families:
        for name, cols in table_columns(family(fam)).items():
            out[name] = Table(name=name, primary_key=[cols[0][0]],
                              columns=[Column(name=c, type=TYPES.get(t, "TEXT"))
                                       for c, t in cols])
    return out


def round_robin(examples: list, n: int) -> list:
    by_family: dict[str, list] = defaultdict(list)
    for e in examples:
        by_family[e.family].append(e)
    mixed = [e for group in itertools.zip_longest(*by_family.values()) for e in group if e]
    return mixed[:n]


def split(examples: list, n: int, held: int) -> tuple[list, list]:
    """The first ``n`` examples to calibrate on, and up to ``held`` of the next ones whose
    chunk none of them is (an example is one chunk's table: a chunk with two tables gives
    two examples, which must fall on one side)."""
    first = examples[:n]
    used = {e.chunk_id for e in first}
    return first, [e for e in examples[n:] if e.chunk_id not in used][:held]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llm", choices=["measuring", "embedded"], default="measuring")
    ap.add_argument("--examples", type=int, default=30,
                    help="D_1 examples, one chunk's table each (default 30)")
    ap.add_argument("--holdout", type=int, default=0,
                    help="held-back examples after them, of other chunks, never calibrated "
                         "on: what the threshold flags of their wrong and right cells is saved "
                         "(default 0)")
    ap.add_argument("--alpha", type=float, default=0.1,
                    help="flag at least 1 - alpha of the wrong cells (default 0.1)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    cfg = (LLMConfig(backend="openai", model="measuring", base_url="http://127.0.0.1:8800/v1",
                     timeout=900) if args.llm == "measuring" else LLMConfig())
    lm = make_lm(cfg, cache_path=None)
    families = list(TRAIN_FAMILIES)
    examples = list(synth.calibration_examples(families, bins=("set1",)))
    first, held = split(round_robin(examples, len(examples)), args.examples, args.holdout)
    calibration = asyncio.run(calibrate_on(lm, first, gold_tables(families),
                                           ExtractionSettings(), alpha=args.alpha,
                                           source="d1-train-families", held_out=held))
    calibration.save(args.out)
    log.info("saved %s: %s", args.out, calibration.model_dump(mode="json"))


if __name__ == "__main__":
    main()
