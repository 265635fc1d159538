// API client for the controller's REST API (/v1, same origin). See docs/api.md.
// Every call sends `Authorization: Bearer <token>`; the token lives in sessionStorage.

const TOKEN_KEY = 'cedana.slurm.token';

export class ApiError extends Error {
  constructor(status, code, message, method, path) {
    super(message);
    this.name = 'ApiError';
    this.status = status; // HTTP status, 0 when the controller could not be reached
    this.code = code; // error.code from the body, e.g. "not_found"
    this.method = method;
    this.path = path;
  }

  // One line for banners: "GET /v1/jobs: 503 unavailable: SLURM not reachable".
  describe() {
    const where = `${this.method} ${this.path}`;
    if (this.status === 0) return `${where}: ${this.message}`;
    return `${where}: ${this.status} ${this.code}: ${this.message}`;
  }
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage unavailable: nothing to clear */
  }
}

let unauthorizedHandler = null;

// Called with the ApiError on any 401 (unless the call passed {noAuthRedirect: true}).
export function onUnauthorized(fn) {
  unauthorizedHandler = fn;
}

// request('GET', '/v1/jobs', {query: {user: 'alice'}}) -> parsed JSON, or null for 204.
export async function request(method, path, opts = {}) {
  const token = opts.token !== undefined ? opts.token : getToken();
  let url = path;
  if (opts.query) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) {
      if (v !== undefined && v !== null && String(v) !== '') qs.set(k, String(v));
    }
    const s = qs.toString();
    if (s) url += (url.includes('?') ? '&' : '?') + s;
  }
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, cache: 'no-store', credentials: 'same-origin' };
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }

  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, 'network', `controller not reachable (${e.message})`, method, url);
  }

  const text = await res.text().catch(() => '');
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const body = data && typeof data === 'object' && data.error ? data.error : {};
    const err = new ApiError(
      res.status,
      body.code || `http_${res.status}`,
      body.message || res.statusText || text.slice(0, 200) || 'request failed',
      method,
      url,
    );
    if (res.status === 401 && !opts.noAuthRedirect && unauthorizedHandler) unauthorizedHandler(err);
    throw err;
  }
  if (res.status === 204) return null;
  return data;
}

// List endpoints return a JSON array. Also accept {"<key>": [...]} / {"items": [...]}.
export function asList(data, key) {
  if (Array.isArray(data)) return data;
  if (data && typeof data === 'object') {
    if (Array.isArray(data[key])) return data[key];
    if (Array.isArray(data.items)) return data.items;
  }
  return [];
}

const enc = encodeURIComponent;

export const api = {
  whoami: (opts) => request('GET', '/v1/whoami', opts),
  jobs: (query) => request('GET', '/v1/jobs', { query }).then((d) => asList(d, 'jobs')),
  jobTimeline: (jobId) => request('GET', `/v1/jobs/${enc(jobId)}/timeline`),
  checkpointJob: (jobId) => request('POST', `/v1/jobs/${enc(jobId)}/checkpoint`, { body: {} }),
  checkpoints: (query) =>
    request('GET', '/v1/checkpoints', { query }).then((d) => asList(d, 'checkpoints')),
  checkpoint: (id) => request('GET', `/v1/checkpoints/${enc(id)}`),
  deleteCheckpoint: (id) => request('DELETE', `/v1/checkpoints/${enc(id)}`),
  restoreCheckpoint: (id, node) =>
    request('POST', `/v1/checkpoints/${enc(id)}/restore`, { body: node ? { node } : {} }),
  operations: (query) =>
    request('GET', '/v1/operations', { query }).then((d) => asList(d, 'operations')),
  policies: () => request('GET', '/v1/policies').then((d) => asList(d, 'policies')),
  createPolicy: (body) => request('POST', '/v1/policies', { body }),
  updatePolicy: (id, body) => request('PUT', `/v1/policies/${enc(id)}`, { body }),
  deletePolicy: (id) => request('DELETE', `/v1/policies/${enc(id)}`),
  nodes: () => request('GET', '/v1/nodes').then((d) => asList(d, 'nodes')),
  maintenance: () => request('GET', '/v1/maintenance').then((d) => asList(d, 'windows')),
};
