"""PAGER, its ablations and the baselines with the fake LLM: every step, variant and bad case."""

from __future__ import annotations

import asyncio
import re

import pytest

from quaderno.corpus.chunk import Chunk
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.parsing import parse_outline
from quaderno.llm.types import ChatRequest
from quaderno.methods.baselines import IRCoT, IterRetGen, VanillaLLM, VanillaRAG
from quaderno.methods.page import Page, Section
from quaderno.methods.pager import Pager, rewrite_grammar
from quaderno.methods.registry import make_method

QUESTION = "What profession do Kazuyuki Fujita and Gilbert Yvel have in common?"
OUTLINE3 = ("Reasoning: we need both careers.\n<OUTLINE>\n# Shared Profession\n\n"
            "## Kazuyuki Fujita\n<TO BE FILLED>\n\n## Gilbert Yvel\n<TO BE FILLED>\n\n"
            "## Common Profession\n<TO BE FILLED>")


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path_factory.mktemp("pager") / "home")
    ws.add_kb("kb", [
        Chunk(id="f1", title="Kazuyuki Fujita", text="Kazuyuki Fujita is a Japanese mixed "
              "martial artist and professional wrestler."),
        Chunk(id="y1", title="Gilbert Yvel", text="Gilbert Yvel is a Dutch mixed martial artist."),
        Chunk(id="p1", title="Pride FC", text="Pride Fighting Championships was a mixed martial "
              "arts organization in Japan."),
        Chunk(id="x1", title="Tomato", text="The tomato is a red fruit."),
    ])
    ws.build_index("kb", embedder=None)
    return ws.retriever("kb", mode="bm25", cache=False)


def user(request: ChatRequest) -> str:
    """The step's prompt (the first user message: a repair re-ask adds two more)."""
    return next(m.content for m in request.messages if m.role == "user")


class Scripted:
    """A fake model that plays PAGER's roles by reading the prompt."""

    def __init__(self, outline: str = OUTLINE3,
                 answer: str = "<answer>mixed martial artist</answer>", rewrite=None,
                 subquery=None) -> None:
        self.outline, self.answer = outline, answer
        self.rewrite, self.subquery = rewrite, subquery
        self.roles: list[str] = []

    def __call__(self, request: ChatRequest) -> str:
        text = user(request)
        if len(request.messages) > 1:
            self.roles.append("repair")
        if "Page Planning Expert" in text:
            self.roles.append("outline")
            return self.outline
        if "question-generation expert" in text:
            self.roles.append("subquery")
            page = text.split("Current page content:\n", 1)[1]
            title = re.search(r"## ([^\n]+)\n<TO BE FILLED>", page)
            return self.subquery(title) if self.subquery else f"Who is {title.group(1)}? (martial)"
        if "Output only the paragraph text" in text:
            self.roles.append("fill_section")
            title = re.search(r'the section titled "([^"]+)"', text).group(1)
            return f"{title} is a mixed martial artist."
        if "professional page content writer" in text:
            self.roles.append("fill_rewrite")
            page = text.split("- Current page:\n", 1)[1].split("\n\nTask Steps:")[0]
            if self.rewrite:
                return self.rewrite(page)
            return re.sub(r"(## ([^\n]+)\n)<TO BE FILLED>", r"\1\2: filled from documents.", page,
                          count=1)
        if "<answer></answer>" in text:
            self.roles.append("answer")
            return self.answer
        if "Refine these documents into a concise summary" in text:
            self.roles.append("summarize")
            return "Fujita and Yvel are mixed martial artists."
        if "reply exactly SUFFICIENT" in text:
            self.roles.append("next_query")
            return "SUFFICIENT"
        raise AssertionError(f"unexpected prompt: {text[:200]}")


def run(method, question=QUESTION):
    return asyncio.run(method.answer(question))


def pager(script, retriever, **kw):
    fake = FakeLLM(respond=script)
    return Pager(LM(fake), retriever, k=2, **kw), fake


