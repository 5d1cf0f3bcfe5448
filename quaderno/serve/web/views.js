// What each method shows: PAGER's slots filling live, the missing-knowledge judgment and its
// rounds, DocSage's schema, tables, SQL and result rows with their sources, the gate's
// decision. Text goes in with el() (textContent) only.

import { clear, el, fmt, keyValues, parsePage, show, table, TO_BE_FILLED } from "./render.js";

const $ = (id) => document.getElementById(id);

// -- PAGER ----------------------------------------------------------------------------------
export class PageView {
  constructor(openChunk) {
    this.openChunk = openChunk;
    this.slots = new Map(); // section title -> {li, query, docs, content}
    this.pending = null; // the section whose sub-query / retrieval / fill comes next
  }

  reset() {
    this.slots.clear();
    this.pending = null;
    clear($("slots"));
    $("page-title").textContent = "";
    show($("page-box"), false);
  }

  outline(pageText) {
    const page = parsePage(pageText);
    $("page-title").textContent = page.title;
    clear($("slots"));
    this.slots.clear();
    for (const s of page.sections) this.slot(s.title, s.level, s.content);
    show($("page-box"));
  }

  slot(title, level = 2, content = TO_BE_FILLED) {
    const query = el("div", { class: "subquery" });
    const docs = el("ul", { class: "docs" });
    const body = el("p", { class: "slot-content" });
    const li = el("li", { class: `slot level-${level}`, dataset: { section: title } },
      el("div", { class: "slot-title" }, title), query, docs, body);
    const slot = { li, query, docs, body };
    this.slots.set(title, slot);
    $("slots").append(li);
    this.fill(title, content);
    return slot;
  }

  get(title) {
    return this.slots.get(title) || this.slot(title);
  }

  subquery(section, text) {
    this.pending = section;
    const slot = this.get(section);
    slot.li.classList.add("active");
    slot.query.textContent = `→ ${text}`;
  }

  retrieved(titles) {
    if (this.pending === null) return;
    const slot = this.get(this.pending);
    clear(slot.docs);
    for (const t of titles || []) slot.docs.append(el("li", {}, t || "(untitled)"));
  }

  fill(section, content) {
    const slot = this.get(section);
    const filled = content && content.trim() && content.trim() !== TO_BE_FILLED;
    slot.body.textContent = filled ? content : TO_BE_FILLED;
    slot.li.classList.toggle("filled", Boolean(filled));
    if (filled) slot.li.classList.remove("active");
  }

  // the final page (details.page): sub-queries and sources as citations
  final(page, evidence) {
    const byChunk = new Map(evidence.map((e) => [e.chunk_id, e]));
    $("page-title").textContent = page.title || "";
    for (const s of page.sections || []) {
      const slot = this.get(s.title);
      if (s.sub_query) slot.query.textContent = `→ ${s.sub_query}`;
      this.fill(s.title, s.content);
      clear(slot.docs);
      for (const id of s.chunk_ids || []) {
        const e = byChunk.get(id);
        slot.docs.append(el("li", {}, e
          ? el("a", { href: "#", class: "cite", onclick: (ev) => { ev.preventDefault(); this.openChunk(e.kb, id); } },
            `[${e.n}] ${e.title || id}`)
          : id));
      }
    }
    show($("page-box"));
  }
}

// -- missing-knowledge RAG ------------------------------------------------------------------
export function misknowView(d, rounds) {
  const j = d.judgment || {};
  const view = clear($("misknow-view"));
  view.append(
    keyValues([["first answer", d.first_answer], ["path", d.path],
      ["knowledge missing", j.judge === undefined ? null : j.judge],
      ["duplicates skipped (MD5)", d.duplicates_skipped]]),
    j.thought ? el("p", { class: "thought" }, j.thought) : null,
    (j.missing_knowledge || []).length
      ? el("div", {}, el("h3", {}, "What is missing"), el("ul", {}, j.missing_knowledge.map((m) => el("li", {}, m))))
      : null,
    (j.query || []).length
      ? el("div", {}, el("h3", {}, "Follow-up queries"), el("ul", { class: "queries" }, j.query.map((q) => el("li", {}, q))))
      : null,
    el("h3", {}, "Retrieval rounds"),
    el("ol", { class: "rounds" }, (rounds || []).map((r, i) => el("li", {}, `round ${i + 1}: ${r.length} chunks — ${r.join(", ")}`))));
  show($("misknow-box"));
}

