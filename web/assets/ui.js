// Helpers the pages share: tables, the namespace filter, messages, and
// the read-only state of the session.
import { t } from './i18n.js';
import { state, esc } from './core.js';

export const ro = () => !!state.session?.readOnly;
export const roAttr = () => (ro() ? ` disabled title="${esc(t('readonly.why'))}"` : '');

export function table(label, headers, rows, cls) {
  return `<div class="scroll"><table aria-label="${esc(label)}"${cls ? ` class="${cls}"` : ''}><thead><tr>${headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

// gridTable is a table of ARIA roles on CSS grid rows, for lists that can
// be long (services): rows come in chunks of 50 that the browser neither
// styles nor lays out while they are off screen (content-visibility), so
// 1,000 rows draw about as fast as 50, and all stay in the page (find in
// page, screen readers).
export function gridTable(label, headers, rows, cls) {
  let body = '';
  for (let i = 0; i < rows.length; i += 50) body += `<div role="rowgroup" class="chunk">${rows.slice(i, i + 50).join('')}</div>`;
  return `<div class="scroll"><div class="grid ${cls}" role="table" aria-label="${esc(label)}" aria-rowcount="${rows.length + 1}"><div role="rowgroup"><div class="gr head" role="row">${headers.map((h) => `<span role="columnheader">${esc(h)}</span>`).join('')}</div></div>${body}</div></div>`;
}

export function namespaceFilter(route) {
  return `<div class="filters"><label for="ns-filter">${esc(t('namespace'))}</label><select id="ns-filter"></select></div>`;
}

// fillNamespaces keeps a namespace <select> in step with the store.
export function fillNamespaces(sel, current, withAll) {
  const names = [...state.store.namespaces.values()].map((n) => n.metadata.name).sort();
  if (current && !names.includes(current)) names.push(current);
  const want = (withAll ? [''] : []).concat(names).join('\n');
  if (sel.dataset.opts !== want) {
    sel.innerHTML = (withAll ? `<option value="">${esc(t('all'))}</option>` : '') + names.map((n) => `<option>${esc(n)}</option>`).join('');
    sel.dataset.opts = want;
  }
  sel.value = current || '';
}

export function bindNamespaceFilter(el, route) {
  const sel = el.querySelector('#ns-filter');
  sel.addEventListener('change', () => {
    const q = new URLSearchParams(route.query);
    if (sel.value) q.set('ns', sel.value); else q.delete('ns');
    location.hash = '#/' + route.parts.join('/') + (q.toString() ? '?' + q : '');
  });
}

export function say(el, ok, msg) {
  el.className = ok ? 'okmsg' : 'error';
  el.textContent = msg;
}
