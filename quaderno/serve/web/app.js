// The page: tabs, the ask form and its live stream, knowledge bases, evaluation runs.

import * as api from "./api.js";
import { clear, el, fmt, parsePage, show, table } from "./render.js";
import { docsageView, gateView, misknowView, PageView } from "./views.js";

const $ = (id) => document.getElementById(id);
const state = { kbs: [], evidence: [], methods: [], lastKbs: [], inputs: new Map() };

function showError(err) {
  const box = $("error");
  if (!err) { show(box, false); return; }
  box.textContent = err.hint ? `${err.message} — ${err.hint}` : String(err.message || err);
  show(box);
  if (err.status === 401) show($("token-form"));
}

// -- chunks (citations) ---------------------------------------------------------------------
async function openChunk(kb, id) {
  try {
    const c = await api.get(`/v1/kbs/${encodeURIComponent(kb)}/chunks/${encodeURIComponent(id)}`);
    $("chunk-title").textContent = c.title || "(untitled)";
    $("chunk-id").textContent = `${c.kb} · ${c.id}${c.source ? " · " + c.source : ""}`;
    $("chunk-text").textContent = c.text;
    show($("chunk-box"));
  } catch (err) {
    showError(err);
  }
}

// a chunk id without its knowledge base (DocSage's row sources): the answer's evidence
// first, then the knowledge bases the question was asked over
async function openChunkAnyKb(id) {
  const e = state.evidence.find((x) => x.chunk_id === id);
  const kbs = e ? [e.kb] : (state.lastKbs.length ? state.lastKbs : state.kbs.map((k) => k.name));
  for (const kb of kbs) {
    try {
      await api.get(`/v1/kbs/${encodeURIComponent(kb)}/chunks/${encodeURIComponent(id)}`);
      return openChunk(kb, id);
    } catch (err) {
      if (err.status !== 404) return showError(err);
    }
  }
  showError(new Error(`chunk ${id} is in none of ${kbs.join(", ")}`));
}

const page = new PageView(openChunk);

// -- ask ------------------------------------------------------------------------------------
function resetAnswer() {
  page.reset();
  for (const id of ["answer-box", "gate-box", "misknow-box", "docsage-box", "evidence-box", "chunk-box"]) {
    show($(id), false);
  }
  clear($("steps"));
  $("step-count").textContent = "";
  state.evidence = [];
  state.inputs.clear();
}

function step(name, detail, cls = "") {
  const li = el("li", { class: cls }, el("span", { class: "step-name" }, name), detail ? ` ${detail}` : "");
  $("steps").append(li);
  $("step-count").textContent = `(${$("steps").children.length})`;
  return li;
}

function onEvent(name, data) {
  if (name === "span_open") {
    state.inputs.set(data.id, data.inputs || {}); // a closing span carries only its outputs
    if (data.name === "pager.subquery" && data.inputs.section) page.get(data.inputs.section).li.classList.add("active");
    step(data.name, "…", "open").id = `step-${data.id}`;
  } else if (name === "span_close") {
    const li = $(`step-${data.id}`);
    if (li) li.remove();
    step(data.name, `${data.seconds.toFixed(2)} s${data.error ? " — " + data.error : ""}`, data.error ? "failed" : "");
    const out = data.outputs || {};
    if (data.name === "pager.outline" && out.page) page.outline(out.page);
    else if (data.name === "pager.subquery" && out.sub_query !== undefined) {
      page.subquery(state.inputs.get(data.id)?.section ?? page.pending, out.sub_query);
    }
    else if (data.name === "retrieve") page.retrieved(out.titles);
    else if (data.name.startsWith("pager.fill") && out.page) {
      // the whole page after the fill: every slot's content as it now is
      for (const s of parsePage(out.page).sections) page.fill(s.title, s.content);
    }
  } else if (name === "llm_call") {
    step("llm", `${data.step || ""} ${data.prompt_tokens}+${data.completion_tokens} tok ${data.latency_s.toFixed(2)} s${data.cached ? " (cached)" : ""}`, "call");
  } else if (name === "answer") {
    showAnswer(data);
  } else if (name === "error") {
    showError(data.error || data);
  }
}

