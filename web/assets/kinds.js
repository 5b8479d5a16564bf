// The pages of ConfigMaps, Secrets, ServiceAccounts and a pod, and the
// service page's DNS names and Endpoints (serviceExtras).
import { t } from './i18n.js';
import { state, esc, list, byName, request, errMsg, age, podReady, badge, key, size, b64len, utf8len } from './core.js';
import { ro, roAttr, table, namespaceFilter, fillNamespaces, bindNamespaceFilter, say } from './ui.js';
import { Terminal } from './terminal.js';

const link = (kind, ns, name) => `#/${kind}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
const none = () => `<p class="hint">${esc(t('none'))}</p>`;
const back = (kind, ns, label) => `<p><a href="#/${kind}?ns=${encodeURIComponent(ns)}">← ${esc(label)}</a></p>`;

// ---- ConfigMaps (live, from the watch stream)
function cmSize(cm) {
  let n = 0;
  for (const v of Object.values(cm.data || {})) n += utf8len(v);
  for (const v of Object.values(cm.binaryData || {})) n += b64len(v);
  return n;
}

const configmaps = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('cm.title'))}</h1>${namespaceFilter(route)}<div id="cm-table"></div>`;
    bindNamespaceFilter(el, route);
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    const rows = list('configmaps', ns).sort(byName).map((cm) => `<tr data-configmap="${esc(key(cm))}"><td><a href="${link('configmaps', cm.metadata.namespace, cm.metadata.name)}">${esc(cm.metadata.name)}</a></td><td>${esc(cm.metadata.namespace)}</td><td class="num">${Object.keys(cm.data || {}).length}</td><td class="num">${Object.keys(cm.binaryData || {}).length}</td><td class="num">${esc(size(cmSize(cm)))}</td><td>${esc(age(cm.metadata.creationTimestamp))}</td></tr>`);
    el.querySelector('#cm-table').innerHTML = rows.length ? table(t('cm.title'), [t('name'), t('namespace'), t('cm.keys'), t('cm.binaryKeys'), t('size'), t('age')], rows) : none();
  },
};

const configmapsDetail = {
  mount(el, route) {
    const [, ns, name] = route.parts;
    el.innerHTML = `${back('configmaps', ns, t('cm.back'))}<h1>${esc(t('cm.detail', { name: ns + '/' + name }))}</h1><div id="cm-info"></div>`;
  },
  update(el, route) {
    const [, ns, name] = route.parts;
    const cm = state.store.configmaps.get(ns + '/' + name);
    const info = el.querySelector('#cm-info');
    if (!cm) { info.innerHTML = `<p class="error">${esc(t('notFound', { name }))}</p>`; return; }
    if (info.dataset.rv === cm.metadata.resourceVersion) return; // keep the scroll and a selection
    info.dataset.rv = cm.metadata.resourceVersion;
    const data = Object.entries(cm.data || {}).sort(([a], [b]) => a.localeCompare(b));
    const bin = Object.entries(cm.binaryData || {}).sort(([a], [b]) => a.localeCompare(b));
    info.innerHTML = `<dl class="kv"><dt>${esc(t('cm.immutable'))}</dt><dd>${esc(cm.immutable ? t('yes') : t('no'))}</dd>
        <dt>${esc(t('size'))}</dt><dd>${esc(size(cmSize(cm)))}</dd></dl>
      <h2>${esc(t('cm.data'))}</h2>${data.length ? data.map(([k, v]) => `<h3 class="mono" data-key="${esc(k)}">${esc(k)} <small>(${esc(size(utf8len(v)))})</small></h3><pre class="value" tabindex="0">${esc(v)}</pre>`).join('') : none()}
      <h2>${esc(t('cm.binaryData'))}</h2>${bin.length ? table(t('cm.binaryData'), [t('cm.key'), t('size')], bin.map(([k, v]) => `<tr data-binary="${esc(k)}"><td class="mono">${esc(k)}</td><td class="num">${esc(size(b64len(v)))}</td></tr>`)) : none()}`;
  },
};

