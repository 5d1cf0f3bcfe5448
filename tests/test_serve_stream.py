"""The step-event stream: a method's spans (opened/closed, with inputs and outputs) and LLM
calls as server-sent events in the order they happen, then the answer; and the trace
listener hook it rests on."""

from __future__ import annotations

import asyncio
import time

import pytest

from quaderno.errors import LLMTimeoutError
from quaderno.llm.fake import FakeLLM
from quaderno.llm.trace import CallRecord, Span, Trace
from test_pager import QUESTION
from test_serve_api import call, make_app, make_home, sse


@pytest.fixture
def kb_home(tmp_path):  # noqa: ANN001, ANN201
    return make_home(tmp_path / "home")


@pytest.fixture
def served(kb_home):  # noqa: ANN001, ANN201 - an app with PAGER's scripted fake LLM
    return make_app(kb_home)


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def span_opened(self, span: Span) -> None:
        self.seen.append(("open", span.name))

    def span_closed(self, span: Span) -> None:
        self.seen.append(("close", f"{span.name}:{span.outputs.get('n')}"))

    def call_recorded(self, call: CallRecord) -> None:
        self.seen.append(("call", f"{call.step}@{call.span_id}"))


def test_trace_listener_sees_spans_and_calls_as_they_happen():
    trace, rec = Trace(), Recorder()
    unsubscribe = trace.subscribe(rec)
    with trace.span("outer") as outer:
        with trace.span("inner") as inner:
            trace.record(CallRecord(step="inner-step", model="m", prompt=[]))
            inner.outputs = {"n": 1}
        outer.outputs = {"n": 2}
    assert rec.seen == [("open", "outer"), ("open", "inner"), ("call", "inner-step@s2"),
                        ("close", "inner:1"), ("close", "outer:2")]
    unsubscribe()
    with trace.span("after"):
        pass
    assert len(rec.seen) == 5  # unsubscribed
    assert "_listeners" not in trace.model_dump_json()  # never serialized


def test_trace_listener_failure_does_not_fail_the_method(caplog):
    class Broken:
        def span_opened(self, span: Span) -> None:
            raise RuntimeError("listener bug")

        span_closed = call_recorded = span_opened

    trace = Trace()
    trace.subscribe(Broken())
    with trace.span("step") as span:
        span.outputs = {"ok": True}
    assert trace.spans[0].outputs == {"ok": True} and "listener bug" in caplog.text


def test_trace_listener_sees_a_failed_span_closed_with_its_error():
    trace, rec = Trace(), Recorder()
    trace.subscribe(rec)
    with pytest.raises(ValueError), trace.span("bad"):
        raise ValueError("boom")
    assert rec.seen[-1] == ("close", "bad:None") and trace.spans[0].error == "ValueError: boom"


def test_stream_carries_pager_steps_in_order_then_the_answer(served):
    res = call(served, "POST", "/v1/ask/stream", json={"question": QUESTION, "k": 2})
    assert res.status_code == 200
    assert res.headers["content-type"].startswith("text/event-stream")
    events = sse(res.text)
    names = [name for name, _ in events]
    assert names[0] == "start" and names[-1] == "answer"
    assert "error" not in names
    spans = [(n, d["name"]) for n, d in events if n in ("span_open", "span_close")]
    # the outline first, then per slot: its sub-query, the retrieval, the fill
    opened = [name for n, name in spans if n == "span_open"]
    assert opened[:4] == ["pager.outline", "pager.subquery", "retrieve", "pager.fill_rewrite"]
    assert opened.count("pager.subquery") == 3 and opened[-1] == "answer"
    # every span closes after it opens, and nothing closes twice
    order = {}
    for i, (n, d) in enumerate(events):
        if n in ("span_open", "span_close"):
            order.setdefault(d["id"], []).append((n, i))
    assert all([k for k, _ in v] == ["span_open", "span_close"] for v in order.values())
    outline = next(d for n, d in events if n == "span_close" and d["name"] == "pager.outline")
    assert "## Gilbert Yvel" in outline["outputs"]["page"]
    sub = next(d for n, d in events if n == "span_close" and d["name"] == "pager.subquery")
    assert sub["outputs"]["sub_query"] == "Who is Kazuyuki Fujita? (martial)"
    retrieved = next(d for n, d in events if n == "span_close" and d["name"] == "retrieve")
    assert retrieved["outputs"]["titles"] == ["Kazuyuki Fujita", "Gilbert Yvel"]
    calls = [d for n, d in events if n == "llm_call"]
    assert len(calls) == 8 and calls[0]["step"] == "pager.outline"
    assert calls[0]["prompt"] is None  # prompts only with trace=true
    answer = events[-1][1]
    assert answer["answer"] == "mixed martial artist" and answer["details"]["kind"] == "pager"
    seq = [int(line.split(": ")[1]) for line in res.text.splitlines() if line.startswith("id:")]
    assert seq == list(range(len(events)))


