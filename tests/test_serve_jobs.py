"""Jobs with progress: a knowledge base uploaded, added and indexed; an index rebuilt; an
evaluation run with its records and report (table, paired differences, plots)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from quaderno.llm.fake import FakeLLM
from test_serve_api import assert_error, call, client, make_app, make_home, sse

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett", "kilo", "lima")
DOCS = b"\n".join(json.dumps({"id": f"d{i}", "title": f"Doc {w}",
                              "text": f"This document is about {w} and nothing else."}).encode()
                  for i, w in enumerate(WORDS))


@pytest.fixture
def kb_home(tmp_path):  # noqa: ANN001, ANN201
    return make_home(tmp_path / "home")


async def wait_job(c: Any, job_id: str) -> dict[str, Any]:
    for _ in range(600):
        job = (await c.get(f"/v1/jobs/{job_id}")).json()
        if job["state"] in ("succeeded", "failed"):
            return job
        await asyncio.sleep(0.01)
    raise AssertionError(f"job {job_id} did not finish")


def test_upload_builds_a_searchable_kb_with_progress_events(kb_home):
    app = make_app(kb_home)

    async def go() -> None:
        async with client(app) as c:
            res = await c.post("/v1/kbs", data={"name": "docs"},
                               files={"file": ("my docs.jsonl", DOCS)})
            assert res.status_code == 202, res.text
            job = res.json()
            assert job["kind"] == "kb-add" and job["target"] == "docs"
            events = sse((await c.get(f"/v1/jobs/{job['id']}/events")).text)
            assert all(name == "job" for name, _ in events)
            states = [d["state"] for _, d in events]
            assert states[-1] == "succeeded" and len(events) >= 2
            stages = {d["progress"]["stage"] for _, d in events}
            assert stages & {"reading", "indexing", "bm25"}
            final = events[-1][1]
            assert final["result"]["chunks"] == 12 and final["result"]["format"] == "jsonl"
            assert final["result"]["index"]["components"] == ["bm25"]
            kb = (await c.get("/v1/kbs/docs")).json()
            assert kb["sources"] == ["my docs.jsonl"] and kb["indexes"] == ["default"]
            hits = (await c.post("/v1/search", json={"query": "hotel",
                                                     "kbs": ["docs"]})).json()
            assert hits[0]["chunk_id"] == "d7"
            listed = (await c.get("/v1/jobs")).json()
            assert listed[0]["id"] == job["id"]
        assert not list((kb_home / "uploads").iterdir())  # the upload is not kept

    asyncio.run(go())


def test_upload_of_a_text_file_and_replace(kb_home):
    app = make_app(kb_home)

    async def go() -> None:
        async with client(app) as c:
            res = await c.post("/v1/kbs", data={"name": "notes"},
                               files={"file": ("notes.md", b"# Notes\nquaderno keeps notes.")})
            job = await wait_job(c, res.json()["id"])
            assert job["state"] == "succeeded" and job["result"]["format"] == "folder"
            res = await c.post("/v1/kbs", data={"name": "notes", "replace": "true",
                                                "index": "false"},
                               files={"file": ("n.jsonl", DOCS)})
            job = await wait_job(c, res.json()["id"])
            assert job["result"]["chunks"] == 12 and "index" not in job["result"]

    asyncio.run(go())


def test_a_malformed_upload_fails_its_job_with_the_status_and_line(kb_home):
    app = make_app(kb_home)

    async def go() -> None:
        async with client(app) as c:
            res = await c.post("/v1/kbs", data={"name": "bad", "format": "jsonl"},
                               files={"file": ("bad.jsonl", b'{"id": "a", "text": "ok"}\n{oops\n')})
            job = await wait_job(c, res.json()["id"])
            assert job["state"] == "failed"
            assert job["error"]["status"] == 422 and "line 2" in job["error"]["message"]
            assert (await c.get("/v1/kbs/bad")).status_code == 404  # nothing half-written

    asyncio.run(go())


def test_index_build_job_and_one_job_per_kb_at_a_time(kb_home):
    app = make_app(kb_home)

    async def go() -> None:
        async with client(app) as c:
            res = await c.post("/v1/kbs/mma/index", json={"index": "dense",
                                                           "embedder": "hash:64"})
            assert res.status_code == 202
            busy = await c.post("/v1/kbs/mma/index", json={})
            deleting = await c.delete("/v1/kbs/mma")
            job = await wait_job(c, res.json()["id"])
        assert_error(busy, 409, "already working on 'mma'")
        assert_error(deleting, 409, "is working on 'mma'")
        assert job["state"] == "succeeded", job
        assert job["result"]["components"] == ["bm25", "dense"]

    asyncio.run(go())


def test_unknown_job_is_404(kb_home):
    app = make_app(kb_home)
    assert_error(call(app, "GET", "/v1/jobs/nope"), 404, "no job 'nope'")
    assert_error(call(app, "GET", "/v1/jobs/nope/events"), 404)


# -- evaluation runs ------------------------------------------------------------------------
def write_dataset(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mini.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?",
                                          "answer": ["Paris"] if i % 2 else ["Rome"]})
                              for i in range(4)) + "\n", encoding="utf-8")
    return path


def test_eval_run_job_records_and_report(kb_home, tmp_path):
    data = tmp_path / "data"
    write_dataset(data)
    app = make_app(kb_home, FakeLLM(respond=lambda r: "<answer>Paris</answer>"), data_dir=data)

    async def go() -> None:
        async with client(app) as c:
            res = await c.post("/v1/evals", json={"dataset": "mini.jsonl",
                                                  "format": "question-answer",
                                                  "method": "vanilla-llm", "name": "mini"})
            assert res.status_code == 202, res.text
            events = sse((await c.get(f"/v1/jobs/{res.json()['id']}/events")).text)
            final = events[-1][1]
            assert final["state"] == "succeeded", final
            assert final["result"]["n"] == 4 and final["result"]["mean"]["em"] == 0.5
            progress = [d["progress"] for _, d in events if d["progress"]["stage"] == "answering"]
            assert progress[-1] == {"stage": "answering", "done": 4, "total": 4}
            runs = (await c.get("/v1/evals")).json()
            assert [r["name"] for r in runs] == ["mini"] and runs[0]["n"] == 4
            one = (await c.get("/v1/evals/mini")).json()
            assert one["method"] == "vanilla-llm" and one["mean"]["em"] == 0.5
            page = (await c.get("/v1/evals/mini/records", params={"offset": 1,
                                                                  "limit": 2})).json()
            assert page["total"] == 4 and len(page["records"]) == 2
            assert page["records"][0]["prediction"] == "Paris"
            report = (await c.post("/v1/reports", json={"runs": ["mini"],
                                                        "metric": "em"})).json()
            assert report["methods"] == ["vanilla-llm"] and report["cells"] == [[0.5]]
            assert "| vanilla-llm |" in report["markdown"]
            assert len(report["plots"]) == 3
            png = await c.get(report["plots"][0])
            assert png.status_code == 200 and png.headers["content-type"] == "image/png"
            assert png.content[:8] == b"\x89PNG\r\n\x1a\n"
            again = await c.post("/v1/evals", json={"dataset": "mini.jsonl",
                                                    "format": "question-answer",
                                                    "method": "vanilla-llm", "name": "mini"})
            resumed = await wait_job(c, again.json()["id"])
            assert resumed["result"]["n"] == 4  # resumed: nothing asked twice

    asyncio.run(go())


def test_datasets_say_which_files_the_server_has(kb_home, tmp_path):
    from quaderno.eval.datasets import DATASETS

    data = tmp_path / "data"
    (data / "bamboogle").mkdir(parents=True)
    (data / "bamboogle" / "bamboogle_25.json").write_text("[]")
    listed = call(make_app(kb_home, data_dir=data), "GET", "/v1/datasets").json()
    assert [d["name"] for d in listed] == list(DATASETS)
    assert {d["name"] for d in listed if d["available"]} == {"bamboogle"}


def test_eval_requests_are_checked_before_a_job_starts(kb_home, tmp_path):
    data = tmp_path / "data"
    write_dataset(data)
    (tmp_path / "secret.jsonl").write_text('{"question": "q", "answer": "a"}\n')
    app = make_app(kb_home, data_dir=data)
    post = lambda body: call(app, "POST", "/v1/evals", json=body)  # noqa: E731
    assert_error(post({"dataset": "../secret.jsonl", "format": "question-answer",
                       "method": "vanilla-llm"}), 422, "outside the server's data folder")
    assert_error(post({"dataset": "/etc/passwd", "format": "question-answer",
                       "method": "vanilla-llm"}), 422, "outside")
    assert_error(post({"dataset": "nope.jsonl", "format": "question-answer",
                       "method": "vanilla-llm"}), 404, "no dataset file")
    assert_error(post({"dataset": "mini.jsonl", "method": "vanilla-llm"}), 422,
                 "give format")
    assert_error(post({"dataset": "mini.jsonl", "format": "question-answer",
                       "method": "nope"}), 404, "no method")
    assert_error(post({"dataset": "mini.jsonl", "format": "question-answer",
                       "method": "vanilla-llm", "options": {"bogus": 1}}), 422, "bogus")
    assert_error(post({"dataset": "mini.jsonl", "format": "question-answer",
                       "method": "vanilla-rag", "pool": "kb", "kbs": ["nope"]}), 404)
    assert_error(call(app, "GET", "/v1/evals/nope"), 404, "no evaluation run 'nope'")
    assert_error(call(app, "GET", "/v1/evals/nope/records"), 404)
    assert_error(call(app, "POST", "/v1/reports", json={"runs": ["nope"]}), 404)
    assert_error(call(app, "GET", "/v1/reports/abc/plots/scores.png"), 404)
    assert_error(call(app, "GET", "/v1/reports/abc/plots/..%2Fsecret"), 404)
