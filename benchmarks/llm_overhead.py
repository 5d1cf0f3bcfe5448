"""LLM-layer overhead and concurrency, against the in-process OpenAI-compatible fake server.

Run:  .venv/bin/python benchmarks/llm_overhead.py [--latency 1.0]

Prints:
  1. framework overhead per call: a typed JSON step through LM (cache off) minus a bare
     httpx POST to the same server, at zero server latency; and the same as a share of a
     call whose server latency is --latency seconds (target <= 2% of a 1 s call);
  2. throughput (calls/s) at concurrency 1, 8, 32, 64 with --latency seconds per call
     (target: concurrency 32 >= 25x sequential).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx
from pydantic import BaseModel

from quaderno.llm.lm import LM
from quaderno.llm.openai_http import OpenAIChatLLM
from quaderno.llm.steps import Step
from quaderno.llm.testing import FakeOpenAIServer


class Answer(BaseModel):
    answer: str
    confidence: float


STEP = Step(name="answer", instruction="Question: {question}", inputs=("question",),
            output=Answer)
REPLY = '{"answer": "Paris", "confidence": 0.9}'


async def bare_calls(url: str, n: int) -> list[float]:
    out = []
    async with httpx.AsyncClient(timeout=60) as client:
        for i in range(n):
            body = {"model": "fake-model", "messages": [{"role": "user", "content": f"q{i}"}],
                    "max_tokens": 64}
            t0 = time.perf_counter()
            resp = await client.post(f"{url}/chat/completions", json=body)
            resp.json()
            out.append(time.perf_counter() - t0)
    return out


async def step_calls(lm: LM, n: int, tag: str) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        await STEP.run(lm, question=f"{tag} {i}", use_cache=False)
        out.append(time.perf_counter() - t0)
    return out


async def throughput(lm: LM, concurrency: int, n: int, tag: str) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await STEP.run(lm, question=f"{tag} {i}", use_cache=False)

    t0 = time.perf_counter()
    await asyncio.gather(*[one(i) for i in range(n)])
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=1.0, help="server latency per call (s)")
    ap.add_argument("--calls", type=int, default=200, help="calls for the overhead estimate")
    args = ap.parse_args()
    print("# quaderno LLM-layer overhead (in-process fake OpenAI-compatible server)\n")

    with FakeOpenAIServer(reply=REPLY) as server:
        lm = LM(OpenAIChatLLM("fake-model", server.url, max_concurrency=64))
        asyncio.run(step_calls(lm, 20, "warmup"))
        bare = asyncio.run(bare_calls(server.url, args.calls))
        ours = asyncio.run(step_calls(lm, args.calls, "overhead"))
    b, o = statistics.median(bare), statistics.median(ours)
    print("## 1. Overhead per call (median of %d calls, zero server latency)" % args.calls)
    print(f"bare httpx POST + json          {b * 1000:7.3f} ms")
    print(f"Step.run -> LM -> OpenAIChatLLM {o * 1000:7.3f} ms")
    print(f"framework overhead              {(o - b) * 1000:7.3f} ms per call")

    with FakeOpenAIServer(reply=REPLY, latency_s=args.latency) as server:
        lm = LM(OpenAIChatLLM("fake-model", server.url, max_concurrency=64))
        m = statistics.median(asyncio.run(step_calls(lm, 5, "slow")))
        mb = statistics.median(asyncio.run(bare_calls(server.url, 5)))
        print(f"with a {args.latency:.1f} s call: bare {mb:.4f} s, ours {m:.4f} s per call; "
              f"overhead {(m - mb) / args.latency * 100:.3f}% of the call (target <= 2%)\n")
        print(f"## 2. Throughput with {args.latency:.1f} s per call")
        base = None
        for c in (1, 8, 32, 64):
            n = max(6, 3 * c)
            rate = asyncio.run(throughput(lm, c, n, f"c{c}"))
            base = base or rate
            print(f"concurrency {c:3d}: {rate:7.2f} calls/s  = {rate / base:5.1f}x sequential"
                  f"  ({n} calls)")
        print(f"server saw at most {server.max_inflight} requests in flight")


if __name__ == "__main__":
    main()
