"""The method platform: typed specs and options, episodes, typed details, trace structure,
PAGER's splice as a pure function."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from typer.testing import CliRunner

from method_contract import CHUNKS, QUESTION, ListRetriever
from quaderno.cli.main import app
from quaderno.errors import ConfigError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.llm.parsing import parse_outline
from quaderno.llm.trace import Trace
from quaderno.methods.answer import Answer
from quaderno.methods.details import ChainDetails, NotesDetails, PagerDetails
from quaderno.methods.episode import Episode
from quaderno.methods.page import Page, Section
from quaderno.methods.pager import splice
from quaderno.methods.registry import METHODS, get_spec, make_method, parse_opts
from quaderno.methods.spec import MethodOptions, MethodSpec

LM_ECHO = LM(FakeLLM(echo=True))


# -- specs and options ---------------------------------------------------------------------
def test_unknown_option_names_the_key_and_the_allowed_ones():
    with pytest.raises(ConfigError) as exc:
        make_method("pager", LM_ECHO, ListRetriever(CHUNKS), {"max_iter": 3})
    assert "'max_iter'" in str(exc.value) and "max_iters" in str(exc.value)
    assert "k, max_iters, max_sections, fill_mode" in str(exc.value)


def test_a_method_without_options_refuses_any():
    # vanilla-llm used to drop every option silently
    with pytest.raises(ConfigError, match=r"'vanilla-llm' has no option 'k'.*\(none\)"):
        make_method("vanilla-llm", LM_ECHO, None, {"k": 3})


def test_ill_typed_and_out_of_range_options_are_config_errors():
    with pytest.raises(ConfigError, match=r"k='many'"):
        make_method("vanilla-rag", LM_ECHO, ListRetriever(CHUNKS), {"k": "many"})
    with pytest.raises(ConfigError, match=r"max_iters=0.*greater than or equal to 1"):
        make_method("pager", LM_ECHO, ListRetriever(CHUNKS), {"max_iters": 0})
    with pytest.raises(ConfigError, match="fill_mode"):
        make_method("pager", LM_ECHO, ListRetriever(CHUNKS), {"fill_mode": "patch"})


def test_spec_defaults_make_the_named_variants():
    r = ListRetriever(CHUNKS)
    assert make_method("pager-section", LM_ECHO, r).fill_mode == "section"
    assert make_method("pager", LM_ECHO, r).fill_mode == "rewrite"
    assert make_method("pager-section", LM_ECHO, r, {"max_iters": 2}).max_iters == 2
    schema = get_spec("pager-section").options_schema()
    assert schema["properties"]["fill_mode"]["default"] == "section"
    assert schema["additionalProperties"] is False


def test_every_option_is_typed_defaulted_and_described():
    for spec in METHODS.values():
        for row in spec.option_rows():
            assert row["description"], (spec.name, row["name"])
            assert not row["required"], (spec.name, row["name"])
        spec.validate({})  # the defaults are valid
        assert spec.paper and spec.summary


def test_registry_refuses_duplicates_and_bad_specs():
    spec = METHODS["vanilla-llm"]
    with pytest.raises(ConfigError, match="registered twice"):
        METHODS.with_specs(spec)
    with pytest.raises(ConfigError, match="unknown options"):
        MethodSpec("x", spec.factory, MethodOptions, False, "p", "s", defaults={"k": 1})
    with pytest.raises(ConfigError, match="retrieves, so its options need k"):
        MethodSpec("x", spec.factory, MethodOptions, True, "p", "s")
    with pytest.raises(ConfigError, match="unknown method 'nope'.*quaderno methods"):
        get_spec("nope")


def test_parse_opts_reads_json_values_and_names_a_bad_pair():
    assert parse_opts(["k=3", "fill-mode=section", "flag=true", "xs=[1, 2]", "t=a=b"]) == {
        "k": 3, "fill_mode": "section", "flag": True, "xs": [1, 2], "t": "a=b"}
    with pytest.raises(ConfigError, match="key=value, got 'k'"):
        parse_opts(["k"])


def test_no_method_name_is_tested_by_prefix_outside_the_registry():
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "quaderno"
    offenders = [str(p) for p in root.rglob("*.py") if 'startswith("pager' in p.read_text()]
    assert offenders == []


# -- episodes --------------------------------------------------------------------------------
class SlowRetriever(ListRetriever):
    def retrieve(self, query, k=5):
        time.sleep(0.3)
        self.thread = threading.current_thread()
        return super().retrieve(query, k)


def test_episode_retrieval_runs_off_the_event_loop():
    retriever = SlowRetriever(CHUNKS)
    episode = Episode(QUESTION, method="m", lm=LM_ECHO, retriever=retriever)
    ticks: list[float] = []

    async def ticker():
        for _ in range(10):
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.02)

    async def main():
        t0 = time.perf_counter()
        hits, _ = await asyncio.gather(episode.retrieve("q", 2), ticker())
        return hits, t0

    hits, t0 = asyncio.run(main())
    assert len(hits) == 2
    assert retriever.thread is not threading.main_thread()
    # the loop kept turning while the retriever slept 0.3 s
    assert sum(t < t0 + 0.25 for t in ticks) >= 5


def test_episode_records_provenance_and_builds_the_answer():
    episode = Episode(QUESTION, method="m", lm=LM_ECHO, retriever=ListRetriever(CHUNKS))
    asyncio.run(episode.retrieve("first query", 2))
    asyncio.run(episode.retrieve("   ", 2))  # an empty query retrieves nothing, recorded
    answer = episode.finish("mma", explanation="why", context="ctx",
                            details=ChainDetails(steps=["a"], queries=["first query"]))
    assert answer.retrieval_rounds == [["f1", "y1"], []]
    assert [(e.chunk_id, e.query, e.kb) for e in answer.evidence] == [
        ("f1", "first query", "kb"), ("y1", "first query", "kb")]
    assert any("returned nothing" in f for f in answer.trace.fallbacks)
    assert [s.name for s in answer.trace.spans] == ["retrieve", "retrieve"]
    assert answer.method == "m" and answer.details.kind == "chain"


def test_episode_retrieves_from_one_named_kb(tmp_path):
    from quaderno.corpus.chunk import Chunk
    from quaderno.workspace import Workspace
    ws = Workspace(tmp_path / "home")
    ws.add_kb("passages", [Chunk(id="p", title="P", text="Fermi built a nuclear reactor.")])
    ws.add_kb("qa", [Chunk(id="q", title="Q", text="Who built a reactor? Fermi built one.")])
    for kb in ("passages", "qa"):
        ws.build_index(kb, embedder=None)
    episode = Episode("reactor", method="m", lm=LM_ECHO,
                      retriever=ws.retriever(["passages", "qa"], mode="bm25"))
    both = asyncio.run(episode.retrieve("Fermi reactor", 4))
    only = asyncio.run(episode.retrieve("Fermi reactor", 4, kb="qa"))
    assert {h.chunk.kb for h in both} == {"passages", "qa"}
    assert [h.chunk.kb for h in only] == ["qa"]
    assert episode.trace.spans[1].inputs["kb"] == "qa"
    with pytest.raises(ConfigError, match="'wiki' is not searched.*passages, qa"):
        asyncio.run(episode.retrieve("x", 1, kb="wiki"))


# -- typed details -----------------------------------------------------------------------------
@pytest.mark.parametrize("details", [
    PagerDetails(page=Page(title="T", sections=[Section(title="A", content="x", filled=True,
                                                        sub_query="q", chunk_ids=["c"]),
                                                Section(title="B")])),
    NotesDetails(notes=["n1", "n2"]),
    ChainDetails(steps=["s"], queries=["q"]),
    None,
])
def test_details_round_trip_with_their_kind(details):
    answer = Answer(question="q", answer="a", method="m", details=details)
    data = json.loads(answer.model_dump_json())
    assert (data["details"] or {}).get("kind") == (details.kind if details else None)
    again = Answer.model_validate(data)
    assert again.details == details and type(again.details) is type(details)
    assert (again.page is not None) == isinstance(details, PagerDetails)


def test_unknown_details_kind_is_refused():
    with pytest.raises(ValueError, match="kind"):
        Answer.model_validate({"question": "q", "answer": "a", "method": "m",
                               "details": {"kind": "mystery"}})


# -- trace structure -------------------------------------------------------------------------------
def test_spans_have_ids_parents_and_calls_name_their_span():
    lm = LM(FakeLLM(echo=True))
    trace = Trace(label="t")

    async def main():
        with trace.span("outer"):
            await lm.complete("one", trace=trace, step="a")

            async def child(i):
                with trace.span(f"child{i}"):
                    await asyncio.sleep(0.01 * (2 - i))
                    await lm.complete(f"c{i}", trace=trace, step=f"c{i}")
            await asyncio.gather(child(0), child(1))
        await lm.complete("outside", trace=trace)

    asyncio.run(main())
    by_name = {s.name: s for s in trace.spans}
    assert [s.id for s in trace.spans] == ["s1", "s2", "s3"]
    assert by_name["outer"].parent is None
    assert by_name["child0"].parent == by_name["child1"].parent == "s1"
    steps = {c.step: c.span_id for c in trace.calls}
    # concurrent children each name their own span, whatever order they finish in
    assert steps == {"a": "s1", "c0": by_name["child0"].id, "c1": by_name["child1"].id,
                     None: None}
    assert trace.depth(by_name["child1"]) == 1
    again = Trace.model_validate_json(trace.model_dump_json())
    assert again.get_span("s2").name == "child0" and again.depth(again.spans[2]) == 1


def test_a_fallback_without_a_span_goes_to_the_open_span():
    trace = Trace()
    with trace.span("outer"):
        with trace.span("inner"):
            trace.fallback("repaired")
    trace.fallback("top-level")
    assert trace.spans[1].notes == ["repaired"] and trace.spans[0].notes == []
    assert trace.fallbacks == ["repaired", "top-level"]


# -- PAGER's splice, directly ----------------------------------------------------------------------
PAGE = Page(title="T", sections=[Section(title="A", content="a text", filled=True),
                                 Section(title="B"), Section(title="C")])


def test_splice_takes_the_target_and_keeps_the_rest():
    got = splice(PAGE, 1, parse_outline("# T\n\n## A\na text\n\n## B\nnew b\n\n## C\n"
                                        "<TO BE FILLED>"))
    assert got.content == "new b" and got.kept == ["A", "C"]
    assert got.damaged == [] and got.appended == [] and not got.renamed


def test_splice_reports_damage_appends_and_renames():
    got = splice(PAGE, 1, parse_outline("# T\n\n## A\nrewritten\n\n## Bee\nnew b\n\n## C\n"
                                        "filled early\n\n## D\n<TO BE FILLED>"))
    assert got.renamed and got.content == "new b"  # taken by position
    assert got.damaged == ["A", "C"] and got.appended == ["D"] and got.kept == []
    dropped = splice(PAGE, 2, parse_outline("# T\n\n## C\nc text"))
    assert dropped.content == "c text" and dropped.damaged == ["A", "B"]
    assert splice(PAGE, 2, parse_outline("# T\n\n## A\na text")).content is None
    assert PAGE.sections[1].filled is False  # the page itself is never changed


# -- the CLI ---------------------------------------------------------------------------------------
def test_cli_methods_lists_every_method_with_options():
    res = CliRunner().invoke(app, ["methods", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [m["name"] for m in data] == list(METHODS)
    pager = next(m for m in data if m["name"] == "pager")
    assert set(pager["options"]["properties"]) == {"k", "max_iters", "max_sections", "fill_mode",
                                                   "fill_retries", "answer_step"}
    assert pager["needs_retrieval"] and "PAGER" in pager["paper"]
    table = CliRunner().invoke(app, ["methods"], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "iter-retgen" in table.output and "fill_mode" in table.output


def test_cli_ask_refuses_a_bad_opt_before_loading_a_model(tmp_path):
    res = CliRunner().invoke(app, ["ask", "q", "--method", "vanilla-rag", "--opt", "depth=3",
                                   "--home", str(tmp_path)])
    assert res.exit_code == 2
    assert "has no option 'depth'" in res.output and "its options: k" in res.output


def test_cli_eval_refuses_an_opt_no_method_has(tmp_path):
    res = CliRunner().invoke(app, ["eval", "--dataset", "x.jsonl", "--method", "vanilla-llm",
                                   "--opt", "k=3", "--home", str(tmp_path)])
    assert res.exit_code == 2 and "option 'k'" in res.output


def test_readme_methods_table_is_the_registry():
    from pathlib import Path

    from quaderno.cli.methods_cmd import markdown_table
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- methods:start", 1)[1].split("-->", 1)[1]
    block = block.split("<!-- methods:end -->", 1)[0].strip()
    assert block == markdown_table()
