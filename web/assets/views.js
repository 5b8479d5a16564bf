// The pages. Each view has mount(el, route), which draws the page's
// frame and forms once, and update(el, route), which redraws the live
// parts from the store (called on every change, at most once a frame).
import { t } from './i18n.js';
import {
  state, esc, list, byName, apiCall, request, errMsg, age, podReady, podRestarts, nodeReady,
  badge, matches, sliceIndex, endpointCounts, portsText, externalIPs, key,
} from './core.js';
import { drawTrace } from './trace.js';
import { ro, roAttr, table, gridTable, namespaceFilter, fillNamespaces, bindNamespaceFilter, say } from './ui.js';
import { kindViews, serviceExtras } from './kinds.js';
import { workloadViews } from './workloads.js';
import { quantity, cpuText, memText } from './metrics.js';

// ---- overview
const overview = {
  mount(el) {
    el.innerHTML = `<h1>${esc(t('ov.title'))}</h1><div class="cards" id="cards"></div>
      <h2>${esc(t('ov.health'))}</h2><p id="health">${esc(t('loading'))}</p><ul id="watch-errors" class="error"></ul>
      <h2>${esc(t('node.title'))}</h2><div id="ov-nodes"></div>
      <h2>${esc(t('ov.attention'))}</h2><div id="ov-attention"></div>
      <h2>${esc(t('ov.events'))}</h2><div id="ov-events"></div>`;
    this.health(el);
  },
  async health(el) {
    const r = await request('GET', '/ui/proxy/readyz');
    const h = el.querySelector('#health');
    if (h) h.innerHTML = badge(r.ok, t('healthy'), t('unhealthy')) + ' <code>/readyz</code> ' + esc(typeof r.data === 'string' ? r.data.trim() : errMsg(r));
  },
  update(el) {
    const nodes = list('nodes'), pods = list('pods'), deps = list('deployments');
    const card = (n, of, l) => `<div class="card"><div class="n">${n}${of !== null ? ` <small>/ ${of}</small>` : ''}</div><div class="l">${esc(l)}</div></div>`;
    el.querySelector('#cards').innerHTML =
      card(nodes.filter(nodeReady).length, nodes.length, t('ov.nodes')) +
      card(pods.filter((p) => p.status?.phase === 'Running').length, pods.length, t('ov.pods')) +
      card(state.store.services.size, null, t('ov.services')) +
      card(deps.filter((d) => (d.status?.availableReplicas || 0) >= (d.spec?.replicas ?? 1)).length, deps.length, t('ov.deployments'));
    el.querySelector('#watch-errors').innerHTML = Object.entries(state.errors).map(([r, m]) => `<li>${esc(r)}: ${esc(m)}</li>`).join('');
    const perNode = new Map();
    for (const p of pods) if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) || 0) + 1);
    el.querySelector('#ov-nodes').innerHTML = nodes.length ? table(t('node.title'), [t('name'), t('ready'), t('podCIDR'), t('nav.pods')],
      nodes.sort(byName).map((n) => `<tr><td>${esc(n.metadata.name)}</td><td>${badge(nodeReady(n), t('ready'), t('notReady'))}</td><td class="mono">${esc(n.spec?.podCIDR || '')}</td><td class="num">${perNode.get(n.metadata.name) || 0}</td></tr>`)) : `<p class="hint">${esc(t('none'))}</p>`;
    // Services whose selector picks pods but which have endpoints not ready.
    const idx = sliceIndex();
    const bad = list('services').sort(byName).filter((s) => s.spec?.selector && Object.keys(s.spec.selector).length).map((s) => [s, endpointCounts(idx.get(s.metadata.namespace + '/' + s.metadata.name))]).filter(([, c]) => c.ready < c.total || c.total === 0);
    el.querySelector('#ov-attention').innerHTML = bad.length ? `<ul>${bad.slice(0, 20).map(([s, c]) => `<li><a href="#/services/${encodeURIComponent(s.metadata.namespace)}/${encodeURIComponent(s.metadata.name)}">${esc(s.metadata.namespace + '/' + s.metadata.name)}</a> <span class="badge ${c.ready ? 'warn' : 'bad'}">${esc(t('svc.readyOf', c))}</span></li>`).join('')}</ul>` : `<p class="hint">${esc(t('ov.allGood'))}</p>`;
    el.querySelector('#ov-events').innerHTML = eventsTable(10);
  },
};