def test_stream_by_get_for_a_browser_event_source(served):
    from test_serve_api import assert_error

    res = call(served, "GET", "/v1/ask/stream", params={
        "question": QUESTION, "method": "pager", "kbs": ["mma"], "k": 2,
        "options": '{"fill_mode": "section"}'})
    events = sse(res.text)
    assert events[0][0] == "start" and events[-1][0] == "answer"
    assert "pager.fill_section" in [d["name"] for n, d in events if n == "span_open"]
    assert_error(call(served, "GET", "/v1/ask/stream", params={"question": "q",
                                                               "options": "[1]"}),
                 422, "JSON object")
    assert_error(call(served, "GET", "/v1/ask/stream", params={"question": "q",
                                                               "options": "{oops"}),
                 422, "JSON object")
    assert_error(call(served, "GET", "/v1/ask/stream", params={
        "question": "q", "options": '{"fill_mode": 3}'}), 422, "fill_mode")


def test_stream_with_trace_carries_prompts(served):
    events = sse(call(served, "POST", "/v1/ask/stream",
                      json={"question": QUESTION, "k": 2, "trace": True}).text)
    first_call = next(d for n, d in events if n == "llm_call")
    assert "Page Planning Expert" in first_call["prompt"][0]["content"]
    assert events[-1][1]["trace"]["spans"]


def test_stream_of_misknow_shows_judgment_and_rounds(kb_home):
    import json

    def reply(request):  # noqa: ANN001, ANN202
        text = " ".join(m.content for m in request.messages)
        if "missing_knowledge" in text:  # the reasoner's judgment (Fig. 4)
            return json.dumps({"thought": "need Yvel", "judge": True,
                               "missing_knowledge": ["Yvel's job"],
                               "query": ["Gilbert Yvel profession"]})
        return "<answer>mixed martial artist</answer>"

    app = make_app(kb_home, FakeLLM(respond=reply))
    events = sse(call(app, "POST", "/v1/ask/stream",
                      json={"question": QUESTION, "method": "misknow"}).text)
    names = [d["name"] for n, d in events if n == "span_close"]
    assert "misknow.judge" in names and names.count("retrieve") == 2
    judged = next(d for n, d in events if n == "span_close" and d["name"] == "misknow.judge")
    assert judged["outputs"]["judgment"]["query"] == ["Gilbert Yvel profession"]
    final = events[-1][1]
    assert final["details"]["kind"] == "misknow" and final["details"]["path"]


def test_stream_of_gated_question_shows_the_gate_decision(kb_home):
    app = make_app(kb_home, FakeLLM(respond=lambda r: "<answer>Paris</answer>"))
    events = sse(call(app, "POST", "/v1/ask/stream", json={
        "question": "Capital of France?", "method": "vanilla-rag", "gate": "always"}).text)
    gate = next(d for n, d in events if n == "span_close" and d["name"] == "gate")
    assert gate["outputs"]["retrieve"] is True
    assert events[-1][1]["gate"]["retrieve"] is True


def test_stream_ends_with_an_error_event_with_status_when_the_llm_fails(kb_home):
    app = make_app(kb_home, FakeLLM().enqueue(LLMTimeoutError("no answer in 120 s")))
    events = sse(call(app, "POST", "/v1/ask/stream",
                      json={"question": "q", "method": "vanilla-llm"}).text)
    assert events[-1][0] == "error"
    assert events[-1][1]["error"]["status"] == 504
    assert "did not answer in time" in events[-1][1]["error"]["message"]
    assert "120 s" not in events[-1][1]["error"]["message"]  # the LLM's own text: logged
    closed = [d for n, d in events if n == "span_close"]
    assert closed and closed[-1]["error"].startswith("failed")  # that it failed, not why
    traced = sse(call(make_app(kb_home, FakeLLM().enqueue(LLMTimeoutError("no answer in 120 s"))),
                      "POST", "/v1/ask/stream",
                      json={"question": "q", "method": "vanilla-llm", "trace": True}).text)
    closed = [d for n, d in traced if n == "span_close"]  # asked for the trace: the text
    assert closed[-1]["error"].startswith("LLMTimeoutError")


def test_stream_of_an_unexpected_failure_says_500_and_logs_it(kb_home, caplog):
    def broken(request):  # noqa: ANN001, ANN202
        raise RuntimeError("internal detail")

    app = make_app(kb_home, FakeLLM(respond=broken))
    events = sse(call(app, "POST", "/v1/ask/stream",
                      json={"question": "q", "method": "vanilla-llm"}).text)
    error = events[-1][1]["error"]
    assert events[-1][0] == "error" and error["status"] == 500
    assert "internal detail" not in error["message"] and "internal detail" in caplog.text
    # nor in the step events (span_close.error, llm_call.error): only with trace: true
    steps = [d for n, d in events if n in ("span_close", "llm_call")]
    assert steps and all("internal detail" not in str(d.get("error")) for d in steps)


