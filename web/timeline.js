// A job's timeline as the UI draws it (pure functions, no DOM): the runs (each start to its
// end), and every event with the words that describe it. Input: GET /v1/jobs/{id}/timeline's
// events, oldest first.
import { seconds, bytes } from './format.js';

// One bar per run: from its start to its requeue or end, or to now while it runs. A run whose
// start nobody saw (the controller came up later) begins at its first event.
export function runsOf(events, nowMs) {
  const runs = new Map();
  for (const e of events) {
    if (e.kind === 'submitted') continue;
    let r = runs.get(e.run);
    if (!r) {
      r = { run: e.run, start: e.at_ms, end: null, how: '', checkpoint_id: '', end_kind: '' };
      runs.set(e.run, r);
    }
    if (e.kind === 'started') {
      r.start = e.at_ms;
      r.how = e.detail || '';
      r.checkpoint_id = e.checkpoint_id || '';
    } else if (e.kind === 'requeued' || e.kind === 'ended') {
      r.end = e.at_ms;
      r.end_kind = e.kind;
    }
  }
  return [...runs.values()]
    .map((r) => ({ ...r, running: r.end === null, end: r.end ?? Math.max(nowMs, r.start) }))
    .sort((a, b) => a.run - b.run);
}

const REASONS = {
  preemption: 'preemption', scancel: 'scancel', requeue: 'requeue', time_limit: 'time limit',
  policy: 'policy', maintenance: 'maintenance', manual: 'manual', termination: 'termination',
};

// "checkpoint on preemption: 1.2 s (frozen 0.4 s), 12 MiB", "started (resumed from 3f…)"
export function describe(e) {
  switch (e.kind) {
    case 'submitted': return 'submitted';
    case 'started':
      if (e.detail === 'resumed') return `run ${e.run} resumed from checkpoint ${e.checkpoint_id}`;
      if (e.detail === 'fresh') return `run ${e.run} started fresh`;
      return `run ${e.run} started`;
    case 'preempted': return `run ${e.run} preempted`;
    case 'requeued': return `run ${e.run} requeued`;
    case 'ended': return `run ${e.run} ended: ${e.detail || 'unknown state'}`;
    case 'checkpoint':
      return `checkpoint on ${REASONS[e.detail] || e.detail || 'an unrecorded reason'}: took ${seconds(e.duration_ms)}`
        + `${e.frozen_ms ? ` (frozen ${seconds(e.frozen_ms)})` : ''}, ${bytes(e.size)}`;
    default: return e.kind;
  }
}