// ---- services
const services = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('svc.title'))}</h1>${namespaceFilter(route)}<p id="svc-count" class="hint"></p><div id="svc-table"></div>`;
    bindNamespaceFilter(el, route);
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    performance.mark('skiff-services-start');
    const idx = sliceIndex();
    const svcs = list('services', ns).sort(byName);
    const rows = svcs.map((s) => {
      const m = s.metadata;
      const c = endpointCounts(idx.get(m.namespace + '/' + m.name));
      const hasSel = s.spec?.selector && Object.keys(s.spec.selector).length;
      const epText = s.spec?.type === 'ExternalName' ? '—' : `<span class="badge ${c.total && c.ready === c.total ? 'ok' : c.ready ? 'warn' : (hasSel || c.total ? 'bad' : 'warn')}" data-endpoints="${c.ready}/${c.total}" aria-label="${esc(t('svc.readyOf', c))}">${c.ready}/${c.total}</span>`;
      return `<div class="gr" role="row" data-service="${esc(m.namespace + '/' + m.name)}"><span role="cell"><a href="#/services/${encodeURIComponent(m.namespace)}/${encodeURIComponent(m.name)}">${esc(m.name)}</a></span><span role="cell">${esc(m.namespace)}</span><span role="cell">${esc(s.spec?.type || 'ClusterIP')}</span><span role="cell" class="mono">${esc(s.spec?.clusterIP || '')}</span><span role="cell" class="mono">${esc(portsText(s))}</span><span role="cell" class="mono">${esc(externalIPs(s).join(', ') || (s.spec?.externalName || ''))}</span><span role="cell" class="num">${epText}</span><span role="cell">${esc(age(m.creationTimestamp))}</span></div>`;
    });
    el.querySelector('#svc-count').textContent = t('svc.count', { n: svcs.length });
    const tbl = el.querySelector('#svc-table');
    tbl.innerHTML = gridTable(t('svc.title'), [t('name'), t('namespace'), t('type'), t('clusterIP'), t('ports'), t('externalIPs'), t('endpoints'), t('age')], rows, 'svc');
    void tbl.offsetHeight; // include layout in the measure
    performance.measure('skiff-services-render', 'skiff-services-start');
    // ...and up to the frame after it is painted.
    requestAnimationFrame(() => setTimeout(() => performance.measure('skiff-services-paint', 'skiff-services-start'), 0));
  },
};

// ---- service detail
const serviceDetail = {
  mount(el, route) {
    const [, ns, name] = route.parts;
    const traceOK = state.session?.trace;
    el.innerHTML = `<p><a href="#/services?ns=${encodeURIComponent(ns)}">← ${esc(t('svc.back'))}</a></p>
      <h1>${esc(t('svc.detail', { name: ns + '/' + name }))}</h1>
      <div id="svc-info"></div>
      <h2>${esc(t('svc.slices'))}</h2><div id="svc-slices"></div>
      <h2>${esc(t('svc.podsByNode'))}</h2><div id="svc-pods"></div>
      <h2 id="trace-h">${esc(t('trace.title'))}</h2>
      ${traceOK ? `<form id="trace-form" class="form" aria-labelledby="trace-h">
        <label for="trace-client">${esc(t('trace.client'))}</label><select id="trace-client" required></select>
        <label for="trace-url">${esc(t('trace.url'))}</label><input id="trace-url" required spellcheck="false" autocomplete="off">
        <div class="full"><button type="submit" id="trace-run">${esc(t('trace.run'))}</button> <span id="trace-msg" role="status"></span></div>
      </form>` : `<p class="hint">${esc(t('trace.unavailable'))}</p>`}
      <div id="trace-out" aria-live="polite"></div>
      ${serviceExtras.html()}`;
    // The DNS names and the Endpoints come below the trace form: they load
    // after the page is drawn, and above it they would move the form
    // under the pointer of someone about to press its button.
    const form = el.querySelector('#trace-form');
    if (!form) return;
    el.querySelector('#trace-url').addEventListener('input', (e) => { e.target.dataset.touched = '1'; });
    el.querySelector('#trace-client').addEventListener('change', (e) => { e.target.dataset.touched = '1'; });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const [cns, cpod] = el.querySelector('#trace-client').value.split('/');
      const url = el.querySelector('#trace-url').value.trim();
      const msg = el.querySelector('#trace-msg');
      msg.className = ''; msg.textContent = t('trace.running');
      const q = new URLSearchParams({ namespace: cns, pod: cpod, url });
      const r = await request('GET', '/ui/trace?' + q);
      if (!r.ok) { say(msg, false, t('trace.failed', { msg: errMsg(r) })); return; }
      msg.textContent = '';
      el.querySelector('#trace-out').innerHTML = drawTrace(r.data);
    });
  },
  update(el, route) {
    const [, ns, name] = route.parts;
    const svc = state.store.services.get(ns + '/' + name);
    const info = el.querySelector('#svc-info');
    if (!svc) { info.innerHTML = `<p class="error">${esc(t('svc.notFound', { name }))}</p>`; return; }
    const sel = svc.spec?.selector || {};
    const slices = sliceIndex().get(ns + '/' + name) || [];
    const c = endpointCounts(slices);
    serviceExtras.update(el, ns, name, svc, slices);
    info.innerHTML = `<dl class="kv">
      <dt>${esc(t('type'))}</dt><dd>${esc(svc.spec?.type || 'ClusterIP')}</dd>
      <dt>${esc(t('clusterIP'))}</dt><dd class="mono">${esc((svc.spec?.clusterIPs || [svc.spec?.clusterIP]).join(', '))}</dd>
      <dt>${esc(t('ports'))}</dt><dd class="mono">${esc(portsText(svc))}</dd>
      <dt>${esc(t('externalIPs'))}</dt><dd class="mono">${esc(externalIPs(svc).join(', ') || t('none'))}</dd>
      <dt>${esc(t('selector'))}</dt><dd class="mono">${Object.keys(sel).length ? esc(Object.entries(sel).map(([k, v]) => k + '=' + v).join(', ')) : esc(t('svc.noSelector'))}</dd>
      <dt>${esc(t('endpoints'))}</dt><dd><span class="badge ${c.total && c.ready === c.total ? 'ok' : 'warn'}" data-endpoints="${c.ready}/${c.total}">${esc(t('svc.readyOf', c))}</span></dd></dl>`;
    el.querySelector('#svc-slices').innerHTML = slices.length ? slices.sort(byName).map((s) => {
      const ports = (s.ports || []).map((p) => `${p.name ? p.name + ' ' : ''}${p.port}/${p.protocol || 'TCP'}`).join(', ');
      const rows = (s.endpoints || []).map((e) => {
        const cd = e.conditions || {};
        return `<tr><td class="mono">${esc((e.addresses || []).join(', '))}</td><td>${badge(cd.ready !== false, t('ready'), t('notReady'))} ${cd.serving !== undefined ? badge(cd.serving, t('ep.serving'), t('ep.serving') + ' ✗') : ''} ${cd.terminating ? `<span class="badge warn">${esc(t('ep.terminating'))}</span>` : ''}</td><td>${esc(e.nodeName || '')}</td><td>${esc(e.targetRef?.name || '')}</td></tr>`;
      });
      return `<h3 class="mono">${esc(s.metadata.name)} <small>(${esc(s.addressType)}; ${esc(ports)})</small></h3>` +
        table(s.metadata.name, [t('ep.addresses'), t('ep.conditions'), t('node'), t('pod.title')], rows);
    }).join('') : `<p class="hint">${esc(t('none'))}</p>`;
    // Pods by node.
    const backends = Object.keys(sel).length ? list('pods', ns).filter((p) => matches(sel, p.metadata.labels)) : [];
    const byNode = new Map();
    for (const p of backends.sort(byName)) {
      const n = p.spec?.nodeName || '—';
      if (!byNode.has(n)) byNode.set(n, []);
      byNode.get(n).push(p);
    }
    el.querySelector('#svc-pods').innerHTML = !Object.keys(sel).length ? `<p class="hint">${esc(t('svc.noSelector'))}</p>` :
      !backends.length ? `<p class="hint">${esc(t('svc.noPods'))}</p>` :
      [...byNode.entries()].sort().map(([n, ps]) => `<div class="node"><strong>${esc(t('node'))}: ${esc(n)}</strong><ul>${ps.map((p) =>
        `<li><span class="mono">${esc(p.metadata.name)}</span> <span class="mono">${esc(p.status?.podIP || '')}</span> ${badge(podReady(p), t('ready'), t('notReady'))}</li>`).join('')}</ul></div>`).join('');
    // The trace form's defaults.
    const client = el.querySelector('#trace-client');
    if (!client) return;
    const isRunning = (p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp;
    const here = list('pods', ns).filter(isRunning).sort(byName);
    const running = here.concat(list('pods').filter((p) => p.metadata.namespace !== ns && isRunning(p)).sort(byName)).slice(0, 300);
    const keys = running.map(key);
    const want = keys.join('\n');
    if (client.dataset.opts !== want) {
      const prev = client.value;
      client.innerHTML = running.length ? running.map((p) => `<option value="${esc(key(p))}">${esc(key(p))}${p.spec?.nodeName ? ' @ ' + esc(p.spec.nodeName) : ''}</option>`).join('') : `<option value="">${esc(t('trace.noClient'))}</option>`;
      client.dataset.opts = want;
      if (client.dataset.touched && keys.includes(prev)) client.value = prev;
      else {
        const backendKeys = new Set(backends.map(key));
        const pick = running.find((p) => p.metadata.namespace === ns && !backendKeys.has(key(p))) || running.find((p) => p.metadata.namespace === ns) || running[0];
        if (pick) client.value = key(pick);
      }
    }
    el.querySelector('#trace-run').disabled = !running.length;
    const url = el.querySelector('#trace-url');
    if (!url.dataset.touched) {
      const port = svc.spec?.ports?.[0]?.port;
      url.value = `http://${name}${port ? ':' + port : ''}`;
    }
  },
};