def test_stream_checks_the_request_before_streaming(served):
    res = call(served, "POST", "/v1/ask/stream", json={"question": "q", "kbs": ["nope"]})
    assert res.status_code == 404 and res.json()["error"]["status"] == 404
    res = call(served, "POST", "/v1/ask/stream", json={"question": "q", "method": "nope"})
    assert res.status_code == 404  # an unknown name is a 404, as the error tree maps it


def test_stream_releases_its_slot_when_done(served):
    state = served.state.quaderno

    async def go() -> None:
        from test_serve_api import client

        async with client(served) as c:
            for _ in range(3):  # more than the per-client limit (2), one after another
                res = await c.post("/v1/ask/stream", json={"question": QUESTION, "k": 2})
                assert res.status_code == 200
        assert state.limiter.in_flight == 0

    asyncio.run(go())


def test_stream_cancels_the_method_when_the_client_goes_away(kb_home):
    app = make_app(kb_home, FakeLLM(respond=lambda r: "<answer>x</answer>", latency_s=5))
    state, asker = app.state.quaderno, app.state.asker

    async def go() -> None:
        from quaderno.serve.wire import AskRequest

        events, release = asker.stream(AskRequest(question="q", method="vanilla-llm"), "c1")
        assert state.limiter.in_flight == 1
        first = await events.__anext__()
        assert first.name == "start"
        opened = await asyncio.wait_for(events.__anext__(), 2)
        assert opened.name == "span_open"
        tasks = {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}
        await events.aclose()  # what the response does when the client disconnects
        release()
        await asyncio.sleep(0)
        assert all(t.cancelled() or t.done() for t in tasks)
        assert state.limiter.in_flight == 0

    asyncio.run(go())


def test_a_client_that_hangs_up_frees_its_slot_and_stops_the_method(kb_home):
    import httpx

    from test_serve_openai import running

    fake = FakeLLM(respond=lambda r: "<answer>x</answer>", latency_s=1)
    app = make_app(kb_home, fake)
    limiter = app.state.quaderno.limiter
    with running(app) as url:
        with httpx.stream("POST", f"{url}/v1/ask/stream", timeout=10,
                          json={"question": "q", "method": "vanilla-llm"}) as res:
            assert res.status_code == 200
            in_flight = None
            for line in res.iter_lines():
                if line == "event: span_open":  # the method waits for its LLM call
                    in_flight = limiter.in_flight  # (leaving the loop closes the response)
                    break
            assert in_flight == 1
        t0 = time.perf_counter()  # the connection is closed: the server notices
        while limiter.in_flight and time.perf_counter() - t0 < 0.8:
            time.sleep(0.01)
        assert limiter.in_flight == 0 and time.perf_counter() - t0 < 0.8
        time.sleep(1.2)  # past the LLM's latency: a call left running would be logged
    from quaderno.llm.calllog import CallLog

    assert len(fake.requests) == 1
    assert CallLog(kb_home / "cache" / "llm.sqlite").latest(5) == []  # stopped, not finished


def test_stream_of_docsage_shows_schema_sql_and_rows_with_their_chunks(tmp_path):
    from quaderno.corpus.chunk import Chunk
    from quaderno.workspace import Workspace
    from test_docsage_method import DOCS, Model

    ws = Workspace(tmp_path / "home")
    ws.add_kb("unis", [Chunk(id=f"{d}#0", text=t, title=d) for d, t in DOCS])
    ws.build_index("unis", embedder=None)
    app = make_app(ws.root, FakeLLM(respond=Model()))
    events = sse(call(app, "POST", "/v1/ask/stream", json={
        "question": "Which member institution is the oldest?", "method": "docsage"}).text)
    closed = {d["name"]: d for n, d in events if n == "span_close"}
    assert closed["docsage.ask"]["outputs"]["tables"] == ["institution"]
    assert closed["docsage.sql"]["outputs"]["rows"] == 1
    final = events[-1][1]
    d = final["details"]
    assert final["answer"] == "Varnholt University" and d["kind"] == "docsage"
    assert d["db_schema"]["tables"][0]["name"] == "institution"
    assert d["sql"][-1]["stage"] == "ok" and "FROM institution" in d["sql"][-1]["sql"]
    assert d["result"]["rows"] == [["Varnholt University", 1874]]
    cited = d["result"]["sources"][0][0]["chunk_id"]
    assert cited == "varn#0"
    # the row's source chunk is readable by id (a citation the page can open); ids may
    # hold '#' or '/', so a client quotes them
    from urllib.parse import quote

    chunk = call(app, "GET", f"/v1/kbs/unis/chunks/{quote(cited, safe='')}").json()
    assert "Varnholt University" in chunk["text"]
