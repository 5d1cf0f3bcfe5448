"""StructRAG as its official pipeline runs it (Li-Z-Q/StructRAG main.py, router.py,
structurizer.py, utilizer.py): route by substring in the official order; one structurize call
per document (none for chunks); the info is each output's first line cut at 128 characters;
one extract call per sub-question over the whole structure (per document for chunks); the
merge reads "Subquery: … Retrieval results: …" blocks; quaderno reads the span from it."""

from __future__ import annotations

import asyncio

import pytest

from fake_retriever import FakeRetriever
from quaderno.errors import ConfigError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.methods.registry import make_method
from quaderno.methods.structrag import StructRAG, info_line, read_route, sub_questions

QUESTION = "Which was founded first, Varnholt University or Kessel College?"
DOCS = [("Varnholt University", "Varnholt University was founded in 1874 in Arden."),
        ("Kessel College", "Kessel College opened its doors in 1902."),
        ("Arden", "Arden is a river town.")]


def fake_docs() -> FakeRetriever:
    return FakeRetriever(lambda q, n, k: [(f"d{i}", x, t) for i, (t, x) in enumerate(DOCS)])


class Player:
    """Plays StructRAG's roles by reading the prompt, logging each role."""

    def __init__(self, route="I would use a Table here.", decomposition=None):
        self.route = route
        self.decomposition = decomposition or ("When was Varnholt University founded?\n\n"
                                               "When was Kessel College founded?\n")
        self.log: list[str] = []
        self.prompts: dict[str, list[str]] = {}

    def _note(self, role, text):
        self.log.append(role)
        self.prompts.setdefault(role, []).append(text)

    def __call__(self, request):
        text = request.messages[-1].content
        if text.startswith("To answer a question from documents"):
            self._note("route", text)
            return self.route
        if "extract the complete tables" in text:
            self._note("table", text)
            title = text.split("Document: ", 1)[1].split("\n", 1)[0]
            year = "1874" if "Varnholt" in title else "1902" if "Kessel" in title else "-"
            return f"| {title} | founded {year} |" + "x" * 200 + "\n| more rows |"
        if text.startswith("Break the question below"):
            self._note("decompose", text)
            return self.decomposition
        if text.startswith("Below are tables"):
            self._note("extract", text)
            return "Varnholt 1874; Kessel 1902"
        if text.startswith("Answer the questions from the document."):
            self._note("extract_chunk", text)
            return "founded " + ("1874" if "Varnholt" in text.split("Document:")[1] else "?")
        if text.startswith("Answer the question from the retrieval results"):
            self._note("merge", text)
            return "Varnholt University was founded in 1874, before Kessel College (1902)."
        if "final answer inside <answer></answer>" in text:
            self._note("answer", text)
            return "<answer>Varnholt University</answer>"
        raise AssertionError(f"unexpected prompt: {text[:160]}")


def run(player, **options):
    docs = fake_docs()
    method = StructRAG(LM(FakeLLM(respond=player)), docs, k=3, **options)
    return asyncio.run(method.answer(QUESTION)), docs


def test_a_table_route_structurizes_each_document_then_filters_per_sub_question():
    player = Player()
    answer, docs = run(player)
    # one retrieval with the question; the router, one table per document, the decomposition,
    # one filter call per non-blank sub-question, the merge, the span
    assert docs.queries == [QUESTION]
    assert player.log == ["route", "table", "table", "table", "decompose", "extract",
                          "extract", "merge", "answer"]
    assert answer.answer == "Varnholt University"
    d = answer.details
    assert d.structure == "table"
    assert d.subqueries == ["When was Varnholt University founded?",
                            "When was Kessel College founded?"]
    # the router saw the titles of the retrieved documents
    assert '"Varnholt University", "Kessel College", "Arden"' in player.prompts["route"][0]
    # the decomposer saw the info: each table's first line cut at 128 characters
    first = "| Varnholt University | founded 1874 |" + "x" * 200
    assert first[:128] in player.prompts["decompose"][0]
    assert first[:129] not in player.prompts["decompose"][0]
    assert "| more rows |" not in player.prompts["decompose"][0]
    # each filter call reads every table, numbered, under its document's title, and its own
    # sub-question
    for prompt, sub in zip(player.prompts["extract"], d.subqueries, strict=True):
        assert "Table 1:\nVarnholt University: | Varnholt" in prompt
        assert "Table 3:\nArden: |" in prompt
        assert prompt.endswith(f"Query: {sub}\n\nOutput:")
    # the info is every table's first line, one after another
    assert first[:128] + "| Kessel College | founded 1902 |" in player.prompts["decompose"][0]
    # the merge reads one block per sub-question
    merge = player.prompts["merge"][0]
    assert ("Subquery: When was Kessel College founded?\nRetrieval results:\n"
            "Varnholt 1874; Kessel 1902") in merge
    assert answer.context.startswith("Varnholt University was founded in 1874")
    assert [e.chunk_id for e in answer.evidence] == ["d0", "d1", "d2"]