function showAnswer(a) {
  state.evidence = a.evidence || [];
  $("answer").textContent = a.answer;
  $("answer-meta").textContent = `${a.method} · ${a.usage.llm_calls} LLM calls (${a.usage.cached_calls} cached) · ` +
    `${a.usage.prompt_tokens}+${a.usage.completion_tokens} tokens · ${a.seconds.toFixed(2)} s` +
    (a.usage.fallbacks.length ? ` · fallbacks: ${a.usage.fallbacks.join("; ")}` : "");
  show($("answer-box"));
  const d = a.details;
  if (d && d.kind === "pager") page.final(d.page, state.evidence);
  if (d && d.kind === "misknow") misknowView(d, a.retrieval_rounds);
  if (d && d.kind === "docsage") docsageView(d, openChunkAnyKb);
  if (a.gate) gateView(a.gate);
  const list = clear($("evidence"));
  for (const e of state.evidence) {
    list.append(el("li", { value: e.n },
      el("a", { href: "#", class: "cite", onclick: (ev) => { ev.preventDefault(); openChunk(e.kb, e.chunk_id); } },
        `[${e.n}] ${e.title || e.chunk_id}`),
      el("span", { class: "muted" }, ` ${e.kb} · ${e.query ? "for “" + e.query + "”" : ""}`)));
  }
  show($("evidence-box"), state.evidence.length > 0);
}

async function ask(ev) {
  ev.preventDefault();
  showError(null);
  resetAnswer();
  const body = { question: $("question").value.trim(), method: $("method").value };
  const kbs = [...$("ask-kbs").selectedOptions].map((o) => o.value);
  if (kbs.length) body.kbs = kbs;
  state.lastKbs = kbs;
  if ($("k").value) body.k = Number($("k").value);
  if ($("gate").value.trim()) body.gate = $("gate").value.trim();
  if ($("options").value.trim()) {
    try {
      body.options = JSON.parse($("options").value);
    } catch (err) {
      return showError(new Error(`options must be a JSON object: ${err.message}`));
    }
  }
  const button = $("ask-button");
  button.disabled = true;
  button.textContent = "Asking…";
  try {
    await api.stream("/v1/ask/stream", body, onEvent);
  } catch (err) {
    showError(err);
  } finally {
    button.disabled = false;
    button.textContent = "Ask";
  }
}

// -- knowledge bases ------------------------------------------------------------------------
async function loadKbs() {
  state.kbs = await api.get("/v1/kbs");
  const body = clear($("kb-table").tBodies[0]);
  for (const k of state.kbs) {
    body.append(el("tr", { dataset: { kb: k.name } }, el("td", {}, k.name), el("td", {}, k.kind),
      el("td", {}, k.chunks), el("td", {}, k.indexes.join(", ")), el("td", {}, k.sources.join(", "))));
  }
  const select = clear($("ask-kbs"));
  for (const k of state.kbs) select.append(el("option", { value: k.name }, k.name));
}

async function addKb(ev) {
  ev.preventDefault();
  showError(null);
  const form = new FormData();
  form.append("name", $("kb-name").value.trim());
  form.append("file", $("kb-file").files[0]);
  try {
    const job = await api.request("POST", "/v1/kbs", { form });
    await follow(job);
  } catch (err) {
    showError(err);
  }
}

