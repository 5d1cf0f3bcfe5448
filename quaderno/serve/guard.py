"""Who may call the server and how much at once: the bearer token, questions in flight, and
the headers that keep responses data.

* :class:`BearerAuth` (ASGI middleware): with a token set, every request but
  ``/v1/health`` and the web page's static files must carry
  ``Authorization: Bearer <token>``, compared in constant time.
* :class:`InflightLimiter`: at most N questions answered at once per client address and
  in all; one more is refused at once with a 429 (no queue that grows without bound).
* :class:`DeclaredSizeLimit`: a body whose declared ``Content-Length`` is over its
  route's limit is answered 413 (with the error body) before it is read; a body sent
  without a length is cut off at the same limit by FastAPI's ``max_body_size``.
* :class:`CrossSiteGuard`: a request that changes state (POST, PUT, PATCH, DELETE, and
  ``GET /v1/ask/stream``, which spends model time) must carry what a cross-site HTML form
  cannot send without a CORS preflight (which this server never grants): the bearer token,
  a JSON ``Content-Type``, or the header ``X-Quaderno: 1`` (required for multipart
  uploads). With Starlette's ``TrustedHostMiddleware`` (DNS rebinding) it keeps a web page
  on another site from driving a tokenless loopback server.
* :class:`DataHeaders`: ``X-Content-Type-Options: nosniff`` and ``Cache-Control:
  no-store`` on every response, so JSON holding document or model text is never sniffed
  into HTML by a browser, nor cached.
"""

from __future__ import annotations

import contextlib
import hmac
from collections import Counter
from collections.abc import Callable, Iterator

from pydantic import SecretStr
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quaderno.errors import ConfigError
from quaderno.serve.errors import (BodyTooLargeError, ErrorBody, ErrorInfo, ForbiddenError,
                                   TooManyRequestsError, UnauthorizedError, error_info)

OPEN_PATHS = ("/v1/health",)
# the web page and its static files hold no data (they read /v1 with the token): open
PAGE_PATHS = ("/",)
PAGE_PREFIX = "/web/"


def is_open(path: str) -> bool:
    """Whether ``path`` is served without the bearer token."""
    return path in OPEN_PATHS or path in PAGE_PATHS or path.startswith(PAGE_PREFIX)


def token_matches(given: str, token: SecretStr) -> bool:
    """Constant-time comparison of a presented token with the server's."""
    return hmac.compare_digest(given.encode("utf-8"), token.get_secret_value().encode("utf-8"))


class BearerAuth:
    """Refuse (401) a request without the server's bearer token."""

    def __init__(self, app: ASGIApp, token: SecretStr) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or is_open(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and given and token_matches(given.strip(), self.token):
            await self.app(scope, receive, send)
            return
        why = ("no bearer token was sent" if not header
               else "the bearer token is not this server's")
        await _send_error(send, error_info(UnauthorizedError(f"unauthorized: {why}")),
                          [(b"www-authenticate", b"Bearer")])


CUSTOM_HEADER = "x-quaderno"
UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# GET routes that spend model time: protected as if they changed state
COSTLY_GETS = ("/v1/ask/stream",)


class CrossSiteGuard:
    """Refuse (403) a state-changing request a cross-site form could have sent."""

    def __init__(self, app: ASGIApp, token: SecretStr | None = None) -> None:
        self.app = app
        self.token = token

    def _allowed(self, headers: Headers) -> bool:
        if headers.get(CUSTOM_HEADER, "").strip():
            return True
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if self.token is not None and scheme.lower() == "bearer" and given \
                and token_matches(given.strip(), self.token):
            return True
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        return media == "application/json"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            method, path = scope["method"], scope["path"].rstrip("/")
            costly = method == "GET" and path in COSTLY_GETS
            if (method in UNSAFE_METHODS or costly) and not self._allowed(Headers(scope=scope)):
                what = ("a GET that spends model time" if costly
                        else f"a {method} without a JSON body")
                await _send_error(send, error_info(ForbiddenError(
                    f"{what} must carry the header 'X-Quaderno: 1' (or the bearer token): "
                    "a cross-site form cannot send it")))
                return
        await self.app(scope, receive, send)


class DeclaredSizeLimit:
    """Refuse (413) a request whose Content-Length is over the limit of its route:
    ``larger`` maps (method, path) to a limit other than ``default`` (the upload)."""

    def __init__(self, app: ASGIApp, default: int,
                 larger: dict[tuple[str, str], int] | None = None) -> None:
        self.app = app
        self.default = default
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            limit = self.larger.get((scope["method"], scope["path"].rstrip("/")), self.default)
            declared = Headers(scope=scope).get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                info = error_info(BodyTooLargeError(
                    f"the request body is {int(declared)} bytes, over this route's limit "
                    f"of {limit}"))
                await _send_error(send, info)
                return
        await self.app(scope, receive, send)


async def _send_error(send: Send, info: ErrorInfo, headers: list[tuple[bytes, bytes]] = ()
                      ) -> None:
    body = ErrorBody(error=info).model_dump_json().encode("utf-8")
    await send({"type": "http.response.start", "status": info.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class DataHeaders:
    """Add nosniff and no-store to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("x-content-type-options", "nosniff")
                headers.setdefault("cache-control", "no-store")
            await send(message)

        await self.app(scope, receive, sending)


class InflightLimiter:
    """Counts questions being answered, per client and in all (one event loop: no lock)."""

    def __init__(self, total: int, per_client: int) -> None:
        if total < 1 or per_client < 1:
            raise ConfigError(f"in-flight limits must be at least 1, got total={total}, "
                              f"per client={per_client}")
        self.total = total
        self.per_client = per_client
        self._by_client: Counter[str] = Counter()

    @property
    def in_flight(self) -> int:
        return sum(self._by_client.values())

    def acquire(self, client: str) -> None:
        """Take a slot for ``client`` or raise :class:`TooManyRequestsError` (429)."""
        if self._by_client[client] >= self.per_client:
            raise TooManyRequestsError(
                f"too many questions in flight for this client ({self.per_client} at most); "
                "wait for one to finish")
        if self.in_flight >= self.total:
            raise TooManyRequestsError(
                f"the server is answering {self.total} questions, its limit; retry shortly")
        self._by_client[client] += 1

    def release(self, client: str) -> None:
        self._by_client[client] -= 1
        if self._by_client[client] <= 0:
            del self._by_client[client]

    def releaser(self, client: str) -> Callable[[], None]:
        """A function that releases ``client``'s slot once, however often it is called."""
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.release(client)

        return release

    @contextlib.contextmanager
    def slot(self, client: str) -> Iterator[None]:
        self.acquire(client)
        try:
            yield
        finally:
            self.release(client)
