// Nodes page (admin token only): the node daemons that registered with the controller.
import { api } from '../api.js';
import { h, syncRows, badge } from '../dom.js';
import { time, ago } from '../format.js';
import { settle, raise, table, pageHeader, mono } from './common.js';

export default {
  id: 'nodes',
  title: 'Nodes',
  adminOnly: true,
  mount(root) {
    let alive = true;
    const count = h('span', { class: 'muted', 'data-testid': 'nodes-count' }, '');
    const t = table(['Node', 'Version', 'Status', 'Last seen', 'Last seen at'], { testid: 'nodes-table' });
    root.appendChild(h('section', { class: 'page' },
      pageHeader('Nodes', count),
      h('p', { class: 'page-hint muted' }, 'Node daemons registered with this controller. A node is up when it was seen less than 30 s ago.'),
      h('div', { class: 'panel panel-flush' }, t.el)));

    return {
      async refresh() {
        const { values, errors } = await settle([api.nodes()]);
        if (!alive) return;
        const nodes = values[0];
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
      },
    };
  },
};
