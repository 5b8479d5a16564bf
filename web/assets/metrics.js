// kubectl top's figures for the pods and nodes pages: the server's
// metrics.k8s.io/v1beta1 lists (netagent measures, server/metricsapi
// serves), read through /ui/proxy every pollMs while one of those pages
// is shown. They are not watchable (metrics-server has no watch either),
// so they are polled. A server without metrics (no agent has reported
// yet) leaves the columns empty; the error is kept for the page's hint.
import { state, request } from './core.js';

export const pollMs = 10000;

state.metrics = { pods: new Map(), nodes: new Map(), at: 0, error: '' };

const SUFFIX = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

// quantity parses a Kubernetes quantity ("250m", "123456789n", "1Gi",
// "1e3") to a number; NaN when it is not one.
export function quantity(q) {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(q ?? ''));
  if (!m || !(m[2] in SUFFIX)) return NaN;
  return parseFloat(m[1]) * SUFFIX[m[2]];
}

// cpuText and memText print as kubectl top does: millicores, Mi.
export const cpuText = (cores) => (Number.isFinite(cores) ? Math.round(cores * 1000) + 'm' : '');
export const memText = (bytes) => (Number.isFinite(bytes) ? Math.round(bytes / 2 ** 20) + 'Mi' : '');

// usage sums a pod's containers (kubectl top pod's figure) or is a node's.
export function podUsage(pm) {
  let cpu = 0, mem = 0;
  for (const c of pm.containers || []) { cpu += quantity(c.usage?.cpu); mem += quantity(c.usage?.memory); }
  return { cpu, mem };
}

export function nodeUsage(nm) {
  return { cpu: quantity(nm.usage?.cpu), mem: quantity(nm.usage?.memory) };
}

// fetchMetrics reads both lists once and replaces state.metrics.
export async function fetchMetrics() {
  const [p, n] = await Promise.all([
    request('GET', '/ui/proxy/apis/metrics.k8s.io/v1beta1/pods'),
    request('GET', '/ui/proxy/apis/metrics.k8s.io/v1beta1/nodes'),
  ]);
  const pods = new Map(), nodes = new Map();
  if (p.ok) for (const m of p.data.items || []) pods.set(m.metadata.namespace + '/' + m.metadata.name, podUsage(m));
  if (n.ok) for (const m of n.data.items || []) nodes.set(m.metadata.name, nodeUsage(m));
  state.metrics = { pods, nodes, at: Date.now(), error: p.ok && n.ok ? '' : (p.data?.message || n.data?.message || 'HTTP ' + (p.ok ? n.status : p.status)) };
}
