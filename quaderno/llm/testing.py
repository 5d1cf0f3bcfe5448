"""An OpenAI-compatible HTTP server that runs in-process, for tests and benchmarks.

It speaks ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` over real sockets, so
clients are exercised end to end (no SDK mocks). Behaviour is scripted:

    with FakeOpenAIServer(reply=lambda body: "hi", latency_s=0.05) as server:
        server.script(("status", 429, {"Retry-After": "0.2"}), "reset", ("timeout", 2.0))
        ... OpenAIChatLLM("fake-model", server.url) ...
        server.requests  # every request body and headers, in order

``reply`` may return a dict: the whole assistant message (e.g. with ``reasoning_content``,
as DeepSeek-R1 and vLLM's reasoning parsers send it).

Actions: ``"ok"``, ``("status", code, headers[, error message])``, ``("timeout", seconds)``
(sleep before answering), ``"reset"`` (close the connection with a TCP RST), ``("body", text)`` (a
200 with a raw body). Without a script, ``fail_rate`` of requests answer 500 at random.

``structured`` makes it refuse ``response_format`` the way a real server does (see
:data:`REFUSALS`): ``"any"`` (default) accepts every form; ``"llama-cpp-python"`` answers
``json_schema`` with a 500 (its request validation error, wrapped as an internal error) and
accepts ``{"type": "json_object", "schema": ...}``; ``"none"`` answers any
``response_format`` with a 400, ``"none-422"`` with a 422 (a validating server that forbids
the field). Scripted actions and injected faults come first, as on a real network.
"""

from __future__ import annotations

import json
import random
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from quaderno.errors import ConfigError

Action = str | tuple

_LLAMA_CPP_PYTHON_500 = (
    "1 validation errors:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n")
_NOT_SUPPORTED = "response_format is not supported by this server"
_EXTRA_FORBIDDEN = ("[{'type': 'extra_forbidden', 'loc': ('body', 'response_format'), "
                    "'msg': 'Extra inputs are not permitted'}]")

# server behaviour -> response_format type -> (status, error type, message) of its refusal
REFUSALS: dict[str, dict[str, tuple[int, str, str]]] = {
    "any": {},
    "llama-cpp-python": {"json_schema": (500, "internal_server_error", _LLAMA_CPP_PYTHON_500)},
    "none": {"json_schema": (400, "invalid_request_error", _NOT_SUPPORTED),
             "json_object": (400, "invalid_request_error", _NOT_SUPPORTED)},
    "none-422": {"json_schema": (422, "validation_error", _EXTRA_FORBIDDEN),
                 "json_object": (422, "validation_error", _EXTRA_FORBIDDEN)},
}


