// One job's page (#/job/<id>, from the jobs list): its timeline on one time axis (each run,
// fresh or resumed and from which checkpoint, each checkpoint with why and how long, SLURM's
// submit, preemptions, requeues and end), then the same events as a list.
import { api } from '../api.js';
import { h, syncRows, badge, replaceChildren } from '../dom.js';
import { time } from '../format.js';
import { describe } from '../timeline.js';
import { ChartSlot, drawTimeline } from '../charts.js';
import { settle, raise, table, mono, dash } from './common.js';

export default {
  id: 'job',
  title: 'Job',
  hidden: true, // reached from the jobs list
  navId: 'jobs',
  mount(root, ctx) {
    let alive = true;
    let jobId = ctx.rest[0] || '';
    const title = h('h1', {}, `Job ${jobId}`);
    const facts = h('div', { class: 'job-facts', 'data-testid': 'job-facts' });
    const slot = new ChartSlot('job-timeline');
    const events = table(['Time', 'Run', 'Event'], { testid: 'job-events', cls: 'grid-compact' });
    root.appendChild(h('section', { class: 'page' },
      h('div', { class: 'page-head' }, title, h('div', { class: 'page-head-right' }, h('a', { href: '#/jobs' }, '← all jobs'))),
      facts,
      h('section', { class: 'panel' },
        h('div', { class: 'panel-head' }, h('h2', {}, 'Timeline'),
          h('span', { class: 'muted' }, 'Runs as bars (green: resumed from a checkpoint, blue: started fresh), checkpoints and SLURM\'s events as marks; hover for details.')),
        slot.el),
      h('section', { class: 'panel panel-flush' }, events.el)));

    function renderFacts(j) {
      replaceChildren(facts,
        h('span', {}, h('span', { class: 'muted' }, 'name '), dash(j.name)),
        h('span', {}, h('span', { class: 'muted' }, 'user '), dash(j.user)),
        h('span', {}, h('span', { class: 'muted' }, 'partition '), dash(j.partition)),
        h('span', {}, h('span', { class: 'muted' }, 'node '), mono(j.node)),
        badge(j.state),
        j.enabled ? badge('enabled', 'good') : h('span', { class: 'muted' }, 'cedana off'),
        j.label ? h('a', { href: `#/checkpoints?label=${encodeURIComponent(j.label)}`, 'data-testid': 'job-label-link', title: 'Its label\'s checkpoints, with their size and duration over time' }, `label ${j.label}`) : null,
        j.notice ? h('span', { class: 'badge s-failed', 'data-testid': 'job-notice', title: time(j.notice_at_ms) }, j.notice) : null);
    }

    return {
      async refresh() {
        if (!/^\d+$/.test(jobId)) {
          replaceChildren(facts, h('p', { class: 'muted' }, `"${jobId}" is not a job id.`));
          return;
        }
        const { values, errors } = await settle([api.jobTimeline(jobId)]);
        if (!alive) return;
        const tl = values[0];
        if (tl) {
          title.textContent = `Job ${jobId}${tl.job && tl.job.name ? ` · ${tl.job.name}` : ''}`;
          renderFacts(tl.job || {});
          const list = Array.isArray(tl.events) ? tl.events : [];
          await drawTimeline(slot, list, Number(tl.now_ms) || Date.now());
          syncRows(events.tbody, list.slice().reverse(), {
            key: (e) => `${e.kind}/${e.run}/${e.checkpoint_id || ''}`,
            render: (e) => h('tr', { 'data-testid': 'job-event', 'data-kind': e.kind, 'data-run': e.run },
              h('td', {}, time(e.at_ms)), h('td', { class: 'num' }, String(e.run)), h('td', {}, describe(e))),
            empty: 'No events recorded for this job.',
            colspan: events.colspan,
          });
        }
        raise(errors);
      },
      onParams(params, rest) {
        if (rest[0] !== jobId) {
          jobId = rest[0] || '';
          title.textContent = `Job ${jobId}`;
          ctx.refreshNow();
        }
      },
      unmount() {
        alive = false;
        slot.detach();
      },
    };
  },
};