// ---- deployments
const deployments = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('dep.title'))}</h1>${namespaceFilter(route)}<p id="dep-msg" role="status"></p><div id="dep-table"></div>`;
    bindNamespaceFilter(el, route);
    const tbl = el.querySelector('#dep-table');
    tbl.addEventListener('focusout', () => { if (this.pending) { this.pending = false; this.update(el, route); } });
    // Enter in a replicas field scales, as its button does.
    tbl.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' || !e.target.matches('input[data-dep]')) return;
      e.preventDefault();
      tbl.querySelector(`button[data-act="scale"][data-dep="${CSS.escape(e.target.dataset.dep)}"]`)?.click();
    });
    tbl.addEventListener('click', async (e) => {
      const b = e.target.closest('button[data-act]');
      if (!b) return;
      const [ns, name] = b.dataset.dep.split('/');
      const path = `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments/${encodeURIComponent(name)}`;
      const msg = el.querySelector('#dep-msg');
      let r, ok;
      if (b.dataset.act === 'scale') {
        const n = parseInt(tbl.querySelector(`input[data-dep="${CSS.escape(b.dataset.dep)}"]`).value, 10);
        if (!(n >= 0)) return;
        r = await apiCall('PATCH', path, { spec: { replicas: n } }, 'application/merge-patch+json');
        ok = t('dep.scaled', { name, n });
      } else {
        r = await apiCall('PATCH', path, { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } }, 'application/merge-patch+json');
        ok = t('dep.restarted', { name });
      }
      say(msg, r.ok, r.ok ? ok : t(r.status === 403 ? 'forbidden' : 'error', { msg: errMsg(r) }));
    });
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    const tbl = el.querySelector('#dep-table');
    const a = document.activeElement;
    if (a && a.tagName === 'INPUT' && tbl.contains(a)) { this.pending = true; return; }
    const rows = list('deployments', ns).sort(byName).map((d) => {
      const k = key(d), st = d.status || {};
      const want = d.spec?.replicas ?? 1, upd = st.updatedReplicas || 0;
      const done = upd >= want && (st.replicas || 0) === want && (st.availableReplicas || 0) >= want && (st.observedGeneration || 0) >= (d.metadata.generation || 0);
      return `<tr data-deployment="${esc(k)}"><td>${esc(d.metadata.name)}</td><td>${esc(d.metadata.namespace)}</td>
        <td class="num" data-ready="${st.readyReplicas || 0}/${want}">${st.readyReplicas || 0}/${want}</td><td class="num">${upd}</td><td class="num">${st.availableReplicas || 0}</td>
        <td><progress max="${Math.max(want, 1)}" value="${Math.min(upd, want)}" aria-label="${esc(t('dep.progress', { updated: upd, desired: want }))}"></progress> ${done ? `<span class="badge ok">${esc(t('dep.complete'))}</span>` : esc(t('dep.progress', { updated: upd, desired: want }))}</td>
        <td><span class="scale"><label class="sr" for="scale-${esc(k)}">${esc(t('replicas'))} ${esc(k)}</label><input id="scale-${esc(k)}" type="number" min="0" max="1000" value="${want}" data-dep="${esc(k)}"${roAttr()}>
        <button type="button" data-act="scale" data-dep="${esc(k)}"${roAttr()}>${esc(t('scale'))}</button>
        <button type="button" class="secondary" data-act="restart" data-dep="${esc(k)}"${roAttr()}>${esc(t('restart'))}</button></span></td></tr>`;
    });
    tbl.innerHTML = table(t('dep.title'), [t('name'), t('namespace'), t('ready'), t('updated'), t('available'), t('rollout'), t('actions')], rows);
  },
};

// ---- pods
const pods = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('pod.title'))}</h1>${namespaceFilter(route)}<div id="pod-table"></div>
      <section id="logs" hidden aria-labelledby="logs-h"><h2 id="logs-h"></h2>
        <div class="filters"><span id="logs-pick"><label for="logs-container">${esc(t('pod.container'))}</label> <select id="logs-container"></select></span>
        <button type="button" class="secondary" id="logs-refresh">${esc(t('pod.refresh'))}</button>
        <button type="button" class="secondary" id="logs-close">${esc(t('pod.close'))}</button></div>
        <pre class="logs" id="logs-text" tabindex="0"></pre></section>`;
    bindNamespaceFilter(el, route);
    const sec = el.querySelector('#logs'), pre = el.querySelector('#logs-text'), pick = el.querySelector('#logs-container');
    let shown = null; // [ns, name] of the pod whose logs are open
    const load = async (focus) => {
      const [ns, name] = shown;
      pre.textContent = t('loading');
      const q = new URLSearchParams({ tailLines: '500' });
      if (pick.value) q.set('container', pick.value);
      const r = await request('GET', `/ui/proxy/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/log?${q}`);
      pre.textContent = r.ok ? (typeof r.data === 'string' ? r.data : JSON.stringify(r.data)) : t('pod.noLogs', { msg: errMsg(r) });
      if (focus) { sec.scrollIntoView({ block: 'nearest' }); pre.focus(); }
    };
    el.querySelector('#logs-close').addEventListener('click', () => { sec.hidden = true; shown = null; });
    el.querySelector('#logs-refresh').addEventListener('click', () => shown && load(false));
    pick.addEventListener('change', () => shown && load(false));
    el.querySelector('#pod-table').addEventListener('click', (e) => {
      const b = e.target.closest('button[data-logs]');
      if (!b) return;
      shown = b.dataset.logs.split('/');
      const p = state.store.pods.get(b.dataset.logs);
      // A pod of several containers: the logs of one, chosen here.
      const names = [...(p?.spec?.initContainers || []), ...(p?.spec?.containers || [])].map((c) => c.name);
      pick.innerHTML = names.map((n) => `<option>${esc(n)}</option>`).join('');
      pick.value = (p?.spec?.containers || [])[0]?.name || '';
      el.querySelector('#logs-pick').hidden = names.length < 2;
      sec.hidden = false;
      el.querySelector('#logs-h').textContent = t('pod.logsOf', { name: shown[1] });
      load(true);
    });
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    const rows = list('pods', ns).sort(byName).map((p) => `<tr><td><a href="#/pods/${encodeURIComponent(p.metadata.namespace)}/${encodeURIComponent(p.metadata.name)}">${esc(p.metadata.name)}</a></td><td>${esc(p.metadata.namespace)}</td><td>${esc(p.spec?.nodeName || '')}</td><td class="mono">${esc(p.status?.podIP || '')}</td><td>${esc(p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase || 'Pending'))}</td><td>${badge(podReady(p), t('ready'), t('notReady'))}</td><td class="num">${podRestarts(p)}</td>${usageCells(state.metrics.pods.get(key(p)))}<td>${esc(age(p.metadata.creationTimestamp))}</td><td><button type="button" class="secondary" data-logs="${esc(key(p))}">${esc(t('logs'))}<span class="sr"> ${esc(p.metadata.name)}</span></button></td></tr>`);
    el.querySelector('#pod-table').innerHTML = table(t('pod.title'), [t('name'), t('namespace'), t('node'), t('ip'), t('status'), t('ready'), t('restarts'), t('cpu'), t('memory'), t('age'), t('logs')], rows);
  },
};

