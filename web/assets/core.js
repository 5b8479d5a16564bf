// Shared state and helpers: the live store the watch stream fills, the
// API calls (through /ui/proxy, with the CSRF token on writes), and small
// formatters. Views read the store and never mutate it.
export const RESOURCES = ['namespaces', 'nodes', 'pods', 'services', 'endpointslices', 'deployments', 'events', 'configmaps', 'serviceaccounts',
  'replicasets', 'daemonsets', 'jobs', 'cronjobs', 'horizontalpodautoscalers', 'persistentvolumeclaims', 'persistentvolumes', 'storageclasses'];

export const state = {
  session: null, // {user, readOnly, csrf, trace}
  store: Object.fromEntries(RESOURCES.map((r) => [r, new Map()])),
  synced: new Set(), // resources whose initial state has arrived
  errors: {}, // resource -> message of a refused watch
  version: 0, // bumps on every change
};

export const key = (o) => (o.metadata.namespace ? o.metadata.namespace + '/' : '') + o.metadata.name;

export function esc(v) {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

export function list(res, ns) {
  const out = [];
  for (const o of state.store[res].values()) if (!ns || o.metadata.namespace === ns) out.push(o);
  return out;
}

export const byName = (a, b) => (a.metadata.namespace || '').localeCompare(b.metadata.namespace || '') || a.metadata.name.localeCompare(b.metadata.name);

// request calls a dashboard endpoint. It resolves to {ok, status, data}
// and never throws for HTTP errors; a 401 triggers the login screen.
export async function request(method, url, body, contentType) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && state.session) headers['X-Skiff-CSRF'] = state.session.csrf;
  if (body !== undefined) headers['Content-Type'] = contentType || 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)), credentials: 'same-origin' });
  } catch (e) {
    return { ok: false, status: 0, data: { message: String(e) } };
  }
  const text = await res.text();
  let data = text;
  if ((res.headers.get('Content-Type') || '').includes('json')) {
    try { data = JSON.parse(text); } catch (e) { /* keep text */ }
  }
  if (res.status === 401 && hooks.unauthorized) hooks.unauthorized();
  return { ok: res.ok, status: res.status, data };
}

export const apiCall = (method, path, body, contentType) => request(method, '/ui/proxy' + path, body, contentType);

export const hooks = { unauthorized: null, changed: null };

export function errMsg(r) {
  if (r.data && typeof r.data === 'object' && r.data.message) return r.data.message;
  if (typeof r.data === 'string' && r.data) return r.data.slice(0, 300);
  return 'HTTP ' + r.status;
}

export function age(ts) {
  if (!ts) return '';
  const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 120) return Math.floor(s) + 's';
  if (s < 7200) return Math.floor(s / 60) + 'm';
  if (s < 172800) return Math.floor(s / 3600) + 'h';
  return Math.floor(s / 86400) + 'd';
}

export function podReady(p) {
  return (p.status?.conditions || []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function podRestarts(p) {
  return (p.status?.containerStatuses || []).reduce((n, c) => n + (c.restartCount || 0), 0);
}

export function nodeReady(n) {
  return (n.status?.conditions || []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function badge(ok, yes, no) {
  return `<span class="badge ${ok ? 'ok' : 'bad'}">${esc(ok ? yes : no)}</span>`;
}

export function matches(selector, labels) {
  if (!selector || !Object.keys(selector).length) return false;
  labels = labels || {};
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

// sliceIndex groups EndpointSlices by "namespace/service".
export function sliceIndex() {
  const idx = new Map();
  for (const s of state.store.endpointslices.values()) {
    const svc = s.metadata.labels?.['kubernetes.io/service-name'];
    if (!svc) continue;
    const k = s.metadata.namespace + '/' + svc;
    if (!idx.has(k)) idx.set(k, []);
    idx.get(k).push(s);
  }
  return idx;
}

// endpointCounts counts a service's endpoints across its slices: an
// endpoint is ready unless its ready condition is false (as kube-proxy).
export function endpointCounts(slices) {
  let ready = 0, total = 0;
  for (const s of slices || []) {
    for (const e of s.endpoints || []) {
      total++;
      if (e.conditions?.ready !== false) ready++;
    }
  }
  return { ready, total };
}

export function portsText(svc) {
  return (svc.spec?.ports || []).map((p) => {
    let s = String(p.port);
    if (p.targetPort !== undefined && String(p.targetPort) !== String(p.port)) s += ':' + p.targetPort;
    if (p.nodePort) s += '→' + p.nodePort;
    return s + '/' + (p.protocol || 'TCP');
  }).join(', ');
}

export function externalIPs(svc) {
  const out = [...(svc.spec?.externalIPs || [])];
  for (const i of svc.status?.loadBalancer?.ingress || []) out.push(i.ip || i.hostname);
  return out;
}

// size formats a byte count: 512 B, 1.5 KiB, 2.0 MiB.
export function size(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1024 / 1024).toFixed(1) + ' MiB';
}

// b64len is the length in bytes of a base64 string's decoded value.
export function b64len(s) {
  s = String(s || '');
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor(s.length * 3 / 4) - pad);
}

// utf8len is the length in bytes of a string in UTF-8.
export const utf8len = (s) => new TextEncoder().encode(String(s ?? '')).length;
