// Talking to /v1: the token, the header the server's cross-site guard asks for, errors that
// name the problem, and the server-sent events of /v1/ask/stream read from a fetch body
// (EventSource cannot send headers).

const TOKEN_KEY = "quaderno-token";

export class ApiError extends Error {
  constructor(status, message, hint) {
    super(message);
    this.status = status;
    this.hint = hint || "";
  }
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function headers(extra = {}) {
  const h = { "X-Quaderno": "1", ...extra };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h["Authorization"] = `Bearer ${token}`;
  return h;
}

async function failure(res) {
  let message = `${res.status} ${res.statusText}`;
  let hint = "";
  try {
    const body = await res.json();
    if (body && body.error) {
      message = body.error.message || message;
      hint = body.error.hint || "";
    }
  } catch (e) {
    // not JSON: keep the status line
  }
  return new ApiError(res.status, message, hint);
}

export async function request(method, path, { json, form } = {}) {
  const init = { method, headers: headers() };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (form !== undefined) {
    init.body = form;
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  if (res.status === 204) return null;
  return res.json();
}

export const get = (path) => request("GET", path);
export const post = (path, json) => request("POST", path, { json });

export async function blobUrl(path) {
  const res = await fetch(path, { headers: headers() });
  if (!res.ok) throw await failure(res);
  return URL.createObjectURL(await res.blob());
}

// POST /v1/ask/stream; onEvent(name, data) for each event as it arrives
export async function stream(path, body, onEvent, signal) {
  const res = await fetch(path, {
    method: "POST", signal,
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = parseBlock(block);
      if (event) onEvent(event.name, event.data);
    }
  }
}

function parseBlock(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  return { name, data: JSON.parse(data.join("\n")) };
}
