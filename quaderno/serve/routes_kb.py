"""Routes for knowledge bases (list, upload a file and add it, delete), index builds and the
jobs that do them, with their progress."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, Response, UploadFile

from quaderno.corpus.chunk import KBKind
from quaderno.corpus.loaders import FORMATS, guess_format, load
from quaderno.errors import AlreadyExistsError, ConfigError
from quaderno.serve.errors import ERROR_RESPONSES, BodyTooLargeError
from quaderno.serve.events import SSE_DOC, SSEResponse
from quaderno.serve.jobs import Job
from quaderno.serve.policy import check_embedder
from quaderno.serve.state import ServerState
from quaderno.serve.wire import IndexBuildRequest, JobOut, KBInfo
from quaderno.storage import check_name

SUFFIXES = (".jsonl", ".json", ".txt", ".md")
COPY_CHUNK = 1 << 20


def kb_info(manifest: dict[str, Any]) -> KBInfo:
    return KBInfo(name=manifest["name"], kind=manifest["kb_kind"],
                  chunks=int(manifest["num_chunks"]),
                  duplicates_dropped=int(manifest.get("duplicates_dropped", 0)),
                  indexes=list(manifest.get("indexes", [])),
                  sources=list(manifest.get("sources", [])),
                  description=manifest.get("description", ""),
                  created=manifest.get("created", ""))


def _state(request: Request) -> ServerState:
    return request.app.state.quaderno


def _save_upload(upload: UploadFile, folder: Path, limit: int) -> Path:
    """The uploaded file copied under ``folder`` with a name of ours (only its suffix is the
    client's, from :data:`SUFFIXES`); a text file goes in a folder of its own, the shape
    the folder loader reads."""
    suffix = Path(upload.filename or "").suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(f"upload {upload.filename!r}: the file must end in one of "
                          f"{', '.join(SUFFIXES)}")
    target = folder / "docs" / f"upload{suffix}" if suffix in (".txt", ".md") \
        else folder / f"upload{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with open(target, "wb") as out:
        while block := upload.file.read(COPY_CHUNK):
            size += len(block)
            if size > limit:
                raise BodyTooLargeError(f"upload {upload.filename!r} is over the server's "
                                        f"limit of {limit} bytes")
            out.write(block)
    return target.parent if suffix in (".txt", ".md") else target


def router(max_upload_bytes: int) -> APIRouter:
    r = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, tags=["kbs"])

    @r.get("/kbs", response_model=list[KBInfo])
    async def list_kbs(request: Request) -> list[KBInfo]:
        """Every knowledge base of the workspace, with its indexes."""
        return [kb_info(m) for m in _state(request).workspace.list_kbs()]

    @r.get("/kbs/{name}", response_model=KBInfo)
    async def get_kb(name: str, request: Request) -> KBInfo:
        ws = _state(request).workspace
        return kb_info({**ws.kb(name).manifest, "indexes": ws.index_names(name)})

    @r.post("/kbs", response_model=JobOut, status_code=202, max_body_size=max_upload_bytes)
    async def upload_kb(
        request: Request,
        name: Annotated[str, Form(description="name of the new knowledge base")],
        file: Annotated[UploadFile, File(description=".jsonl, .json, .txt or .md")],
        format: Annotated[str, Form(description="auto | " + " | ".join(FORMATS))] = "auto",
        kind: Annotated[KBKind | None, Form()] = None,
        max_words: Annotated[int, Form(ge=0, le=100000)] = 300,
        replace: Annotated[bool, Form()] = False,
        index: Annotated[bool, Form(description="build its BM25 index after")] = True,
        embedder: Annotated[str | None, Form(max_length=200)] = None,
    ) -> JobOut:
        """Upload a file and add it as knowledge base NAME (then index it): a job; follow
        it at ``/v1/jobs/{id}`` or ``/v1/jobs/{id}/events``."""
        state = _state(request)
        ws = state.workspace
        check_name(name, "knowledge base name")
        embedder = check_embedder(embedder, state.settings.embedder_allow)
        if format != "auto" and format not in FORMATS:
            raise ConfigError(f"unknown format {format!r}; choose auto or one of "
                              f"{', '.join(FORMATS)}")
        if ws.has_kb(name) and not replace:
            raise AlreadyExistsError(f"knowledge base {name!r} already exists; send "
                                     "replace=true to rebuild it")
        folder = Path(tempfile.mkdtemp(prefix="upload-", dir=_uploads(ws.root)))
        try:
            path = await asyncio.to_thread(_save_upload, file, folder, max_upload_bytes)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        source = Path(file.filename or "upload").name

        async def work(job: Job) -> dict[str, Any]:
            def run() -> dict[str, Any]:
                try:
                    fmt = guess_format(path) if format == "auto" else format
                    chosen = kind or (KBKind.qa_pair if fmt == "qa" else KBKind.passage)
                    job.report("reading", 0)
                    kb = ws.add_kb(name, load(path, fmt), kind=chosen, replace=replace,
                                   max_words=max_words or None, sources=[source],
                                   progress=lambda n: job.report("reading", n))
                    out: dict[str, Any] = {"kb": name, "chunks": len(kb), "format": fmt,
                                           "duplicates_dropped":
                                               kb.manifest["duplicates_dropped"]}
                    if index:
                        manifest = _build(ws, name, "default", True, embedder, job)
                        out["index"] = {"name": "default",
                                        "components": list(manifest["components"])}
                    return out
                finally:
                    shutil.rmtree(folder, ignore_errors=True)

            return await asyncio.to_thread(run)

        try:
            return state.jobs.start("kb-add", name, work).out()
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    @r.delete("/kbs/{name}", status_code=204)
    async def delete_kb(name: str, request: Request) -> Response:
        """Delete a knowledge base and its indexes."""
        state = _state(request)
        busy = state.jobs.running("kb-add", name) or state.jobs.running("index-build", name)
        if busy is not None:
            raise AlreadyExistsError(f"job {busy.id} is working on {name!r}; delete it when "
                                     "the job is done")
        state.workspace.remove_kb(name)
        return Response(status_code=204)

    @r.post("/kbs/{name}/index", response_model=JobOut, status_code=202)
    async def build_index(name: str, body: IndexBuildRequest, request: Request) -> JobOut:
        """Build (or rebuild, atomically) an index of a knowledge base: a job."""
        state = _state(request)
        ws = state.workspace
        ws.kb(name)
        embedder = check_embedder(body.embedder, state.settings.embedder_allow)
        if not body.bm25 and embedder is None:
            raise ConfigError("an index needs a component: bm25=true, or an embedder")

        async def work(job: Job) -> dict[str, Any]:
            manifest = await asyncio.to_thread(_build, ws, name, body.index, body.bm25,
                                               embedder, job)
            return {"kb": name, "index": body.index,
                    "components": list(manifest["components"]),
                    "seconds": manifest["build"]["total_s"]}

        return state.jobs.start("index-build", name, work).out()

    @r.get("/jobs", response_model=list[JobOut], tags=["jobs"])
    async def jobs(request: Request) -> list[JobOut]:
        """Jobs of this server, newest first."""
        return [j.out() for j in _state(request).jobs.list()]

    @r.get("/jobs/{job_id}", response_model=JobOut, tags=["jobs"])
    async def job(job_id: str, request: Request) -> JobOut:
        return _state(request).jobs.get(job_id).out()

    @r.get("/jobs/{job_id}/events", tags=["jobs"], response_model=None,
           responses={200: SSE_DOC})
    async def job_events(job_id: str, request: Request) -> SSEResponse:
        """``event: job`` (a JobOut) now and on every change, until it succeeds or fails."""
        from quaderno.serve.events import Event

        # a 404, or a 429 when too many progress streams are open
        changes, release = _state(request).jobs.watch(job_id)

        async def events():  # noqa: ANN202 - an async generator of events
            n = 0
            try:
                async for out in changes:
                    if out is None:  # a keep-alive while nothing changes
                        yield Event(name="", data=None, comment="working")
                        continue
                    yield Event(name="job", data=out.model_dump(mode="json"), id=n)
                    n += 1
            finally:
                await changes.aclose()  # type: ignore[attr-defined]

        return SSEResponse(events(), on_close=release)

    return r


def _build(ws: Any, name: str, index: str, bm25: bool, embedder: str | None,
           job: Job) -> dict[str, Any]:
    job.report("indexing", 0)
    return ws.build_index(name, index=index, bm25=bm25, embedder=embedder,
                          progress=lambda stage, done, total: job.report(stage, done, total))


def _uploads(root: Path) -> Path:
    folder = root / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