async function follow(job) {
  const bar = $("job-progress");
  show($("job"));
  for (;;) {
    const p = job.progress || {};
    if (p.total) { bar.max = p.total; bar.value = p.done; } else { bar.removeAttribute("value"); }
    $("job-state").textContent = `${job.kind} ${job.target}: ${job.state}${p.stage ? " · " + p.stage : ""}` +
      (p.total ? ` ${p.done}/${p.total}` : p.done ? ` ${p.done}` : "");
    $("job").dataset.state = job.state;
    if (job.state === "succeeded") {
      bar.max = 1; bar.value = 1;
      await loadKbs();
      return;
    }
    if (job.state === "failed") throw new api.ApiError(job.error?.status || 500, job.error?.message || "the job failed", job.error?.hint);
    await new Promise((r) => setTimeout(r, 300));
    job = await api.get(`/v1/jobs/${encodeURIComponent(job.id)}`);
  }
}

// -- evaluation runs ------------------------------------------------------------------------
async function loadRuns() {
  const runs = await api.get("/v1/evals");
  const body = clear($("run-table").tBodies[0]);
  for (const r of runs) {
    const scores = Object.entries(r.mean).map(([k, v]) => `${k} ${fmt(v)}`).join(", ");
    body.append(el("tr", { dataset: { run: r.name } }, el("td", {}, r.name), el("td", {}, r.dataset),
      el("td", {}, r.method), el("td", {}, r.n), el("td", {}, scores),
      el("td", {}, el("button", { type: "button", class: "open-run", onclick: () => openRun(r) }, "report"))));
  }
}

async function openRun(run) {
  showError(null);
  try {
    const metric = "cover_em" in run.mean ? "cover_em" : Object.keys(run.mean)[0] || "cover_em";
    const rep = await api.post("/v1/reports", { runs: [run.name], metric, plots: true });
    $("report-title").textContent = `${run.name} — ${rep.metric}`;
    const cells = $("report-cells");
    cells.replaceWith(Object.assign(table(["method", ...rep.datasets],
      rep.methods.map((m, i) => [m, ...rep.cells[i]])), { id: "report-cells" }));
    const plots = clear($("report-plots"));
    for (const url of rep.plots) {
      plots.append(el("img", { src: await api.blobUrl(url), alt: url.split("/").pop() }));
    }
    $("report-md").textContent = rep.markdown;
    show($("report"));
  } catch (err) {
    showError(err);
  }
}

// -- start ----------------------------------------------------------------------------------
async function loadInfo() {
  const info = await api.get("/v1/info");
  $("llm-info").textContent = `${info.llm.backend}${info.llm.model_id ? " · " + info.llm.model_id : ""} · v${info.version}`;
  if (info.llm.serialized) {
    $("serialized").textContent = info.llm.note ||
      "The embedded model answers one request at a time: other questions wait their turn.";
    show($("serialized"));
  }
  state.methods = await api.get("/v1/methods");
  const select = clear($("method"));
  for (const m of state.methods) select.append(el("option", { value: m.name }, m.name));
  select.value = state.methods.some((m) => m.name === "pager") ? "pager" : select.value;
  describeMethod();
}

function describeMethod() {
  const m = state.methods.find((x) => x.name === $("method").value);
  $("method-summary").textContent = m ? `${m.summary}${m.paper ? " — " + m.paper : ""}` : "";
}

function switchTab(name) {
  for (const b of document.querySelectorAll("nav .tab")) b.classList.toggle("active", b.dataset.tab === name);
  for (const v of document.querySelectorAll("main .view")) show(v, v.id === `tab-${name}`);
  if (name === "evals") loadRuns().catch(showError);
  if (name === "kbs") loadKbs().catch(showError);
}

async function start() {
  showError(null);
  try {
    await loadInfo();
    await loadKbs();
    show($("token-form"), false);
    document.body.dataset.ready = "1";
  } catch (err) {
    showError(err);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll("nav .tab")) b.addEventListener("click", () => switchTab(b.dataset.tab));
  $("ask-form").addEventListener("submit", ask);
  $("kb-form").addEventListener("submit", addKb);
  $("method").addEventListener("change", describeMethod);
  $("chunk-close").addEventListener("click", () => show($("chunk-box"), false));
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    api.setToken($("token").value.trim());
    start();
  });
  start();
});
