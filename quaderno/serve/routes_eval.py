"""Routes for evaluation runs (started as jobs with progress), their records and reports.

Runs live in ``$HOME/runs/<name>`` (the same run directories as ``quaderno eval`` writes:
resumable, one JSONL record per question); reports in ``$HOME/reports/<id>``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse

from quaderno.errors import NotFoundError
from quaderno.eval.datasets import DATASETS, data_dir, load_dataset
from quaderno.eval.records import read_results
from quaderno.eval.report import load_run, paired, table, write_report
from quaderno.eval.run_config import DEFAULT_MAX_ITERS, method_options_for, run_config
from quaderno.eval.runner import EvalRunner
from quaderno.serve.errors import ERROR_RESPONSES
from quaderno.serve.jobs import Job
from quaderno.serve.policy import check_options, method_spec
from quaderno.serve.state import ServerState
from quaderno.serve.wire import (DatasetInfo, EvalRequest, JobOut, PairedOut, RecordsPage,
                                 ReportOut, ReportRequest, RunSummary)

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, tags=["evals"])

PLOTS = ("scores.png", "cost.png", "by_iteration.png")
FAILED = "the LLM failed on this question; the server log has the details"


def _state(request: Request) -> ServerState:
    return request.app.state.quaderno


def summary(name: str, run: dict[str, Any]) -> RunSummary:
    cfg = run["config"]
    return RunSummary(name=name, dataset=cfg.get("dataset", ""), method=cfg.get("method", ""),
                      n=run["n"], mean=run["mean"], tokens=run["tokens"],
                      latency_s=run["latency_s"], cached_share=run["cached_share"],
                      by_rounds=run["by_rounds"], config=cfg)


def _run_dir(state: ServerState, name: str) -> Path:
    folder = state.run_dir(name)
    if not (folder / "config.json").is_file():
        known = ", ".join(_run_names(state)) or "none"
        raise NotFoundError(f"no evaluation run {name!r} (known: {known})")
    return folder


def _run_names(state: ServerState) -> list[str]:
    if not state.runs_dir.is_dir():
        return []
    return sorted(p.name for p in state.runs_dir.iterdir() if (p / "config.json").is_file())


@router.get("/datasets", response_model=list[DatasetInfo])
async def datasets(request: Request) -> list[DatasetInfo]:
    """The named evaluation datasets (POST /v1/evals takes them by name) and whether the
    server has each one's file; a file of your own goes under the server's --data-dir."""
    base = data_dir(_state(request).settings.data_dir)
    return [DatasetInfo(name=name, format=fmt, available=(base / rel).is_file())
            for name, (rel, fmt) in DATASETS.items()]


@router.post("/evals", response_model=JobOut, status_code=202)
async def start_eval(body: EvalRequest, request: Request) -> JobOut:
    """Run a method over a dataset as a job (progress: questions answered); running it
    again with the same settings resumes it."""
    state = _state(request)
    # an unknown method is a 404, a bad, capped or path option a 422, before any job starts
    method_spec(body.method).validate(check_options(body.method, body.options))
    options = method_options_for(body.method,
                                 int(body.options.get("max_iters", DEFAULT_MAX_ITERS)),
                                 body.options)
    dataset = state.dataset_path(body.dataset, body.format)
    if body.pool == "kb":
        for kb in body.kbs:
            state.workspace.kb(kb)
    name = body.name or f"{Path(body.dataset).stem}-{body.method}"
    run_dir = state.run_dir(name)
    # an evaluation answers questions too: never more at once than the in-flight limit
    concurrency = min(body.concurrency, state.settings.eval_concurrency_max,
                      state.settings.max_inflight)

    async def work(job: Job) -> dict[str, Any]:
        lm = await state.lm()
        roles = await state.roles_for(body.method)
        job.report("loading", 0)
        records = await asyncio.to_thread(load_dataset, dataset, fmt=body.format,
                                          limit=body.limit, data=state.settings.data_dir)
        config = run_config(dataset=body.dataset, method=body.method, options=options,
                            lm=lm, roles=roles, limit=body.limit, k=body.k, pool=body.pool,
                            kbs=body.kbs, retrieval=body.retrieval)
        runner = EvalRunner(config, run_dir, lm=lm, concurrency=concurrency, roles=roles,
                            workspace=state.workspace if body.pool == "kb" else None)
        job.report("answering", 0, len(records))
        results = await runner.run(records, progress=lambda done, total: job.report(
            "answering", done, total))
        run = await asyncio.to_thread(load_run, run_dir)
        return {"run": name, "n": len(results), "mean": run["mean"],
                # which questions failed; the LLM's error text (an upstream URL or body)
                # stays in the server log, where the runner wrote it
                "failures": [{"id": qid, "error": FAILED} for qid, _ in runner.failures]}

    return state.jobs.start("eval", name, work).out()


@router.get("/evals", response_model=list[RunSummary])
async def list_evals(request: Request) -> list[RunSummary]:
    """Every run of the workspace, summarized."""
    state = _state(request)
    return [summary(n, await asyncio.to_thread(load_run, state.run_dir(n)))
            for n in _run_names(state)]


@router.get("/evals/{name}", response_model=RunSummary)
async def get_eval(name: str, request: Request) -> RunSummary:
    folder = _run_dir(_state(request), name)
    return summary(name, await asyncio.to_thread(load_run, folder))


@router.get("/evals/{name}/records", response_model=RecordsPage)
async def records(name: str, request: Request, offset: int = Query(0, ge=0),
                  limit: int = Query(50, ge=1, le=500)) -> RecordsPage:
    """A run's result records (one per question answered), ``limit`` from ``offset``."""
    folder = _run_dir(_state(request), name)
    rows = await asyncio.to_thread(read_results, folder / "results.jsonl")
    page = rows[offset:offset + limit]
    return RecordsPage(total=len(rows), offset=offset,
                       records=[json.loads(r.model_dump_json()) for r in page])


