// The checkpoints page's plot for one label: each checkpoint's size and how long it took, over
// time (shown while the page is filtered by a label).
import { h } from '../dom.js';
import { bytes, seconds, time } from '../format.js';
import { ChartSlot, drawSeries } from '../charts.js';

const MIB = 1024 * 1024;

export function labelPlot() {
  const size = new ChartSlot('label-plot-size');
  const took = new ChartSlot('label-plot-duration');
  const heading = h('h2', {}, '');
  const el = h('section', { class: 'panel', 'data-testid': 'label-plot', hidden: true },
    h('div', { class: 'panel-head' }, heading),
    h('div', { class: 'chart-pair' },
      h('figure', {}, h('figcaption', { class: 'muted' }, 'Size (MiB)'), size.el),
      h('figure', {}, h('figcaption', { class: 'muted' }, 'Time taken, request to commit (s)'), took.el)));

  return {
    el,
    update(label, checkpoints) {
      el.hidden = !label;
      if (!label) return;
      heading.textContent = `Checkpoints of label ${label} over time`;
      const of = checkpoints.filter((c) => c.label === label && c.created_ms).sort((a, b) => a.created_ms - b.created_ms);
      const text = (c) => `${time(c.created_ms)}: ${bytes(c.size)}, took ${seconds(c.duration_ms)}${c.reason ? ` (${c.reason})` : ''}`;
      drawSeries(size, 'label-size-point', [{ name: label, kind: 'size', points: of.map((c) => ({ x: c.created_ms, y: Number(c.size) / MIB, text: text(c) })) }]);
      // Checkpoints from before durations were recorded have none to plot.
      const timed = of.filter((c) => Number(c.duration_ms) > 0);
      drawSeries(took, 'label-duration-point', [{ name: label, kind: 'duration', points: timed.map((c) => ({ x: c.created_ms, y: c.duration_ms / 1000, text: text(c) })) }]);
    },
    detach() {
      size.detach();
      took.detach();
    },
  };
}