// usageCells are kubectl top's CPU and memory cells of a pod or node (u
// from metrics.js; empty until the first scrape), with the share of the
// node's allocatable when given, as `kubectl top node` prints it.
function usageCells(u, alloc) {
  if (!u) return '<td class="num"></td><td class="num"></td>';
  const pct = (v, q) => { const a = quantity(q); return a > 0 && Number.isFinite(v) ? ` (${Math.round(100 * v / a)}%)` : ''; };
  return `<td class="num">${esc(cpuText(u.cpu) + (alloc ? pct(u.cpu, alloc.cpu) : ''))}</td><td class="num">${esc(memText(u.mem) + (alloc ? pct(u.mem, alloc.memory) : ''))}</td>`;
}

// ---- nodes
const nodes = {
  mount(el) { el.innerHTML = `<h1>${esc(t('node.title'))}</h1><div id="node-table"></div>`; },
  update(el) {
    const rows = list('nodes').sort(byName).map((n) => `<tr><td>${esc(n.metadata.name)}</td><td>${badge(nodeReady(n), t('ready'), t('notReady'))}</td><td class="mono">${esc((n.spec?.podCIDRs || [n.spec?.podCIDR]).filter(Boolean).join(', '))}</td><td class="mono">${esc((n.status?.addresses || []).map((a) => a.type + ' ' + a.address).join(', '))}</td><td>${esc(n.status?.nodeInfo?.kubeletVersion || '')}</td>${usageCells(state.metrics.nodes.get(n.metadata.name), n.status?.allocatable)}<td>${esc(age(n.metadata.creationTimestamp))}</td></tr>`);
    el.querySelector('#node-table').innerHTML = table(t('node.title'), [t('name'), t('ready'), t('podCIDR'), t('addresses'), t('version'), t('cpu'), t('memory'), t('age')], rows);
  },
};