// ---- Secrets: summaries from /ui/secrets (names and sizes, never a
// value), values only on reveal, from the API itself.
function secretsRefused(r) {
  return r.status === 403 ? `<p class="error" data-refused="secrets">${esc(t('sec.forbidden'))}</p><p class="hint">${esc(errMsg(r))}</p>` : `<p class="error">${esc(t('error', { msg: errMsg(r) }))}</p>`;
}

const secrets = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('sec.title'))}</h1>${namespaceFilter(route)}<p class="hint">${esc(t('sec.hint'))}</p>
      <p><button type="button" class="secondary" id="sec-refresh">${esc(t('pod.refresh'))}</button></p><div id="sec-table">${esc(t('loading'))}</div>`;
    bindNamespaceFilter(el, route);
    el.querySelector('#sec-refresh').addEventListener('click', () => this.load(el, route));
    this.load(el, route);
  },
  async load(el, route) {
    const ns = route.query.get('ns') || '';
    const r = await request('GET', '/ui/secrets' + (ns ? '?namespace=' + encodeURIComponent(ns) : ''));
    const out = el.querySelector('#sec-table');
    if (!out) return;
    if (!r.ok) { out.innerHTML = secretsRefused(r); return; }
    const rows = r.data.items.map((s) => `<tr data-secret="${esc(s.namespace + '/' + s.name)}"><td><a href="${link('secrets', s.namespace, s.name)}">${esc(s.name)}</a></td><td>${esc(s.namespace)}</td><td class="mono">${esc(s.type)}</td><td class="num">${s.keys.length}</td><td class="num">${esc(size(s.keys.reduce((n, k) => n + k.bytes, 0)))}</td><td>${esc(age(s.creationTimestamp))}</td></tr>`);
    out.innerHTML = rows.length ? table(t('sec.title'), [t('name'), t('namespace'), t('type'), t('sec.keys'), t('size'), t('age')], rows) : none();
  },
  update(el, route) { fillNamespaces(el.querySelector('#ns-filter'), route.query.get('ns') || '', true); },
};

// decodeValue turns a Secret's base64 value into text when it is UTF-8,
// else says it is binary.
function decodeValue(b64) {
  const bin = atob(b64 || '');
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  try { return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), binary: false }; } catch (e) { return { text: b64, binary: true }; }
}

const secretsDetail = {
  mount(el, route) {
    const [, ns, name] = route.parts;
    el.innerHTML = `${back('secrets', ns, t('sec.back'))}<h1>${esc(t('sec.detail', { name: ns + '/' + name }))}</h1>
      <div id="sec-info">${esc(t('loading'))}</div><p id="sec-msg" role="status"></p><div id="sec-values" aria-live="polite"></div>`;
    this.load(el, ns, name);
  },
  async load(el, ns, name) {
    const r = await request('GET', `/ui/secrets?namespace=${encodeURIComponent(ns)}&name=${encodeURIComponent(name)}`);
    const info = el.querySelector('#sec-info');
    if (!info) return;
    if (!r.ok) { info.innerHTML = r.status === 404 ? `<p class="error">${esc(t('notFound', { name }))}</p>` : secretsRefused(r); return; }
    const s = r.data;
    info.innerHTML = `<dl class="kv"><dt>${esc(t('type'))}</dt><dd class="mono">${esc(s.type)}</dd><dt>${esc(t('cm.immutable'))}</dt><dd>${esc(s.immutable ? t('yes') : t('no'))}</dd></dl>
      <h2>${esc(t('sec.keys'))}</h2>${s.keys.length ? table(t('sec.keys'), [t('cm.key'), t('size')], s.keys.map((k) => `<tr data-key="${esc(k.name)}"><td class="mono">${esc(k.name)}</td><td class="num">${esc(size(k.bytes))}</td></tr>`)) : none()}
      <p><button type="button" id="sec-reveal">${esc(t('sec.reveal'))}</button> <button type="button" class="secondary" id="sec-hide" hidden>${esc(t('sec.hide'))}</button></p>
      <p class="hint">${esc(t('sec.revealHint'))}</p>`;
    const out = el.querySelector('#sec-values'), msg = el.querySelector('#sec-msg');
    const hide = el.querySelector('#sec-hide');
    el.querySelector('#sec-reveal').addEventListener('click', async () => {
      msg.textContent = '';
      const v = await request('GET', `/ui/proxy/api/v1/namespaces/${encodeURIComponent(ns)}/secrets/${encodeURIComponent(name)}`);
      if (!v.ok) { say(msg, false, v.status === 403 ? t('sec.revealForbidden') : t('error', { msg: errMsg(v) })); return; }
      out.replaceChildren();
      for (const [k, b64] of Object.entries(v.data.data || {}).sort(([a], [b]) => a.localeCompare(b))) {
        const d = decodeValue(b64);
        const h = document.createElement('h3');
        h.className = 'mono';
        h.textContent = k + (d.binary ? ' ' + t('sec.binary') : '');
        const pre = document.createElement('pre');
        pre.className = 'value';
        pre.tabIndex = 0;
        pre.dataset.value = k;
        pre.textContent = d.text;
        out.append(h, pre);
      }
      hide.hidden = false;
    });
    hide.addEventListener('click', () => { out.replaceChildren(); hide.hidden = true; });
  },
  update() {},
};

// ---- ServiceAccounts (live)
const serviceaccounts = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('sa.title'))}</h1>${namespaceFilter(route)}<div id="sa-table"></div>`;
    bindNamespaceFilter(el, route);
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    const rows = list('serviceaccounts', ns).sort(byName).map((sa) => {
      const m = sa.metadata;
      const secs = (sa.secrets || []).map((s) => `<a class="mono" href="${link('secrets', s.namespace || m.namespace, s.name)}">${esc(s.name)}</a>`).join(', ');
      const pulls = (sa.imagePullSecrets || []).map((s) => `<a class="mono" href="${link('secrets', m.namespace, s.name)}">${esc(s.name)}</a>`).join(', ');
      const auto = sa.automountServiceAccountToken;
      return `<tr data-serviceaccount="${esc(key(sa))}"><td>${esc(m.name)}</td><td>${esc(m.namespace)}</td><td>${secs || '—'}</td><td>${pulls || '—'}</td><td data-automount="${auto === undefined ? 'unset' : auto}">${esc(auto === undefined ? t('sa.automountDefault') : auto ? t('yes') : t('no'))}</td><td>${esc(age(m.creationTimestamp))}</td></tr>`;
    });
    el.querySelector('#sa-table').innerHTML = rows.length ? table(t('sa.title'), [t('name'), t('namespace'), t('sa.secrets'), t('sa.pullSecrets'), t('sa.automount'), t('age')], rows) : none();
  },
};