def test_iterative_rewrite_fills_every_slot_in_order_with_provenance(retriever):
    script = Scripted()
    method, fake = pager(script, retriever)
    answer = run(method)
    assert script.roles == ["outline"] + ["subquery", "fill_rewrite"] * 3 + ["answer"]
    page = answer.page
    assert page.title == "Shared Profession" and page.complete
    assert [s.title for s in page.sections] == ["Kazuyuki Fujita", "Gilbert Yvel",
                                                "Common Profession"]
    assert page.sections[0].content == "Kazuyuki Fujita: filled from documents."
    assert page.sections[0].sub_query == "Who is Kazuyuki Fujita? (martial)"
    assert page.sections[0].chunk_ids[0] == "f1" and page.sections[1].chunk_ids[0] == "y1"
    assert answer.answer == "mixed martial artist" and answer.method == "pager"
    assert len(answer.retrieval_rounds) == 3 and answer.trace.fallbacks == []
    # the second sub-query saw the first slot filled
    second_subquery = [r for r in fake.requests if "question-generation" in user(r)][1]
    assert "Kazuyuki Fujita: filled from documents." in user(second_subquery)
    assert "<TO BE FILLED>" not in page.render()
    # no section text mentions the answer: the last filled section is named
    assert answer.supporting_sections == ["Common Profession"]


def test_section_mode_generates_fewer_tokens_than_rewrite(retriever):
    rewrite = run(pager(Scripted(), retriever)[0])
    section = run(pager(Scripted(), retriever, fill_mode="section")[0])
    assert section.page.sections[1].content == "Gilbert Yvel is a mixed martial artist."
    assert section.supporting_sections == ["Kazuyuki Fujita", "Gilbert Yvel",
                                           "Common Profession"]
    fill = lambda a, mode: sum(c.usage.completion_tokens for c in a.trace.calls  # noqa: E731
                               if c.step == f"pager.fill_{mode}")
    assert fill(section, "section") < fill(rewrite, "rewrite") / 2
    assert section.method == "pager-section"


def test_max_iters_stops_with_slots_unfilled_and_still_answers(retriever):
    answer = run(pager(Scripted(), retriever, max_iters=2)[0])
    assert [s.filled for s in answer.page.sections] == [True, True, False]
    assert any("max_iters=2" in f for f in answer.trace.fallbacks)
    assert answer.answer == "mixed martial artist"


@pytest.mark.parametrize("outline", ["no headings at all", ""])
def test_outline_without_sections_falls_back_to_one_section(retriever, outline):
    answer = run(pager(Scripted(outline=outline), retriever)[0])
    assert len(answer.page.sections) == 1 and answer.page.complete
    assert answer.page.sections[0].title == f"Answering: {QUESTION}"
    assert any("outline unusable" in f for f in answer.trace.fallbacks)
    assert answer.answer == "mixed martial artist"


def test_single_heading_outline_is_one_section(retriever):
    answer = run(pager(Scripted(outline="# Only a title"), retriever)[0])
    assert [s.title for s in answer.page.sections] == ["Only a title"]
    assert answer.page.complete


def test_outline_with_thirty_sections_is_cut(retriever):
    many = "# T\n" + "".join(f"## Part {i}\n<TO BE FILLED>\n" for i in range(30))
    answer = run(pager(Scripted(outline=many), retriever, max_sections=8, max_iters=20)[0])
    assert len(answer.page.sections) == 8 and answer.page.complete
    assert any("30 sections" in f for f in answer.trace.fallbacks)


def test_prefilled_outline_is_reopened(retriever):
    filled = "# T\n## A\nsome text\n## B\nmore text"
    answer = run(pager(Scripted(outline=filled), retriever)[0])
    assert answer.page.complete and answer.page.sections[0].sub_query is not None
    assert any("re-opened" in f for f in answer.trace.fallbacks)


def test_fill_that_deletes_other_sections_is_spliced(retriever):
    def destroy(page: str) -> str:  # returns only the target section, filled
        title = re.search(r"## ([^\n]+)\n<TO BE FILLED>", page).group(1)
        return f"# New title\n## {title}\n{title} content."
    answer = run(pager(Scripted(rewrite=destroy), retriever)[0])
    assert [s.title for s in answer.page.sections] == ["Kazuyuki Fujita", "Gilbert Yvel",
                                                       "Common Profession"]
    assert answer.page.title == "Shared Profession"
    assert [s.content for s in answer.page.sections] == [
        "Kazuyuki Fujita content.", "Gilbert Yvel content.", "Common Profession content."]
    assert sum("changed other sections" in f for f in answer.trace.fallbacks) == 3


def test_fill_that_appends_sections_like_real_qwen3(retriever):
    def grow(page: str) -> str:
        out = re.sub(r"(## ([^\n]+)\n)<TO BE FILLED>", r"\1\2 text.", page, count=1)
        return out + "\n\n## Conclusion\nAn extra section."
    answer = run(pager(Scripted(rewrite=grow), retriever)[0])
    # the official loop keeps the model's page: the appended section stays (once: later
    # fills append the same title again, which is not a new section)
    assert [s.title for s in answer.page.sections][-1] == "Conclusion"
    assert len(answer.page.sections) == 4
    assert answer.page.sections[-1].filled
    assert answer.page.sections[-1].content == "An extra section."
    assert answer.details.appended == ["Conclusion"] and answer.details.fills == 3
    assert sum("rewrite appended" in f for f in answer.trace.fallbacks) == 3


