// Building the page from data. Every piece of document or model text goes in through
// textContent (el()'s string children) or a form value, never as HTML: documents are untrusted.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

export function show(node, visible = true) {
  node.hidden = !visible;
  return node;
}

export function fmt(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(3);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

export function table(columns, rows, cell = (v) => fmt(v)) {
  return el("table", {},
    el("thead", {}, el("tr", {}, columns.map((c) => el("th", {}, c)))),
    el("tbody", {}, rows.map((row, i) => el("tr", {}, row.map((v, j) => el("td", {}, cell(v, i, j)))))));
}

export function keyValues(pairs) {
  return el("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined).map(([k, v]) =>
    [el("dt", {}, k), el("dd", {}, fmt(v))]));
}

// -- PAGER: the page as an outline of slots -------------------------------------------------
// "# Title", then "## Section" / "### Sub" headings, each followed by its content or
// "<TO BE FILLED>"; returns {title, sections: [{title, level, content}]}
export function parsePage(text) {
  const page = { title: "", sections: [] };
  let current = null;
  for (const line of String(text || "").split("\n")) {
    const m = /^(#{1,6})\s+(.*)$/.exec(line);
    if (m && m[1].length === 1 && !page.title && !current) {
      page.title = m[2].trim();
    } else if (m) {
      current = { title: m[2].trim(), level: m[1].length, content: [] };
      page.sections.push(current);
    } else if (current && line.trim()) {
      current.content.push(line);
    }
  }
  for (const s of page.sections) s.content = s.content.join("\n").trim();
  return page;
}

export const TO_BE_FILLED = "<TO BE FILLED>";
