"""PAGER's cost per question: `rewrite` vs `section` fill, with the embedded model.

Run:  .venv/bin/python benchmarks/pager_tokens.py [--n 20] [--k 5]

Questions: the first N of HotpotQA dev (IRCoT processing, distractor setting); their
paragraphs (2 supporting + distractors each) form one pooled BM25 knowledge base.
Prints LLM calls and prompt/completion tokens per question for each fill mode, and the
ratio of completion tokens (target: section <= 50% of rewrite). The LLM cache is off.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_dir  # noqa: E402

from quaderno.corpus.chunk import Chunk  # noqa: E402
from quaderno.llm.lm import LM  # noqa: E402
from quaderno.llm.llama_cpp_backend import LlamaCppLLM  # noqa: E402
from quaderno.methods.pager import Pager  # noqa: E402
from quaderno.workspace import Workspace  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-iters", type=int, default=10)
    args = ap.parse_args()
    lines = (data_dir() / "hotpotqa" / "hotpotqa_dev_ircot_300.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines[:args.n]]
    chunks = {}
    for rec in records:
        for c in rec["contexts"]:
            cid = hashlib.md5(f"{c['title']}\n{c['paragraph_text']}".encode()).hexdigest()[:12]
            chunks[cid] = Chunk(id=cid, title=c["title"], text=c["paragraph_text"])
    ws = Workspace(Path(tempfile.mkdtemp(prefix="quaderno-pager-tokens-")))
    ws.add_kb("hotpot", chunks.values(), max_words=None)
    ws.build_index("hotpot", embedder=None)
    retriever = ws.retriever("hotpot", mode="bm25")
    lm = LM(LlamaCppLLM(n_ctx=8192))
    print(f"# PAGER fill modes on {len(records)} HotpotQA questions "
          f"({len(chunks)} pooled paragraphs, BM25, k={args.k}, {lm.model_id}, cache off)\n")
    stats: dict[str, dict[str, list[float]]] = {}
    for mode in ("rewrite", "section"):
        method = Pager(lm, retriever, k=args.k, max_iters=args.max_iters, fill_mode=mode)
        rows = stats[mode] = {"calls": [], "prompt": [], "completion": [], "fill_completion": [],
                              "seconds": [], "fallbacks": []}
        for rec in records:
            t0 = time.perf_counter()
            answer = asyncio.run(method.answer(rec["question_text"]))
            s = answer.trace.summary()
            rows["calls"].append(s["llm_calls"])
            rows["prompt"].append(s["prompt_tokens"])
            rows["completion"].append(s["completion_tokens"])
            rows["fill_completion"].append(sum(c.usage.completion_tokens for c in answer.trace.calls
                                               if c.step and c.step.startswith("pager.fill")))
            rows["seconds"].append(time.perf_counter() - t0)
            rows["fallbacks"].append(len(s["fallbacks"]))
        print(f"{mode:8s} per question: {statistics.mean(rows['calls']):5.1f} LLM calls, "
              f"{statistics.mean(rows['prompt']):7.0f} prompt + "
              f"{statistics.mean(rows['completion']):6.0f} completion tokens "
              f"(fill steps {statistics.mean(rows['fill_completion']):6.0f}), "
              f"{statistics.mean(rows['seconds']):5.1f} s, "
              f"{statistics.mean(rows['fallbacks']):.1f} fallbacks", flush=True)
    r, s = stats["rewrite"], stats["section"]
    print(f"\nsection / rewrite completion tokens: "
          f"{sum(s['completion']) / sum(r['completion']) * 100:.1f}% overall, "
          f"{sum(s['fill_completion']) / sum(r['fill_completion']) * 100:.1f}% in fill steps "
          "(target: <= 50%)")
    print(f"section / rewrite prompt tokens: {sum(s['prompt']) / sum(r['prompt']) * 100:.1f}%")


if __name__ == "__main__":
    main()