// ---- events
function eventTime(e) {
  return e.lastTimestamp || e.eventTime || e.series?.lastObservedTime || e.firstTimestamp || e.metadata.creationTimestamp || '';
}

function eventsTable(limit, ns) {
  const rv = (e) => Number(e.metadata.resourceVersion) || 0;
  const evs = list('events', ns).sort((a, b) => eventTime(b).localeCompare(eventTime(a)) || rv(b) - rv(a)).slice(0, limit);
  if (!evs.length) return `<p class="hint">${esc(t('none'))}</p>`;
  const rows = evs.map((e) => `<tr><td>${e.type === 'Warning' ? `<span class="badge warn">${esc(e.type)}</span>` : esc(e.type || '')}</td><td>${esc(e.reason || '')}</td><td class="mono">${esc((e.involvedObject?.kind || '') + ' ' + (e.involvedObject?.namespace ? e.involvedObject.namespace + '/' : '') + (e.involvedObject?.name || ''))}</td><td>${esc(e.message || e.note || '')}</td><td class="num">${e.count || e.series?.count || 1}</td><td>${esc(age(eventTime(e)))}</td></tr>`);
  return table(t('ev.title'), [t('type'), t('reason'), t('object'), t('message'), t('count'), t('last')], rows);
}

const events = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('ev.title'))}</h1>${namespaceFilter(route)}<div id="ev-table"></div>`;
    bindNamespaceFilter(el, route);
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    el.querySelector('#ev-table').innerHTML = eventsTable(300, ns);
  },
};

// ---- create: a Service form and a manifest
function parseSelector(s) {
  const out = {};
  for (const part of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9./_-]+)=([A-Za-z0-9._-]*)$/.exec(part);
    if (!m) return null;
    out[m[1]] = m[2];
  }
  return out;
}

function parsePorts(s) {
  const out = [];
  for (const part of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    const m = /^(\d+)(?::(\d+|[a-z][a-z0-9-]*))?(?:\/(TCP|UDP|SCTP))?$/i.exec(part);
    if (!m) return null;
    const proto = (m[3] || 'TCP').toUpperCase();
    const p = { name: proto.toLowerCase() + '-' + m[1], port: +m[1], protocol: proto };
    if (m[2]) p.targetPort = /^\d+$/.test(m[2]) ? +m[2] : m[2];
    out.push(p);
  }
  return out.length ? out : null;
}

const create = {
  mount(el) {
    el.innerHTML = `<h1>${esc(t('create.title'))}</h1>${ro() ? `<p class="hint">${esc(t('readonly.why'))}</p>` : ''}
      <h2 id="svc-form-h">${esc(t('create.svc'))}</h2>
      <form id="svc-form" class="form" aria-labelledby="svc-form-h">
        <label for="svc-name">${esc(t('name'))}</label><input id="svc-name" required pattern="[a-z]([-a-z0-9]*[a-z0-9])?" maxlength="63" autocomplete="off" spellcheck="false">
        <label for="svc-ns">${esc(t('namespace'))}</label><select id="svc-ns"></select>
        <label for="svc-type">${esc(t('type'))}</label><select id="svc-type"><option>ClusterIP</option><option>NodePort</option><option>LoadBalancer</option></select>
        <label for="svc-selector">${esc(t('create.selector'))}</label><input id="svc-selector" autocomplete="off" spellcheck="false">
        <label for="svc-ports">${esc(t('create.ports'))}</label><input id="svc-ports" required value="80" autocomplete="off" spellcheck="false">
        <div class="full"><button type="submit"${roAttr()}>${esc(t('create.submit'))}</button> <span id="svc-msg" role="status"></span></div>
      </form>
      <h2 id="apply-h">${esc(t('create.apply'))}</h2>
      <form id="apply-form" aria-labelledby="apply-h">
        <p class="hint" id="manifest-hint">${esc(t('create.applyHint'))}</p>
        <p class="filters"><label for="apply-ns">${esc(t('create.applyNs'))}</label><select id="apply-ns"></select></p>
        <label for="manifest">${esc(t('create.manifest'))}</label>
        <textarea id="manifest" rows="14" required spellcheck="false" aria-describedby="manifest-hint">apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
