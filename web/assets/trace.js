// drawTrace draws a Trace (skiff.dev/v1, the JSON of `skiff trace -o json`)
// as the packet path: client pod → DNS answer → Service VIP:port → the
// rules with their probabilities → the pods on their nodes. The SVG is the
// picture; the ordered list under it says the same in words (and is what
// a screen reader reads).
import { t } from './i18n.js';
import { esc } from './core.js';

const trunc = (s, n) => { s = String(s ?? ''); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
const pct = (p) => (p === undefined || p === null ? '' : (Math.round(p * 1000) / 10) + '%');

// attrs renders data-* attributes (the tests and tools read the drawing
// through them): {step: 'dns'} is data-step="dns".
const attrs = (a) => Object.entries(a || {}).filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => ` data-${k}="${esc(v)}"`).join('');

function box(x, y, w, h, cls, lines, data) {
  let s = `<g${attrs(data)}><rect class="box ${cls}" x="${x}" y="${y}" width="${w}" height="${h}" rx="6"/>`;
  lines.forEach((l, i) => {
    const full = String(l.t ?? ''), short = trunc(full, Math.floor((w - 16 - (l.dx || 0)) / 7.2));
    // A cut line keeps its whole text as a tooltip (and for screen readers).
    s += `<text x="${x + 8 + (l.dx || 0)}" y="${y + 17 + i * 16}" class="${l.c || ''}"${attrs(l.a)}>${esc(short)}${short !== full ? `<title>${esc(full)}</title>` : ''}</text>`;
  });
  return s + '</g>';
}

function edge(x1, y1, x2, y2, label) {
  const mx = (x1 + x2) / 2;
  let s = `<path class="edge" d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 2},${y2}"/>`;
  if (label) s += `<text class="prob" x="${x2 - 46}" y="${y2 - 5}">${esc(label)}</text>`;
  return s;
}

// splitName breaks a long DNS name after its first label, to fit a box.
function splitName(name, fit) {
  name = String(name ?? '');
  const i = name.indexOf('.');
  return name.length <= fit || i < 0 ? [name] : [name.slice(0, i), name.slice(i)];
}

// pickRules chooses the rules the box lists: the first (the dispatch on
// the VIP), then the choices (rules with a probability: one per endpoint,
// in the order the kernel tries them), at most 10; with no choices, the
// first 8 rules.
function pickRules(rules) {
  const choices = rules.filter((r) => r.probability);
  if (!choices.length) return { first: null, choices: [], plain: rules.slice(0, 8) };
  return { first: rules[0].probability ? null : rules[0], choices: choices.slice(0, 10), plain: [] };
}

