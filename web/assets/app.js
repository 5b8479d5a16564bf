// Entry point: session, router, the live watch stream and rendering.
import { t, setLang, initialLang, applyI18n } from './i18n.js';
import { state, RESOURCES, key, request, hooks } from './core.js';
import { views } from './views.js';
import { fetchMetrics, pollMs } from './metrics.js';

const $ = (id) => document.getElementById(id);
let es = null; // the EventSource
let retryTimer = null;
let retryDelay = 1000;
let current = null; // {view, route, el}
let frame = 0;
let interactive = false;
let metricsTimer = null;

// Pages that show kubectl top's figures; while one is shown they are
// polled (metrics.js).
const METRIC_PAGES = new Set(['pods', 'nodes']);

function pollMetrics() {
  clearTimeout(metricsTimer);
  if (!state.session || !current || !METRIC_PAGES.has(current.route.name)) return;
  fetchMetrics().then(changed, () => {}).finally(() => { metricsTimer = setTimeout(pollMetrics, pollMs); });
}

function parseRoute() {
  const h = location.hash.replace(/^#\/?/, '');
  const [path, qs] = h.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (!parts.length) parts.push('overview');
  let name = parts[0];
  if (name === 'services' && parts.length === 3) name = 'serviceDetail';
  else if (parts.length === 3 && views[name + 'Detail']) name += 'Detail';
  if (!views[name]) { parts.splice(0, parts.length, 'overview'); name = 'overview'; }
  return { name, parts, query: new URLSearchParams(qs || '') };
}

function setLive(kind) {
  const el = $('live');
  el.className = 'live ' + (kind === 'on' ? 'on' : 'off');
  el.textContent = t('live.' + kind);
}

function route(ev) {
  if (!state.session) return;
  const r = parseRoute();
  for (const a of document.querySelectorAll('#nav a')) {
    const on = a.getAttribute('href') === '#/' + r.parts[0];
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const el = $('view');
  const v = views[r.name];
  current = { view: v, route: r, el };
  document.title = t('nav.' + r.parts[0]) + ' · Skiff';
  v.mount(el, r);
  v.update(el, r);
  pollMetrics();
  // After a navigation, the new page's heading gets the focus (screen
  // readers announce it; Tab continues from there).
  const h = ev && el.querySelector('h1');
  if (h) { h.tabIndex = -1; h.focus({ preventScroll: true }); }
}

function render() {
  frame = 0;
  if (!current) return;
  current.view.update(current.el, current.route);
  if (!interactive && RESOURCES.every((r) => state.synced.has(r))) {
    interactive = true;
    performance.mark('skiff-interactive');
  }
}

function changed() {
  state.version++;
  if (!frame) frame = requestAnimationFrame(render);
}

// A new stream (first connection, or after any reconnect) sends each
// resource's whole state, then a bookmark. Until that bookmark the state
// builds up in pending and the page keeps showing the old one; then they
// swap, so a reconnect never flashes an empty page.
let pending = {};

function onEvent(res, ev) {
  let msg;
  try { msg = JSON.parse(ev.data); } catch (e) { return; }
  const m = state.synced.has(res) ? state.store[res] : (pending[res] ||= new Map());
  switch (msg.type) {
    case 'ADDED': case 'MODIFIED': m.set(key(msg.object), msg.object); return m === state.store[res] ? changed() : undefined;
    case 'DELETED': m.delete(key(msg.object)); return m === state.store[res] ? changed() : undefined;
    case 'BOOKMARK':
      if (msg.object?.metadata?.annotations?.['k8s.io/initial-events-end'] !== 'true' || state.synced.has(res)) return;
      state.store[res] = m;
      delete pending[res];
      state.synced.add(res);
      if (RESOURCES.every((r) => state.synced.has(r))) { setLive('on'); retryDelay = 1000; }
      break;
    case 'ERROR': state.errors[res] = msg.object?.message || 'watch error'; break;
    default: return;
  }
  changed();
}

function connect() {
  clearTimeout(retryTimer);
  if (es) es.close();
  setLive('sync');
  es = new EventSource('/ui/watch');
  es.addEventListener('reset', () => {
    // A new stream starts from the current state (see onEvent).
    pending = {};
    state.synced.clear();
    state.errors = {};
    setLive('sync');
  });
  for (const r of RESOURCES) es.addEventListener(r, (ev) => onEvent(r, ev));
  es.addEventListener('apierror', (ev) => {
    try { const e = JSON.parse(ev.data); state.errors[e.resource] = e.status?.message || ('HTTP ' + e.code); } catch (e) { /* ignore */ }
    changed();
  });
  es.onerror = () => {
    setLive('off');
    if (es.readyState === EventSource.CLOSED) {
      // EventSource gave up (the server answered an error, or was down
      // too long): check the session, then reconnect with backoff.
      retryTimer = setTimeout(async () => {
        const r = await request('GET', '/ui/session');
        if (r.ok) { state.session = r.data; connect(); } else if (r.status !== 401) { retryDelay = Math.min(retryDelay * 2, 10000); es.onerror(); }
      }, retryDelay);
    }
  };
}

function showLogin(msg) {
  state.session = null;
  if (es) { es.close(); es = null; }
  clearTimeout(retryTimer);
  $('view').innerHTML = '';
  $('nav').hidden = true;
  $('logout').hidden = true;
  $('who').textContent = '';
  $('live').textContent = '';
  $('live').className = 'live';
  $('login').hidden = false;
  $('login-error').textContent = msg || '';
  $('token').focus();
}

function start(sess) {
  state.session = sess;
  $('login').hidden = true;
  $('nav').hidden = false;
  $('logout').hidden = false;
  $('who').textContent = sess.user + (sess.readOnly ? ' (' + t('readonly') + ')' : '');
  connect();
  route();
}

async function init() {
  const l = initialLang();
  setLang(l);
  $('lang').value = l;
  applyI18n(document);
  $('lang').addEventListener('change', (e) => {
    setLang(e.target.value);
    applyI18n(document);
    const live = $('live');
    if (live.classList.contains('on')) setLive('on'); else if (live.classList.contains('off') && state.session) setLive(state.synced.size ? 'off' : 'sync');
    if (state.session) { $('who').textContent = state.session.user + (state.session.readOnly ? ' (' + t('readonly') + ')' : ''); route(); }
  });
  hooks.unauthorized = () => showLogin(t('login.bad'));
  hooks.changed = changed;
  $('login-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const r = await request('POST', '/ui/login', { token: $('token').value });
    $('token').value = '';
    if (r.ok) { start(r.data); $('main').focus(); return; }
    $('login-error').textContent = r.status === 401 ? t('login.bad') : r.status === 429 ? t('login.slow') : t('login.err', { msg: r.data?.message || r.status });
    $('token').focus();
  });
  $('logout').addEventListener('click', async () => {
    await request('POST', '/ui/logout');
    showLogin('');
  });
  window.addEventListener('hashchange', route);
  const r = await fetch('/ui/session', { headers: { Accept: 'application/json' } });
  if (r.ok) start(await r.json()); else showLogin('');
}

init();
