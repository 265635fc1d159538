// Nodes page (admin token only): the node daemons that registered with the controller, and
// each node's checkpoint throughput over time (each checkpoint's size over the time it took).
import { api } from '../api.js';
import { h, syncRows, badge, replaceChildren } from '../dom.js';
import { time, ago, bytes, seconds } from '../format.js';
import { ChartSlot, drawSeries, legend } from '../charts.js';
import { settle, raise, table, pageHeader, mono } from './common.js';

const MIB = 1024 * 1024;
const PLOT_EVERY_MS = 10000;

// One series per node: MiB/s of each of its checkpoints that recorded how long it took.
function throughputByNode(checkpoints) {
  const by = new Map();
  for (const c of checkpoints) {
    if (!c.node || !(Number(c.duration_ms) > 0) || !c.created_ms) continue;
    if (!by.has(c.node)) by.set(c.node, []);
    by.get(c.node).push({
      x: c.created_ms,
      y: Number(c.size) / MIB / (c.duration_ms / 1000),
      text: `${time(c.created_ms)} on ${c.node}: ${bytes(c.size)} in ${seconds(c.duration_ms)}`,
    });
  }
  return [...by.entries()].sort(([a], [b]) => a.localeCompare(b))
    .map(([name, points]) => ({ name, kind: 'throughput', points: points.sort((a, b) => a.x - b.x) }));
}

export default {
  id: 'nodes',
  title: 'Nodes',
  adminOnly: true,
  mount(root) {
    let alive = true;
    const count = h('span', { class: 'muted', 'data-testid': 'nodes-count' }, '');
    const t = table(['Node', 'Version', 'Status', 'Last seen', 'Last seen at'], { testid: 'nodes-table' });
    const slot = new ChartSlot('node-throughput-chart');
    const key = h('div');
    let plottedAt = 0;
    root.appendChild(h('section', { class: 'page' },
      pageHeader('Nodes', count),
      h('p', { class: 'page-hint muted' }, 'Node daemons registered with this controller. A node is up when it was seen less than 30 s ago.'),
      h('div', { class: 'panel panel-flush' }, t.el),
      h('section', { class: 'panel', 'data-testid': 'node-throughput' },
        h('div', { class: 'panel-head' }, h('h2', {}, 'Checkpoint throughput'),
          h('span', { class: 'muted' }, 'MiB/s of each checkpoint: its stored size over the time from request to commit')),
        slot.el, key)));

    return {
      async refresh() {
        // Every checkpoint for the plot: not on every 2 s poll.
        const plotDue = Date.now() - plottedAt >= PLOT_EVERY_MS;
        const { values, errors } = await settle([api.nodes(), plotDue ? api.checkpoints() : null]);
        if (!alive) return;
        const [nodes, checkpoints] = values;
        if (checkpoints) {
          plottedAt = Date.now();
          const groups = throughputByNode(checkpoints);
          replaceChildren(key, legend(groups));
          await drawSeries(slot, 'throughput-point', groups);
        }
        if (nodes) {
          const up = nodes.filter((n) => String(n.status) === 'up').length;
          count.textContent = `${up} of ${nodes.length} up`;
          const list = nodes.slice().sort((a, b) => String(a.name).localeCompare(String(b.name)));
          const tick = Math.floor(Date.now() / 5000);
          syncRows(t.tbody, list, {
            key: (n) => n.name,
            sig: (n) => JSON.stringify([n, tick]),
            render: (n) => h('tr', { 'data-testid': 'node-row', 'data-id': n.name, 'data-status': n.status || '' },
              h('td', {}, mono(n.name)),
              h('td', {}, mono(n.version)),
              h('td', {}, badge(n.status, String(n.status) === 'up' ? 'good' : 'failed')),
              h('td', {}, n.last_seen_ms ? ago(n.last_seen_ms) : 'never'),
              h('td', {}, time(n.last_seen_ms))),
            empty: 'No node daemon has registered yet. Install one with /install/slurm.',
            colspan: t.colspan,
          });
        }
        raise(errors);
      },
      unmount() {
        alive = false;
        slot.detach();
      },
    };
  },
};
