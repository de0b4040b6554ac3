// Talking to the server: the session cookie authenticates (HttpOnly: this code never sees a token),
// every state-changing request carries the CSRF token, and an expired access token is refreshed
// once, silently, before the request is retried. When the session cannot be refreshed the page is
// told ("session-ended") and asks the person to sign in again.

export class ApiError extends Error {
  constructor(status, detail, retryAfter = null) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
let refreshing = null;
let refreshTimer = null;

export function csrfToken() {
  const m = document.cookie.match(/(?:^|;\s*)thotqen_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : "";
}

function sessionEnded(reason) {
  clearTimeout(refreshTimer);
  window.dispatchEvent(new CustomEvent("session-ended", { detail: reason }));
}

// Refresh a little before the access token expires, so requests rarely meet a 401 at all.
export function scheduleRefresh(expiresIn) {
  clearTimeout(refreshTimer);
  if (expiresIn) refreshTimer = setTimeout(() => refreshSession().catch(() => {}), expiresIn * 800);
}

export function stopRefresh() {
  clearTimeout(refreshTimer);
}

export function refreshSession() {
  // one refresh at a time: the refresh token is single-use
  refreshing ??= (async () => {
    try {
      const res = await fetch("/api/session/refresh", {
        method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrfToken() },
      });
      if (!res.ok) return false;
      const body = await res.json();
      scheduleRefresh(body.expires_in);
      return true;
    } catch {
      return false;
    } finally {
      setTimeout(() => { refreshing = null; }, 0);
    }
  })();
  return refreshing;
}

async function errorOf(res) {
  let detail = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (typeof body.detail === "string") detail = body.detail;
    else if (Array.isArray(body.detail) && body.detail[0]?.msg) detail = body.detail[0].msg;
  } catch { /* not JSON */ }
  const retry = res.headers.get("Retry-After");
  return new ApiError(res.status, detail, retry ? Number(retry) : null);
}

// fetch with the session: returns the Response (ok), or throws ApiError.
export async function request(path, { method = "GET", json, body, headers = {}, signal, retry = true } = {}) {
  const h = new Headers(headers);
  if (json !== undefined) {
    h.set("Content-Type", "application/json");
    body = JSON.stringify(json);
  }
  if (UNSAFE.has(method)) h.set("X-CSRF-Token", csrfToken());
  const res = await fetch(path, { method, headers: h, body, signal, credentials: "same-origin" });
  if (res.status === 401 && retry && !path.startsWith("/api/session")) {
    if (await refreshSession()) return request(path, { method, json, body: json === undefined ? body : undefined,
                                                       headers, signal, retry: false });
    sessionEnded("expired");
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

export async function api(path, options = {}) {
  const res = await request(path, options);
  if (res.status === 204) return null;
  return res.json();
}

// Every document the user may read (`workspaceId`: that workspace's only): GET /api/documents
// answers a page at a time (DOCUMENT_PAGE_MAX).
export async function allDocuments(workspaceId = null) {
  const all = [];
  const where = workspaceId === null ? [] : [`workspace_id=${workspaceId}`];
  for (let offset = 0; offset !== null;) {
    // the first page keeps the plain URL when it can (caches and the tests' routes know that one)
    const query = [...where, ...(offset ? [`offset=${offset}`] : [])].join("&");
    const { documents, next_offset: next } = await api(query ? `/api/documents?${query}` : "/api/documents");
    all.push(...documents);
    offset = next ?? null;
  }
  return { documents: all };
}

// Server-Sent Events from a fetch response (POST streams cannot use EventSource).
// Yields {event, data, receivedAt}: receivedAt is when the bytes arrived (for the latency metric).
export async function* readEvents(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const receivedAt = performance.now();
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")), receivedAt };
    }
  }
}

// Upload one file with progress (XMLHttpRequest reports upload progress; fetch does not); `path`
// names the space it goes to (`?workspace_id=`), the personal space by default.
export function uploadFile(file, onProgress, path = "/api/documents", retry = true) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.setRequestHeader("X-CSRF-Token", csrfToken());
    xhr.responseType = "json";
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
    xhr.onerror = () => reject(new ApiError(0, "the upload failed: the server could not be reached"));
    xhr.onload = async () => {
      if (xhr.status === 401 && retry) {
        if (await refreshSession()) { uploadFile(file, onProgress, path, false).then(resolve, reject); return; }
        sessionEnded("expired");
      }
      if (xhr.status >= 200 && xhr.status < 300) { resolve(xhr.response); return; }
      const body = xhr.response || {};
      const retryAfter = xhr.getResponseHeader("Retry-After");
      reject(new ApiError(xhr.status, typeof body.detail === "string" ? body.detail : `${xhr.status} error`,
                          retryAfter ? Number(retryAfter) : null));
    };
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}
