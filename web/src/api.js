// The workbench's calls to the server (the contract of `eqm serve`): every call answers the
// parsed JSON or throws an ApiError carrying the HTTP status, the server's one-sentence error
// and its diagnostics, so the page can show each failure as a message instead of breaking.

export class ApiError extends Error {
  constructor(status, message, diagnostics = [], body = null) {
    super(message);
    this.status = status;
    this.diagnostics = diagnostics || [];
    this.body = body;
  }
}

// The token normally travels in the HttpOnly cookie set by the server's redirect; a token still
// in the address (a page opened without cookies) is sent as a header as well.
const queryToken = new URLSearchParams(window.location.search).get('token');

function headers(extra = {}) {
  const h = { ...extra };
  if (queryToken) h.Authorization = `token ${queryToken}`;
  return h;
}

async function parse(response) {
  const type = response.headers.get('content-type') || '';
  if (type.includes('application/json')) {
    try {
      return await response.json();
    } catch {
      return null;
    }
  }
  return await response.text();
}

function explainStatus(status) {
  if (status === 401) return 'The server did not accept the token: open the address that `eqm serve` printed.';
  if (status === 403) return 'The server refused the request (outside the folder, or a bad Host).';
  if (status === 404) return 'Not found.';
  if (status === 413) return 'The request is too large.';
  return `The server answered ${status}.`;
}

export async function request(method, url, body, { raw = false, signal } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method,
      headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal,
    });
  } catch (error) {
    if (error && error.name === 'AbortError') throw error;
    throw new ApiError(0, `The server cannot be reached (${error.message || error}): is \`eqm serve\` still running?`);
  }
  if (raw && response.ok) return response;
  const data = await parse(response);
  if (!response.ok) {
    const message = data && typeof data === 'object' && data.error ? data.error : explainStatus(response.status);
    throw new ApiError(response.status, message, data && data.diagnostics, data);
  }
  return data;
}

export const api = {
  status: () => request('GET', 'api/status'),
  files: () => request('GET', 'api/files'),
  readFile: (path) => request('GET', `api/file?path=${encodeURIComponent(path)}`),
  writeFile: (path, text) => request('PUT', `api/file?path=${encodeURIComponent(path)}`, { text }),
  check: (body, signal) => request('POST', 'api/check', body, { signal }),
  symbols: (body) => request('POST', 'api/symbols', body),
  compile: (body) => request('POST', 'api/compile', body),
  run: (body) => request('POST', 'api/run', body),
  runCsv: (body) => request('POST', 'api/run', { ...body, format: 'csv' }, { raw: true }),
  cancel: (runId) => request('POST', 'api/cancel', { run_id: runId }),
  explain: (body) => request('POST', 'api/explain', body),
  diagram: (body) => request('POST', 'api/diagram', body),
  analyze: (body) => request('POST', 'api/analyze', body),
};

// Offers text as a file download, named `name`.
export function download(name, text, type) {
  const blob = text instanceof Blob ? text : new Blob([text], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// Escapes text for HTML and SVG.
export function esc(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// Formats a number compactly for tables and readouts.
export function fmt(value, digits = 6) {
  if (value === null || value === undefined) return '–';
  if (typeof value !== 'number') return String(value);
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const a = Math.abs(value);
  if (a >= 1e6 || a < 1e-4) return value.toExponential(digits - 2);
  return String(Number(value.toPrecision(digits)));
}
