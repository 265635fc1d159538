// Checkpoints page ("SLURM Checkpoints Page"): running operations with progress, recent
// finished/failed operations, the checkpoint table (filters, Inspect, Restore, Delete).
import { api } from '../api.js';
import { h, syncRows, badge, replaceChildren } from '../dom.js';
import { bytes, time, ago, percent, seconds } from '../format.js';
import { showError, showInfo, errorText, confirmDialog } from '../ui.js';
import { settle, raise, table, pageHeader, mono, dash } from './common.js';
import { labelPlot } from './label_plot.js';

const RECENT_OPS = 5;
const KIND = { dump: 'checkpoint', restore: 'restore' };

export default {
  id: 'checkpoints',
  title: 'Checkpoints',
  mount(root, ctx) {
    let alive = true;
    let checkpoints = [];
    let inspected = null; // id shown in the drawer
    const deleted = new Map(); // id -> ms: hidden even if a poll that started earlier still lists it

    // ---- filters (kept in the URL: #/checkpoints?label=..&user=..&job_id=..)
    const fLabel = h('input', { type: 'search', class: 'input input-sm', placeholder: 'label', 'data-testid': 'filter-label', 'aria-label': 'Filter by label' });
    const fUser = h('input', { type: 'search', class: 'input input-sm', placeholder: 'user', 'data-testid': 'filter-user', 'aria-label': 'Filter by user' });
    const fJob = h('input', { type: 'search', class: 'input input-sm input-xs', placeholder: 'job id', inputmode: 'numeric', 'data-testid': 'filter-job', 'aria-label': 'Filter by job id' });
    const count = h('span', { class: 'muted', 'data-testid': 'checkpoints-count' }, '');
    let debounce = null;
    for (const el of [fLabel, fUser, fJob]) {
      el.addEventListener('input', () => {
        clearTimeout(debounce);
        debounce = setTimeout(filtersChanged, 250);
      });
    }
    setFilters(ctx.params);

    function setFilters(params) {
      fLabel.value = params.get('label') || '';
      fUser.value = params.get('user') || '';
      fJob.value = params.get('job_id') || '';
    }

    function filters() {
      return { label: fLabel.value.trim(), user: fUser.value.trim(), job_id: fJob.value.trim() };
    }

    function filtersChanged() {
      const f = filters();
      fJob.classList.toggle('is-invalid', f.job_id !== '' && !/^\d+$/.test(f.job_id));
      const qs = new URLSearchParams(Object.entries(f).filter(([, v]) => v)).toString();
      history.replaceState(null, '', `#/checkpoints${qs ? `?${qs}` : ''}`);
      ctx.refreshNow();
    }

    // ---- operations panel
    const opsRunning = h('div', { class: 'ops-list', 'data-testid': 'operations-running' });
    const opsRecent = table(['Op', 'Kind', 'Job', 'Node', 'State', 'Finished', 'Result'], { testid: 'operations-recent', cls: 'grid-compact' });
    const opsPanel = h('section', { class: 'panel ops-panel', 'data-testid': 'operations-panel' },
      h('div', { class: 'panel-head' }, h('h2', {}, 'Running operations'), h('span', { class: 'muted', 'data-testid': 'operations-count' }, '')),
      opsRunning,
      h('details', { class: 'ops-recent', open: true },
        h('summary', {}, 'Recent finished and failed operations'),
        opsRecent.el));

    // ---- checkpoint table
    const t = table(
      ['ID', 'Label', 'Owner', { label: 'Job', cls: 'num' }, 'Node', 'Time', { label: 'Why', title: 'why it was taken; how long the job was frozen for it' }, { label: 'Size', cls: 'num' }, { label: 'Codec', title: 'codec × streams' }, 'State', { label: '', cls: 'actions' }],
      { testid: 'checkpoints-table' },
    );

    const plot = labelPlot();
    const drawer = h('aside', { class: 'drawer', 'data-testid': 'checkpoint-detail', hidden: true, 'aria-label': 'Checkpoint details' });

    root.appendChild(h('section', { class: 'page' },
      pageHeader('Checkpoints', fLabel, fUser, fJob, count),
      opsPanel,
      plot.el,
      h('div', { class: 'panel panel-flush' }, t.el),
      drawer));

    // ---- rendering
    function visible(list) {
      const now = Date.now();
      for (const [id, at] of deleted) if (now - at > 15000) deleted.delete(id);
      return list.filter((c) => !deleted.has(String(c.id)));
    }

    function render() {
      const shown = visible(checkpoints);
      const total = shown.reduce((s, c) => s + (Number(c.size) || 0), 0);
      count.textContent = `${shown.length} checkpoint${shown.length === 1 ? '' : 's'} · ${bytes(total)}`;
      const minute = Math.floor(Date.now() / 60000);
      syncRows(t.tbody, shown, {
        key: (c) => c.id,
        sig: (c) => JSON.stringify([c, inspected === c.id, minute]),
        render: renderRow,
        empty: Object.values(filters()).some(Boolean) ? 'No checkpoint matches the filters.' : 'No checkpoints yet.',
        colspan: t.colspan,
      });
    }

    function renderRow(c) {
      const good = String(c.state || '').toLowerCase() === 'good';
      return h('tr', {
        'data-testid': 'checkpoint-row', 'data-id': c.id, 'data-label': c.label || '', 'data-state': c.state || '',
        'data-run': c.run || 'open',
        class: inspected === c.id ? 'is-selected' : null,
      },
      h('td', {}, mono(c.id, 'id-cell')),
      h('td', { 'data-testid': 'checkpoint-label' }, c.label ? mono(c.label, 'label-cell') : '—'),
      h('td', {}, dash(c.owner)),
      h('td', { class: 'num' }, c.job_id === undefined || c.job_id === null ? '—' : mono(c.job_id)),
      h('td', {}, mono(c.node)),
      h('td', { title: ago(c.created_ms) }, time(c.created_ms)),
      reasonCell(c),
      h('td', { class: 'num', title: c.image_size ? `image ${bytes(c.image_size)} before compression` : null }, bytes(c.size)),
      h('td', {}, `${dash(c.codec)} × ${dash(c.streams)}`),
      h('td', {}, badge(c.state), c.run === 'finished'
        ? h('span', { class: 'badge s-neutral', 'data-testid': 'checkpoint-run-finished',
          title: 'Its run ended by itself: the next job with this label starts fresh. It can still be restored here.' }, 'finished run')
        : null),
      h('td', { class: 'actions' },
        h('button', { type: 'button', class: 'btn btn-sm', 'data-testid': 'checkpoint-inspect', onclick: () => inspect(c.id) }, 'Inspect'),
        h('button', { type: 'button', class: 'btn btn-sm', 'data-testid': 'checkpoint-restore', disabled: !good, title: good ? 'Restore this checkpoint' : 'Only good checkpoints can be restored', onclick: () => restore(c) }, 'Restore'),
        h('button', { type: 'button', class: 'btn btn-sm btn-danger-ghost', 'data-testid': 'checkpoint-delete', onclick: () => remove(c) }, 'Delete')));
    }

    // "preemption" over "frozen 1.2 s of 3.4 s"; checkpoints made before reasons show a dash.
    function reasonCell(c) {
      if (!c.reason) return h('td', { 'data-testid': 'checkpoint-reason', 'data-reason': '' }, '—');
      const restart = Number(c.restart_count) > 0 ? ` · restart ${c.restart_count}` : '';
      return h('td', {
        'data-testid': 'checkpoint-reason', 'data-reason': c.reason,
        title: `taken on ${c.reason.replace(/_/g, ' ')}${restart}; the job was frozen ${seconds(c.frozen_ms)}, the checkpoint took ${seconds(c.duration_ms)} from request to commit`,
      },
      h('div', {}, c.reason.replace(/_/g, ' ')),
      h('div', { class: 'muted small', 'data-testid': 'checkpoint-frozen' }, `frozen ${seconds(c.frozen_ms)} of ${seconds(c.duration_ms)}`));
    }

    function opTitle(o) {
      return [
        h('span', { class: 'mono' }, `#${o.id}`), ' ',
        h('strong', {}, KIND[o.kind] || dash(o.kind)),
        ' of job ', h('span', { class: 'mono' }, dash(o.job_id)),
        ' on ', h('span', { class: 'mono' }, dash(o.node)),
      ];
    }

    function renderOps(running, all) {
      const active = new Map();
      for (const o of running || []) active.set(String(o.id), o);
      for (const o of all || []) if (String(o.state) === 'queued' && !active.has(String(o.id))) active.set(String(o.id), o);
      const list = Array.from(active.values()).sort((a, b) => Number(b.id) - Number(a.id));
      opsPanel.querySelector('[data-testid="operations-count"]').textContent = list.length ? `${list.length} active` : '';
      const prev = new Map(Array.from(opsRunning.children).map((el) => [el._key, el]));
      const els = list.map((o) => {
        const pct = percent(o.done_bytes, o.total_bytes);
        const sig = JSON.stringify(o);
        const old = prev.get(String(o.id));
        if (old && old._sig === sig) return old;
        const bar = h('div', { class: `progress ${pct === null ? 'is-indeterminate' : ''}`, role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct === null ? null : Math.round(pct), 'data-testid': 'operation-progress' },
          h('div', { class: 'progress-fill', style: { width: pct === null ? '30%' : `${pct.toFixed(1)}%` } }));
        const el = h('div', { class: 'op', 'data-testid': 'operation-row', 'data-id': o.id, 'data-state': o.state },
          h('div', { class: 'op-line' },
            h('span', { class: 'op-title' }, opTitle(o)),
            badge(o.state),
            h('span', { class: 'op-phase', 'data-testid': 'operation-phase' }, o.phase ? String(o.phase) : (o.state === 'queued' ? 'waiting for the node daemon' : '')),
            h('span', { class: 'op-bytes muted' },
              o.total_bytes ? `${bytes(o.done_bytes || 0)} / ${bytes(o.total_bytes)} (${pct.toFixed(0)}%)` : (o.done_bytes ? bytes(o.done_bytes) : ''))),
          bar);
        el._key = String(o.id);
        el._sig = sig;
        return el;
      });
      if (!els.length) replaceChildren(opsRunning, h('p', { class: 'muted ops-empty', 'data-testid': 'operations-none' }, 'No checkpoint or restore is running.'));
      else replaceChildren(opsRunning, els);

      const recent = (all || []).filter((o) => ['done', 'failed'].includes(String(o.state))).slice(0, RECENT_OPS);
      syncRows(opsRecent.tbody, recent, {
        key: (o) => o.id,
        render: (o) => h('tr', { 'data-testid': 'operation-recent-row', 'data-id': o.id, 'data-state': o.state },
          h('td', {}, mono(`#${o.id}`)),
          h('td', {}, KIND[o.kind] || dash(o.kind)),
          h('td', {}, mono(o.job_id)),
          h('td', {}, mono(o.node)),
          h('td', {}, badge(o.state)),
          h('td', { title: time(o.finished_ms) }, o.finished_ms ? `${time(o.finished_ms)}` : '—'),
          h('td', { class: 'op-result' },
            o.state === 'failed'
              ? h('span', { class: 'text-failed', 'data-testid': 'operation-error' }, dash(o.error))
              : o.checkpoint_id ? h('a', { href: '#', class: 'mono', title: 'Inspect this checkpoint', onclick: (ev) => { ev.preventDefault(); inspect(o.checkpoint_id); } }, String(o.checkpoint_id))
                : o.kind === 'restore' ? `restored on ${dash(o.node)}` : '—')),
        empty: 'Nothing finished recently.',
        colspan: opsRecent.colspan,
      });
    }

    // ---- inspect drawer
    async function inspect(id) {
      inspected = id;
      render();
      drawer.hidden = false;
      replaceChildren(drawer, drawerHead(id), h('p', { class: 'muted pad' }, 'Loading…'));
      try {
        const c = await api.checkpoint(id);
        if (!alive || inspected !== id) return;
        renderDetail(c);
      } catch (e) {
        if (!alive || inspected !== id) return;
        replaceChildren(drawer, drawerHead(id), h('p', { class: 'text-failed pad', 'data-testid': 'detail-error' }, errorText(e)));
      }
    }

    function closeDrawer() {
      inspected = null;
      drawer.hidden = true;
      replaceChildren(drawer);
      render();
    }

    function drawerHead(id, c) {
      return h('div', { class: 'drawer-head' },
        h('h2', {}, 'Checkpoint ', h('span', { class: 'mono', 'data-testid': 'detail-id' }, String(id))),
        c ? h('button', { type: 'button', class: 'btn btn-sm', 'data-testid': 'detail-restore', disabled: String(c.state).toLowerCase() !== 'good', onclick: () => restore(c) }, 'Restore') : null,
        c ? h('button', { type: 'button', class: 'btn btn-sm btn-danger-ghost', 'data-testid': 'detail-delete', onclick: () => remove(c) }, 'Delete') : null,
        h('button', { type: 'button', class: 'btn btn-sm btn-ghost', 'data-testid': 'detail-close', title: 'Close', onclick: closeDrawer }, 'Close'));
    }

    const FIELD_ORDER = ['id', 'state', 'label', 'owner', 'job_id', 'node', 'created_ms', 'reason', 'restart_count', 'frozen_ms', 'duration_ms', 'size', 'image_size', 'codec', 'streams', 'location', 'policy_id'];
    const FIELD_LABEL = { job_id: 'job', created_ms: 'created', image_size: 'image size', policy_id: 'policy', restart_count: 'job restarts', frozen_ms: 'job frozen', duration_ms: 'took' };

    function fieldValue(k, v) {
      if (k === 'state') return badge(v);
      if (k === 'created_ms') return `${time(v)} (${ago(v)})`;
      if (k === 'reason') return v ? String(v).replace(/_/g, ' ') : '—';
      if (k === 'frozen_ms' || k === 'duration_ms') return seconds(v);
      if (k === 'size' || k === 'image_size') return v === undefined || v === null ? '—' : `${bytes(v)} (${Number(v).toLocaleString('en-US')} bytes)`;
      if (v !== null && typeof v === 'object') return h('code', {}, JSON.stringify(v));
      return mono(v);
    }

    function renderDetail(c) {
      const keys = FIELD_ORDER.filter((k) => k in c).concat(Object.keys(c).filter((k) => !FIELD_ORDER.includes(k) && k !== 'manifest'));
      const dl = h('dl', { class: 'fields' }, keys.map((k) => [
        h('dt', {}, FIELD_LABEL[k] || k.replace(/_/g, ' ')),
        h('dd', { 'data-testid': 'detail-field', 'data-field': k }, fieldValue(k, c[k])),
      ]));
      const manifest = c.manifest === undefined ? null : c.manifest;
      replaceChildren(drawer,
        drawerHead(c.id, c),
        h('div', { class: 'drawer-body' },
          dl,
          h('h3', {}, 'Manifest'),
          manifest === null
            ? h('p', { class: 'muted' }, 'No manifest (the checkpoint is not complete).')
            : h('pre', { class: 'json', 'data-testid': 'checkpoint-manifest' }, typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2))));
    }

    // ---- actions
    async function restore(c) {
      const node = h('input', { type: 'text', class: 'input', placeholder: c.node ? `${c.node} (the node that made it)` : 'default node', 'data-testid': 'restore-node', autocomplete: 'off' });
      const ok = await confirmDialog({
        title: 'Restore checkpoint?',
        message: [`Restore ${c.id} (label ${dash(c.label)}, job ${dash(c.job_id)}).`],
        body: h('label', { class: 'field' }, h('span', { class: 'label' }, 'On node (optional)'), node),
        okText: 'Restore',
      });
      if (!ok) return;
      try {
        const op = await api.restoreCheckpoint(c.id, node.value.trim());
        showInfo(`Restore of ${c.id} requested${op && op.id !== undefined ? ` (operation #${op.id})` : ''}.`);
      } catch (e) {
        showError(errorText(e));
      }
      if (alive) ctx.refreshNow();
    }

    async function remove(c) {
      const ok = await confirmDialog({
        title: 'Delete checkpoint?',
        message: [`Delete ${c.id} (label ${dash(c.label)}, job ${dash(c.job_id)}, ${bytes(c.size)}) from storage?`, 'This cannot be undone.'],
        okText: 'Delete',
        danger: true,
      });
      if (!ok) return;
      try {
        await api.deleteCheckpoint(c.id);
        deleted.set(String(c.id), Date.now());
        showInfo(`Deleted checkpoint ${c.id}.`);
        if (inspected === c.id) closeDrawer();
      } catch (e) {
        showError(errorText(e));
      }
      if (alive) {
        render();
        ctx.refreshNow();
      }
    }

    function onKey(ev) {
      if (ev.key === 'Escape' && inspected !== null && !document.querySelector('dialog[open]')) closeDrawer();
    }
    document.addEventListener('keydown', onKey);

    return {
      async refresh() {
        const f = filters();
        const query = { label: f.label, user: f.user, job_id: /^\d+$/.test(f.job_id) ? f.job_id : '' };
        const { values, errors } = await settle([api.checkpoints(query), api.operations({ state: 'running' }), api.operations()]);
        if (!alive) return;
        const [cps, running, all] = values;
        if (cps) {
          checkpoints = cps.slice().sort((a, b) => (Number(b.created_ms) || 0) - (Number(a.created_ms) || 0) || String(b.id).localeCompare(String(a.id)));
          render();
          plot.update(f.label, visible(checkpoints));
        }
        if (running || all) renderOps(running, all);
        raise(errors);
      },
      onParams(params) {
        const before = JSON.stringify(filters());
        setFilters(params);
        if (JSON.stringify(filters()) !== before) ctx.refreshNow();
      },
      unmount() {
        alive = false;
        plot.detach();
        clearTimeout(debounce);
        document.removeEventListener('keydown', onKey);
      },
    };
  },
};
