// The pages of the controllers' kinds beyond Deployments: Workloads
// (ReplicaSets with their Deployment's revisions and a rollback button,
// DaemonSets, Jobs, CronJobs, HorizontalPodAutoscalers) and Storage
// (PersistentVolumeClaims with their volume and node, PersistentVolumes,
// StorageClasses). All live, from the watch stream.
import { t } from './i18n.js';
import { state, esc, list, byName, age, key, apiCall, errMsg, request, hooks } from './core.js';
import { roAttr, table, namespaceFilter, fillNamespaces, bindNamespaceFilter, say } from './ui.js';

const none = () => `<p class="hint">${esc(t('none'))}</p>`;
const section = (id, title) => `<h2 id="${id}-h">${esc(title)}</h2><div id="${id}"></div>`;
const controllerOf = (o) => (o.metadata.ownerReferences || []).find((r) => r.controller);
const num = (v) => `<td class="num">${esc(v ?? 0)}</td>`;

// duration is kubectl's short form of a Job's run time.
function duration(from, to) {
  if (!from) return '';
  const s = Math.max(0, ((to ? Date.parse(to) : Date.now()) - Date.parse(from)) / 1000);
  if (s < 120) return Math.floor(s) + 's';
  if (s < 7200) return Math.floor(s / 60) + 'm';
  return Math.floor(s / 3600) + 'h';
}

// nextRuns caches the server's next schedule times of each (schedule,
// time zone) pair the CronJobs table shows (GET /ui/cronjobs/next, parsed
// by the CronJob controller's own parser): fetched once, again when its
// first time has passed. A page re-render follows each answer.
const nextRuns = new Map(); // schedule + '\n' + tz -> {next: [ms], error, pending}

function nextRun(cj) {
  const sched = cj.spec?.schedule || '', tz = cj.spec?.timeZone || '';
  const k = sched + '\n' + tz;
  let e = nextRuns.get(k);
  if (!e || (!e.pending && !e.error && e.next.length && e.next[0] <= Date.now())) {
    e = { next: e?.next || [], error: '', pending: true };
    nextRuns.set(k, e);
    const q = new URLSearchParams({ schedule: sched });
    if (tz) q.set('timeZone', tz);
    request('GET', '/ui/cronjobs/next?' + q).then((r) => {
      nextRuns.set(k, r.ok ? { next: (r.data.next || []).map(Date.parse), error: '', pending: false } : { next: [], error: errMsg(r), pending: false });
      if (hooks.changed) hooks.changed();
    });
  }
  return e;
}

// nextRunCell is the CronJob's next run: "in 4m" with the time (and the
// two after it) in its title; a suspended CronJob has none.
function nextRunCell(cj) {
  if (cj.spec?.suspend) return `<td data-next="">${esc(t('wl.suspended'))}</td>`;
  const e = nextRun(cj);
  if (e.error) return `<td data-next="" class="error">${esc(e.error)}</td>`;
  const at = e.next.find((ms) => ms > Date.now());
  if (!at) return '<td data-next=""></td>';
  const s = Math.round((at - Date.now()) / 1000);
  const rel = s < 120 ? s + 's' : s < 7200 ? Math.round(s / 60) + 'm' : s < 172800 ? Math.round(s / 3600) + 'h' : Math.round(s / 86400) + 'd';
  const iso = new Date(at).toISOString();
  const title = e.next.filter((ms) => ms >= at).map((ms) => new Date(ms).toISOString()).join(', ');
  return `<td data-next="${esc(iso)}" title="${esc(title)}"><time datetime="${esc(iso)}">${esc(t('wl.inTime', { d: rel }))}</time></td>`;
}

function jobStatus(j) {
  const c = (type) => (j.status?.conditions || []).some((x) => x.type === type && x.status === 'True');
  if (c('Complete')) return t('wl.complete');
  if (c('Failed')) return t('wl.failed');
  if (j.spec?.suspend) return t('wl.suspended');
  return t('wl.running');
}

