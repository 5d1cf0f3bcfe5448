"""Missing-knowledge RAG (seed 001) and STD-RAG with scripted models: both rounds, the
K/2 budgets, MD5 dedup and backfill, every weak judgment, the paper's prompts."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from quaderno.corpus.chunk import Chunk, KBKind
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.types import ChatRequest, ChatResponse
from quaderno.methods.misknow import Judgment, MisknowRAG, StdRAG, prompts
from quaderno.methods.misknow.judgment import reasoning_of, shorten
from quaderno.methods.registry import make_method

QUESTION = "Who has the most all star mvp awards?"
SPEC = Path(__file__).resolve().parents[2] / "shared" / "notes" / "specs" / "misknow.md"

PASSAGES = [
    Chunk(id="w1", title="NBA All-Star Game MVP", text="The NBA All-Star Game MVP award is given "
          "to the most valuable player of the all star game."),
    Chunk(id="w2", title="Bob Pettit", text="Bob Pettit won the all star mvp award four times."),
    Chunk(id="w3", title="Kobe Bryant", text="Kobe Bryant won four all star mvp awards."),
    Chunk(id="w4", title="Tomato", text="The tomato is a red fruit."),
]


def qa(cid: str, q: str, a: str) -> Chunk:
    return Chunk(id=cid, title=q, text=f"Question: {q}\nAnswer: {a}", meta={"question": q,
                                                                          "answer": a})


PAIRS = [
    qa("q1", "who has won the most all star mvp awards", "Bob Pettit and Kobe Bryant, four each"),
    qa("q2", "who won the all star mvp in 2009", "Kobe Bryant and Shaquille O'Neal"),
    qa("q3", "what colour is a tomato", "red"),
    # the same text as a passage: MD5 dedup must drop it from round 2
    Chunk(id="dup", title="Kobe Bryant", text="Kobe Bryant won four all star mvp awards.",
          meta={}),
]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path_factory.mktemp("misknow") / "home")
    ws.add_kb("wiki", PASSAGES)
    ws.add_kb("qa", PAIRS, kind=KBKind.qa_pair)
    for kb in ("wiki", "qa"):
        ws.build_index(kb, embedder=None)
    return ws.retriever(["wiki", "qa"], mode="bm25", cache=False)


def role(request: ChatRequest) -> str:
    system = next((m.content for m in request.messages if m.role == "system"), "")
    user = next(m.content for m in request.messages if m.role == "user")
    if "knowledge expert proficient in JSON" in system:
        return "judge"
    if "## Missing Knowledge Context" in user:
        return "final"
    return "first"


JUDGMENT = ("The contexts give Pettit four awards but say nothing of others, so the count of "
            "other players is missing.\n```json\n" + json.dumps({
                "thought": "Pettit has four; others unknown.", "judge": True,
                "missing_knowledge": ["other players with four awards"],
                "query": ["kobe bryant all star mvp awards", "all star mvp 2009"]}) + "\n```")


class Script:
    def __init__(self, judgment: str = JUDGMENT, reasoning: str | None = None) -> None:
        self.judgment, self.reasoning = judgment, reasoning
        self.prompts: dict[str, list[ChatRequest]] = {"first": [], "judge": [], "final": []}

    def __call__(self, request: ChatRequest) -> str:
        r = role(request)
        self.prompts[r].append(request)
        return {"first": "Bob Pettit", "judge": self.judgment,
                "final": "Bob Pettit, Kobe Bryant"}[r]


def run(method, question=QUESTION):
    return asyncio.run(method.answer(question))


def misknow(retriever, script, **kw):
    return MisknowRAG(LM(FakeLLM(respond=script)), retriever, **kw)


def retrievals(answer):
    return [(s.inputs["query"], s.inputs.get("kb"), s.inputs["k"]) for s in answer.trace.spans
            if s.name == "retrieve"]


def test_round_two_searches_kb2_with_the_generated_queries_never_the_question(retriever):
    script = Script()
    answer = run(misknow(retriever, script, kb1="wiki", kb2="qa"))
    calls = retrievals(answer)
    assert calls[0] == (QUESTION, "wiki", 2)
    assert [q for q, kb, _ in calls[1:]] == ["kobe bryant all star mvp awards",
                                             "all star mvp 2009"]
    assert all(kb == "qa" for _, kb, _ in calls[1:]) and QUESTION not in [q for q, *_ in calls[1:]]
    d = answer.details
    assert d.kind == "misknow" and d.path == "second-round"
    assert len(d.round1) == 2 and len(d.round2) == 2  # |C1| = |C2| = K/2
    assert set(d.round2) <= {c.id for c in PAIRS}
    assert answer.answer == "Bob Pettit, Kobe Bryant" and d.first_answer == "Bob Pettit"
    # the evidence is what the reader was shown, each with the query that found it
    assert [e.chunk_id for e in answer.evidence] == d.round1 + d.round2
    assert {e.query for e in answer.evidence[2:]} <= set(d.judgment.query)
    final = script.prompts["final"][0].messages[-1].content
    assert "Q1: " in final and "A1: " in final and "Document[1]: " in final
    assert "Additional knowledge about other players with four awards" in final
    assert "keywords from reasoning process: The contexts give Pettit four awards" in final


def test_md5_duplicates_of_round_one_are_skipped_and_backfilled(retriever):
    judgment = JUDGMENT.replace('"kobe bryant all star mvp awards", "all star mvp 2009"',
                                '"kobe bryant won four all star mvp awards"')
    answer = run(misknow(retriever, Script(judgment), kb1="wiki", kb2="qa"))
    d = answer.details
    round1_md5 = {c.md5 for c in PASSAGES + PAIRS if c.id in d.round1}
    assert "w3" in d.round1  # the passage the duplicate repeats
    assert "dup" not in d.round2 and d.duplicates_skipped >= 1
    assert len(d.round2) == 2  # backfilled from deeper ranks: |C| = K
    assert not ({c.md5 for c in PAIRS if c.id in d.round2} & round1_md5)
    nofill = run(misknow(retriever, Script(judgment), kb1="wiki", kb2="qa", backfill=False))
    assert len(nofill.details.round2) == 1  # the duplicate took a slot of the K/2 budget


def test_same_kb_config_searches_every_kb_both_rounds(retriever):
    answer = run(misknow(retriever, Script()))  # "Merged": no kb1/kb2
    assert [kb for _, kb, _ in retrievals(answer)] == [None, None, None]


@pytest.mark.parametrize("reply,path,judge", [
    ('```json\n{"thought": "ok", "judge": "no", "missing_knowledge": [], "query": []}\n```',
     "sufficient", False),
    ('Some prose first. {"thought": "x", "judge": "yes", "missing_knowledge": "the count", '
     '"query": "kobe bryant mvp"} and prose after.', "second-round", True),
    ('{"thought": "x", "missing_knowledge": ["a"], "query": ["kobe bryant mvp"]}',
     "second-round", True),  # no judge: inferred from the queries
    ('{"thought": "x", "judge": true, "missing_knowledge": ["a"], "query": []}',
     "missing-without-queries", True),
    ("I cannot decide.", "unreadable", None),
    ('{"thought": "x", "judge": "perhaps", "query": ["q"]}', "unreadable", None),
])
def test_weak_judgments_take_a_defined_recorded_path(retriever, reply, path, judge):
    script = Script(reply)
    answer = run(misknow(retriever, script, kb1="wiki", kb2="qa"))
    d = answer.details
    assert d.path == path and answer.answer == "Bob Pettit, Kobe Bryant"
    assert (d.judgment.judge if d.judgment else None) is judge
    assert len(script.prompts["final"]) == 1  # the method always answers with Fig. 5
    if path != "second-round":
        assert d.round2 == [] and len(retrievals(answer)) == 1
    if path in ("missing-without-queries", "unreadable"):
        assert answer.trace.fallbacks
    if path == "unreadable":
        assert len(script.prompts["judge"]) == 2  # one repair re-ask first


def test_budget_parity_fills_round_two_from_kb2_with_the_question(retriever):
    reply = '{"thought": "fine", "judge": false, "missing_knowledge": [], "query": []}'
    answer = run(misknow(retriever, Script(reply), kb1="wiki", kb2="qa", budget_parity=True))
    assert answer.details.path == "sufficient+budget-parity"
    assert retrievals(answer)[1] == (QUESTION, "qa", 4)
    assert len(answer.details.round2) == 2


def test_reasoning_sources():
    assert reasoning_of("```json\n{}\n```", "R1 thinks") == ("R1 thinks", "reasoning_content")
    assert reasoning_of("<think>hmm, Pettit</think>```json\n{}```", None) == ("hmm, Pettit",
                                                                               "think")
    assert reasoning_of("Pettit is known.\n```json\n{}\n```", None) == (
        "Pettit is known.", "text before the JSON")
    assert reasoning_of('{"judge": false}', None) == ("", "none")
    long = " ".join(f"w{i}" for i in range(100))
    cut = shorten(long, 10)
    assert cut.split()[:5] == ["w0", "w1", "w2", "w3", "w4"] and cut.endswith("w99")
    assert len(cut.split()) == 11  # ten words and the ellipsis


def test_reasoning_content_from_the_server_reaches_the_reader(retriever):
    class Reasoner(FakeLLM):
        async def achat(self, request):
            response: ChatResponse = await super().achat(request)
            return response.model_copy(update={"reasoning": "R1: count the awards per player"})

    script = Script('```json\n{"thought": "t", "judge": true, "missing_knowledge": ["m"], '
                    '"query": ["kobe"]}\n```')
    reader = LM(FakeLLM(respond=script))
    method = MisknowRAG(reader, retriever, reasoner=LM(Reasoner(respond=script)), kb1="wiki",
                        kb2="qa")
    answer = run(method)
    assert answer.details.reasoning_source == "reasoning_content"
    final = script.prompts["final"][0].messages[-1].content
    assert "keywords from reasoning process: R1: count the awards per player" in final
    # the reasoner's call is traced with the rest
    assert [c.step for c in answer.trace.calls] == ["misknow.first_answer", "misknow.judge",
                                                    "misknow.final_answer"]


def test_without_reasoning_the_prompt_differs_by_exactly_one_line(retriever):
    full, ablated = Script(), Script()
    run(misknow(retriever, full, kb1="wiki", kb2="qa"))
    answer = run(misknow(retriever, ablated, kb1="wiki", kb2="qa", reasoning=False))
    assert answer.method == "misknow-no-reasoning"
    a = full.prompts["final"][0].messages[-1].content.splitlines()
    b = ablated.prompts["final"][0].messages[-1].content.splitlines()
    assert len(a) == len(b) + 1
    extra = [line for line in a if line not in b]
    assert len(extra) == 1 and extra[0].startswith("keywords from reasoning process: ")


def _spec_block(figure: str) -> str:
    text = SPEC.read_text(encoding="utf-8")
    start = text.index(f"**{figure}")
    body = text[start:].split("```\n", 1)[1].split("\n```", 1)[0]
    return body


@pytest.mark.skipif(not SPEC.is_file(), reason="the checklist is not beside the project")
@pytest.mark.parametrize("figure,system,user,slots", [
    ("Fig. 4", prompts.FIG4_SYSTEM, prompts.FIG4_USER,
     {"{few-shot examples}": prompts.FIG4_EXAMPLES, "{user query}": "{question}",
      "{retrieved contexts}": "{contexts}"}),
    ("Fig. 5", prompts.FIG5_SYSTEM, prompts.FIG5_USER,
     {"{one-shot example}": prompts.FIG5_EXAMPLE, "{retrieved contexts}": "{contexts}",
      "{user query}": "{question}",
      "Additional knowledge about {missing knowledge}\nkeywords from reasoning process: "
      "{reasoning content}\n{retrieved missing knowledge contexts}": "{missing_block}"}),
])
def test_prompts_are_the_papers_apart_from_their_slots(figure, system, user, slots):
    spec = _spec_block(figure)
    for theirs, ours in slots.items():
        spec = spec.replace(theirs, ours)
    spec_system, spec_user = re.split(r"\n?<!user!>\n", spec.removeprefix("<!system>\n"))
    assert system == spec_system.strip("\n")
    if figure == "Fig. 4":  # the figure stops at the heading; the answer slot follows it
        spec_user += "\n{first_answer}"
    assert user == spec_user.strip("\n")


@pytest.mark.skipif(not SPEC.is_file(), reason="the checklist is not beside the project")
def test_missing_block_lines_are_the_figure_lines():
    assert prompts.MISSING_LINE.replace("{missing}", "{missing knowledge}") in \
        _spec_block("Fig. 5")
    assert prompts.REASONING_LINE.replace("{reasoning}", "{reasoning content}") in \
        _spec_block("Fig. 5")


def test_judgment_model_reads_weak_values():
    j = Judgment.model_validate({"judge": "Missing", "query": "q one",
                                 "missing_knowledge": None, "thought": ["a", "b"]})
    assert j.judge is True and j.query == ["q one"] and j.missing_knowledge == []
    assert j.thought == "a b"
    assert Judgment.model_validate({"query": []}).judge is False
    with pytest.raises(ValueError):
        Judgment.model_validate({"judge": "maybe"})


def test_std_rag_one_round_and_two_way(retriever):
    script = Script()
    one = run(StdRAG(LM(FakeLLM(respond=script)), retriever, k=4, kbs=["wiki"]))
    assert retrievals(one) == [(QUESTION, "wiki", 4)]
    assert [e.chunk_id for e in one.evidence] == one.retrieval_rounds[0] and one.evidence
    two = run(StdRAG(LM(FakeLLM(respond=script)), retriever, k=4, kbs=["wiki", "qa"]))
    assert retrievals(two) == [(QUESTION, "wiki", 2), (QUESTION, "qa", 2)]
    assert [role(r) for r in script.prompts["first"]] == ["first", "first"]
    # STD-RAG's prompt is misknow's first-round prompt
    first_misknow = Script()
    run(misknow(retriever, first_misknow, kb1="wiki", kb2="qa"))
    assert first_misknow.prompts["first"][0].messages[0] == script.prompts["first"][0].messages[0]


def test_registry_options_and_reasoner_role(retriever):
    from quaderno.errors import ConfigError
    lm, reasoner = LM(FakeLLM(respond=Script())), LM(FakeLLM(respond=Script()))
    method = make_method("misknow", lm, retriever, {"kb1": "wiki", "kb2": "qa"},
                         roles={"reasoner": reasoner})
    assert method.reasoner is reasoner and method.k == 4
    assert make_method("misknow", lm, retriever).reasoner is lm
    with pytest.raises(ConfigError, match="K/2|multiple of 2"):
        make_method("misknow", lm, retriever, {"k": 3})
    with pytest.raises(ConfigError, match="has no 'reasoner' LLM role"):
        make_method("pager", lm, retriever, roles={"reasoner": reasoner})
    with pytest.raises(ConfigError, match="does not split evenly"):
        make_method("std-rag", lm, retriever, {"k": 3, "kbs": ["wiki", "qa"]})


def test_reasoning_comes_back_from_a_real_http_server():
    """reasoning_content (DeepSeek-R1, vLLM) and <think> blocks reach StepResult.reasoning."""
    from quaderno.llm.openai_http import OpenAIChatLLM
    from quaderno.llm.testing import FakeOpenAIServer
    from quaderno.methods.misknow.steps import REASONER

    replies = iter([
        {"content": '```json\n{"judge": false}\n```', "reasoning_content": "R1 weighs it"},
        '<think>qwen weighs it</think>\n```json\n{"judge": true, "query": ["q"]}\n```',
    ])
    with FakeOpenAIServer(reply=lambda body: next(replies)) as server:
        lm = LM(OpenAIChatLLM("fake-model", server.url, structured="none"))
        first = asyncio.run(REASONER.run(lm, question="q", contexts="c", first_answer="a"))
        second = asyncio.run(REASONER.run(lm, question="q", contexts="c", first_answer="a"))
    assert first.reasoning == "R1 weighs it" and first.value.judge is False
    assert second.reasoning == "qwen weighs it" and second.value.query == ["q"]
    assert "<think>" not in second.raw


def test_reasoner_config_precedence_and_inheritance(tmp_path):
    from quaderno.llm.config import LLMConfig, resolve_role
    main = LLMConfig(backend="openai", model="reader", base_url="http://reader:8000/v1",
                     temperature=0.0, max_concurrency=3)
    assert resolve_role("reasoner", main, {}, env={}) is None  # nobody names it
    conf = tmp_path / "config.toml"
    conf.write_text('[reasoner]\nmodel = "from-file"\nbase_url = "http://r1:9000/v1"\n')
    cfg = resolve_role("reasoner", main, {}, env={}, config_path=conf)
    assert (cfg.model, cfg.base_url, cfg.max_concurrency) == ("from-file",
                                                              "http://r1:9000/v1", 3)
    env = {"QUADERNO_REASONER_MODEL": "from-env"}
    assert resolve_role("reasoner", main, {}, env=env, config_path=conf).model == "from-env"
    flags = {"model": "from-flag", "base_url": None}
    got = resolve_role("reasoner", main, flags, env=env, config_path=conf)
    assert got.model == "from-flag" and got.base_url == "http://r1:9000/v1"
    assert resolve_role("reasoner", main, {"model": "reader"}, env={}) is None  # the same LLM
    from quaderno.errors import ConfigError
    with pytest.raises(ConfigError, match="--reasoner-model"):
        resolve_role("reasoner", LLMConfig(), {"backend": "openai"}, env={})


def test_cli_ask_misknow_with_a_reasoner_on_another_server(tmp_path, retriever):
    from typer.testing import CliRunner

    from quaderno.cli.main import app
    from quaderno.llm.testing import FakeOpenAIServer
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path / "home")
    ws.add_kb("wiki", PASSAGES)
    ws.add_kb("qa", PAIRS, kind=KBKind.qa_pair)
    for kb in ("wiki", "qa"):
        ws.build_index(kb, embedder=None)
    reader_script, reasoner_script = Script(), Script()
    with FakeOpenAIServer(reply=lambda b: reader_script(ChatRequest.of(b["messages"]))) as r, \
            FakeOpenAIServer(reply=lambda b: {"content": reasoner_script(
                ChatRequest.of(b["messages"])), "reasoning_content": "R1 says: count"},
                models=("r1",)) as t:
        res = CliRunner().invoke(app, [
            "ask", QUESTION, "--method", "misknow", "--kb", "wiki", "--kb", "qa",
            "--opt", "kb1=wiki", "--opt", "kb2=qa", "--json", "--no-cache",
            "--llm", "openai", "--model", "fake-model", "--base-url", r.url,
            "--reasoner-model", "r1", "--reasoner-base-url", t.url, "--home", str(ws.root)])
        assert res.exit_code == 0, res.output
        data = json.loads(res.output)
        assert data["answer"] == "Bob Pettit, Kobe Bryant"
        assert data["details"]["reasoning_source"] == "reasoning_content"
        assert [role(x) for x in reader_script.prompts["first"] + reader_script.prompts["final"]]
        assert reader_script.prompts["judge"] == [] and len(reasoner_script.prompts["judge"]) == 1
        assert [req["body"]["model"] for req in t.requests] == ["r1"]
        bad = CliRunner().invoke(app, ["ask", QUESTION, "--method", "pager", "--kb", "wiki",
                                       "--reasoner-model", "r1", "--home", str(ws.root)])
        assert bad.exit_code == 2 and "has no reasoner" in bad.output
