"""What a CCSK gate adds per question beyond the closed-book generation (target <= 5 ms).

Run:  .venv/bin/python benchmarks/gate_overhead.py --gate DIR [DIR ...] [--labels FILE]
      [--n 60] [--gen-ms 0 100]

With several gate directories (the same labels, different embedders: ``minilm`` and the
distilled ``static:minilm``) each is timed, and the decisions of the others are compared with
the first's on the labels' test split: agreement, ACC and retrieval rate, the price of speed.

The closed-book generation is the in-memory fake LLM, with zero latency and with a simulated
generation time (``--gen-ms``; a real closed-book answer takes seconds): gates that read the
response embed the question in a worker thread during the generation (``prepare``), so with a
generation longer than that pass only the response's encoder pass and the gate's logic are
added. torch runs with 1 thread (``--threads``; set here, at the entry point, because
``torch.set_num_threads`` is process-global). The difference
between ``GatedMethod(gate, vanilla-rag)`` on a question the gate does not retrieve for and
``vanilla-llm`` alone is the gate's own cost: embedding the question and the response, SN's
kNN, LightGBM, the fusion, Eq. 7, the trace span, the worker-thread hop. Questions and
closed-book responses come from the label file (default: the committed WebQuestions run);
the gate is forced down the no-retrieval path by timing only the decision path (the wrapped
method is a method that never runs). Writes benchmarks/results_gate_overhead.txt.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from pathlib import Path
from typing import Any

from quaderno.gate.labels import LabelFile, read_labels
from quaderno.gate.scoring import score_decisions
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
    """The wrapped method, run when the gate retrieves: its retrieval is not the gate's cost.
    A decide-first gate (reads only the question) skips the closed-book call when it
    retrieves, so there this method takes the one generation time (``gen_ms``); after a gate
    that read the response it answers at once. Either way every question costs one generation
    and the difference to vanilla-llm alone is the gate's own time."""

    name = "skipped"

    def __init__(self, lm: LM, gen_ms: float) -> None:
        super().__init__(lm, None)
        self.gen_ms = gen_ms

    async def run(self, episode: Episode) -> Answer:
        if self.gen_ms:
            time.sleep(self.gen_ms / 1000)  # as the fake generation does
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
    ap.add_argument("--gate", type=Path, nargs="+", required=True,
                    help="trained gate directories (e.g. one on minilm, one on static:minilm): "
                         "each is timed, and the first's decisions are compared with the others'")
    ap.add_argument("--labels", type=Path, default=RUN / "labels.jsonl")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (2 threads on 2 "
                    "shared cores were ~20x slower for one sentence here)")
    ap.add_argument("--gen-ms", type=float, nargs="+", default=[0.0, 100.0],
                    help="simulated closed-book generation times (ms)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_gate_overhead.txt")
    args = ap.parse_args()
    logging.getLogger("quaderno.gate").setLevel(logging.ERROR)  # other-LLM warnings: timed only
    import torch
    torch.set_num_threads(args.threads)
    labels = read_labels(args.labels)
    by_question = {r.question: r.response for r in labels.records[:args.n]}
    bundles = [GateBundle.load(g) for g in args.gate]
    lines = [f"# CCSK gate overhead per question ({len(by_question)} WebQuestions questions and "
             f"their closed-book responses; torch threads {args.threads}; fake LLM; median / "
             "p95 ms)"]
    for bundle in bundles:
        lines += ["", *overhead_lines(bundle, by_question, args.gen_ms)]
    if len(bundles) > 1:
        lines += ["", *compare_lines(bundles, labels)]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text, encoding="utf-8")


