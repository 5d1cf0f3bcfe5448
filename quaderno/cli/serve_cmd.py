"""`quaderno serve` (the HTTP API and OpenAI-compatible face, with uvicorn) and `quaderno mcp`
(the MCP server, over stdio or streamable HTTP)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import typer

from quaderno.cli.common import HomeOption, err_console, friendly_errors
from quaderno.cli.llm_cmd import BaseUrlOpt, ConfigOpt, KeyEnvOpt, LLMOpt, ModelOpt, ModelPathOpt
from quaderno.errors import ConfigError, DependencyError

log = logging.getLogger(__name__)

HostOpt = typer.Option("127.0.0.1", "--host", help="Address to listen on; anything but "
                       "loopback needs --token-env")
TokenEnvOpt = typer.Option(None, "--token-env", help="NAME of the env variable holding the "
                           "bearer token clients must send (required off loopback)")


def _settings(home: Path | None, config: Path | None, host: str, port: int,
              token_env: str | None, llm_flags: dict[str, Any], **limits: Any) -> Any:
    from quaderno.serve.settings import ServeSettings, token_from_env

    settings = ServeSettings(home=home, config=config, host=host, port=port,
                             token=token_from_env(token_env),
                             llm={k: v for k, v in llm_flags.items() if v is not None},
                             **{k: v for k, v in limits.items() if v is not None})
    settings.check()
    return settings


def _uvicorn() -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise DependencyError(MISSING) from exc
    return uvicorn


MISSING = ("quaderno serve and quaderno mcp need the serve extra: pip install "
           "'quaderno[serve]' (scripts/install.sh installs it)")


@friendly_errors
def serve(
    host: str = HostOpt,
    port: int = typer.Option(8765, "--port", help="Port to listen on"),
    token_env: str = TokenEnvOpt,
    max_inflight: int = typer.Option(None, "--max-inflight", help="Questions answered at "
                                     "once, in all (default 8)"),
    max_inflight_per_client: int = typer.Option(None, "--max-inflight-per-client",
                                                help="Questions at once per client address "
                                                     "(default 2)"),
    max_request_bytes: int = typer.Option(None, "--max-request-bytes", help="Largest request "
                                          "body (default 1 MiB)"),
    max_upload_bytes: int = typer.Option(None, "--max-upload-bytes", help="Largest upload "
                                         "(default 32 MiB)"),
    data_dir: Path = typer.Option(None, "--data-dir", help="Folder of evaluation datasets "
                                  "(default: $QUADERNO_DATA or ../shared/data)"),
    max_jobs: int = typer.Option(None, "--max-jobs", help="Background jobs (uploads, index "
                                 "builds, evaluation runs) at once, in all (default 4)"),
    embedder_allow: list[str] = typer.Option(None, "--embedder-allow", help="An embedder "
                                             "clients may name beyond none, minilm and "
                                             "hash[:DIM] (repeat for several)"),
    allowed_host: list[str] = typer.Option(None, "--allowed-host", help="A Host name "
                                           "clients may use beyond loopback and --host "
                                           "(repeat; e.g. behind a proxy)"),
    llm_log_details: bool = typer.Option(False, "--llm-log-details", help="Let /v1/llm/log "
                                         "show every client's question labels and error "
                                         "texts (off: hidden)"),
    ssl_certfile: Path = typer.Option(None, "--ssl-certfile", help="TLS certificate (PEM): "
                                      "serve HTTPS, so the token does not travel in clear"),
    ssl_keyfile: Path = typer.Option(None, "--ssl-keyfile", help="TLS private key (PEM)"),
    llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
    home: Path = HomeOption,
) -> None:
    """Serve the HTTP API (/v1, OpenAPI at /docs) and the OpenAI-compatible face."""
    from quaderno.serve.settings import is_loopback

    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise ConfigError("--ssl-certfile and --ssl-keyfile go together")
    settings = _settings(home, config, host, port, token_env,
                         {"backend": llm, "model": model, "base_url": base_url,
                          "api_key_env": api_key_env, "model_path": model_path},
                         max_inflight=max_inflight,
                         max_inflight_per_client=max_inflight_per_client,
                         max_request_bytes=max_request_bytes,
                         max_upload_bytes=max_upload_bytes, data_dir=data_dir,
                         max_jobs=max_jobs,
                         embedder_allow=tuple(embedder_allow) if embedder_allow else None,
                         allowed_hosts=tuple(allowed_host) if allowed_host else None,
                         llm_log_details=llm_log_details or None)
    try:
        from quaderno.serve.app import create_app
    except ImportError as exc:
        raise DependencyError(MISSING) from exc
    app = create_app(settings)
    uvicorn = _uvicorn()
    scheme = "https" if ssl_certfile else "http"
    err_console.print(f"quaderno serving on {scheme}://{host}:{port} (OpenAPI: /docs; "
                      f"token {'required' if settings.token else 'off: loopback only'})",
                      highlight=False)
    if host in ("0.0.0.0", "::") and not settings.allowed_hosts:
        log.warning("listening on every address, but only loopback Host names are answered "
                    "(DNS rebinding defence): name the host clients use with --allowed-host")
    if ssl_certfile is None and not is_loopback(host):
        log.warning("serving plain HTTP on %s: the bearer token travels in clear; give "
                    "--ssl-certfile/--ssl-keyfile or put a TLS proxy in front", host)
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False,
                ssl_certfile=str(ssl_certfile) if ssl_certfile else None,
                ssl_keyfile=str(ssl_keyfile) if ssl_keyfile else None)


@friendly_errors
def mcp(
    transport: str = typer.Option("stdio", "--transport", help="stdio | http (streamable "
                                  "HTTP at /mcp)"),
    host: str = HostOpt,
    port: int = typer.Option(8766, "--port", help="Port for --transport http"),
    token_env: str = TokenEnvOpt,
    llm: str = LLMOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt, model_path: str = ModelPathOpt, config: Path = ConfigOpt,
    home: Path = HomeOption,
) -> None:
    """Serve the MCP tools `ask` and `search` (for agent clients)."""
    if transport not in ("stdio", "http"):
        raise ConfigError(f"--transport must be stdio or http, got {transport!r}")
    settings = _settings(home, config, host, port, token_env,
                         {"backend": llm, "model": model, "base_url": base_url,
                          "api_key_env": api_key_env, "model_path": model_path})
    try:
        from quaderno.serve.mcp_server import create_mcp
    except ImportError as exc:
        raise DependencyError(MISSING) from exc
    server = create_mcp(settings)
    if transport == "stdio":
        server.run("stdio")
        return
    from quaderno.serve.guard import BearerAuth

    app = server.streamable_http_app(host=host)
    if settings.token is not None:
        app = BearerAuth(app, settings.token)  # type: ignore[assignment]
    err_console.print(f"quaderno MCP on http://{host}:{port}/mcp", highlight=False)
    _uvicorn().run(app, host=host, port=port, log_level="warning", server_header=False)
