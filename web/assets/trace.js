// drawTrace draws a Trace (skiff.dev/v1, the JSON of `skiff trace -o json`)
// as the packet path: client pod → DNS answer → Service VIP:port → the
// rules with their probabilities → the pods on their nodes. The SVG is the
// picture; the ordered list under it says the same in words (and is what
// a screen reader reads).
import { t } from './i18n.js';
import { esc } from './core.js';

const trunc = (s, n) => { s = String(s ?? ''); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
const pct = (p) => (p === undefined || p === null ? '' : (Math.round(p * 1000) / 10) + '%');

function box(x, y, w, h, cls, lines) {
  let s = `<rect class="box ${cls}" x="${x}" y="${y}" width="${w}" height="${h}" rx="6"/>`;
  lines.forEach((l, i) => {
    const full = String(l.t ?? ''), short = trunc(full, Math.floor((w - 16) / 7.2));
    // A cut line keeps its whole text as a tooltip (and for screen readers).
    s += `<text x="${x + 8}" y="${y + 17 + i * 16}" class="${l.c || ''}">${esc(short)}${short !== full ? `<title>${esc(full)}</title>` : ''}</text>`;
  });
  return s;
}

function edge(x1, y1, x2, y2, label) {
  const mx = (x1 + x2) / 2;
  let s = `<path class="edge" d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 2},${y2}"/>`;
  if (label) s += `<text class="prob" x="${x2 - 46}" y="${y2 - 5}">${esc(label)}</text>`;
  return s;
}

export function drawTrace(tr) {
  const W = 190, GAP = 36, X = [10, 10 + W + GAP, 10 + 2 * (W + GAP), 10 + 3 * (W + GAP), 10 + 4 * (W + GAP) + 40];
  const EW = 230;
  const eps = tr.endpoints || [];
  const rules = tr.rules?.entries || [];
  // Endpoints grouped by node.
  const nodes = new Map();
  for (const e of eps) {
    const n = e.nodeName || '?';
    if (!nodes.has(n)) nodes.set(n, []);
    nodes.get(n).push(e);
  }
  let y = 10;
  const epPos = [];
  let epSVG = '';
  for (const [n, list] of nodes) {
    const top = y;
    y += 22;
    for (const e of list) {
      epPos.push({ e, y: y + 22 });
      epSVG += box(X[4] + 8, y, EW - 16, 44, 'ep' + (e.ready ? '' : ' notready'), [
        { t: (e.pod || e.ip) + (e.ready ? '' : ' (not ready)'), c: 'h' }, { t: `${e.ip}:${e.port}`, c: 'm' }]);
      y += 52;
    }
    epSVG = `<rect class="box nodebox" x="${X[4]}" y="${top}" width="${EW}" height="${y - top}" rx="8"/><text x="${X[4] + 8}" y="${top + 15}" class="m">${esc(t('node') + ': ' + trunc(n, 26))}</text>` + epSVG;
    y += 10;
  }
  const shown = rules.slice(0, 8);
  const rulesH = 26 + Math.max(1, shown.length) * 16 + (rules.length > shown.length ? 16 : 0);
  const H = Math.max(y, rulesH + 20, 120);
  const mid = H / 2;
  const p = tr.pod || {};
  const dns = tr.dns;
  const svc = tr.service;
  let s = `<svg viewBox="0 0 ${X[4] + EW + 10} ${H}" role="img" aria-labelledby="trace-title"><title id="trace-title">${esc(t('trace.title'))}: ${esc(tr.url)}</title>
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>`;
  s += box(X[0], mid - 36, W, 72, '', [{ t: t('trace.step.client'), c: 'm' }, { t: p.name, c: 'h' }, { t: `${p.ip || ''} @ ${p.nodeName || ''}`, c: 'm' }]);
  const answered = dns?.queries?.find((q) => q.rcode === 'NOERROR' && (q.answers || []).length);
  s += box(X[1], mid - 36, W, 72, 'dns', dns ? [{ t: t('trace.step.dns'), c: 'm' }, { t: answered?.name || dns.queries?.[dns.queries.length - 1]?.name || tr.host, c: 'h' }, { t: '→ ' + (dns.answer || 'NXDOMAIN') }] : [{ t: t('trace.step.dns'), c: 'm' }, { t: t('trace.noDNS') }, { t: tr.host, c: 'h' }]);
  s += box(X[2], mid - 36, W, 72, 'svc', svc ? [{ t: t('trace.step.vip'), c: 'm' }, { t: `${svc.ip}:${svc.port}/${tr.protocol || 'TCP'}`, c: 'h' }, { t: `${svc.namespace}/${svc.name}` + (svc.targetPort ? ' → ' + svc.targetPort : ''), c: 'm' }] : [{ t: t('trace.step.vip'), c: 'm' }, { t: t('trace.noService') }]);
  const rl = [{ t: t('trace.step.rules', { mode: tr.rules?.mode || '—' }), c: 'm' }];
  if (!rules.length) rl.push({ t: t('trace.noRules') });
  for (const r of shown) rl.push({ t: (r.probability ? pct(r.probability) + ' ' : '') + (r.chain || r.table || '') + (r.endpoint ? ' → ' + r.endpoint : '') });
  if (rules.length > shown.length) rl.push({ t: `+${rules.length - shown.length}…`, c: 'm' });
  s += box(X[3], mid - rulesH / 2, W, rulesH, 'rules', rl);
  s += edge(X[0] + W, mid, X[1], mid) + edge(X[1] + W, mid, X[2], mid) + edge(X[2] + W, mid, X[3], mid);
  for (const { e, y: ey } of epPos) s += edge(X[3] + W, mid, X[4] + 8, ey, pct(e.probability));
  s += epSVG + '</svg>';

  // The same, in words.
  const steps = [
    `${t('trace.step.client')}: <span class="mono">${esc(p.namespace)}/${esc(p.name)}</span> ${esc(p.ip || '')} @ ${esc(p.nodeName || '')}`,
    dns ? `${t('trace.step.dns')}: ${(dns.queries || []).map((q) => `<span class="mono">${esc(q.name)} ${esc(q.type)}</span> ${esc(q.rcode)}${q.answers?.length ? ' ' + esc(q.answers.join(', ')) : ''}`).join('; ')} → <strong class="mono">${esc(dns.answer || '—')}</strong>` : `${t('trace.step.dns')}: ${esc(t('trace.noDNS'))}`,
    svc ? `${t('trace.step.vip')}: <strong class="mono">${esc(svc.ip)}:${esc(svc.port)}</strong> (${esc(svc.namespace)}/${esc(svc.name)}, ${esc(svc.type)})` : `${t('trace.step.vip')}: ${esc(t('trace.noService'))}`,
    `${esc(t('trace.step.rules', { mode: tr.rules?.mode || '—' }))}: ${rules.length}`,
    `${t('trace.step.pods')}: ${eps.map((e) => `<span class="mono">${esc(e.pod || e.ip)}</span> ${esc(e.ip)}:${esc(e.port)} @ ${esc(e.nodeName || '?')} — ${esc(t('trace.prob', { p: pct(e.probability) }))}`).join('; ') || esc(t('none'))}`,
  ];
  let out = `<div class="path" data-trace="${esc(tr.url)}">`;
  if (tr.warnings?.length) out += `<p><strong>${esc(t('trace.warnings'))}</strong></p><ul class="error">${tr.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`;
  out += `<div class="scroll">${s}</div><ol>${steps.map((x) => `<li>${x}</li>`).join('')}</ol>`;
  if (rules.length) out += `<details><summary>${esc(t('trace.rulesText'))}</summary><pre>${rules.map((r) => esc((r.table ? r.table + ' ' : '') + (r.chain ? r.chain + ': ' : '') + r.text + (r.probability ? `   [p=${r.probability}]` : ''))).join('\n')}</pre></details>`;
  if (tr.conntrack?.length) out += `<details><summary>${esc(t('trace.conntrack'))}</summary><pre>${tr.conntrack.map((c) => esc(`${c.protocol} ${c.src} → ${c.dst} ⇐ ${c.replySrc} ${c.state || ''} ${c.timeout ? c.timeout + 's' : ''}`)).join('\n')}</pre></details>`;
  return out + '</div>';
}