def test_a_chunk_route_reads_each_document_against_all_sub_questions_without_building():
    player = Player(route="Chunks, since one passage answers it.")
    answer, _ = run(player)
    assert player.log == ["route", "decompose", "extract_chunk", "extract_chunk",
                          "extract_chunk", "merge", "answer"]
    # the info is the titles; every document is asked all the sub-questions at once
    assert "Varnholt University Kessel College Arden" in player.prompts["decompose"][0]
    assert all("When was Varnholt University founded?\nWhen was Kessel College founded?"
               in p for p in player.prompts["extract_chunk"])
    merge = player.prompts["merge"][0]
    assert f"Subquery: {QUESTION}\nRetrieval results:\n" in merge
    assert "Retrieval result for Varnholt University: founded 1874" in merge
    assert answer.details.structure == "chunk" and answer.details.structures[2] == (
        "Arden: Arden is a river town.")


def test_the_router_reply_is_read_in_the_official_order():
    assert read_route("a graph or a table") == "table"  # table is looked for first
    assert read_route("GRAPH.") == "graph"
    assert read_route("an algorithm, then a catalogue") == "algorithm"
    assert read_route("Catalogue") == "catalogue"
    assert read_route("chunk") == "chunk"
    assert read_route("I cannot tell") == "chunk"
    # whole words: "suitable" and "notable" are not "table"
    assert read_route("Chunks are most suitable here") == "chunk"
    assert read_route("a notable graph") == "graph"
    assert read_route("Tables.") == "table"


def test_a_fixed_route_skips_the_router():
    player = Player()
    answer, _ = run(player, route="chunk")
    assert "route" not in player.log and answer.details.structure == "chunk"


def test_sub_questions_drop_blank_lines_and_are_bounded():
    assert sub_questions("a?\n\n  \nb?\nc?\n", "q", 2) == ["a?", "b?"]
    assert sub_questions("\n \n", "the question", 6) == ["the question"]
    player = Player(decomposition="\n".join(f"sub {i}?" for i in range(9)))
    answer, _ = run(player, max_subqueries=3)
    assert answer.details.subqueries == ["sub 0?", "sub 1?", "sub 2?"]
    assert player.log.count("extract") == 3


def test_info_line_is_the_first_line_at_most_128_characters():
    assert info_line("short\nsecond") == "short"
    assert info_line("y" * 300) == "y" * 128


def test_options_are_validated_by_the_registry_naming_the_bad_value():
    lm = LM(FakeLLM(echo=True))
    with pytest.raises(ConfigError, match="route"):
        make_method("structrag", lm, fake_docs(), {"route": "tree"})
    with pytest.raises(ConfigError, match="max_subqueries"):
        StructRAG(lm, fake_docs(), max_subqueries=0)
    method = make_method("structrag", lm, fake_docs(), {"route": "graph", "k": 2})
    assert (method.route, method.k) == ("graph", 2)


def test_a_graph_route_keeps_each_sub_question_block_apart():
    def reply(request):
        text = request.messages[-1].content
        if text.startswith("To answer"):
            return "graph"
        if "extract the triples" in text:
            assert 'The documents are titled: "Varnholt University", "Kessel College"' in text
            return '{"head": "Varnholt University", "relation": "founded", "tail": ["1874"]}'
        if text.startswith("Break the question"):
            return "Founding of Varnholt?\nFounding of Kessel?"
        if text.startswith("Below are triples"):
            return "the Varnholt triple"
        if text.startswith("Answer the question from the retrieval results"):
            assert "Subquery: Founding of Varnholt?\nRetrieval results:\nthe Varnholt" in text
            assert "Subquery: Founding of Kessel?" in text
            return "Varnholt University, 1874."
        return "<answer>Varnholt University</answer>"

    answer = asyncio.run(StructRAG(LM(FakeLLM(respond=reply)), fake_docs(), k=2).answer(QUESTION))
    assert answer.answer == "Varnholt University"
    assert answer.details.structures[0].startswith('Varnholt University: {"head"')


