// Charts, drawn as SVG by Chartist (web/vendor/chartist.js, put there by scripts/vendor_web.sh
// from the npm package pinned in packaging/web). Each drawn mark carries data-* attributes
// saying what it shows, and a <title> its tooltip. The library is loaded when a chart is first
// drawn; without it the pages work and say why they have no chart.
import { h, replaceChildren } from './dom.js';
import { clock, time } from './format.js';
import { runsOf, describe } from './timeline.js';

let library = null;
function chartist() {
  library ??= import('./vendor/chartist.js');
  return library;
}

// A chart in `el`, redrawn only when what it shows changed (pages refresh every 2 s).
export class ChartSlot {
  constructor(testid) {
    this.el = h('div', { class: 'chart', 'data-testid': testid });
    this.sig = null;
    this.chart = null;
  }

  async draw(sig, build) {
    if (sig === this.sig) return;
    this.sig = sig;
    let lib;
    try {
      lib = await chartist();
    } catch (e) {
      replaceChildren(this.el, h('p', { class: 'muted chart-missing' },
        `No chart: the charting library (vendor/chartist.js) did not load (${e.message}). scripts/vendor_web.sh installs it.`));
      return;
    }
    if (sig !== this.sig) return; // a newer draw started while the library loaded
    this.detach();
    this.el.removeAttribute('data-drawn');
    replaceChildren(this.el);
    this.chart = build(lib, this.el);
    // Chartist draws on its next tick; tests wait for this mark.
    if (this.chart) this.chart.on('created', () => this.el.setAttribute('data-drawn', 'true'));
  }

  detach() {
    if (this.chart) this.chart.detach();
    this.chart = null;
  }
}

// Marks get their meaning as attributes and their text as a tooltip.
function annotate(d, testid) {
  if (d.type !== 'point' || !d.meta) return;
  const m = d.meta;
  d.element.attr({ 'data-testid': testid, 'data-kind': m.kind || '', 'data-run': m.run ?? '', 'data-reason': m.reason || '' });
  if (m.kind) d.element.addClass(`mark-${m.kind}`);
  d.element.elem('title').text(m.text || '');
}

// The x axis over `times` (ms), with a little room either side.
function timeAxis(lib, times) {
  const first = Math.min(...times);
  const last = Math.max(...times);
  const pad = Math.max((last - first) * 0.03, 1000);
  const low = first - pad;
  const span = Math.max(last + pad - low, 1000);
  return { type: lib.FixedScaleAxis, low, high: low + span, divisor: 6, labelInterpolationFnc: (v) => (span > 86400000 ? time(v).slice(5, 16) : clock(v)) };
}

const PADDING = { top: 10, right: 24, bottom: 0, left: 10 };

const LANES = { 3: 'runs', 2: 'checkpoints', 1: 'SLURM' };
const SLURM_EVENTS = new Set(['submitted', 'preempted', 'requeued', 'ended']);

// The job's life: a bar per run (fresh or resumed), its checkpoints and SLURM's events.
export function drawTimeline(slot, events, nowMs) {
  const runs = runsOf(events, nowMs);
  const sig = JSON.stringify([events, runs.filter((r) => r.running).length ? Math.floor(nowMs / 10000) : 0]);
  return slot.draw(sig, (lib, el) => {
    const times = events.map((e) => e.at_ms).concat(runs.map((r) => r.end));
    if (!times.length) {
      el.appendChild(h('p', { class: 'muted' }, 'Nothing happened to this job yet.'));
      return null;
    }
    const point = (e, y) => ({ x: e.at_ms, y, meta: { kind: e.kind, run: e.run, reason: e.kind === 'checkpoint' ? e.detail : '', text: `${time(e.at_ms)}: ${describe(e)}` } });
    const series = runs.map((r) => ({
      name: `run-${r.run}`,
      className: `tl-run tl-${r.how || 'started'}`,
      data: [{ x: r.start, y: 3 }, { x: r.end, y: 3 }],
    }));
    series.push({ name: 'starts', className: 'tl-starts', data: events.filter((e) => e.kind === 'started').map((e) => point(e, 3)) });
    series.push({ name: 'checkpoints', className: 'tl-checkpoints', data: events.filter((e) => e.kind === 'checkpoint').map((e) => point(e, 2)) });
    series.push({ name: 'events', className: 'tl-events', data: events.filter((e) => SLURM_EVENTS.has(e.kind)).map((e) => point(e, 1)) });
    const perSeries = Object.fromEntries(runs.map((r) => [`run-${r.run}`, { showLine: true, showPoint: false }]));
    const chart = new lib.LineChart(el, { series }, {
      height: '190px', showLine: false, lineSmooth: false, series: perSeries, chartPadding: PADDING,
      axisX: timeAxis(lib, times),
      axisY: { type: lib.FixedScaleAxis, ticks: [1, 2, 3], low: 0.5, high: 3.5, offset: 80, labelInterpolationFnc: (v) => LANES[v] || '' },
    });
    chart.on('draw', (d) => {
      annotate(d, 'timeline-mark');
      if (d.type === 'line' && d.series && String(d.series.name).startsWith('run-')) {
        const r = runs.find((x) => `run-${x.run}` === d.series.name);
        d.element.attr({ 'data-testid': 'timeline-run', 'data-run': r.run, 'data-how': r.how, 'data-running': String(r.running) });
        d.element.elem('title').text(`run ${r.run}: ${time(r.start)} to ${r.running ? 'now' : time(r.end)}`
          + `${r.how === 'resumed' ? `, resumed from ${r.checkpoint_id}` : r.how === 'fresh' ? ', started fresh' : ''}`);
      }
    });
    return chart;
  });
}

// Points over time, one series per entry of `groups` ({name, points: [{x, y, text}]}).
export function drawSeries(slot, testid, groups, { height = '180px' } = {}) {
  const sig = JSON.stringify(groups);
  return slot.draw(sig, (lib, el) => {
    const xs = groups.flatMap((g) => g.points.map((p) => p.x));
    if (!xs.length) {
      el.appendChild(h('p', { class: 'muted' }, 'No checkpoints to plot.'));
      return null;
    }
    const series = groups.map((g, i) => ({
      name: g.name,
      className: `plot-series plot-${i % 6}`,
      data: g.points.map((p) => ({ x: p.x, y: p.y, meta: { kind: g.kind || 'point', text: p.text } })),
    }));
    const chart = new lib.LineChart(el, { series }, {
      height, lineSmooth: false, low: 0, chartPadding: PADDING,
      axisX: timeAxis(lib, xs),
      axisY: { offset: 56, labelInterpolationFnc: (v) => `${Number(v).toLocaleString(undefined, { maximumFractionDigits: 1 })}` },
    });
    chart.on('draw', (d) => {
      annotate(d, testid);
      if (d.type === 'point' && d.series) d.element.attr({ 'data-series': d.series.name });
    });
    return chart;
  });
}

// A legend for drawSeries' groups, in the same colours.
export function legend(groups) {
  return h('ul', { class: 'chart-legend' }, groups.map((g, i) =>
    h('li', { class: `plot-${i % 6}` }, h('span', { class: 'legend-swatch' }), g.name)));
}
