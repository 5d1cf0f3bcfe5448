"""What a CCSK gate adds per question beyond the closed-book generation (target <= 5 ms).

Run:  .venv/bin/python benchmarks/gate_overhead.py --gate DIR [--labels FILE] [--n 60]

The closed-book generation is the in-memory fake LLM (zero latency), so the difference
between ``GatedMethod(gate, vanilla-rag)`` on a question the gate does not retrieve for and
``vanilla-llm`` alone is the gate's own cost: embedding the question and the response, SN's
kNN, LightGBM, the fusion, Eq. 7, the trace span, the worker-thread hop. Questions and
closed-book responses come from the label file (default: the committed WebQuestions run);
the gate is forced down the no-retrieval path by timing only the decision path (the wrapped
method is a method that never runs). Writes benchmarks/results_gate_overhead.txt.
"""

from __future__ import annotations

import argparse
import logging
import asyncio
import statistics
import time
from pathlib import Path

from quaderno.gate.labels import read_labels
from quaderno.gate.store import GateBundle
from quaderno.gate.wrapper import GatedMethod
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.base import BaseMethod
from quaderno.methods.baselines import VanillaLLM
from quaderno.methods.episode import Episode

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "benchmarks" / "results" / "ccsk-webq-measuring"


class Skipped(BaseMethod):
    """The wrapped method: when the gate retrieves, it answers at once (its cost is not the
    gate's), so every question measures the gate's path alone."""

    name = "skipped"

    async def run(self, episode: Episode) -> Answer:
        return episode.finish("-")


async def timed(method: BaseMethod, questions: list[str]) -> list[float]:
    out = []
    for q in questions:
        t0 = time.perf_counter()
        await method.answer(q, trace=Trace(label=q))
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gate", type=Path, required=True, help="a trained gate directory")
    ap.add_argument("--labels", type=Path, default=RUN / "labels.jsonl")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (2 threads on 2 "
                    "shared cores were ~20x slower for one sentence here)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_gate_overhead.txt")
    args = ap.parse_args()
    logging.getLogger("quaderno.gate.wrapper").setLevel(logging.ERROR)
    import torch
    torch.set_num_threads(args.threads)
    records = read_labels(args.labels).records[:args.n]
    by_question = {r.question: r.response for r in records}
    questions = list(by_question)
    lm = LM(FakeLLM(respond=lambda req: next(
        (by_question[q] for q in by_question if q in req.messages[-1].content), "x")))
    bundle = GateBundle.load(args.gate)
    base = asyncio.run(timed(VanillaLLM(lm), questions * 2))[len(questions):]  # warm
    encode, encode_q = [], []
    for q in questions:
        t0 = time.perf_counter()
        bundle.embedder.embed_documents([q, by_question[q]])
        t1 = time.perf_counter()
        bundle.embedder.embed_queries([q])
        encode.append((t1 - t0) * 1000)
        encode_q.append((time.perf_counter() - t1) * 1000)
    lines = [f"# CCSK gate overhead per question ({len(questions)} WebQuestions questions and "
             f"their closed-book responses; embedder {bundle.manifest.embedder}; fake LLM with "
             "zero latency; median / p95 ms)", "",
             f"closed-book generation alone (vanilla-llm, fake LLM): "
             f"{statistics.median(base):.2f} / {_p95(base):.2f} ms",
             f"one encoder pass over question + response ({bundle.manifest.embedder}, torch "
             f"threads {args.threads}): {statistics.median(encode):.2f} / {_p95(encode):.2f} ms; "
             f"question alone {statistics.median(encode_q):.2f} / {_p95(encode_q):.2f} ms",
             "", "gate         added beyond generation      decide() alone      decide() minus "
             "its encoder pass (q + r; SN gates: q)"]
    for name in bundle.names:
        gate = bundle.gate(name)
        # the fake LLM is not the labels' LLM: allowed here, the decisions are only timed
        gated = GatedMethod(gate, Skipped(lm), lm, allow_other_llm=True)
        asyncio.run(timed(gated, questions[:5]))  # warm up (model load, first call)
        ms = asyncio.run(timed(gated, questions))
        added = [a - b for a, b in zip(ms, base)]
        decide = []
        for q in questions:
            t0 = time.perf_counter()
            gate.decide([q], [by_question[q]])
            decide.append((time.perf_counter() - t0) * 1000)
        verdict = "ok" if statistics.median(added) <= 5 else "OVER the 5 ms target"
        rest = statistics.median(decide) - (
            statistics.median(encode) if gate.needs_response
            else statistics.median(encode_q) if name in ("sn", "skr-knn", "flashrag-skr")
            else 0.0)
        lines.append(f"{name:13s} {statistics.median(added):6.2f} / {_p95(added):6.2f} ms"
                     f"   {statistics.median(decide):6.2f} / {_p95(decide):6.2f} ms"
                     f"   {rest:6.2f} ms   {verdict}")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text, encoding="utf-8")


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


if __name__ == "__main__":
    main()