def overhead_lines(bundle: GateBundle, by_question: dict[str, str],
                   gen_times: list[float]) -> list[str]:
    """One gate directory's encoder passes, added time per gate and decide() alone."""
    questions = list(by_question)
    encode, encode_q, encode_r = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        bundle.embedder.embed_documents([q, by_question[q]])
        t1 = time.perf_counter()
        bundle.embedder.embed_queries([q])
        t2 = time.perf_counter()
        bundle.embedder.embed_documents([by_question[q]])
        encode.append((t1 - t0) * 1000)
        encode_q.append((t2 - t1) * 1000)
        encode_r.append((time.perf_counter() - t2) * 1000)
    lines = [f"# embedder {bundle.manifest.embedder}", "",
             f"one encoder pass over question + response: {statistics.median(encode):.2f} / "
             f"{_p95(encode):.2f} ms; question alone {statistics.median(encode_q):.2f} / "
             f"{_p95(encode_q):.2f} ms; response alone {statistics.median(encode_r):.2f} / "
             f"{_p95(encode_r):.2f} ms"]
    for gen_ms in gen_times:
        lm = LM(FakeLLM(respond=_responder(by_question, gen_ms)))
        base = asyncio.run(timed(VanillaLLM(lm), questions * 2))[len(questions):]  # warm
        lines += ["", f"## closed-book generation {gen_ms:g} ms (vanilla-llm alone: "
                  f"{statistics.median(base):.2f} / {_p95(base):.2f} ms)", "",
                  "gate         added beyond generation      verdict (target <= 5 ms)"]
        for name in bundle.names:
            gate = bundle.gate(name)
            # the fake LLM is not the labels' LLM: allowed here, the decisions are only timed
            gated = GatedMethod(gate, Skipped(lm, 0.0 if gate.needs_response else gen_ms), lm,
                                allow_other_llm=True)
            asyncio.run(timed(gated, questions[:5]))  # warm up (model load, first call)
            ms = asyncio.run(timed(gated, questions))
            added = [a - b for a, b in zip(ms, base)]
            verdict = "ok" if statistics.median(added) <= 5 else "OVER the 5 ms target"
            lines.append(f"{name:13s} {statistics.median(added):6.2f} / {_p95(added):6.2f} ms"
                         f"      {verdict}")
    lines += ["", "decide() alone, no prepare (ms, median / p95), and minus its encoder pass "
              "(q + r; SN gates: q):"]
    for name in bundle.names:
        gate = bundle.gate(name)
        decide = []
        for q in questions:
            t0 = time.perf_counter()
            gate.decide([q], [by_question[q]])
            decide.append((time.perf_counter() - t0) * 1000)
        rest = statistics.median(decide) - (
            statistics.median(encode) if gate.needs_response
            else statistics.median(encode_q) if name in ("sn", "skr-knn", "flashrag-skr")
            else 0.0)
        lines.append(f"{name:13s} {statistics.median(decide):6.2f} / {_p95(decide):6.2f} ms"
                     f"   {rest:6.2f} ms")
    return lines


def compare_lines(bundles: list[GateBundle], labels: LabelFile) -> list[str]:
    """The price of a cheaper embedder: on the labels' test split, how often each other gate
    directory decides as the first one does, and both's ACC and retrieval rate."""
    test = labels.split("test")
    qs, rs = [r.question for r in test], [r.response for r in test]
    ref = bundles[0]
    lines = [f"# decisions on the test split (n = {len(test)}): {ref.manifest.embedder} "
             "against " + ", ".join(b.manifest.embedder for b in bundles[1:]), "",
             "gate          agree   ACC " + "  ".join(f"{b.manifest.embedder:>16s}"
                                                   for b in bundles) +
             "   retrieval rate " + "  ".join(f"{b.manifest.embedder:>16s}" for b in bundles)]
    for name in ref.names:
        decisions = [b.gate(name).decide(qs, rs) for b in bundles]
        scores = [score_decisions(test, d, needs_response=b.gate(name).needs_response)
                  for b, d in zip(bundles, decisions)]
        agree = min(sum(x.retrieve == y.retrieve for x, y in zip(decisions[0], d)) / len(test)
                    for d in decisions[1:])
        lines.append(f"{name:13s} {agree:6.0%}       " +
                     "  ".join(f"{100 * s.acc:16.1f}" for s in scores) + "                  " +
                     "  ".join(f"{s.retrieval_rate:16.0%}" for s in scores))
    return lines


def _responder(by_question: dict[str, str], gen_ms: float):
    def respond(req: Any) -> str:
        if gen_ms:
            time.sleep(gen_ms / 1000)  # the generation: the worker thread runs meanwhile
        return next((by_question[q] for q in by_question if q in req.messages[-1].content), "x")
    return respond


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


if __name__ == "__main__":
    main()
