"""A real quaderno server on a free loopback port, for the browser tests and the screenshots
(scripts/web_screenshots.py): uvicorn in a thread, a workspace with two small knowledge
bases (one holding an HTML-injection document), one evaluation run, and a scripted fake model
that plays PAGER, missing-knowledge RAG and DocSage by reading its prompts, each call taking
``delay_s`` (awaited: the server stays responsive) so that a page fills visibly slot by slot,
and a pause a test can arm to look at a page half filled, whatever the machine's speed."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from quaderno.corpus.chunk import Chunk
from quaderno.llm.calllog import CallLog
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.serve.app import create_app
from quaderno.serve.settings import ServeSettings
from quaderno.workspace import Workspace
from test_docsage_method import DOCS, Model as DocSageModel
from test_pager import Scripted
from test_serve_api import make_home

XSS = '<img src=x onerror="document.body.dataset.pwned=1">'
PAGER_QUESTION = "What profession do Kazuyuki Fujita and Gilbert Yvel have in common?"
DOCSAGE_QUESTION = "Which institution was founded first?"
# a DocSage question whose synthesis keeps giving a number no result row holds
INVENTING_QUESTION = "How many staff does the oldest institution employ?"
MISKNOW_QUESTION = "What does Gilbert Yvel do for a living?"


class DemoModel:
    """Routes each request to the scripted player of its method."""

    def __init__(self) -> None:
        self.pager = Scripted()
        # the staff column: its number is written "2,300 staff" in its chunk
        self.docsage = DocSageModel(sql="SELECT name, founded, staff FROM institution "
                                        "ORDER BY founded LIMIT 1")
        self.open = threading.Event()  # cleared: the model holds its next call
        self.open.set()
        self._pause_after_fill = False

    @contextmanager
    def paused_after_next_fill(self) -> Iterator[threading.Event]:
        """``with model.paused_after_next_fill() as resume:`` after PAGER's next slot fill
        the model holds every call until ``resume`` is set: a test sees the page with one slot
        filled and the answer still to come. Leaving the block always reopens the model, so a
        failed test cannot hold the calls of the tests after it."""
        self._pause_after_fill = True
        try:
            yield self.open
        finally:
            self._pause_after_fill = False
            self.open.set()

    def __call__(self, request: Any) -> str:
        reply = self._route(request)
        if self._pause_after_fill and self.pager.roles[-1:] == ["fill_rewrite"]:
            self._pause_after_fill = False
            self.open.clear()
        return reply

    def _route(self, request: Any) -> str:
        text = " ".join(m.content for m in request.messages)
        last = request.messages[-1].content
        if last.startswith("Answer the question from the query result") and \
                INVENTING_QUESTION in last:
            return json.dumps({"answer": "9,999 staff", "cited_rows": [1]})
        if last.startswith(("Design the smallest", "Revise this relational schema",
                            "Extract into the tables below", "Write one DuckDB SELECT",
                            "Answer the question from the query result")):
            return self.docsage(request)
        if "missing_knowledge" in text:  # the reasoner's judgment (misknow, Fig. 4)
            return json.dumps({"thought": "The documents name Yvel but not his trade.",
                               "judge": True, "missing_knowledge": ["Gilbert Yvel's profession"],
                               "query": ["Gilbert Yvel profession"]})
        if last.rstrip().endswith("## Answer"):  # misknow's reader (and STD-RAG's)
            return "<answer>mixed martial artist</answer>"
        return self.pager(request)


class PacedFake(FakeLLM):
    """The fake backend waiting, without blocking the server's event loop, while the
    model's gate is closed: at most ``hold_s``, then the call fails (a test that never
    reopens the gate fails, never hangs and never goes on as if it had)."""

    def __init__(self, model: DemoModel, delay_s: float, hold_s: float = 30.0) -> None:
        super().__init__(respond=model, latency_s=delay_s)
        self.model, self.hold_s = model, hold_s

    async def achat(self, request: Any) -> Any:
        deadline = time.monotonic() + self.hold_s
        while not self.model.open.is_set():
            if time.monotonic() >= deadline:
                raise RuntimeError(f"the fake model was held {self.hold_s} s and never "
                                   "released: the test did not set its resume event")
            await asyncio.sleep(0.02)
        return await super().achat(request)


def make_workspace(root: Path) -> Path:
    """The API tests' workspace (the "mma" knowledge base, here with a payload that marks the
    page if it ever runs) and "unis", DocSage's universities."""
    ws = Workspace(make_home(root, xss=XSS))
    ws.add_kb("unis", [Chunk(id=f"{d}#0", text=t, title=d) for d, t in DOCS])
    ws.build_index("unis", embedder=None)
    return ws.root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebServer:
    """``with WebServer(home, data) as url: ...`` — the app served by uvicorn in a thread."""

    def __init__(self, home: Path, data_dir: Path, delay_s: float = 0.0,
                 token: str | None = None, embedded: bool = False) -> None:
        """``embedded``: the configured default LLM (the embedded model, loaded only on a
        first question) instead of the scripted fake."""
        import uvicorn

        self.model = DemoModel()
        lm = None if embedded else LM(PacedFake(self.model, delay_s),
                                      log=CallLog(home / "cache" / "llm.sqlite"))
        app = create_app(ServeSettings(home=home, data_dir=data_dir, token=token), lm=lm)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web test server did not start")
            time.sleep(0.05)
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def write_dataset(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mini.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?",
                                          "answer": ["mixed martial artist"] if i % 2
                                          else ["Rome"]})
                              for i in range(4)) + "\n", encoding="utf-8")
    return path


def make_eval_run(url: str, name: str = "mini") -> None:
    """Run the 4-question evaluation through the API and wait for it (a sync client:
    Playwright's sync API keeps an event loop running in this thread)."""
    with httpx.Client(base_url=url, headers={"X-Quaderno": "1"}) as c:
        res = c.post("/v1/evals", json={"dataset": "mini.jsonl", "format": "question-answer",
                                        "method": "vanilla-llm", "name": name})
        res.raise_for_status()
        job = res.json()
        deadline = time.monotonic() + 120
        while job["state"] not in ("succeeded", "failed") and time.monotonic() < deadline:
            time.sleep(0.1)
            job = c.get(f"/v1/jobs/{job['id']}").json()
        if job["state"] != "succeeded":
            raise RuntimeError(f"the evaluation run did not succeed: {job}")