spec:
  replicas: 2
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
      - name: web
        image: busybox:1.36
        command: ["httpd", "-f", "-p", "8080"]
---
apiVersion: v1
kind: Service
metadata:
  name: hello
spec:
  selector: {app: hello}
  ports:
  - port: 80
    targetPort: 8080
</textarea>
        <p><button type="submit"${roAttr()}>${esc(t('create.applyBtn'))}</button></p>
        <ul id="apply-out" role="status"></ul>
      </form>`;
    el.querySelector('#svc-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      const msg = el.querySelector('#svc-msg');
      const name = el.querySelector('#svc-name').value.trim();
      const ns = el.querySelector('#svc-ns').value || 'default';
      const selector = parseSelector(el.querySelector('#svc-selector').value);
      const ports = parsePorts(el.querySelector('#svc-ports').value);
      if (!selector) return say(msg, false, t('create.badSelector'));
      if (!ports) return say(msg, false, t('create.badPorts'));
      const spec = { type: el.querySelector('#svc-type').value, ports };
      if (Object.keys(selector).length) spec.selector = selector;
      const r = await apiCall('POST', `/api/v1/namespaces/${encodeURIComponent(ns)}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec });
      say(msg, r.ok, r.ok ? t('create.done', { name }) : t(r.status === 403 ? 'forbidden' : 'error', { msg: errMsg(r) }));
    });
    el.querySelector('#apply-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      const out = el.querySelector('#apply-out');
      const ns = el.querySelector('#apply-ns').value || 'default';
      const r = await request('POST', '/ui/apply?namespace=' + encodeURIComponent(ns), el.querySelector('#manifest').value, 'application/yaml');
      if (!r.ok) { out.innerHTML = `<li class="error">${esc(t('error', { msg: errMsg(r) }))}</li>`; return; }
      out.innerHTML = r.data.results.map((x) => `<li class="${x.action === 'error' ? 'error' : 'okmsg'}">${esc(t('create.applied', { kind: x.kind, name: (x.namespace ? x.namespace + '/' : '') + x.name, action: t('apply.' + x.action) }))}${x.message ? ': ' + esc(x.message) : ''}</li>`).join('');
    });
  },
  update(el) {
    for (const sel of [el.querySelector('#svc-ns'), el.querySelector('#apply-ns')]) {
      if (sel) fillNamespaces(sel, sel.value || 'default', false); // absent when not mounted (read-only sessions)
    }
  },
};

export const views = { overview, services, serviceDetail, deployments, pods, nodes, events, create, ...kindViews, ...workloadViews };
