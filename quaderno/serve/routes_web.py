"""The web page: ``GET /`` and its static files under ``/web/``, shipped in the package.

The page holds no data (it reads everything from ``/v1`` with ``fetch``), so it is served
without the bearer token; the page asks for the token when the API answers 401. Every
response carries a Content-Security-Policy that allows only this server's own scripts,
styles, connections and images (``blob:`` for plots fetched with the token): no inline
script, no other origin, no framing. Document and model text is put into the page with
``textContent`` only (``quaderno/serve/web/render.js``), never as HTML.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import Response

from quaderno.errors import NotFoundError

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
FILES = {"index.html": "text/html; charset=utf-8",
         "app.js": "text/javascript; charset=utf-8",
         "api.js": "text/javascript; charset=utf-8",
         "render.js": "text/javascript; charset=utf-8",
         "views.js": "text/javascript; charset=utf-8",
         "style.css": "text/css; charset=utf-8"}

router = APIRouter(include_in_schema=False)


def _file(name: str) -> Response:
    if name not in FILES:
        raise NotFoundError(f"no web file {name!r}")
    body = resources.files("quaderno.serve").joinpath("web", name).read_bytes()
    return Response(body, media_type=FILES[name],
                    headers={"Content-Security-Policy": CSP, "X-Frame-Options": "DENY",
                             "Referrer-Policy": "no-referrer"})


@router.get("/")
async def page() -> Response:
    """The web page."""
    return _file("index.html")


@router.get("/web/{name}")
async def web_file(name: str) -> Response:
    return _file(name)