def _last_user(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


class FakeOpenAIServer:
    """A scriptable OpenAI-compatible server on 127.0.0.1 (a free port)."""

    def __init__(self, *,
                 reply: Callable[[dict[str, Any]], str | dict[str, Any]] | str | None = None,
                 latency_s: float = 0.0, fail_rate: float = 0.0, seed: int = 0,
                 models: tuple[str, ...] = ("fake-model",), embedding_dim: int = 8,
                 token_logprob: Callable[[str, str], float] | None = None,
                 structured: str = "any") -> None:
        if structured not in REFUSALS:
            raise ConfigError(f"structured must be one of {sorted(REFUSALS)}, got {structured!r}")
        self.reply = reply
        self.structured = structured
        # vLLM's prompt_logprobs: log-probability of each prompt word given the whole prompt
        self.token_logprob = token_logprob or (lambda prompt, token: -1.0)
        self.latency_s = latency_s
        self.fail_rate = fail_rate
        self.models = models
        self.embedding_dim = embedding_dim
        self.requests: list[dict[str, Any]] = []
        self._script: deque[Action] = deque()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.inflight = 0
        self.max_inflight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _prompt_logprobs(self, body: dict[str, Any]) -> dict[str, Any]:
        """A vLLM-shaped reply with ``prompt_logprobs``: one entry per prompt token (None for
        the first), ``{token_id: {logprob, rank, decoded_token}}``; words are the tokens, a
        role marker opens each message, and without ``continue_final_message`` the
        template adds a generation prompt after the last message."""
        tokens: list[str] = []
        for message in body.get("messages", []):
            tokens.append(f"<|{message.get('role')}|>")
            words = str(message.get("content", "")).split()
            tokens += [w if i == 0 else " " + w for i, w in enumerate(words)]
        if not body.get("continue_final_message"):
            tokens.append("<|assistant|>")
        prompt = "".join(tokens)
        entries: list[Any] = [None] + [
            {str(1000 + i): {"logprob": self.token_logprob(prompt, t), "rank": 1,
                             "decoded_token": t}} for i, t in enumerate(tokens[1:], start=1)]
        return {"id": "fake", "object": "chat.completion", "model": body["model"],
                "prompt_logprobs": entries,
                "choices": [{"index": 0, "finish_reason": "length",
                             "message": {"role": "assistant", "content": "x"}}],
                "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1}}

    # -- control ----------------------------------------------------------------------
    def script(self, *actions: Action) -> FakeOpenAIServer:
        self._script.extend(actions)
        return self

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAIServer:
        outer = self

        class Handler(_Handler):
            server_ref = outer

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # clients that time out or reset on purpose: nothing to report

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour --------------------------------------------------------------------
    def _next_action(self) -> Action:
        with self._lock:
            if self._script:
                return self._script.popleft()
            if self.fail_rate and self._rng.random() < self.fail_rate:
                return ("status", 500, {})
        return "ok"

    def _reply_text(self, body: dict[str, Any]) -> str | dict[str, Any]:
        if self.reply is None:
            return _last_user(body)
        if isinstance(self.reply, str):
            return self.reply
        return self.reply(body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per response and no Nagle delay: otherwise every call on loopback waits
    # ~40 ms for a delayed ACK between the header and body segments.
    disable_nagle_algorithm = True
    wbufsize = 1 << 16
    server_ref: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        srv = self.server_ref
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "invalid JSON body"}})
            return
        with srv._lock:
            srv.requests.append({"path": self.path, "body": body,
                                 "headers": {k.lower(): v for k, v in self.headers.items()}})
            srv.inflight += 1
            srv.max_inflight = max(srv.max_inflight, srv.inflight)
        try:
            self._handle(srv, body)
        finally:
            with srv._lock:
                srv.inflight -= 1

    def _handle(self, srv: FakeOpenAIServer, body: dict[str, Any]) -> None:
        action = srv._next_action()
        if action == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if isinstance(action, tuple) and action[0] == "timeout":
            time.sleep(action[1])
        elif srv.latency_s:
            time.sleep(srv.latency_s)
        if isinstance(action, tuple) and action[0] == "status":
            code, headers = action[1], action[2]
            message = action[3] if len(action) > 3 else f"scripted status {code}"
            self._send(code, {"error": {"message": message}}, headers)
            return
        if isinstance(action, tuple) and action[0] == "body":
            self._send(200, action[1].encode())
            return
        if body.get("model") not in srv.models:
            message = f"The model `{body.get('model')}` does not exist."
            self._send(404, {"error": {"message": message}})
            return
        if self.path.endswith("/embeddings"):
            inputs = body.get("input", [])
            inputs = [inputs] if isinstance(inputs, str) else inputs
            data = [{"index": i, "embedding": [float((hash(t) >> s) % 7) - 3 for s in
                                               range(srv.embedding_dim)]}
                    for i, t in enumerate(inputs)]
            self._send(200, {"data": data, "model": body["model"]})
            return
        fmt = body.get("response_format")
        refusal = REFUSALS[srv.structured].get(fmt.get("type")) if isinstance(fmt, dict) else None
        if refusal is not None:
            code, kind, message = refusal
            self._send(code, {"error": {"message": message, "type": kind, "param": None,
                                        "code": None}})
            return
        if body.get("prompt_logprobs") is not None:
            self._send(200, srv._prompt_logprobs(body))
            return
        reply = srv._reply_text(body)
        # a dict reply is the whole message, e.g. {"content": ..., "reasoning_content": ...}
        message = {"role": "assistant", **reply} if isinstance(reply, dict) else {
            "role": "assistant", "content": reply}
        text = str(message.get("content") or "")
        prompt_tokens = sum(len(str(m.get("content", "")).split())
                            for m in body.get("messages", []))
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "message": message}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": [{"token": w, "logprob": -0.5} for w in text.split()]}
        self._send(200, {"id": "fake", "object": "chat.completion", "model": body["model"],
                         "choices": [choice],
                         "usage": {"prompt_tokens": prompt_tokens,
                                   "completion_tokens": len(text.split())}})
