"""Every method end to end with the embedded SmolLM2 model over the shipped sample corpus.

Quality is not asserted (a 135M model); structure is: a valid page, a non-empty answer,
and a trace that accounts for every call.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_cpp")

from quaderno.corpus.loaders import load_flashrag  # noqa: E402
from quaderno.llm.lm import LM  # noqa: E402
from quaderno.llm.llama_cpp_backend import LlamaCppLLM  # noqa: E402
from quaderno.llm.parsing import parse_outline  # noqa: E402
from quaderno.methods.registry import METHODS, get_spec, make_method  # noqa: E402
from quaderno.workspace import Workspace  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.slow]

QUESTIONS = ["who got the first nobel prize in physics",
             "when is the next deadpool movie being released"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from quaderno.cli.demo_cmd import sample_corpus
    ws = Workspace(tmp_path_factory.mktemp("e2e") / "home")
    ws.add_kb("wiki", load_flashrag(sample_corpus()))
    ws.build_index("wiki", embedder=None)
    return LM(LlamaCppLLM(n_ctx=4096)), ws.retriever("wiki", mode="bm25")


# DocSage with the embedded model takes minutes per question (a schema, then one extraction
# call per chunk, three with sample agreement): its fake-LLM tests and the method contract
# cover it; a measured run belongs in benchmarks/docsage_runs.sh
@pytest.mark.parametrize("name", [m for m in METHODS if not m.startswith("docsage")])
def test_method_completes_with_embedded_model(setup, name):
    lm, retriever = setup
    spec = get_spec(name)
    options = {"k": 2} if spec.needs_retrieval else {}
    if "max_iters" in spec.options.model_fields:
        options["max_iters"] = 2  # keeps CI short; slot-by-slot filling is still exercised
    if "max_turns" in spec.options.model_fields:  # Search-o1: a few turns and searches
        options.update(max_turns=3, max_searches=2)
    if "max_chunks" in spec.options.model_fields:  # DocSage: a few chunks, one ASK round
        options.update(pool_k=6, max_chunks=4, sample_k=3, probe_size=3, probe_docs=2,
                       max_iters=1, samples=2)
    method = make_method(name, lm, retriever if spec.needs_retrieval else None, options)
    for question in QUESTIONS:
        answer = asyncio.run(method.answer(question))
        if name == "search-o1" and not answer.answer.strip():  # no \boxed{}: no answer,
            assert any("boxed" in f for f in answer.trace.fallbacks)  # as the official rule
        else:
            assert answer.answer.strip(), f"{name}: empty answer"
        assert answer.trace.calls and all(c.error is None for c in answer.trace.calls)
        assert all(c.constrained for c in answer.trace.calls)  # grammar on every call
        if answer.page is not None:
            page = answer.page
            assert 1 <= len(page.sections) <= 8
            reparsed = parse_outline(page.render())
            assert [s.title for s in reparsed.sections] == [s.title for s in page.sections]
            filled = page.filled_sections()
            assert filled, f"{name}: no section filled"
            if not page.complete:
                assert any("max_iters" in f for f in answer.trace.fallbacks)
            assert all(s.sub_query and s.content for s in filled)
        if spec.needs_retrieval and not spec.model_decides_retrieval:
            assert answer.retrieval_rounds


def test_misknow_over_a_passage_kb_and_a_qa_pair_kb(tmp_path):
    """Missing-knowledge RAG end to end with the embedded model: round 1 from the passages,
    the judgment under the JSON grammar, round 2 (if any) from the QA pairs only."""
    from quaderno.corpus.chunk import Chunk, KBKind
    from quaderno.cli.demo_cmd import sample_corpus
    ws = Workspace(tmp_path / "home")
    ws.add_kb("wiki", list(load_flashrag(sample_corpus()))[:200])
    ws.add_kb("qa", [Chunk(id=f"qa{i}", title=q, text=f"Question: {q}\nAnswer: {a}",
                           meta={"question": q, "answer": a}) for i, (q, a) in enumerate([
        ("who got the first nobel prize in physics", "Wilhelm Conrad Röntgen"),
        ("who discovered x-rays", "Wilhelm Röntgen"),
        ("where is the nobel prize awarded", "Stockholm")])], kind=KBKind.qa_pair)
    for kb in ("wiki", "qa"):
        ws.build_index(kb, embedder=None)
    lm = LM(LlamaCppLLM(n_ctx=4096))
    method = make_method("misknow", lm, ws.retriever(["wiki", "qa"], mode="bm25"),
                         {"kb1": "wiki", "kb2": "qa"})
    answer = asyncio.run(method.answer(QUESTIONS[0]))
    d = answer.details
    assert answer.answer.strip() and d.first_answer.strip()
    assert [c.step for c in answer.trace.calls][:2] == ["misknow.first_answer", "misknow.judge"]
    assert all(c.constrained and c.error is None for c in answer.trace.calls)
    assert len(d.round1) == 2 and all(e.kb == "wiki" for e in answer.evidence[:2])
    assert d.path in ("second-round", "sufficient", "missing-without-queries", "unreadable")
    if d.path == "second-round":
        assert d.round2 and all(cid.startswith("qa") for cid in d.round2)
        assert all(e.query in d.judgment.query for e in answer.evidence[2:])
