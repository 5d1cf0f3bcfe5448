"""What one server holds while it runs (``app.state.quaderno``): the workspace, the LLMs,
the in-flight limiter and the jobs. Built by :func:`~quaderno.serve.app.create_app`; no
module-level state, so two apps in one process share nothing.

The LLM is built once, on first use, the way the CLI builds it (flags > environment >
config file > the embedded default), with the call log in the workspace. An LM can be
given instead (tests, benchmarks: a FakeLLM).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path

from quaderno.errors import ConfigError, NotFoundError
from quaderno.llm.lm import LM
from quaderno.methods.registry import METHODS
from quaderno.serve.guard import InflightLimiter
from quaderno.serve.jobs import JobManager
from quaderno.serve.settings import ServeSettings
from quaderno.serve.wire import LLMInfo
from quaderno.storage import check_name
from quaderno.workspace import Workspace

log = logging.getLogger(__name__)


class ServerState:
    """The server's workspace, LLMs, limiter and jobs."""

    def __init__(self, settings: ServeSettings, *, lm: LM | None = None,
                 roles: Mapping[str, LM] | None = None) -> None:
        self.settings = settings
        self.workspace = Workspace(settings.root)
        self.limiter = InflightLimiter(settings.max_inflight, settings.max_inflight_per_client)
        self.jobs = JobManager(max_running=settings.max_jobs,
                               max_watchers=settings.max_job_watchers)
        self._lm = lm
        self._roles: dict[str, LM] | None = dict(roles or {}) if lm is not None else None
        self._lm_lock = asyncio.Lock()

    # -- LLMs -----------------------------------------------------------------------------
    async def lm(self) -> LM:
        """The answering LM, built on first use (loading an embedded model takes seconds)."""
        if self._lm is None:
            async with self._lm_lock:
                if self._lm is None:
                    self._lm, self._roles = await asyncio.to_thread(self._build_lms)
        return self._lm

    def _build_lms(self) -> tuple[LM, dict[str, LM]]:
        from quaderno.llm.setup import build_lm, llm_config, role_lms

        s = self.settings
        cfg = llm_config(s.home, s.config, **s.llm)
        lm = build_lm(cfg, s.home)
        all_roles = {r for spec in METHODS.values() for r in spec.roles}
        roles = role_lms(s.home, s.config, cfg, **{r: {} for r in sorted(all_roles)})
        log.info("LLM %s ready (roles: %s)", lm.model_id, sorted(roles) or "main only")
        return lm, roles

    async def roles_for(self, method: str) -> dict[str, LM]:
        await self.lm()
        spec = METHODS.spec(method)
        return {r: x for r, x in (self._roles or {}).items() if r in spec.roles}

    def llm_info(self) -> LLMInfo:
        """Which LLM answers, and whether it serializes requests (the embedded llama.cpp
        model holds one lock: questions in flight wait for it in turn)."""
        if self._lm is None:
            from quaderno.llm.setup import llm_config

            cfg = llm_config(self.settings.home, self.settings.config, **self.settings.llm)
            embedded = cfg.backend == "llama-cpp"
            return LLMInfo(backend=cfg.backend, model_id=None, serialized=embedded,
                           note=_note(embedded) + " (loaded on the first question)")
        from quaderno.llm.llama_cpp_backend import LlamaCppLLM

        embedded = isinstance(self._lm.backend, LlamaCppLLM)
        backend = "llama-cpp" if embedded else type(self._lm.backend).__name__
        return LLMInfo(backend=backend, model_id=self._lm.model_id, serialized=embedded,
                       note=_note(embedded))

    # -- names ----------------------------------------------------------------------------
    def gate_spec(self, gate: str | None) -> str | None:
        """A gate a client may name: ``always``, ``never`` or ``NAME[:GATE]`` of a trained
        gate under ``$HOME/gates`` (never a path of the server's file system)."""
        if gate is None or gate in ("always", "never"):
            return gate
        name, _, inner = gate.partition(":")
        check_name(name, "gate name")
        if inner:
            check_name(inner, "gate")
        folder = self.workspace.root / "gates" / name
        if not folder.is_dir():
            known = sorted(p.name for p in (self.workspace.root / "gates").glob("*")
                           if p.is_dir())
            raise NotFoundError(f"no gate {name!r} in the server's gates folder "
                                f"(known: {', '.join(known) or 'none'}; or always | never)")
        return f"{folder}:{inner}" if inner else str(folder)

    def dataset_path(self, dataset: str, fmt: str | None) -> str:
        """A named dataset as it is, or a file under the server's data folder; a path
        outside it is refused."""
        from quaderno.eval.datasets import DATASETS, data_dir

        if dataset in DATASETS:
            return dataset
        if fmt is None:
            raise ConfigError(f"{dataset!r} is not a known dataset ({', '.join(DATASETS)}); "
                              "for a file under the data folder, give format")
        base = data_dir(self.settings.data_dir).resolve()
        path = (base / dataset).resolve()
        if not path.is_relative_to(base):
            raise ConfigError(f"dataset {dataset!r} is outside the server's data folder; "
                              "give a path relative to it")
        if not path.is_file():
            raise NotFoundError(f"no dataset file {dataset!r} in the server's data folder")
        return str(path)

    @property
    def runs_dir(self) -> Path:
        return self.workspace.root / "runs"

    def run_dir(self, name: str) -> Path:
        return self.runs_dir / check_name(name, "run name")


def _note(embedded: bool) -> str:
    if embedded:
        return ("the embedded llama.cpp model answers one request at a time: questions in "
                "flight wait for it in turn")
    return "requests go to the LLM concurrently (up to its max_concurrency)"