def test_fill_without_usable_output_uses_retrieved_text(retriever):
    answer = run(pager(Scripted(rewrite=lambda page: "I cannot do that."), retriever)[0])
    first = answer.page.sections[0]
    assert first.filled and "Kazuyuki Fujita is a Japanese mixed martial artist" in first.content
    assert any("filled with the retrieved text" in f for f in answer.trace.fallbacks)


def test_empty_subquery_falls_back_to_title_and_question(retriever):
    answer = run(pager(Scripted(subquery=lambda m: "   "), retriever)[0])
    assert answer.page.sections[0].sub_query == f"Kazuyuki Fujita {QUESTION}"
    assert sum("empty sub-query" in f for f in answer.trace.fallbacks) == 3


def test_answer_without_tag_falls_back_to_first_line(retriever):
    answer = run(pager(Scripted(answer="Mixed martial artist, I believe.\nMore."), retriever)[0])
    assert answer.answer == "Mixed martial artist, I believe."
    assert any("no <answer> tag" in f for f in answer.trace.fallbacks)


def test_retrieval_returning_nothing_is_recorded(retriever):
    answer = run(pager(Scripted(subquery=lambda m: "zzzz qqqq"), retriever)[0])
    assert answer.page.complete and answer.retrieval_rounds == [[], [], []]
    assert sum("returned nothing" in f for f in answer.trace.fallbacks) == 3
    assert answer.answer == "mixed martial artist"


def test_parallel_generates_all_subqueries_before_filling(retriever):
    script = Scripted()
    answer = run(pager(script, retriever, variant="parallel")[0])
    # all sub-queries first, then every slot filled with the Fig. 12 (rewrite) prompt
    assert script.roles == ["outline"] + ["subquery"] * 3 + ["fill_rewrite"] * 3 + ["answer"]
    assert answer.page.complete and len(answer.retrieval_rounds) == 3
    # one context: every fill saw the documents of all three slots' retrievals
    every = sorted({i for r in answer.retrieval_rounds for i in r})
    assert all(sorted(s.chunk_ids) == every for s in answer.page.sections)
    assert [s.sub_query for s in answer.page.sections] == [
        f"Who is {t}? (martial)" for t in ("Kazuyuki Fujita", "Gilbert Yvel", "Common Profession")]
    assert answer.method == "pager-parallel"


def test_max_iters_bounds_every_variant(retriever):
    for variant in ("parallel", "no_iter_retrieval"):
        answer = run(pager(Scripted(), retriever, variant=variant, max_iters=2)[0])
        assert [s.filled for s in answer.page.sections] == [True, True, False], variant
        assert any("max_iters=2" in f for f in answer.trace.fallbacks), variant


def test_without_iterative_retrieval_one_retrieval_for_all_slots(retriever):
    script = Scripted()
    answer = run(pager(script, retriever, variant="no_iter_retrieval")[0])
    assert "subquery" not in script.roles and script.roles.count("fill_rewrite") == 3
    assert len(answer.retrieval_rounds) == 1
    assert len({tuple(s.chunk_ids) for s in answer.page.sections}) == 1


def test_without_outline_summarizes_until_sufficient(retriever):
    script = Scripted()
    answer = run(pager(script, retriever, variant="no_outline")[0])
    assert script.roles == ["summarize", "next_query", "answer"]
    assert answer.page is None and answer.answer == "mixed martial artist"


def test_without_outline_concatenates_one_summary_per_round(retriever):
    """The paper's w/o Initialization: each round's documents summarized on their own, the
    summaries concatenated (not one running note rewritten, which is DeepNote's idea)."""
    rounds = iter(["Who is Gilbert Yvel?", "SUFFICIENT"])
    seen_docs = []

    def reply(request):
        text = request.messages[-1].content
        if "Refine these documents into a concise summary" in text:
            assert "Current notes" not in text  # the round's documents alone
            seen_docs.append(text.split("Retrieved documents:\n", 1)[1][:40])
            return f"Summary {len(seen_docs)}."
        if "reply exactly SUFFICIENT" in text:
            return next(rounds)
        return "<answer>mixed martial artist</answer>"

    answer = run(Pager(LM(FakeLLM(respond=reply)), retriever, k=2, variant="no_outline"))
    assert answer.details.notes == ["Summary 1.", "Summary 2."]
    assert answer.context == "Summary 1.\n\nSummary 2."
    assert len(answer.retrieval_rounds) == 2


