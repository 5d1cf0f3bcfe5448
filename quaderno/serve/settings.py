"""What a server is started with: where it listens, who may call it, how much it takes.

Safe by default: it binds to 127.0.0.1; listening anywhere else needs a bearer token
(:meth:`ServeSettings.check` refuses to start otherwise); requests, uploads and questions
in flight are bounded. The token is held as a :class:`~pydantic.SecretStr`, so it never
appears in a repr, a log line or ``/v1/info``.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from quaderno.errors import ConfigError

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether ``host`` only reaches this machine (127.0.0.0/8, ::1, localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def token_from_env(name: str | None) -> SecretStr | None:
    """The bearer token held by environment variable ``name`` (``--token-env NAME``)."""
    if not name:
        return None
    value = os.environ.get(name, "")
    if not value.strip():
        raise ConfigError(f"--token-env {name}: the environment variable {name} is unset or "
                          "empty; export it with the token clients must send")
    if len(value.strip()) < 16:
        raise ConfigError(f"--token-env {name}: the token is {len(value.strip())} characters; "
                          "use at least 16 (e.g. `python -c 'import secrets; "
                          "print(secrets.token_urlsafe(32))'`)")
    return SecretStr(value.strip())


class ServeSettings(BaseModel):
    """Settings of one server (HTTP API, OpenAI-compatible face, MCP)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    home: Path | None = Field(None, description="workspace folder [default: $QUADERNO_HOME "
                                                "or ~/.quaderno]")
    config: Path | None = Field(None, description="LLM config file [default: "
                                                  "$QUADERNO_HOME/config.toml]")
    llm: dict[str, str | None] = Field(default_factory=dict,
                                       description="LLM flags (backend, model, base_url, "
                                                   "api_key_env, model_path)")
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    token: SecretStr | None = None
    max_inflight: int = Field(8, ge=1, description="questions answered at once, in all")
    max_inflight_per_client: int = Field(2, ge=1, description="questions answered at once "
                                                              "for one client address")
    max_request_bytes: int = Field(1 << 20, ge=1024, description="largest request body")
    max_upload_bytes: int = Field(32 << 20, ge=1024, description="largest knowledge-base "
                                                                  "upload")
    data_dir: Path | None = Field(None, description="folder of evaluation datasets "
                                                    "[default: $QUADERNO_DATA or "
                                                    "../shared/data]")
    eval_concurrency_max: int = Field(8, ge=1, description="most questions one evaluation "
                                                           "run may answer at once (and "
                                                           "never more than max_inflight)")
    max_jobs: int = Field(4, ge=1, description="background jobs (uploads, index builds, "
                                               "evaluation runs) running at once, in all")
    max_job_watchers: int = Field(32, ge=1, description="job progress streams "
                                                        "(/v1/jobs/{id}/events) open at once")
    embedder_allow: tuple[str, ...] = Field((), description="embedders clients may name "
                                                            "beyond none, minilm and "
                                                            "hash[:DIM] (--embedder-allow)")
    allowed_hosts: tuple[str, ...] = Field((), description="Host header values accepted "
                                                           "beyond loopback names and the "
                                                           "bound host (--allowed-host)")
    llm_log_details: bool = Field(False, description="/v1/llm/log shows every client's "
                                                     "question labels and error texts "
                                                     "(--llm-log-details)")

    def check(self) -> None:
        """Refuse settings that would expose the server: a non-loopback address without a
        token."""
        if not is_loopback(self.host) and self.token is None:
            raise ConfigError(
                f"--host {self.host} listens beyond this machine, so clients must send a "
                "bearer token: export one in a variable and pass --token-env NAME (or bind "
                "--host 127.0.0.1)")

    def trusted_hosts(self) -> list[str]:
        """Host header values the server answers (DNS rebinding defence): loopback names,
        the bound host and the operator's ``--allowed-host`` names."""
        hosts = ["127.0.0.1", "localhost", "[::1]", "::1", *self.allowed_hosts]
        if self.host not in ("0.0.0.0", "::", ""):  # every address: --allowed-host names
            hosts.append(f"[{self.host}]" if ":" in self.host else self.host)
        return list(dict.fromkeys(hosts))

    @property
    def root(self) -> Path:
        from quaderno.workspace import default_home

        return Path(self.home) if self.home else default_home()