// ---- a pod: containers, ports with their port-forward commands, and a
// terminal.
function forwardCommands(p) {
  const out = [];
  const nsFlag = p.metadata.namespace === 'default' ? '' : ` -n ${p.metadata.namespace}`;
  for (const c of p.spec?.containers || []) {
    for (const port of c.ports || []) {
      if ((port.protocol || 'TCP') !== 'TCP') continue; // port-forward is TCP only
      const n = port.containerPort;
      out.push({ container: c.name, port: n, name: port.name || '',
        kubectl: `kubectl port-forward${nsFlag} pod/${p.metadata.name} ${n}:${n}`,
        skiff: `skiff port-forward${nsFlag} pod/${p.metadata.name} ${n}:${n}` });
    }
  }
  return out;
}

const podsDetail = {
  mount(el, route) {
    const [, ns, name] = route.parts;
    if (this.stop) this.stop();
    el.innerHTML = `${back('pods', ns, t('pod.back'))}<h1>${esc(t('pod.detail', { name: ns + '/' + name }))}</h1>
      <div id="pod-info"></div>
      <h2>${esc(t('pod.containers'))}</h2><div id="pod-containers"></div>
      <h2 id="pf-h">${esc(t('pf.title'))}</h2><p class="hint">${esc(t('pf.hint'))}</p><div id="pod-forward"></div><p id="pf-msg" role="status"></p>
      <h2 id="term-h">${esc(t('term.title'))}</h2>
      <form id="term-form" class="form" aria-labelledby="term-h">
        <label for="term-container">${esc(t('pod.container'))}</label><select id="term-container"></select>
        <label for="term-command">${esc(t('term.command'))}</label><input id="term-command" value="sh" spellcheck="false" autocomplete="off">
        <div class="full"><button type="submit" id="term-open"${roAttr()}>${esc(t('term.open'))}</button> ${ro() ? `<span class="hint">${esc(t('term.readonly'))}</span>` : ''}</div>
      </form>
      <section id="term" hidden aria-labelledby="term-h">
        <p id="term-status" role="status"></p>
        <pre class="term" id="term-screen" tabindex="0" aria-label="${esc(t('term.screen'))}"></pre>
        <form id="term-line" class="row"><label for="term-input">${esc(t('term.line'))}</label><input id="term-input" autocomplete="off" spellcheck="false"><button type="submit" class="secondary">${esc(t('term.send'))}</button>
        <button type="button" class="secondary" id="term-close">${esc(t('term.close'))}</button></form>
      </section>`;
    const sec = el.querySelector('#term'), screen = el.querySelector('#term-screen'), st = el.querySelector('#term-status');
    const stop = () => { if (this.term) { this.term.close(); this.term = null; } };
    this.stop = stop;
    el.querySelector('#term-form').addEventListener('submit', (e) => {
      e.preventDefault();
      stop();
      sec.hidden = false;
      screen.replaceChildren();
      st.className = ''; st.textContent = t('term.connecting');
      const command = el.querySelector('#term-command').value.trim().split(/\s+/).filter(Boolean);
      const term = new Terminal(screen, (kind, d) => {
        if (this.term !== term) return;
        if (kind === 'open') { st.className = 'okmsg'; st.textContent = t('term.connected'); screen.focus(); }
        if (kind === 'exit') { st.className = d.code === 0 ? 'okmsg' : 'error'; st.textContent = d.code === null ? t('term.failed', { msg: d.message }) : t('term.exited', { code: d.code }); term.exited = true; }
        if (kind === 'closed' && !term.exited) { st.className = 'error'; st.textContent = d.opened ? t('term.closed') : t('term.refused'); }
      });
      this.term = term;
      screen.dataset.session = String((+screen.dataset.session || 0) + 1);
      term.connect(ns, name, el.querySelector('#term-container').value, command.length ? command : ['sh']);
    });
    el.querySelector('#term-line').addEventListener('submit', (e) => {
      e.preventDefault();
      const i = el.querySelector('#term-input');
      if (this.term) this.term.send(i.value + '\r');
      i.value = '';
    });
    el.querySelector('#term-close').addEventListener('click', () => { stop(); sec.hidden = true; });
    el.querySelector('#pod-forward').addEventListener('click', async (e) => {
      const b = e.target.closest('button[data-copy]');
      if (!b) return;
      const msg = el.querySelector('#pf-msg');
      try { await navigator.clipboard.writeText(b.dataset.copy); say(msg, true, t('pf.copied', { cmd: b.dataset.copy })); } catch (err) { say(msg, false, t('pf.noCopy')); }
    });
    // Leaving the page ends the session.
    window.addEventListener('hashchange', stop, { once: true });
  },
  update(el, route) {
    const [, ns, name] = route.parts;
    const p = state.store.pods.get(ns + '/' + name);
    const info = el.querySelector('#pod-info');
    if (!p) { info.innerHTML = `<p class="error">${esc(t('notFound', { name }))}</p>`; return; }
    const domain = state.session?.domain || 'cluster.local';
    const ips = (p.status?.podIPs || []).map((x) => x.ip).concat(p.status?.podIP && !(p.status?.podIPs || []).length ? [p.status.podIP] : []);
    const dashed = ips.map((ip) => (ip.includes(':') ? ip.replaceAll(':', '-') : ip.replaceAll('.', '-')) + '.' + ns + '.pod.' + domain);
    info.innerHTML = `<dl class="kv">
      <dt>${esc(t('status'))}</dt><dd>${esc(p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase || 'Pending'))} ${badge(podReady(p), t('ready'), t('notReady'))}</dd>
      <dt>${esc(t('node'))}</dt><dd>${esc(p.spec?.nodeName || '—')}</dd>
      <dt>${esc(t('ip'))}</dt><dd class="mono">${esc(ips.join(', ') || '—')}</dd>
      <dt>${esc(t('pod.dns'))}</dt><dd class="mono">${esc(dashed.join(', ') || '—')}</dd>
      <dt>${esc(t('pod.serviceAccount'))}</dt><dd class="mono">${esc(p.spec?.serviceAccountName || 'default')}</dd></dl>`;
    const cs = new Map((p.status?.containerStatuses || []).map((c) => [c.name, c]));
    const containers = p.spec?.containers || [];
    el.querySelector('#pod-containers').innerHTML = table(t('pod.containers'), [t('name'), t('pod.image'), t('ports'), t('ready'), t('restarts')], containers.map((c) => {
      const s = cs.get(c.name) || {};
      return `<tr><td class="mono">${esc(c.name)}</td><td class="mono">${esc(c.image)}</td><td class="mono">${esc((c.ports || []).map((x) => (x.name ? x.name + ' ' : '') + x.containerPort + '/' + (x.protocol || 'TCP')).join(', ') || '—')}</td><td>${badge(!!s.ready, t('ready'), t('notReady'))}</td><td class="num">${s.restartCount || 0}</td></tr>`;
    }));
    const fw = forwardCommands(p);
    const pf = el.querySelector('#pod-forward');
    const sig = fw.map((f) => f.kubectl).join('\n');
    if (pf.dataset.sig !== sig || !pf.innerHTML) {
      pf.dataset.sig = sig;
      pf.innerHTML = fw.length ? `<ul class="cmds">${fw.map((f) => `<li data-port="${f.port}"><strong>${esc(f.container)}</strong> ${esc(String(f.port))}${f.name ? ' (' + esc(f.name) + ')' : ''}
        <div class="cmd"><code>${esc(f.kubectl)}</code> <button type="button" class="secondary" data-copy="${esc(f.kubectl)}">${esc(t('pf.copy'))}<span class="sr"> ${esc(f.kubectl)}</span></button></div>
        <div class="cmd"><code>${esc(f.skiff)}</code> <button type="button" class="secondary" data-copy="${esc(f.skiff)}">${esc(t('pf.copy'))}<span class="sr"> ${esc(f.skiff)}</span></button></div></li>`).join('')}</ul>` : `<p class="hint">${esc(t('pf.none'))}</p>`;
    }
    const pick = el.querySelector('#term-container');
    const names = containers.map((c) => c.name);
    if (pick.dataset.opts !== names.join('\n')) {
      pick.innerHTML = names.map((n) => `<option>${esc(n)}</option>`).join('');
      pick.dataset.opts = names.join('\n');
    }
  },
};

