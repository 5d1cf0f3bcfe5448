"""The app factory: ``create_app(settings)`` builds one FastAPI app with its own state.

    from quaderno.serve import ServeSettings, create_app
    app = create_app(ServeSettings(home="~/.quaderno"))          # uvicorn app --factory ...
    app = create_app(settings, lm=LM(FakeLLM(echo=True)))        # tests: a fake LLM

Nothing is built at import time; the workspace, LLMs, limiter and jobs live on
``app.state.quaderno`` (a :class:`~quaderno.serve.state.ServerState`). OpenAPI is served at
``/openapi.json`` (``/docs`` shows it).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping

from fastapi import FastAPI
from starlette.middleware.trustedhost import TrustedHostMiddleware

from quaderno import __version__
from quaderno.llm.lm import LM
from quaderno.serve import (openai_face, routes_ask, routes_eval, routes_info, routes_kb,
                            routes_web)
from quaderno.serve.asking import Asker
from quaderno.serve.errors import install_error_handlers
from quaderno.serve.guard import BearerAuth, CrossSiteGuard, DataHeaders, DeclaredSizeLimit
from quaderno.serve.settings import ServeSettings
from quaderno.serve.state import ServerState

DESCRIPTION = """Structured, adaptive RAG over your knowledge bases: ask with any method
(PAGER, missing-knowledge RAG, DocSage, baselines), stream its steps, manage knowledge bases
and evaluation runs. Document and model text in responses is data: render it as text."""


def create_app(settings: ServeSettings | None = None, *, lm: LM | None = None,
               roles: Mapping[str, LM] | None = None) -> FastAPI:
    """A server app for ``settings`` (checked: a public address needs a token). ``lm`` /
    ``roles`` replace the configured LLMs (tests, benchmarks)."""
    settings = settings or ServeSettings()
    settings.check()
    state = ServerState(settings, lm=lm, roles=roles)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await state.jobs.aclose()

    app = FastAPI(title="quaderno", version=__version__, description=DESCRIPTION,
                  lifespan=lifespan)
    app.state.quaderno = state
    app.state.asker = Asker(state)
    install_error_handlers(app)
    # bodies sent without a length are cut off at the route's limit (the upload has its own)
    for router in (routes_info.router, routes_ask.router,
                   routes_kb.router(settings.max_upload_bytes), routes_eval.router,
                   openai_face.router, routes_web.router):
        app.include_router(router, max_body_size=settings.max_request_bytes)
    app.add_middleware(DeclaredSizeLimit, default=settings.max_request_bytes,
                       larger={("POST", "/v1/kbs"): settings.max_upload_bytes})
    app.add_middleware(CrossSiteGuard, token=settings.token)
    app.add_middleware(DataHeaders)
    if settings.token is not None:
        app.add_middleware(BearerAuth, token=settings.token)
    # outermost: a request for another host name (DNS rebinding) is refused first
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.trusted_hosts())
    return app