def catalogue_player(log):
    def reply(request):
        text = request.messages[0].content  # a re-asked step: still its own prompt
        if text.startswith("To answer"):
            log.append("route")
            return "a Catalogue"
        if "hierarchical summary" in text:
            log.append("catalogue")
            return "1. Founding\n(1) details"
        if text.startswith("Break the question"):
            return "First?\nSecond?"
        if text.startswith("Below are catalogues"):
            log.append("extract")
            return "" if "Query: Second?" in text else "found for the first"  # "" fails
        if text.startswith("Answer the question from the retrieval results"):
            log.append(text)
            return ""  # an unusable merge: the knowledge itself goes on
        return "<answer>Varnholt University</answer>"
    return reply


def test_a_catalogue_merge_is_one_block_under_the_question_and_failed_calls_add_nothing():
    log = []
    method = StructRAG(LM(FakeLLM(respond=catalogue_player(log))), fake_docs(), k=2)
    answer = asyncio.run(method.answer(QUESTION))
    assert log[:4] == ["route", "catalogue", "catalogue", "extract"]
    assert answer.details.structure == "catalogue" and answer.details.route_reply == "a Catalogue"
    assert answer.details.info == "1. Founding1. Founding"  # first lines, no separator
    merge = log[-1]
    assert f"Subquery: {QUESTION}\nRetrieval results:\nfound for the first" in merge
    # the failed call for Second? adds nothing, not even an empty line
    assert answer.details.knowledge == (f"Subquery: {QUESTION}\nRetrieval results:\n"
                                        "found for the first")
    assert "Subquery: First?" not in merge
    assert "Table 1" not in merge and merge.count("1. Founding") == 0  # filtered, not pasted
    # the failed merge: the knowledge is the context the span step read
    assert answer.context.startswith(f"Subquery: {QUESTION}")
    assert any("structrag.merge" in f for f in answer.trace.fallbacks)
    assert any("structrag.extract" in f for f in answer.trace.fallbacks)


def test_an_unusable_router_reply_falls_back_to_chunks_and_untitled_documents_go_by_id():
    seen = []

    def reply(request):
        text = request.messages[0].content  # a re-asked step: still its own prompt
        seen.append(text)
        if text.startswith("To answer"):
            return ""
        if text.startswith("Answer the questions from the document."):
            return "nothing"
        if text.startswith("Break the question"):
            return "One?"
        if text.startswith("Answer the question from the retrieval results"):
            return "merged"
        return "<answer>x</answer>"

    untitled = FakeRetriever(lambda q, n, k: [("c7", "Some text.", ""), ("c8", "More.", "")])
    answer = asyncio.run(StructRAG(LM(FakeLLM(respond=reply)), untitled).answer(QUESTION))
    assert '"c7", "c8"' in seen[0]
    assert answer.details.structure == "chunk" and answer.details.route_reply == "chunk"
    assert answer.details.structures == ["c7: Some text.", "c8: More."]
    assert any("structrag.route" in f for f in answer.trace.fallbacks)
    assert "Retrieval result for c8: nothing" in answer.details.knowledge


def test_without_documents_only_the_merge_and_the_answer_run():
    steps = []

    def reply(request):
        text = request.messages[-1].content
        steps.append(text.split("\n", 1)[0][:30])
        return "I do not know." if "retrieval results" in text else "<answer>unknown</answer>"

    empty = FakeRetriever(lambda q, n, k: [])
    answer = asyncio.run(StructRAG(LM(FakeLLM(respond=reply)), empty, route="table")
                         .answer(QUESTION))
    assert len(steps) == 2 and answer.details.structure == "none"
    assert answer.details.knowledge == "(no documents were retrieved)"


@pytest.mark.parametrize("route", ["chunk", "table"])
def test_a_failed_extract_call_leaves_no_empty_result_in_the_knowledge(route):
    def reply(request):
        text = request.messages[0].content  # a re-asked step: still its own prompt
        if "extract the complete tables" in text:
            return "| a | b |"
        if text.startswith("Break the question"):
            return "First?\nSecond?"
        if text.startswith("Answer the questions from the document."):  # Kessel's fails
            return "" if "Document: Kessel" in text else "found in this one"
        if text.startswith("Below are tables"):
            return "" if "Query: Second?" in text else "found for the first"
        if text.startswith("Answer the question from the retrieval results"):
            return "merged"
        return "<answer>x</answer>"

    answer = asyncio.run(StructRAG(LM(FakeLLM(respond=reply)), fake_docs(), k=2, route=route)
                         .answer(QUESTION))
    knowledge = answer.details.knowledge
    assert any(f.startswith("structrag.extract") for f in answer.trace.fallbacks)
    if route == "chunk":
        assert knowledge == (f"Subquery: {QUESTION}\nRetrieval results:\n"
                             "Retrieval result for Varnholt University: found in this one")
    else:
        assert knowledge == "Subquery: First?\nRetrieval results:\nfound for the first"