def test_baselines(retriever):
    script = Scripted()
    lm = LM(FakeLLM(respond=script))
    assert run(VanillaLLM(lm)).retrieval_rounds == []
    rag = run(VanillaRAG(lm, retriever, k=2))
    assert len(rag.retrieval_rounds) == 1 and rag.answer == "mixed martial artist"
    chain = iter(["Fujita is a fighter.", "Yvel fights too.",
                  "So the answer is: mixed martial artist."])
    ircot_lm = LM(FakeLLM(respond=lambda r: next(chain)))
    ircot = run(IRCoT(ircot_lm, retriever, k=2))
    assert ircot.answer == "mixed martial artist"
    assert len(ircot.retrieval_rounds) == 3  # the question, then one per non-final sentence
    gens = FakeLLM(respond=lambda r: "<answer>mma</answer>")
    itr = run(IterRetGen(LM(gens), retriever, k=2, iterations=3))
    assert len(itr.retrieval_rounds) == 3 and itr.answer == "mma"
    # FlashRAG: the question, then the previous round's short answer
    assert itr.details.queries == [QUESTION, f"{QUESTION} mma", f"{QUESTION} mma"]


def test_every_method_returns_the_context_its_answer_was_generated_from(retriever):
    def answer_prompt(fake):
        return user(next(r for r in reversed(fake.requests) if "<answer>" in user(r)))

    page_method, fake = pager(Scripted(), retriever)
    page_answer = run(page_method)
    assert page_answer.context == page_answer.page.render()
    assert page_answer.context in answer_prompt(fake)
    notes = run(pager(Scripted(), retriever, variant="no_outline")[0])
    assert notes.context == "Fujita and Yvel are mixed martial artists."
    fake = FakeLLM(respond=Scripted())
    rag = run(VanillaRAG(LM(fake), retriever, k=2))
    assert rag.context.startswith("[1] ") and rag.context in answer_prompt(fake)
    assert {e.title for e in rag.evidence} <= set(re.findall(r"\[\d\] ([^\n]+)", rag.context))
    assert run(VanillaLLM(LM(FakeLLM(respond=Scripted())))).context == ""
    gens = FakeLLM(respond=lambda r: "<answer>mma</answer>")
    itr = run(IterRetGen(LM(gens), retriever, k=2, iterations=2))
    assert itr.context and itr.context in user(gens.requests[-1])


def test_registry_and_parameter_errors(retriever):
    from quaderno.errors import ConfigError
    lm = LM(FakeLLM(echo=True))
    with pytest.raises(ConfigError, match="unknown method 'pagerr'"):
        make_method("pagerr", lm, retriever)
    with pytest.raises(ConfigError, match="needs a knowledge base"):
        make_method("pager", lm, None)
    with pytest.raises(ConfigError, match="fill_mode"):
        Pager(lm, retriever, fill_mode="patch")
    with pytest.raises(ConfigError, match="variant"):
        Pager(lm, retriever, variant="magic")


def test_page_renders_paper_markdown_and_rewrite_grammar_fixes_other_sections():
    page = Page(title="T", sections=[Section(title="A", content="done", filled=True),
                                     Section(title="B"), Section(title="C")])
    assert page.render() == "# T\n\n## A\ndone\n\n## B\n<TO BE FILLED>\n\n## C\n<TO BE FILLED>"
    assert parse_outline(page.render()).sections[1].title == "B"
    grammar = rewrite_grammar(page, 1)
    assert grammar.startswith('root ::= "# T\\n\\n## A\\ndone\\n\\n## B\\n" body')
    assert '"\\n\\n## C\\n<TO BE FILLED>"' in grammar


def test_rewrite_with_repeated_section_titles_keeps_each_section(retriever):
    """SmolLM2 often repeats one section title; splicing aligns by position then."""
    repeated = "# T\n" + "".join("## Page Outline\n<TO BE FILLED>\n" for _ in range(3))
    counter = iter(range(100))

    def fill_first(page: str) -> str:
        return re.sub(r"(## [^\n]+\n)<TO BE FILLED>", lambda m: f"{m.group(1)}fill {next(counter)}",
                      page, count=1)

    answer = run(pager(Scripted(outline=repeated, rewrite=fill_first), retriever)[0])
    assert [s.content for s in answer.page.sections] == ["fill 0", "fill 1", "fill 2"]
    assert not [f for f in answer.trace.fallbacks if "changed other sections" in f]
