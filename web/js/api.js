// The REST client (docs/api.md): JSON in and out, the bearer token from localStorage.

const TOKEN_KEY = "heraldbench.token";
const TOKEN_COOKIE = "heraldbench_token";

export class ApiError extends Error {
  constructor(status, detail, message) {
    super(message);
    this.status = status;
    this.detail = detail;
  }

  /** The 422 list of {field, message, value}, or []. */
  get fieldErrors() {
    return Array.isArray(this.detail) ? this.detail : [];
  }
}

export function getToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

/** The token as a cookie too: the MLflow UI the service serves (another port of this host: cookies
 * are per host) asks for it under HERALDBENCH_PROTECT_READS, and a browser sends it no header. */
function setTokenCookie(token) {
  const value = token ? encodeURIComponent(token) : "";
  const age = token ? "" : "; max-age=0";
  document.cookie = `${TOKEN_COOKIE}=${value}; path=/; SameSite=Strict${age}`;
}

export function setToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage disabled: the token lives for this page only */
  }
  setTokenCookie(token);
  window.dispatchEvent(new CustomEvent("hb:token"));
}

function describe(status, detail) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => (d && d.field ? `${d.field}: ${d.message}` : d && d.msg ? d.msg : JSON.stringify(d))).join("; ");
  }
  if (status === 401) return "Authentication required: this action needs an API token.";
  if (status === 404) return "Not found.";
  return `Request failed (HTTP ${status}).`;
}

export async function request(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch (err) {
    throw new ApiError(0, null, "Cannot reach the heraldbench service. Is it running?");
  }
  let payload = null;
  const text = await response.text();
  if (text) {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = text;
    }
  }
  if (!response.ok) {
    const detail = payload && typeof payload === "object" && "detail" in payload ? payload.detail : payload;
    const error = new ApiError(response.status, detail, describe(response.status, detail));
    if (response.status === 401) {
      // Announced globally unless the page shows the refusal itself (apiErrorBox marks it handled).
      setTimeout(() => {
        if (!error.handled) window.dispatchEvent(new CustomEvent("hb:unauthorized", { detail: error }));
      }, 0);
    }
    throw error;
  }
  return payload;
}

export const api = {
  health: () => request("GET", "/api/health"),
  config: () => request("GET", "/api/config"),
  presets: () => request("GET", "/api/presets"),
  validate: (spec) => request("POST", "/api/specs/validate", spec),
  experiments: ({ status, limit = 20, offset = 0 } = {}) => {
    const q = new URLSearchParams({ limit: String(limit), offset: String(offset) });
    if (status) q.set("status", status);
    return request("GET", `/api/experiments?${q}`);
  },
  experiment: (id) => request("GET", `/api/experiments/${encodeURIComponent(id)}`),
  submit: (spec) => request("POST", "/api/experiments", spec),
  cancel: (id) => request("POST", `/api/experiments/${encodeURIComponent(id)}/cancel`),
  studies: () => request("GET", "/api/studies"),
  study: (id) => request("GET", `/api/studies/${encodeURIComponent(id)}`),
  submitStudy: (spec) => request("POST", "/api/studies", spec),
  datasets: () => request("GET", "/api/datasets"),
  dataset: (id) => request("GET", `/api/datasets/${encodeURIComponent(id)}`),
  addDataset: (body) => request("POST", "/api/datasets", body),
};

/** A list endpoint's items, whether it answers {data, count} or a bare list. */
export function items(payload) {
  if (Array.isArray(payload)) return payload;
  if (payload && Array.isArray(payload.data)) return payload.data;
  return [];
}

let configPromise = null;
/** GET /api/config once per page load (falls back to defaults when it fails). */
export function config() {
  if (!configPromise) {
    configPromise = api.config().catch((err) => ({
      auth_required: err.status === 401, // reads are protected too: the token is needed first
      unavailable: true,
      mlflow_ui_url: null,
      dask_dashboard_url: null,
      schedulers: {},
      profiles: [],
    }));
  }
  return configPromise;
}

/** Forget the cached configuration (after the token changes). */
export function reloadConfig() {
  configPromise = null;
  return config();
}