// -- DocSage --------------------------------------------------------------------------------
export function docsageView(d, openChunkAnyKb) {
  const view = clear($("docsage-view"));
  const schema = d.db_schema;
  if (schema) {
    view.append(el("h3", {}, "Schema"));
    for (const t of schema.tables || []) {
      view.append(el("div", { class: "schema-table" },
        el("div", { class: "strong" }, t.name, t.description ? ` — ${t.description}` : ""),
        el("ul", {}, (t.columns || []).map((c) => el("li", {},
          el("code", {}, c.name), ` ${c.type}`, c.unit ? ` (${c.unit})` : "",
          (t.primary_key || []).includes(c.name) ? " · primary key" : "",
          c.description ? ` — ${c.description}` : "")))));
    }
  }
  for (const [name, rows] of Object.entries(d.tables || {})) {
    if (!rows.length) continue;
    const cols = Object.keys(rows[0]);
    const size = (d.table_sizes || {})[name];
    const shown = size === undefined || size > rows.length
      ? `first ${rows.length}${size === undefined ? "" : ` of ${size}`} rows`
      : `${size} row${size === 1 ? "" : "s"}`;
    view.append(el("h3", {}, `Table ${name} (${shown})`),
      table(cols, rows.map((r) => cols.map((c) => r[c]))));
  }
  // ids no chunk states, numbered per chunk before the query (docsage.scoped_ids)
  if ((d.scoped_keys || []).length) {
    view.append(el("h3", {}, "Ids numbered per chunk"),
      el("ul", { class: "scoped-keys" }, d.scoped_keys.map((n) => el("li", {}, n))));
  }
  if ((d.sql || []).length) {
    view.append(el("h3", {}, "SQL"));
    for (const a of d.sql) {
      view.append(el("pre", { class: `sql stage-${a.stage}` }, a.sql),
        el("p", { class: "muted" }, `${a.stage}${a.error ? ": " + a.error : ""} · ${a.rows} rows`));
    }
  }
  const r = d.result;
  if (r && r.columns) {
    view.append(el("h3", {}, `Result (lineage ${r.lineage})`));
    const cols = [...r.columns, "sources"];
    const rows = r.rows.map((row, i) => [...row, i]);
    // a number as its source chunk writes it ("USD 63907.4M"), shown as text beside it
    const written = new Map((r.stated || []).map((s) => [`${s.row - 1}:${s.column}`, s.quote]));
    view.append(table(cols, rows, (v, i, j) => {
      const quote = j < r.columns.length ? written.get(`${i}:${r.columns[j]}`) : undefined;
      if (quote !== undefined) return el("span", {}, fmt(v), el("span", { class: "muted written" }, ` (written "${quote}")`));
      if (j < r.columns.length) return fmt(v);
      const sources = r.sources[i] || [];
      const ids = [...new Set(sources.flatMap((s) => [s.chunk_id, ...Object.values(s.cell_chunks || {})]))];
      return el("span", {}, ids.map((id) => el("a", {
        href: "#", class: "cite source", onclick: (ev) => { ev.preventDefault(); openChunkAnyKb(id); },
      }, id)));
    }));
  }
  // numbers the model's answer gave that no result row holds (docsage.grounded)
  if ((d.ungrounded || []).length) {
    const numbers = d.ungrounded.join(", ");
    view.append(el("p", { class: "ungrounded" }, d.from_rows
      ? `The model's answers gave ${numbers}, which no result row holds: the answer is the result rows.`
      : `The model's first answer gave ${numbers}, which no result row holds; asked once more, it answered from the result.`));
  } else if (d.from_rows) {
    // "not found" from rows with values, or no number from a one-number result
    const why = d.from_rows_why || "the model's answer was not borne out by the result";
    view.append(el("p", { class: "ungrounded" },
      `${why.charAt(0).toUpperCase()}${why.slice(1)}: the answer is the result rows.`));
  }
  // link rows left out because their chunk says the relationship ended (ended.py)
  const ended = (d.clear && d.clear.links_ended) || [];
  if (ended.length) {
    view.append(el("h3", {}, `Left out as ended (${ended.length})`),
      el("ul", { class: "links-ended" }, ended.map((e) => el("li", {},
        `${e.table}(${Object.values(e.values).join(", ")}) `,
        el("a", { href: "#", class: "cite source", onclick: (ev) => { ev.preventDefault(); openChunkAnyKb(e.said_in); } }, e.said_in),
        `: "${e.quote}"`))));
  }
  show($("docsage-box"));
}

// -- the gate -------------------------------------------------------------------------------
export function gateView(g) {
  const view = clear($("gate-view"));
  view.append(el("p", { class: g.retrieve ? "decision retrieve" : "decision no-retrieve" },
    g.retrieve ? "retrieve" : "answer closed-book (no retrieval)"),
  keyValues([["gate", g.gate], ["branch of Eq. 7", g.branch], ["F_SN", g.f_sn], ["F_RQM", g.f_rqm],
    ["p", g.p], ["trust", g.trust], ["g_a", g.g_a], ["g_w", g.g_w],
    ["thresholds", g.thresholds], ["novelty fired", g.novelty_fired], ["nearest similarity", g.max_sim],
    ["labels' LLM", g.labels_llm], ["seconds", g.seconds]]),
  (g.neighbours || []).length ? el("div", {}, el("h3", {}, "Nearest past questions"),
    el("ul", {}, g.neighbours.map((q) => el("li", {}, q)))) : null,
  (g.notes || []).length ? el("ul", { class: "notes" }, g.notes.map((n) => el("li", {}, n))) : null);
  show($("gate-box"));
}
