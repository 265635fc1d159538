// Jobs page: the SLURM jobs the controller knows about, with "Checkpoint now" for enabled running jobs.
import { api } from '../api.js';
import { h, syncRows, badge } from '../dom.js';
import { time, ago } from '../format.js';
import { showError, showInfo, errorText } from '../ui.js';
import { settle, raise, table, pageHeader, mono, dash } from './common.js';

export default {
  id: 'jobs',
  title: 'Jobs',
  mount(root, ctx) {
    let alive = true;
    const pending = new Set(); // job ids with a checkpoint request in flight

    const enabledOnly = h('input', { type: 'checkbox', 'data-testid': 'jobs-enabled-only', onchange: () => ctx.refreshNow() });
    const filter = h('input', { type: 'search', class: 'input input-sm', placeholder: 'filter', title: 'Filter by job id, name, user, partition, node, state or label', 'data-testid': 'jobs-filter', oninput: () => render() });
    const count = h('span', { class: 'muted', 'data-testid': 'jobs-count' }, '');
    const t = table(
      [
        { label: 'Job', cls: 'num' }, 'Name', 'User', 'Partition', 'Node', 'State', 'Cedana', 'Label', 'Started',
        { label: '', cls: 'actions' },
      ],
      { testid: 'jobs-table' },
    );
    root.appendChild(h('section', { class: 'page' },
      pageHeader('Jobs', filter, h('label', { class: 'check' }, enabledOnly, ' Cedana-enabled only'), count),
      h('p', { class: 'page-hint muted' }, 'Jobs submitted with CEDANA_ENABLE=1 can be checkpointed; CEDANA_CHECKPOINT=<label> names their checkpoints.'),
      h('div', { class: 'panel panel-flush' }, t.el)));

    let jobs = [];

    function render() {
      const q = filter.value.trim().toLowerCase();
      const shown = q
        ? jobs.filter((j) => [j.job_id, j.name, j.user, j.partition, j.node, j.state, j.label].some((v) => String(v ?? '').toLowerCase().includes(q)))
        : jobs;
      count.textContent = `${shown.length} of ${jobs.length} jobs`;
      syncRows(t.tbody, shown, {
        key: (j) => j.job_id,
        sig: (j) => JSON.stringify([j, pending.has(j.job_id), Math.floor(Date.now() / 60000)]),
        render: renderRow,
        empty: jobs.length ? 'No job matches the filter.' : 'No jobs.',
        colspan: t.colspan,
      });
    }

    function renderRow(j) {
      const running = String(j.state || '').toUpperCase() === 'RUNNING';
      const can = !!j.enabled && running;
      const busy = pending.has(j.job_id);
      return h('tr', { 'data-testid': 'job-row', 'data-id': j.job_id, 'data-state': j.state || '' },
        h('td', { class: 'num' }, h('a', { href: `#/job/${encodeURIComponent(j.job_id)}`, class: 'mono', 'data-testid': 'job-timeline-link', title: `Job ${j.job_id}'s timeline` }, String(j.job_id))),
        h('td', {}, dash(j.name)),
        h('td', {}, dash(j.user)),
        h('td', {}, dash(j.partition)),
        h('td', {}, mono(j.node)),
        h('td', {}, badge(j.state)),
        h('td', {}, j.enabled ? badge('enabled', 'good') : h('span', { class: 'muted' }, 'off'),
          // A checkpoint that failed or was refused, or a fresh start although the label had
          // checkpoints: the reason, as the job's stderr has it.
          j.notice ? h('span', { class: 'badge s-failed', 'data-testid': 'job-notice', title: `${j.notice} (${time(j.notice_at_ms)})` },
            /^started fresh/.test(j.notice) ? 'started fresh' : /refused/.test(j.notice) ? 'checkpoint refused' : 'checkpoint failed') : null),
        h('td', {}, j.label
          ? h('a', { href: `#/checkpoints?label=${encodeURIComponent(j.label)}`, class: 'mono label-cell', title: `Checkpoints labelled ${j.label}` }, String(j.label))
          : h('span', { class: 'muted' }, '—')),
        h('td', { title: time(j.start_time ? j.start_time * 1000 : 0) }, j.start_time ? ago(j.start_time * 1000) : '—'),
        h('td', { class: 'actions' },
          can ? h('button', {
            type: 'button', class: 'btn btn-sm', 'data-testid': 'job-checkpoint', disabled: busy,
            title: 'Checkpoint this job now and leave it running',
            onclick: () => checkpointNow(j),
          }, busy ? 'Requesting…' : 'Checkpoint now') : null));
    }

    async function checkpointNow(j) {
      pending.add(j.job_id);
      render();
      try {
        const op = await api.checkpointJob(j.job_id);
        showInfo(`Checkpoint of job ${j.job_id} requested${op && op.id !== undefined ? ` (operation #${op.id})` : ''}. Progress is on the Checkpoints page.`);
      } catch (e) {
        showError(errorText(e));
      } finally {
        pending.delete(j.job_id);
        if (alive) {
          render();
          ctx.refreshNow();
        }
      }
    }

    return {
      async refresh() {
        const { values, errors } = await settle([api.jobs(enabledOnly.checked ? { enabled: 'true' } : undefined)]);
        if (!alive) return;
        if (values[0]) {
          jobs = values[0].slice().sort((a, b) => Number(b.job_id) - Number(a.job_id));
          render();
        }
        raise(errors);
      },
      unmount() {
        alive = false;
      },
    };
  },
};