// ---- the service page's DNS names and Endpoints, from
// /ui/services/{ns}/{name}, fetched again whenever the Service or its
// slices change (the Endpoints object itself is not watched).
export const serviceExtras = {
  html() {
    return `<h2>${esc(t('dns.title'))}</h2><div id="svc-dns">${esc(t('loading'))}</div>
      <h2>${esc(t('eps.title'))}</h2><div id="svc-endpoints">${esc(t('loading'))}</div>`;
  },
  update(el, ns, name, svc, slices) {
    const box = el.querySelector('#svc-dns');
    if (!box) return;
    const sig = (svc?.metadata.resourceVersion || '') + ' ' + slices.map((s) => s.metadata.name + '@' + s.metadata.resourceVersion).sort().join(' ');
    if (box.dataset.sig === sig) return;
    box.dataset.sig = sig;
    // Twice: the Endpoints object (not on the watch stream: at 1,000
    // addresses it is ~130 KB a change) is written by its own controller,
    // which may follow the slices' by a moment.
    for (const tm of this.timers || []) clearTimeout(tm);
    this.timers = [100, 1500].map((ms) => setTimeout(() => this.load(el, ns, name, sig), ms));
  },
  async load(el, ns, name, sig) {
    const r = await request('GET', `/ui/services/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`);
    const box = el.querySelector('#svc-dns'), epBox = el.querySelector('#svc-endpoints');
    if (!box || box.dataset.sig !== sig) return; // another page, or a newer state is on its way
    if (!r.ok) { box.innerHTML = epBox.innerHTML = `<p class="error">${esc(t('error', { msg: errMsg(r) }))}</p>`; return; }
    const d = r.data, dn = d.dns;
    const where = [t('dns.sameNs'), t('dns.anyNs'), t('dns.anyNs'), t('dns.full')];
    const answer = dn.exists ? dn.answers.join(', ') : t('dns.nxdomain');
    let h = `<p class="hint">${esc(t('dns.hint.' + dn.kind, { domain: d.domain }))}</p>`;
    if (!dn.exists) h += `<p class="error" data-nxdomain>${esc(t(dn.kind === 'Headless' ? 'dns.noReady' : 'dns.noRecord'))}</p>`;
    h += table(t('dns.title'), [t('name'), t('dns.from'), t('dns.answer')], dn.names.map((n, i) => `<tr data-dns-name="${esc(n)}"><td class="mono">${esc(n)}</td><td>${esc(where[i])}</td><td class="mono">${esc(answer)}</td></tr>`));
    if (dn.kind === 'Headless') {
      h += `<h3>${esc(t('dns.perPod'))}</h3><p class="hint">${esc(t('dns.perPodHint'))}</p>` + (dn.endpoints?.length ? table(t('dns.perPod'), [t('name'), t('ep.addresses'), t('pod.title')], dn.endpoints.map((e) => `<tr data-dns-endpoint="${esc(e.name)}"><td class="mono">${esc(e.name)}</td><td class="mono">${esc(e.addresses.join(', '))}</td><td>${e.pod ? `<a href="${link('pods', ns, e.pod)}">${esc(e.pod)}</a>` : '—'}</td></tr>`)) : none());
    }
    if (dn.srv?.length) h += `<h3>${esc(t('dns.srv'))}</h3><ul>${dn.srv.map((s) => `<li class="mono" data-dns-srv="${esc(s)}">${esc(s)}</li>`).join('')}</ul>`;
    box.innerHTML = h;
    // The Endpoints object, and the byte comparison.
    let e = '';
    if (d.endpointsError) e += `<p class="error">${esc(t('error', { msg: d.endpointsError }))}</p>`;
    else if (!d.endpoints) e += `<p class="hint" data-no-endpoints>${esc(t('eps.none'))}</p>`;
    else {
      const ep = d.endpoints;
      if (ep.metadata?.annotations?.['endpoints.kubernetes.io/over-capacity']) e += `<p class="badge warn">${esc(t('eps.truncated'))}</p>`;
      const rows = [];
      for (const s of ep.subsets || []) {
        const ports = (s.ports || []).map((p) => (p.name ? p.name + ' ' : '') + p.port + '/' + (p.protocol || 'TCP')).join(', ');
        for (const a of s.addresses || []) rows.push(`<tr><td class="mono">${esc(a.ip)}</td><td>${badge(true, t('ready'), '')}</td><td class="mono">${esc(ports)}</td><td>${esc(a.nodeName || '')}</td><td>${esc(a.targetRef?.name || a.hostname || '')}</td></tr>`);
        for (const a of s.notReadyAddresses || []) rows.push(`<tr><td class="mono">${esc(a.ip)}</td><td>${badge(false, '', t('notReady'))}</td><td class="mono">${esc(ports)}</td><td>${esc(a.nodeName || '')}</td><td>${esc(a.targetRef?.name || a.hostname || '')}</td></tr>`);
      }
      e += rows.length ? table(t('eps.title'), [t('ip'), t('ep.conditions'), t('ports'), t('node'), t('pod.title')], rows) : `<p class="hint">${esc(t('eps.empty'))}</p>`;
    }
    e += `<p data-bytes data-endpoints-bytes="${d.endpointsBytes}" data-slices-bytes="${d.sliceBytes}">${esc(t('eps.bytes', { ep: size(d.endpointsBytes), n: d.slices.length, sl: size(d.sliceBytes) }))}</p>`;
    if (d.slices.length) e += `<ul>${d.slices.map((s) => `<li><span class="mono">${esc(s.name)}</span> ${esc(size(s.bytes))}</li>`).join('')}</ul>`;
    e += `<p class="hint">${esc(t('eps.bytesHint'))}</p>`;
    epBox.innerHTML = e;
  },
};

export const kindViews = { configmaps, configmapsDetail, secrets, secretsDetail, serviceaccounts, podsDetail };
