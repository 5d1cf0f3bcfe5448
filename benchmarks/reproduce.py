"""Re-run the first questions of committed evaluation runs and compare with what was recorded.

    .venv/bin/python benchmarks/reproduce.py benchmarks/results/hotpotqa-50/hotpotqa-* --limit 5

Each run directory's config.json gives the dataset, method, k, pool and generation settings;
the questions are answered again with the embedded model (no LLM cache) into a temporary
folder, and every prediction and metric is compared with the recorded one. Prints one line per
run: how many of the re-run questions match exactly, and the first difference if any.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from _common import data_dir

from quaderno.eval.datasets import load_dataset
from quaderno.eval.records import read_results
from quaderno.eval.runner import EvalRunner, RunConfig
from quaderno.llm.config import LLMConfig, make_lm


def rerun(run_dir: Path, limit: int, scratch: Path) -> tuple[int, int, str]:
    saved = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    config = RunConfig.from_saved(saved)
    if not config.model.startswith("llama-cpp:"):
        raise SystemExit(f"{run_dir}: only runs of the embedded model can be re-run here")
    generation = {k: v for k, v in config.generation.items() if v is not None}
    lm = make_lm(LLMConfig(backend="llama-cpp", **generation), cache=False)
    recorded = {r.id: r for r in read_results(run_dir / "results.jsonl")}
    records = [r for r in load_dataset(config.dataset, data=data_dir(), limit=config.limit)
               if r.id in recorded][:limit]
    fresh = asyncio.run(EvalRunner(config, scratch / run_dir.name, lm=lm,
                                   concurrency=1).run(records))
    same, first_difference = 0, ""
    for result in fresh:
        old = recorded[result.id]
        if (result.prediction, result.metrics) == (old.prediction, old.metrics):
            same += 1
        elif not first_difference:
            first_difference = (f"{result.id}: recorded {old.prediction!r}, "
                                f"now {result.prediction!r}")
    return same, len(fresh), first_difference


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (with config.json)")
    ap.add_argument("--limit", type=int, default=5, help="questions re-run per run")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        for run_dir in args.runs:
            if not (run_dir / "config.json").is_file():
                continue
            same, n, diff = rerun(run_dir, args.limit, Path(scratch))
            print(f"{run_dir.name:55s} {same}/{n} identical" + (f"   first difference: {diff}"
                                                                if diff else ""))
            failed |= same != n
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