@router.post("/reports", response_model=ReportOut)
async def report(body: ReportRequest, request: Request) -> ReportOut:
    """A methods × datasets table of runs, their paired per-question differences and plots
    (PNG), as ``quaderno report`` writes them."""
    state = _state(request)
    dirs = [_run_dir(state, name) for name in body.runs]
    key = json.dumps([body.runs, body.metric, body.baseline, body.plots])
    report_id = hashlib.sha256(key.encode()).hexdigest()[:16]
    out = state.workspace.root / "reports" / report_id

    def build() -> ReportOut:
        runs = [load_run(d) for d in dirs]
        diffs = paired(runs, body.metric, baseline=body.baseline)
        write_report(dirs, out, plots=body.plots, metric=body.metric, runs=runs, diffs=diffs)
        methods, datasets, cells = table(runs, body.metric)
        plots = [f"/v1/reports/{report_id}/plots/{p}" for p in PLOTS if (out / p).is_file()]
        return ReportOut(id=report_id, metric=body.metric, methods=methods, datasets=datasets,
                         cells=[[cells.get((m, d)) for d in datasets] for m in methods],
                         paired=[PairedOut(dataset=ds, difference=d) for ds, d in diffs],
                         plots=plots,
                         markdown=(out / "report.md").read_text(encoding="utf-8"))

    return await asyncio.to_thread(build)


@router.get("/reports/{report_id}/plots/{plot}", response_class=FileResponse,
            responses={200: {"content": {"image/png": {}}}})
async def plot(report_id: str, plot: str, request: Request) -> FileResponse:
    """A report's plot (PNG)."""
    if plot not in PLOTS or not report_id.isalnum():
        raise NotFoundError(f"no plot {plot!r}; a report has {', '.join(PLOTS)}")
    path = _state(request).workspace.root / "reports" / report_id / plot
    if not path.is_file():
        raise NotFoundError(f"no plot {plot!r} of report {report_id!r} (POST /v1/reports "
                            "makes it)")
    return FileResponse(path, media_type="image/png")
