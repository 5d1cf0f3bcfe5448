"""Behaviour is unchanged by the method-platform refactor: every method, on scripted models
(well-formed, damaging rewrites, empty sub-queries, garbage), makes the same LLM requests in
the same order and returns the same answer, page, provenance and fallbacks as the code before
it (commit 1e8959f), whose transcripts are in tests/data/method_replay.json.

Regenerate (only when a behaviour change is intended, and say so in the commit):
    python tests/test_method_replay.py --write
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from test_pager import QUESTION, Scripted  # noqa: E402

from quaderno.corpus.chunk import Chunk  # noqa: E402
from quaderno.llm.fake import FakeLLM  # noqa: E402
from quaderno.llm.lm import LM  # noqa: E402
from quaderno.methods.registry import make_method  # noqa: E402

GOLDEN = Path(__file__).parent / "data" / "method_replay.json"
METHOD_NAMES = ["pager", "pager-section", "pager-parallel", "pager-no-iter", "pager-no-outline",
                "vanilla-llm", "vanilla-rag", "ircot", "iter-retgen"]


def damaging(page: str) -> str:
    """A rewrite that fills the slot, rewrites the first section and appends one."""
    out = re.sub(r"(## ([^\n]+)\n)<TO BE FILLED>", r"\1\2 (rewritten fill).", page, count=1)
    out = re.sub(r"(## [^\n]+\n)[^\n#]+", r"\1Changed by the model.", out, count=1)
    return out + "\n\n## Appended\n<TO BE FILLED>"


GARBAGE = ["", "<answer></answer>", "## \n#", "SUFFICIENT", "So the answer is: pride.",
           "<TO BE FILLED>", '{"x": 1'] * 40


def garbage_model():
    replies = iter(GARBAGE)
    return FakeLLM(respond=lambda request: next(replies))


def playing(script: Scripted) -> FakeLLM:
    """PAGER's roles from ``script``; IRCoT's reasoning: a sentence, then the answer."""
    reasoning = []

    def respond(request):
        text = next(m.content for m in request.messages if m.role == "user")
        if "\nThought:" in text:  # IRCoT's reasoning step
            reasoning.append(1)
            return ("Fujita fights in Pride." if len(reasoning) % 2 else
                    "So the answer is: mixed martial artist.")
        return script(request)
    return FakeLLM(respond=respond)


SCENARIOS = {
    "scripted": lambda: playing(Scripted()),
    "damaging-rewrite": lambda: playing(Scripted(rewrite=damaging)),
    "empty-subqueries": lambda: playing(Scripted(subquery=lambda title: "   ")),
    "no-tag-answer": lambda: playing(Scripted(answer="They are fighters.")),
    "garbage": garbage_model,
}


def make_retriever(root: Path):
    from quaderno.workspace import Workspace
    ws = Workspace(root)
    ws.add_kb("kb", [
        Chunk(id="f1", title="Kazuyuki Fujita", text="Kazuyuki Fujita is a Japanese mixed "
              "martial artist and professional wrestler."),
        Chunk(id="y1", title="Gilbert Yvel", text="Gilbert Yvel is a Dutch mixed martial "
              "artist."),
        Chunk(id="p1", title="Pride FC", text="Pride Fighting Championships was a mixed "
              "martial arts organization in Japan."),
        Chunk(id="x1", title="Tomato", text="The tomato is a red fruit."),
    ])
    ws.build_index("kb", embedder=None)
    return ws.retriever("kb", mode="bm25", cache=False)


def transcript(name: str, scenario: str, retriever) -> dict:
    fake = SCENARIOS[scenario]()
    options = {} if name == "vanilla-llm" else {"k": 2}
    method = make_method(name, LM(fake), None if name == "vanilla-llm" else retriever,
                         **options)
    answer = asyncio.run(method.answer(QUESTION))
    return {
        "requests": [[m.model_dump() for m in r.messages] for r in fake.requests],
        "steps": [c.step for c in answer.trace.calls],
        "answer": answer.answer, "explanation": answer.explanation,
        "context": answer.context, "method": answer.method,
        "page": answer.page.model_dump() if answer.page is not None else None,
        "supporting_sections": answer.supporting_sections,
        "retrieval_rounds": answer.retrieval_rounds,
        "evidence": [(e.chunk_id, e.query) for e in answer.evidence],
        "fallbacks": answer.trace.fallbacks,
    }


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    return make_retriever(tmp_path_factory.mktemp("replay") / "home")


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("name", METHOD_NAMES)
def test_same_requests_and_results_as_before_the_refactor(golden, retriever, name, scenario):
    got = json.loads(json.dumps(transcript(name, scenario, retriever)))
    want = golden[f"{name}/{scenario}"]
    assert got["requests"] == want["requests"]
    assert got == want


if __name__ == "__main__" and "--write" in sys.argv:
    import tempfile
    r = make_retriever(Path(tempfile.mkdtemp()) / "home")
    data = {f"{n}/{s}": transcript(n, s, r) for n in METHOD_NAMES for s in SCENARIOS}
    GOLDEN.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(data)} transcripts to {GOLDEN}")  # noqa: T201 - a script's report
