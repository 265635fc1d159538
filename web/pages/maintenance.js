// Maintenance page: SLURM reservations with flags=maint that the controller tracks, their
// nodes, window and status, what the administrator should change (warnings), and the enabled
// jobs each window moved off its nodes (requeued to resume elsewhere, or only checkpointed).
import { api } from '../api.js';
import { h, syncRows, badge } from '../dom.js';
import { time, interval } from '../format.js';
import { settle, raise, table, pageHeader, mono, dash } from './common.js';

const STATUS_CLASS = { scheduled: 'pending', active: 'running', completed: 'good', cancelled: 'warn' };
const MOVE_CLASS = { requeued: 'good', checkpointed: 'pending', failed: 'failed' };

function moveList(moves) {
  if (!moves || moves.length === 0) return h('span', { class: 'muted' }, 'none');
  return h('ul', { class: 'plain-list' }, moves.map((m) =>
    h('li', { 'data-testid': 'maintenance-move', 'data-job': String(m.job_id), 'data-action': m.action || '' },
      mono(`job ${m.job_id}`), ' ', badge(m.action, MOVE_CLASS[m.action]), ' ',
      h('span', { class: 'muted' }, `${dash(m.user)} · ${time(m.at_ms)}`),
      m.detail ? h('div', { class: 'muted small' }, m.detail) : null)));
}

export default {
  id: 'maintenance',
  title: 'Maintenance',
  mount(root) {
    let alive = true;
    const count = h('span', { class: 'muted', 'data-testid': 'maintenance-count' }, '');
    const warnings = h('div', { 'data-testid': 'maintenance-warnings' });
    const t = table(['Reservation', 'Nodes', 'Starts', 'Ends', 'Max start delay', 'Status', 'Jobs moved'],
      { testid: 'maintenance-table' });
    root.appendChild(h('section', { class: 'page' },
      pageHeader('Maintenance windows', count),
      h('p', { class: 'page-hint muted' },
        'SLURM reservations with flags=maint. Shortly before a window starts, every CEDANA_ENABLE job on its nodes ' +
        'is checkpointed and requeued, and resumes on another node or once the window is over.'),
      warnings,
      h('div', { class: 'panel panel-flush' }, t.el)));

    return {
      async refresh() {
        const { values, errors } = await settle([api.maintenance()]);
        if (!alive) return;
        const windows = values[0];
        if (windows) {
          const open = windows.filter((w) => w.status === 'scheduled' || w.status === 'active').length;
          count.textContent = `${open} scheduled or active, ${windows.length} in all`;
          const notes = [];
          for (const w of windows) {
            if (w.status !== 'scheduled' && w.status !== 'active') continue;
            for (const text of w.warnings || []) notes.push(text);
          }
          warnings.replaceChildren(...notes.map((text) =>
            h('div', { class: 'notice notice-warn', 'data-testid': 'maintenance-warning' },
              h('span', { class: 'notice-text' }, text))));
          syncRows(t.tbody, windows, {
            key: (w) => w.name,
            sig: (w) => JSON.stringify(w),
            render: (w) => h('tr', { 'data-testid': 'maintenance-row', 'data-id': w.name, 'data-status': w.status || '' },
              h('td', {}, mono(w.name)),
              h('td', {}, mono(w.nodes)),
              h('td', {}, time(w.start_time * 1000)),
              h('td', {}, time(w.end_time * 1000)),
              h('td', {}, w.max_start_delay ? interval(w.max_start_delay) : badge('not set', 'warn')),
              h('td', {}, badge(w.status, STATUS_CLASS[w.status])),
              h('td', {}, moveList(w.moves))),
            empty: 'No maintenance reservation. Create one with scontrol create reservation ... flags=maint.',
            colspan: t.colspan,
          });
        }
        raise(errors);
      },
      unmount() {
        alive = false;
      },
    };
  },
};
