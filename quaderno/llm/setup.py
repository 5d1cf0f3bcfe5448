"""Building the LMs a command or a server answers with, the way every entry point does:
flags > environment > config file > the embedded default, with the response cache and the
call log in the workspace (``$HOME/cache/llm.sqlite``).

Shared by the CLI (``quaderno.cli.llm_cmd`` re-exports these) and the server
(``quaderno.serve.state``), which must not depend on the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quaderno.llm.config import LLMConfig, make_lm, resolve, resolve_role
from quaderno.llm.lm import LM
from quaderno.workspace import default_home


def llm_config(home: Path | None, config: Path | None, **flags: Any) -> LLMConfig:
    """The LLM configuration of ``flags`` over the environment and the config file."""
    root = Path(home) if home else default_home()
    return resolve(flags, config_path=config or root / "config.toml")


def role_lms(home: Path | None, config: Path | None, main: LLMConfig, *,
             cache: bool | None = None, **roles: dict[str, Any]) -> dict[str, LM]:
    """LMs for method roles named by flags, env or config tables (``reasoner={...flags}``);
    a role nobody names is left out (the method uses the main LM)."""
    root = Path(home) if home else default_home()
    out = {}
    for role, flags in roles.items():
        cfg = resolve_role(role, main, flags, config_path=config or root / "config.toml")
        if cfg is not None:
            out[role] = build_lm(cfg, home, cache=cache)
    return out


def llm_db(home: Path | None) -> Path:
    """The SQLite file of the response cache and the call log (two tables, one file)."""
    return (Path(home) if home else default_home()) / "cache" / "llm.sqlite"


def build_lm(cfg: LLMConfig, home: Path | None, *, cache: bool | None = None) -> LM:
    """The LM of ``cfg``: the call log always, the response cache unless ``cache`` is
    False (or the config says ``cache = false``)."""
    return make_lm(cfg, cache_path=llm_db(home), cache=cache)
