"""Property tests of the API against its own OpenAPI schema (schemathesis): generated requests
to every operation never make the server fail (5xx but the documented LLM statuses), and
every response has a documented status, content type and schema."""

from __future__ import annotations

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (content_type_conformance,
                                               response_schema_conformance,
                                               status_code_conformance)

from quaderno.llm.fake import FakeLLM
from quaderno.serve.settings import ServeSettings
from quaderno.workspace import Workspace
from test_serve_api import make_app, make_home


def _app():  # noqa: ANN202 - the app under test, built once for the module
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="quaderno-schema-")) / "home"
    # a model that always answers in the format most steps read; a method that cannot use
    # it fails with a documented 502, never a 500
    home = make_home(root)
    Workspace(home).retriever(["mma"]).retrieve("warm up", 1)  # BM25's JIT, before timing
    return make_app(home, FakeLLM(respond=lambda r: "<answer>x</answer>"),
                    max_inflight=64, max_inflight_per_client=64,
                    allowed_hosts=("testserver",))  # the ASGI client's host name


APP = _app()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


def not_a_server_fault(ctx, response, case) -> None:  # noqa: ANN001
    """5xx only as the documented upstream statuses (502 LLM or step failed, 501, 504)."""
    status = response.status_code
    assert status < 500 or status in (501, 502, 504), \
        f"{case.method} {case.path} -> {status}: {response.text[:300]}"


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_openapi_schema(case):
    case.call_and_validate(headers={"X-Quaderno": "1"},  # as the page sends it
                           checks=[not_a_server_fault, status_code_conformance,
                                   content_type_conformance, response_schema_conformance])


def test_schema_is_served_and_names_every_route():
    assert ServeSettings().host == "127.0.0.1"
    paths = set(schema.raw_schema["paths"])
    assert {"/v1/ask", "/v1/ask/stream", "/v1/search", "/v1/methods", "/v1/kbs",
            "/v1/kbs/{name}/index", "/v1/jobs/{job_id}", "/v1/evals", "/v1/reports",
            "/v1/llm/log", "/v1/chat/completions", "/v1/models", "/v1/info"} <= paths