// hpaTargets is kubectl's TARGETS cell: "cpu: 12%/50%".
function hpaTargets(h) {
  const cur = h.status?.currentMetrics || [];
  return (h.spec?.metrics || []).map((m, i) => {
    const r = m.resource || m.containerResource;
    if (!r) return m.type;
    const c = cur[i]?.resource || cur[i]?.containerResource;
    if (r.target?.averageUtilization !== undefined) {
      const now = c?.current?.averageUtilization;
      return `${r.name}: ${now === undefined ? '<unknown>' : now + '%'}/${r.target.averageUtilization}%`;
    }
    return `${r.name}: ${c?.current?.averageValue ?? '<unknown>'}/${r.target?.averageValue ?? ''}`;
  }).join(', ');
}

// rollbackBody is the JSON patch kubectl's `rollout undo` sends: the
// Deployment's template replaced by the ReplicaSet's, without the
// pod-template-hash label.
function rollbackBody(rs) {
  const tmpl = JSON.parse(JSON.stringify(rs.spec.template));
  if (tmpl.metadata?.labels) delete tmpl.metadata.labels['pod-template-hash'];
  return JSON.stringify([{ op: 'replace', path: '/spec/template', value: tmpl }]);
}

const workloads = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('wl.title'))}</h1>${namespaceFilter(route)}<p id="wl-msg" role="status"></p>
      ${section('wl-rs', t('wl.rs'))}${section('wl-ds', t('wl.ds'))}${section('wl-jobs', t('wl.jobs'))}${section('wl-cj', t('wl.cj'))}${section('wl-hpa', t('wl.hpa'))}`;
    bindNamespaceFilter(el, route);
    el.querySelector('#wl-rs').addEventListener('click', async (e) => {
      const b = e.target.closest('button[data-rollback]');
      if (!b) return;
      const rs = state.store.replicasets.get(b.dataset.rollback);
      const owner = rs && controllerOf(rs);
      if (!owner) return;
      const path = `/apis/apps/v1/namespaces/${encodeURIComponent(rs.metadata.namespace)}/deployments/${encodeURIComponent(owner.name)}`;
      const r = await apiCall('PATCH', path, rollbackBody(rs), 'application/json-patch+json');
      const rev = rs.metadata.annotations?.['deployment.kubernetes.io/revision'] || '';
      say(el.querySelector('#wl-msg'), r.ok, r.ok ? t('wl.rolledBack', { name: owner.name, rev }) : t(r.status === 403 ? 'forbidden' : 'error', { msg: errMsg(r) }));
    });
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    const put = (id, label, headers, rows) => { el.querySelector('#' + id).innerHTML = rows.length ? table(label, headers, rows) : none(); };

    // ReplicaSets, newest revision first under each Deployment.
    const rev = (rs) => parseInt(rs.metadata.annotations?.['deployment.kubernetes.io/revision'] || '0', 10);
    const sets = list('replicasets', ns).sort((a, b) => byName(a, b));
    const current = new Map(); // deployment key -> highest revision
    for (const rs of sets) {
      const o = controllerOf(rs);
      if (o?.kind === 'Deployment') {
        const k = rs.metadata.namespace + '/' + o.name;
        current.set(k, Math.max(current.get(k) || 0, rev(rs)));
      }
    }
    sets.sort((a, b) => {
      const oa = controllerOf(a)?.name || '', ob = controllerOf(b)?.name || '';
      return (a.metadata.namespace || '').localeCompare(b.metadata.namespace || '') || oa.localeCompare(ob) || rev(b) - rev(a) || a.metadata.name.localeCompare(b.metadata.name);
    });
    put('wl-rs', t('wl.rs'), [t('name'), t('namespace'), t('wl.owner'), t('wl.revision'), t('wl.desired'), t('wl.current'), t('ready'), t('age'), t('wl.actions')], sets.map((rs) => {
      const o = controllerOf(rs), st = rs.status || {};
      const isDep = o?.kind === 'Deployment', r = rev(rs);
      const isCurrent = isDep && current.get(rs.metadata.namespace + '/' + o.name) === r;
      const btn = isDep && !isCurrent
        ? `<button data-rollback="${esc(key(rs))}" aria-label="${esc(t('wl.rollback', { rev: r }))}"${roAttr()}>${esc(t('wl.rollbackShort'))}</button>`
        : (isCurrent ? `<span class="badge ok">${esc(t('wl.currentRev'))}</span>` : '');
      return `<tr data-rs="${esc(key(rs))}"><td>${esc(rs.metadata.name)}</td><td>${esc(rs.metadata.namespace)}</td><td>${esc(o ? o.kind + '/' + o.name : '')}</td><td class="num">${esc(r || '')}</td>${num(rs.spec?.replicas ?? 1)}${num(st.replicas)}<td class="num" data-ready="${esc((st.readyReplicas || 0) + '/' + (rs.spec?.replicas ?? 1))}">${esc(st.readyReplicas || 0)}</td><td>${esc(age(rs.metadata.creationTimestamp))}</td><td>${btn}</td></tr>`;
    }));

    put('wl-ds', t('wl.ds'), [t('name'), t('namespace'), t('wl.desired'), t('wl.current'), t('ready'), t('wl.upToDate'), t('wl.available'), t('wl.nodeSelector'), t('age')], list('daemonsets', ns).sort(byName).map((d) => {
      const st = d.status || {};
      const sel = Object.entries(d.spec?.template?.spec?.nodeSelector || {}).map(([k, v]) => k + '=' + v).join(',') || '<none>';
      return `<tr data-ds="${esc(key(d))}"><td>${esc(d.metadata.name)}</td><td>${esc(d.metadata.namespace)}</td>${num(st.desiredNumberScheduled)}${num(st.currentNumberScheduled)}${num(st.numberReady)}${num(st.updatedNumberScheduled)}${num(st.numberAvailable)}<td class="mono">${esc(sel)}</td><td>${esc(age(d.metadata.creationTimestamp))}</td></tr>`;
    }));

    put('wl-jobs', t('wl.jobs'), [t('name'), t('namespace'), t('wl.status'), t('wl.completions'), t('wl.duration'), t('age')], list('jobs', ns).sort(byName).map((j) => {
      const st = j.status || {};
      const comp = `${st.succeeded || 0}/${j.spec?.completions ?? 1}`;
      return `<tr data-job="${esc(key(j))}"><td>${esc(j.metadata.name)}</td><td>${esc(j.metadata.namespace)}</td><td data-status="${esc(jobStatus(j))}">${esc(jobStatus(j))}</td><td class="num" data-completions="${esc(comp)}">${esc(comp)}</td><td>${esc(duration(st.startTime, st.completionTime))}</td><td>${esc(age(j.metadata.creationTimestamp))}</td></tr>`;
    }));

    put('wl-cj', t('wl.cj'), [t('name'), t('namespace'), t('wl.schedule'), t('wl.timeZone'), t('wl.suspend'), t('wl.active'), t('wl.lastSchedule'), t('wl.nextRun'), t('age')], list('cronjobs', ns).sort(byName).map((c) => {
      const st = c.status || {};
      return `<tr data-cronjob="${esc(key(c))}"><td>${esc(c.metadata.name)}</td><td>${esc(c.metadata.namespace)}</td><td class="mono">${esc(c.spec?.schedule)}</td><td>${esc(c.spec?.timeZone || '<none>')}</td><td>${esc(c.spec?.suspend ? t('yes') : t('no'))}</td>${num((st.active || []).length)}<td>${esc(st.lastScheduleTime ? age(st.lastScheduleTime) : '<none>')}</td>${nextRunCell(c)}<td>${esc(age(c.metadata.creationTimestamp))}</td></tr>`;
    }));

    put('wl-hpa', t('wl.hpa'), [t('name'), t('namespace'), t('wl.reference'), t('wl.targets'), t('wl.min'), t('wl.max'), t('wl.replicas'), t('age')], list('horizontalpodautoscalers', ns).sort(byName).map((h) => {
      const ref = (h.spec?.scaleTargetRef?.kind || '') + '/' + (h.spec?.scaleTargetRef?.name || '');
      return `<tr data-hpa="${esc(key(h))}"><td>${esc(h.metadata.name)}</td><td>${esc(h.metadata.namespace)}</td><td>${esc(ref)}</td><td class="mono" data-targets="${esc(hpaTargets(h))}">${esc(hpaTargets(h))}</td>${num(h.spec?.minReplicas ?? 1)}${num(h.spec?.maxReplicas)}${num(h.status?.currentReplicas)}<td>${esc(age(h.metadata.creationTimestamp))}</td></tr>`;
    }));
  },
};

// nodeOfVolume is the node a volume is pinned to by its required node
// affinity on kubernetes.io/hostname (local-path volumes are).
function nodeOfVolume(pv) {
  for (const term of pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms || []) {
    for (const e of term.matchExpressions || []) {
      if (e.key === 'kubernetes.io/hostname' && e.operator === 'In' && e.values?.length) return e.values[0];
    }
  }
  return '';
}

const storage = {
  mount(el, route) {
    el.innerHTML = `<h1>${esc(t('st.title'))}</h1>${namespaceFilter(route)}${section('st-pvc', t('st.pvc'))}${section('st-pv', t('st.pv'))}${section('st-sc', t('st.sc'))}`;
    bindNamespaceFilter(el, route);
  },
  update(el, route) {
    const ns = route.query.get('ns') || '';
    fillNamespaces(el.querySelector('#ns-filter'), ns, true);
    const put = (id, label, headers, rows) => { el.querySelector('#' + id).innerHTML = rows.length ? table(label, headers, rows) : none(); };
    put('st-pvc', t('st.pvc'), [t('name'), t('namespace'), t('wl.status'), t('st.volume'), t('st.capacity'), t('st.access'), t('st.class'), t('st.node'), t('age')], list('persistentvolumeclaims', ns).sort(byName).map((c) => {
      const pv = c.spec?.volumeName ? state.store.persistentvolumes.get(c.spec.volumeName) : null;
      const node = nodeOfVolume(pv) || c.metadata.annotations?.['volume.kubernetes.io/selected-node'] || '';
      return `<tr data-pvc="${esc(key(c))}"><td>${esc(c.metadata.name)}</td><td>${esc(c.metadata.namespace)}</td><td data-phase="${esc(c.status?.phase || '')}">${esc(c.status?.phase || '')}</td><td class="mono">${esc(c.spec?.volumeName || '')}</td><td>${esc(c.status?.capacity?.storage || '')}</td><td>${esc((c.status?.accessModes || c.spec?.accessModes || []).join(','))}</td><td>${esc(c.spec?.storageClassName || '')}</td><td data-node="${esc(node)}">${esc(node)}</td><td>${esc(age(c.metadata.creationTimestamp))}</td></tr>`;
    }));
    put('st-pv', t('st.pv'), [t('name'), t('st.capacity'), t('st.access'), t('st.reclaim'), t('wl.status'), t('st.claim'), t('st.class'), t('st.node'), t('age')], [...state.store.persistentvolumes.values()].sort(byName).map((pv) => {
      const claim = pv.spec?.claimRef ? pv.spec.claimRef.namespace + '/' + pv.spec.claimRef.name : '';
      return `<tr data-pv="${esc(pv.metadata.name)}"><td class="mono">${esc(pv.metadata.name)}</td><td>${esc(pv.spec?.capacity?.storage || '')}</td><td>${esc((pv.spec?.accessModes || []).join(','))}</td><td>${esc(pv.spec?.persistentVolumeReclaimPolicy || '')}</td><td>${esc(pv.status?.phase || '')}</td><td>${esc(claim)}</td><td>${esc(pv.spec?.storageClassName || '')}</td><td>${esc(nodeOfVolume(pv))}</td><td>${esc(age(pv.metadata.creationTimestamp))}</td></tr>`;
    }));
    put('st-sc', t('st.sc'), [t('name'), t('st.provisioner'), t('st.reclaim'), t('st.binding'), t('age')], [...state.store.storageclasses.values()].sort(byName).map((sc) => {
      const def = sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true';
      return `<tr data-sc="${esc(sc.metadata.name)}"><td>${esc(sc.metadata.name)}${def ? ` <span class="badge ok">${esc(t('st.default'))}</span>` : ''}</td><td class="mono">${esc(sc.provisioner)}</td><td>${esc(sc.reclaimPolicy || 'Delete')}</td><td>${esc(sc.volumeBindingMode || 'Immediate')}</td><td>${esc(age(sc.metadata.creationTimestamp))}</td></tr>`;
    }));
  },
};

export const workloadViews = { workloads, storage };