export function drawTrace(tr) {
  // Column x and widths: client, DNS, VIP, rules, pods on nodes.
  const WC = 170, WD = 220, WV = 190, WR = 240, EW = 230, GAP = 34;
  const X = [10];
  for (const w of [WC, WD, WV]) X.push(X[X.length - 1] + w + GAP);
  X.push(X[3] + WR + GAP + 40);
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
    let boxes = '';
    for (const e of list) {
      epPos.push({ e, y: y + 22 });
      boxes += box(X[4] + 8, y, EW - 16, 44, 'ep' + (e.ready ? '' : ' notready'), [
        { t: (e.pod || e.ip) + (e.ready ? '' : ' (' + t('notReady') + ')'), c: 'h' }, { t: `${e.ip}:${e.port}`, c: 'm' }],
      { step: 'pod', pod: e.pod || e.ip, endpoint: `${e.ip}:${e.port}`, node: e.nodeName || '?', prob: e.probability, ready: String(!!e.ready) });
      y += 52;
    }
    epSVG += `<g data-step="node" data-name="${esc(n)}"><rect class="box nodebox" x="${X[4]}" y="${top}" width="${EW}" height="${y - top}" rx="8"/><text x="${X[4] + 8}" y="${top + 15}" class="m">${esc(t('node') + ': ' + trunc(n, 26))}</text>${boxes}</g>`;
    y += 10;
  }
  // The rules box: its lines, and where each choice line is (its arrow
  // goes to the endpoint it sends to).
  const pick = pickRules(rules);
  const rl = [{ t: t('trace.step.rules', { mode: tr.rules?.mode || '—' }), c: 'm' }];
  if (!rules.length) rl.push({ t: t('trace.noRules') });
  if (pick.first) rl.push({ t: pick.first.chain || pick.first.table || '', a: { chain: pick.first.chain } });
  const chains = [...new Set(pick.choices.map((r) => r.chain || ''))];
  const choiceLine = new Map(); // endpoint -> line index
  for (const c of chains) {
    if (c) rl.push({ t: '↳ ' + c, a: { chain: c } });
    for (const r of pick.choices.filter((x) => (x.chain || '') === c)) {
      if (r.endpoint && !choiceLine.has(r.endpoint)) choiceLine.set(r.endpoint, rl.length);
      rl.push({ t: pct(r.probability) + (r.endpoint ? ' → ' + r.endpoint : ''), c: 'choice', dx: 14, a: { prob: r.probability, endpoint: r.endpoint, chain: r.chain } });
    }
  }
  for (const r of pick.plain) rl.push({ t: (r.chain || r.table || '') + (r.endpoint ? ' → ' + r.endpoint : ''), a: { chain: r.chain, endpoint: r.endpoint } });
  const listed = (pick.first ? 1 : 0) + pick.choices.length + pick.plain.length;
  if (rules.length > listed) rl.push({ t: t('trace.moreRules', { n: rules.length - listed }), c: 'm' });
  const rulesH = 10 + rl.length * 16;
  const H = Math.max(y, rulesH + 20, 120);
  const mid = H / 2;
  const rTop = mid - rulesH / 2;
  const p = tr.pod || {};
  const dns = tr.dns;
  const svc = tr.service;
  let s = `<svg viewBox="0 0 ${X[4] + EW + 10} ${H}" role="img" aria-labelledby="trace-title"><title id="trace-title">${esc(t('trace.title'))}: ${esc(tr.url)}</title>
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#57606a"/></marker></defs>`;
  s += box(X[0], mid - 36, WC, 72, '', [{ t: t('trace.step.client'), c: 'm' }, { t: p.name, c: 'h' }, { t: `${p.ip || ''} @ ${p.nodeName || ''}`, c: 'm' }], { step: 'client', pod: p.name });
  const answered = dns?.queries?.find((q) => q.rcode === 'NOERROR' && (q.answers || []).length);
  const qname = answered?.name || dns?.queries?.[dns.queries.length - 1]?.name || tr.host;
  const nameLines = splitName(qname, Math.floor((WD - 16) / 7.2)).map((x, i) => ({ t: x, c: i ? 'm' : 'h' }));
  s += box(X[1], mid - 36 - (nameLines.length - 1) * 8, WD, 72 + (nameLines.length - 1) * 16, 'dns', dns ? [{ t: t('trace.step.dns'), c: 'm' }, ...nameLines, { t: '→ ' + (dns.answer || 'NXDOMAIN'), c: 'h' }] : [{ t: t('trace.step.dns'), c: 'm' }, { t: t('trace.noDNS') }, { t: tr.host, c: 'h' }], { step: 'dns', answer: dns?.answer });
  s += box(X[2], mid - 36, WV, 72, 'svc', svc ? [{ t: t('trace.step.vip'), c: 'm' }, { t: `${svc.ip}:${svc.port}/${tr.protocol || 'TCP'}`, c: 'h' }, { t: `${svc.namespace}/${svc.name}` + (svc.targetPort ? ' → ' + svc.targetPort : ''), c: 'm' }] : [{ t: t('trace.step.vip'), c: 'm' }, { t: t('trace.noService') }], { step: 'vip', vip: svc ? `${svc.ip}:${svc.port}` : '' });
  s += box(X[3], rTop, WR, rulesH, 'rules', rl, { step: 'rules', mode: tr.rules?.mode });
  s += edge(X[0] + WC, mid, X[1], mid) + edge(X[1] + WD, mid, X[2], mid) + edge(X[2] + WV, mid, X[3], mid);
  // An arrow from each choice to its endpoint, labelled with the share of
  // new connections the endpoint gets overall.
  for (const { e, y: ey } of epPos) {
    const line = choiceLine.get(`${e.ip}:${e.port}`);
    const from = line === undefined ? mid : rTop + 12 + line * 16;
    s += edge(X[3] + WR, from, X[4] + 8, ey, pct(e.probability));
  }
  s += epSVG + '</svg>';

  // The same, in words.
  const steps = [
    `${t('trace.step.client')}: <span class="mono">${esc(p.namespace)}/${esc(p.name)}</span> ${esc(p.ip || '')} @ ${esc(p.nodeName || '')}`,
    dns ? `${t('trace.step.dns')}: ${(dns.queries || []).map((q) => `<span class="mono">${esc(q.name)} ${esc(q.type)}</span> ${esc(q.rcode)}${q.answers?.length ? ' ' + esc(q.answers.join(', ')) : ''}`).join('; ')} → <strong class="mono">${esc(dns.answer || '—')}</strong>` : `${t('trace.step.dns')}: ${esc(t('trace.noDNS'))}`,
    svc ? `${t('trace.step.vip')}: <strong class="mono">${esc(svc.ip)}:${esc(svc.port)}</strong> (${esc(svc.namespace)}/${esc(svc.name)}, ${esc(svc.type)})` : `${t('trace.step.vip')}: ${esc(t('trace.noService'))}`,
    `${esc(t('trace.step.rules', { mode: tr.rules?.mode || '—' }))}: ${rules.length}${pick.choices.length ? ' — ' + esc(t(tr.rules?.mode === 'iptables' ? 'trace.choices' : 'trace.choicesShare', { list: pick.choices.map((r) => pct(r.probability) + (r.endpoint ? ' → ' + r.endpoint : '')).join(', ') })) : ''}`,
    `${t('trace.step.pods')}: ${eps.map((e) => `<span class="mono">${esc(e.pod || e.ip)}</span> ${esc(e.ip)}:${esc(e.port)} @ ${esc(e.nodeName || '?')} — ${esc(t('trace.prob', { p: pct(e.probability) }))}`).join('; ') || esc(t('none'))}`,
  ];
  if (tr.egress) steps.push(`${t('trace.step.egress')}: ${esc(t(tr.egress.masquerade ? 'trace.egressMasq' : 'trace.egressNoMasq'))}`);
  let out = `<div class="path" data-trace="${esc(tr.url)}">`;
  if (tr.warnings?.length) out += `<p><strong>${esc(t('trace.warnings'))}</strong></p><ul class="error">${tr.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`;
  out += `<div class="scroll">${s}</div><ol>${steps.map((x) => `<li>${x}</li>`).join('')}</ol>`;
  if (rules.length) out += `<details><summary>${esc(t('trace.rulesText'))}</summary><pre>${rules.map((r) => esc((r.table ? r.table + ' ' : '') + (r.chain ? r.chain + ': ' : '') + r.text + (r.probability ? `   [p=${r.probability}]` : ''))).join('\n')}</pre></details>`;
  if (tr.egress?.rules?.length) out += `<details><summary>${esc(t('trace.egressRules'))}</summary><pre>${tr.egress.rules.map(esc).join('\n')}</pre></details>`;
  if (tr.conntrack?.length) out += `<details><summary>${esc(t('trace.conntrack'))}</summary><pre>${tr.conntrack.map((c) => esc(`${c.protocol} ${c.src} → ${c.dst} ⇐ ${c.replySrc} ${c.state || ''} ${c.timeout ? c.timeout + 's' : ''}`)).join('\n')}</pre></details>`;
  return out + '</div>';
}
