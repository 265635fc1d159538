// Browser test of the cedana-slurm controller web UI (web/), driving Debian's Chromium with
// playwright-core. One line per step (PASS/FAIL: what); exit 0 only if every step passed.
//
//   cd tests/ui && npm install
//   CONTROLLER_URL=http://127.0.0.1:8080 ADMIN_TOKEN=... UI_LABEL=my-label \
//   SCREENSHOT_DIR=/tmp/ui-shots CHECKPOINT_WAIT_SECONDS=120 node ui_test.mjs
//
// The controller must have a Cedana-enabled running job whose checkpoints get the label
// UI_LABEL, so that the policy this test creates produces checkpoints.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const env = process.env;
const BASE = (env.CONTROLLER_URL || '').replace(/\/+$/, '');
const ADMIN_TOKEN = env.ADMIN_TOKEN || '';
const UI_LABEL = env.UI_LABEL || 'ui-test';
const POLICY = env.UI_POLICY_NAME || 'ui-test-policy';
const SHOTS = env.SCREENSHOT_DIR || '';
const WAIT_CP_MS = Number(env.CHECKPOINT_WAIT_SECONDS || 120) * 1000;
const CHROMIUM = env.CHROMIUM_PATH || '/usr/bin/chromium';
const HEADLESS = env.HEADLESS !== '0';
// UI_SCENARIO=policies (default): policies and checkpoints against a running labelled job.
// UI_SCENARIO=maintenance: the Maintenance page shows MAINT_WINDOW with status MAINT_STATUS
// and MAINT_JOB as requeued (and a warning containing MAINT_WARNING, when given).
const SCENARIO = env.UI_SCENARIO || 'policies';
const MAINT_WINDOW = env.MAINT_WINDOW || '';
const MAINT_STATUS = env.MAINT_STATUS || '';
const MAINT_JOB = env.MAINT_JOB || '';
const MAINT_WARNING = env.MAINT_WARNING || '';
// FINISHED_CHECKPOINT: a checkpoint whose run has ended by itself, to be shown as such.
const FINISHED_CHECKPOINT = env.FINISHED_CHECKPOINT || '';
// NOTICE_JOB: a job that started fresh although its label had a checkpoint (it could not be
// restored), to be marked with the reason in the jobs list.
const NOTICE_JOB = env.NOTICE_JOB || '';
// TIMELINE_JOB: a job preempted once and resumed from TIMELINE_CHECKPOINT, whose timeline is
// drawn; its label (UI_LABEL) and node get their plots checked too.
const TIMELINE_JOB = env.TIMELINE_JOB || '';
const TIMELINE_CHECKPOINT = env.TIMELINE_CHECKPOINT || '';

if (!BASE || !ADMIN_TOKEN) {
  console.error('usage: CONTROLLER_URL=http://host:port ADMIN_TOKEN=... [UI_LABEL=label] [SCREENSHOT_DIR=dir] [CHECKPOINT_WAIT_SECONDS=120] node ui_test.mjs');
  process.exit(2);
}
if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });

const q = (s) => `"${String(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`; // CSS attribute value
const tid = (id) => `[data-testid=${q(id)}]`;
const policyRow = `${tid('policy-row')}[data-name=${q(POLICY)}]`;

function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}

// The REST API directly, only to clean up what a failed run left behind.
async function apiCall(method, p) {
  const res = await fetch(BASE + p, { method, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  return { status: res.status, data: text ? JSON.parse(text) : null };
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cedana-ui-test-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: CHROMIUM,
  headless: HEADLESS,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 800 },
});
context.setDefaultTimeout(10_000);
const page = context.pages()[0] || (await context.newPage());
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(String(e && e.stack ? e.stack.split('\n')[0] : e)));
page.on('console', (m) => {
  // HTTP errors of API calls are logged by Chromium as "Failed to load resource": they are the
  // UI's business (banner, form error, sign-in message), not JavaScript errors.
  if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) pageErrors.push(`console: ${m.text()}`);
});
page.on('dialog', (d) => {
  pageErrors.push(`unexpected native dialog: ${d.message()}`);
  d.dismiss().catch(() => {});
});

const results = [];
let stepNo = 0;
let broken = false; // an earlier step failed: the later ones cannot run

async function step(name, fn, { always = false } = {}) {
  stepNo++;
  const n = String(stepNo).padStart(2, '0');
  if (broken && !always) {
    results.push(false);
    console.log(`FAIL: ${name} (not run: an earlier step failed)`);
    return;
  }
  const t0 = Date.now();
  let ok = true;
  let detail = '';
  try {
    detail = (await fn()) || '';
  } catch (e) {
    ok = false;
    detail = String((e && e.message) || e).split('\n')[0];
  }
  if (SHOTS) {
    const file = path.join(SHOTS, `${n}-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}.png`);
    await page.screenshot({ path: file, fullPage: false }).catch(() => {});
  }
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`${ok ? 'PASS' : 'FAIL'}: ${name}${detail ? ` — ${detail}` : ''} (${secs}s)`);
  results.push(ok);
  if (!ok && !always) broken = true;
}

let checkpointId = null;

// Waits until fn() returns a truthy value (checked every 500 ms); throws `what` after `ms`.
async function until(fn, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(what);
    await page.waitForTimeout(500);
  }
}

// The x coordinates of drawn marks (SVG <line> points and <path> bars), in document order.
const xOf = (loc) => loc.evaluateAll((els) => els.map((e) => (e.tagName === 'path'
  ? e.getAttribute('d').match(/-?[\d.]+/g).map(Number).filter((_, i) => i % 2 === 0)
  : [Number(e.getAttribute('x1'))])));

async function timelineSteps() {
  const mark = (kind, extra = '') => page.locator(`${tid('job-timeline')} ${tid('timeline-mark')}[data-kind=${q(kind)}]${extra}`);
  await step(`job ${TIMELINE_JOB}'s timeline draws both runs, its checkpoints, the preemption and the requeue in order`, async () => {
    await page.locator(tid('nav-jobs')).click();
    await page.locator(`${tid('job-row')}[data-id=${q(TIMELINE_JOB)}] ${tid('job-timeline-link')}`).click();
    await page.locator(`${tid('job-timeline')}[data-drawn]`).waitFor({ timeout: 20_000 });
    const runs = page.locator(`${tid('job-timeline')} ${tid('timeline-run')}`);
    const how = await runs.evaluateAll((els) => els.map((e) => `${e.dataset.run}:${e.dataset.how}:${e.dataset.running}`));
    expect(JSON.stringify(how) === JSON.stringify(['0:fresh:false', '1:resumed:true']), `run bars: ${how.join(' ')}`);
    const title = await runs.nth(1).locator('title').textContent();
    expect(title.includes(`resumed from ${TIMELINE_CHECKPOINT}`), `run 1's tooltip: "${title}"`);
    for (const [kind, n] of [['submitted', 1], ['started', 2], ['preempted', 1], ['requeued', 1]]) {
      const c = await mark(kind).count();
      expect(c === n, `${c} "${kind}" marks, not ${n}`);
    }
    expect((await mark('checkpoint', '[data-reason="preemption"]').count()) >= 1, 'no preemption checkpoint drawn');
    expect((await mark('checkpoint', '[data-reason="policy"]').count()) >= 1, 'no policy checkpoint drawn');
    // On the time axis: submitted, run 0 (started, preempted, requeued), then run 1.
    const [[sub]] = await xOf(mark('submitted'));
    const [[pre]] = await xOf(mark('preempted'));
    const [[req]] = await xOf(mark('requeued'));
    const [[b0s, b0e], [b1s, b1e]] = await xOf(runs);
    const order = [sub, b0s, pre, req, b1s, b1e].map(Math.round);
    expect(order.every((x, i) => i === 0 || x >= order[i - 1]) && b0e <= b1s + 1, `x positions out of order: ${order.join(' ')} (run 0 ends at ${b0e})`);
    return `runs ${how.join(', ')}; x: ${order.join(' < ')}`;
  });

  await step('the timeline lists the same events, the resume naming its checkpoint', async () => {
    const resumed = page.locator(`${tid('job-event')}[data-kind="started"][data-run="1"]`);
    const text = (await resumed.locator('td').last().textContent()).trim();
    expect(text.includes(`run 1 resumed from checkpoint ${TIMELINE_CHECKPOINT}`), `its row says "${text}"`);
    const ck = (await page.locator(`${tid('job-event')}[data-kind="checkpoint"]`).allTextContents()).join(' | ');
    expect(/checkpoint on preemption: took \d/.test(ck), `checkpoint rows: ${ck.slice(0, 160)}`);
    return text;
  });

  await step(`label ${UI_LABEL}: size and duration of each checkpoint over time`, async () => {
    await page.locator(tid('job-label-link')).click();
    await page.locator(`${tid('label-plot')}:not([hidden]) ${tid('label-plot-size')}[data-drawn]`).waitFor({ timeout: 20_000 });
    // The label's policy keeps checkpointing: compare with the API until both agree.
    const drawn = await until(async () => {
      const { data } = await apiCall('GET', `/v1/checkpoints?label=${encodeURIComponent(UI_LABEL)}`);
      const sizes = await page.locator(tid('label-size-point')).count();
      const durations = await page.locator(tid('label-duration-point')).count();
      const timed = data.filter((c) => c.duration_ms > 0).length;
      return sizes === data.length && durations === timed && sizes > 1 ? `${sizes} sizes, ${durations} durations` : null;
    }, 'the plot does not show the label\'s checkpoints');
    const xs = (await xOf(page.locator(tid('label-size-point')))).map(([x]) => x);
    expect(xs.every((x, i) => i === 0 || x >= xs[i - 1]), `size points not in time order: ${xs.join(' ')}`);
    return drawn;
  });

  if (await page.locator(tid('nav-nodes')).count()) {
    await step('the Nodes page plots each node\'s checkpoint throughput', async () => {
      // The page refetches its plot every 10 s and the policy adds a checkpoint every 10 s: each
      // try opens the page afresh (which plots at once) between two reads of the API, and counts
      // only when no checkpoint landed in between.
      const timedByNode = async () => {
        const { data } = await apiCall('GET', '/v1/checkpoints');
        return data.filter((c) => c.duration_ms > 0 && c.node);
      };
      const drawn = await until(async () => {
        const before = await timedByNode();
        await page.locator(tid('nav-jobs')).click();
        await page.locator(tid('node-throughput-chart')).waitFor({ state: 'detached' });
        await page.locator(tid('nav-nodes')).click();
        await page.locator(`${tid('node-throughput-chart')}[data-drawn]`).waitFor({ timeout: 20_000 });
        const timed = await timedByNode();
        if (timed.length !== before.length) return null;
        const points = page.locator(tid('throughput-point'));
        const nodes = [...new Set(timed.map((c) => c.node))].sort();
        const series = [...new Set(await points.evaluateAll((els) => els.map((e) => e.dataset.series)))].sort();
        return (await points.count()) === timed.length && JSON.stringify(series) === JSON.stringify(nodes)
          ? `${timed.length} checkpoints on ${nodes.join(', ')}` : null;
      }, 'the throughput plot does not show every timed checkpoint by node');
      const legend = (await page.locator(`${tid('node-throughput')} .chart-legend`).textContent()).trim();
      expect(legend.length > 0, 'no legend');
      return `${drawn}; legend "${legend}"`;
    });
  }
}
let oldCheckpoints = new Set(); // ids with UI_LABEL from before the policy existed

try {
  await step('sign in with the admin token', async () => {
    await page.goto(`${BASE}/`, { waitUntil: 'domcontentloaded' });
    await page.locator(tid('token-input')).fill(ADMIN_TOKEN);
    await page.locator(tid('sign-in')).click();
    const who = page.locator(tid('whoami'));
    const refused = page.locator(`${tid('sign-in-error')}:visible`);
    await who.or(refused).first().waitFor();
    if (await refused.count()) throw new Error(`sign-in refused: ${(await refused.textContent()).trim()}`);
    expect((await who.getAttribute('data-admin')) === 'true', 'whoami does not say admin');
    await page.locator(tid('nav-nodes')).waitFor();
    await page.locator(tid('last-updated')).filter({ hasText: /updated/ }).waitFor();
    return `signed in as ${await page.locator(tid('whoami-user')).textContent()}`;
  });

  if (SCENARIO === 'maintenance') {
    await step(`the Maintenance page shows window ${MAINT_WINDOW} (${MAINT_STATUS}) and job ${MAINT_JOB} moved`, async () => {
      await page.locator(tid('nav-maintenance')).click();
      const row = page.locator(`${tid('maintenance-row')}[data-id=${q(MAINT_WINDOW)}]`);
      await row.waitFor();
      await page.locator(`${tid('maintenance-row')}[data-id=${q(MAINT_WINDOW)}][data-status=${q(MAINT_STATUS)}]`).waitFor();
      const move = row.locator(`${tid('maintenance-move')}[data-job=${q(MAINT_JOB)}]`);
      await move.waitFor();
      const action = await move.getAttribute('data-action');
      expect(action === 'requeued', `job ${MAINT_JOB} is shown as ${action}, not requeued`);
      return `${(await row.locator('td').nth(1).textContent()).trim()}: ${MAINT_STATUS}, job ${MAINT_JOB} ${action}`;
    });
    if (MAINT_WARNING) {
      await step('the Maintenance page warns what to change', async () => {
        const w = page.locator(tid('maintenance-warning')).filter({ hasText: MAINT_WARNING });
        await w.first().waitFor();
        return `"${(await w.first().textContent()).trim().slice(0, 80)}..."`;
      });
    }
  }

  if (SCENARIO === 'policies') {
    await step(`create policy ${POLICY} (30 s, label ${UI_LABEL})`, async () => {
      await page.locator(tid('nav-policies')).click();
      await page.locator(tid('policy-form')).waitFor();
      await page.locator(tid('policies-count')).filter({ hasText: /polic/ }).waitFor();
      // A policy left by an earlier failed run: delete it first, through the UI.
      if (await page.locator(policyRow).count()) {
        await page.locator(`${policyRow} ${tid('policy-delete')}`).click();
        await page.locator(tid('confirm-ok')).click();
        await page.locator(policyRow).waitFor({ state: 'detached' });
      }
      // Remember the checkpoints with this label from earlier runs: only a new one counts.
      const before = await apiCall('GET', `/v1/checkpoints?label=${encodeURIComponent(UI_LABEL)}`);
      expect(before.status === 200, `GET /v1/checkpoints is ${before.status}`);
      const list = Array.isArray(before.data) ? before.data : (before.data && before.data.checkpoints) || [];
      oldCheckpoints = new Set(list.map((c) => String(c.id)));
      await page.locator(tid('policy-create')).click();
      await page.locator(tid('policy-name')).fill(POLICY);
      await page.locator(tid('policy-interval')).fill('30');
      await page.locator(tid('policy-interval-unit')).selectOption('s');
      await page.locator(tid('policy-enabled')).check();
      await page.locator(tid('policy-label')).fill(UI_LABEL);
      await page.locator(tid('policy-save')).click();
      const row = page.locator(policyRow);
      try {
        await row.waitFor();
      } catch (e) {
        const err = page.locator(tid('policy-error'));
        if (await err.isVisible()) throw new Error(`the API refused the policy: ${await err.textContent()}`);
        throw e;
      }
      expect((await row.getAttribute('data-interval')) === '30', `interval is ${await row.getAttribute('data-interval')}, not 30`);
      const text = await row.textContent();
      expect(text.includes(UI_LABEL), `the row does not show the label selector: ${text}`);
      return `policy #${await row.getAttribute('data-id')}, interval "${await row.locator(tid('policy-interval-cell')).textContent()}"`;
    });

    await step('edit the policy: interval 60 s', async () => {
      await page.locator(`${policyRow} ${tid('policy-edit')}`).click();
      expect((await page.locator(tid('policy-name')).inputValue()) === POLICY, 'the form did not load the policy');
      await page.locator(tid('policy-interval')).fill('60');
      await page.locator(tid('policy-interval-unit')).selectOption('s');
      await page.locator(tid('policy-save')).click();
      await page.locator(`${policyRow}[data-interval="60"]`).waitFor();
      const cell = (await page.locator(`${policyRow} ${tid('policy-interval-cell')}`).textContent()).trim();
      expect(cell === '1 min', `interval cell shows "${cell}", expected "1 min"`);
      expect(!(await page.locator(tid('policy-error')).isVisible()), 'the form shows an error');
      return `interval now "${cell}"`;
    });

    await step(`a checkpoint of policy ${POLICY} labelled ${UI_LABEL} appears on the Checkpoints page`, async () => {
      const policies = await apiCall('GET', '/v1/policies');
      const mine = (Array.isArray(policies.data) ? policies.data : []).find((p) => p.name === POLICY);
      expect(mine, `policy ${POLICY} is not in GET /v1/policies`);
      await page.locator(tid('nav-checkpoints')).click();
      await page.locator(tid('operations-panel')).waitFor();
      await page.locator(tid('filter-label')).fill(UI_LABEL);
      // A new good row with the label, made by this policy: another policy or dump on the same
      // label (the shell test's) must not pass for it.
      const deadline = Date.now() + WAIT_CP_MS;
      const seen = new Set(oldCheckpoints);
      while (!checkpointId) {
        expect(Date.now() < deadline, `no checkpoint of policy #${mine.id} within ${WAIT_CP_MS / 1000} s`);
        const ids = await page.evaluate((label) => Array.from(
          document.querySelectorAll('[data-testid="checkpoint-row"][data-state="good"]'))
          .filter((r) => r.dataset.label === label).map((r) => r.dataset.id), UI_LABEL);
        for (const id of ids.filter((i) => !seen.has(i))) {
          seen.add(id);
          const c = await apiCall('GET', `/v1/checkpoints/${encodeURIComponent(id)}`);
          if (c.data && c.data.policy_id === mine.id) checkpointId = id;
        }
        if (!checkpointId) await page.waitForTimeout(500);
      }
      return `new checkpoint ${checkpointId} of policy #${mine.id} (${seen.size - oldCheckpoints.size - 1} others with the label ignored)`;
    });

    const cpRow = () => page.locator(`${tid('checkpoint-row')}[data-id=${q(checkpointId)}]`);

    await step('the row says why the checkpoint was taken and how long the job was frozen', async () => {
      const cell = cpRow().locator(tid('checkpoint-reason'));
      const reason = await cell.getAttribute('data-reason');
      expect(reason === 'policy', `reason cell says "${reason}", not "policy"`);
      const frozen = (await cell.locator(tid('checkpoint-frozen')).textContent()).trim();
      expect(/^frozen \d+(\.\d)? s of \d+(\.\d)? s$/.test(frozen), `frozen time shown as "${frozen}"`);
      return `${reason}, ${frozen}`;
    });

    await step('inspect the checkpoint', async () => {
      await cpRow().locator(tid('checkpoint-inspect')).click();
      const detail = page.locator(tid('checkpoint-detail'));
      await detail.waitFor();
      await detail.locator(tid('detail-id')).filter({ hasText: checkpointId }).waitFor();
      const manifest = detail.locator(tid('checkpoint-manifest'));
      await manifest.waitFor();
      JSON.parse(await manifest.textContent()); // the manifest is shown as JSON
      const label = (await detail.locator(`${tid('detail-field')}[data-field="label"]`).textContent()).trim();
      expect(label === UI_LABEL, `detail shows label "${label}"`);
      const fields = await detail.locator(tid('detail-field')).count();
      return `${fields} fields and the manifest shown`;
    });

    await step('delete the checkpoint via the UI', async () => {
      await page.locator(tid('detail-close')).click();
      await page.locator(tid('checkpoint-detail')).waitFor({ state: 'hidden' });
      await cpRow().locator(tid('checkpoint-delete')).click();
      await page.locator(tid('confirm-dialog')).waitFor();
      await page.locator(tid('confirm-ok')).click();
      await cpRow().waitFor({ state: 'detached' });
      await page.waitForTimeout(2500); // one more poll: it must not come back
      expect((await cpRow().count()) === 0, 'the deleted checkpoint is listed again');
      const r = await apiCall('GET', `/v1/checkpoints/${encodeURIComponent(checkpointId)}`);
      expect(r.status === 404, `GET /v1/checkpoints/${checkpointId} is ${r.status} after the delete, not 404`);
      return `${checkpointId} gone`;
    });

    await step('delete the policy', async () => {
      await page.locator(tid('nav-policies')).click();
      await page.locator(policyRow).waitFor();
      await page.locator(`${policyRow} ${tid('policy-delete')}`).click();
      await page.locator(tid('confirm-ok')).click();
      await page.locator(policyRow).waitFor({ state: 'detached' });
      await page.waitForTimeout(2500);
      expect((await page.locator(policyRow).count()) === 0, 'the policy is listed again');
    });
  }

  if (FINISHED_CHECKPOINT) {
    await step(`checkpoint ${FINISHED_CHECKPOINT}, whose run ended by itself, is marked "finished run"`, async () => {
      await page.locator(tid('nav-checkpoints')).click();
      await page.locator(tid('filter-label')).fill('');
      const row = page.locator(`${tid('checkpoint-row')}[data-id=${q(FINISHED_CHECKPOINT)}]`);
      await row.waitFor({ timeout: 30_000 });
      await page.waitForFunction((id) => {
        const r = document.querySelector(`[data-testid="checkpoint-row"][data-id="${id}"]`);
        return r && r.dataset.run === 'finished';
      }, FINISHED_CHECKPOINT, { timeout: 30_000, polling: 500 });
      await row.locator(tid('checkpoint-run-finished')).waitFor();
      const restorable = await row.locator(tid('checkpoint-restore')).isEnabled();
      expect(restorable, 'a finished run\'s checkpoint can no longer be restored by id');
      return 'badge shown, Restore still enabled';
    });
  }

  if (NOTICE_JOB) {
    await step(`job ${NOTICE_JOB}, started fresh although it had a checkpoint, is marked with the reason`, async () => {
      await page.locator(tid('nav-jobs')).click();
      const badge = page.locator(`${tid('job-row')}[data-id=${q(NOTICE_JOB)}] ${tid('job-notice')}`);
      await badge.waitFor({ timeout: 30_000 });
      const text = (await badge.textContent()).trim();
      const why = await badge.getAttribute('title');
      expect(text === 'started fresh', `badge says "${text}"`);
      expect(/^started fresh: no checkpoint of label ui-broken could be restored .*checksum mismatch/.test(why), `its title says "${why}"`);
      return `"${text}": ${why.slice(0, 80)}…`;
    });
  }

  if (TIMELINE_JOB) await timelineSteps();

  await step('sign out', async () => {
    await page.locator(tid('sign-out')).click();
    await page.locator(tid('token-input')).waitFor();
    expect((await page.locator(tid('whoami')).count()) === 0, 'still shows who is signed in');
    const stored = await page.evaluate(() => Object.keys(sessionStorage).length);
    expect(stored === 0, 'the token is still in sessionStorage');
  });

  await step('a wrong token is refused', async () => {
    await page.locator(tid('token-input')).fill(`wrong-${Date.now()}`);
    await page.locator(tid('sign-in')).click();
    const msg = page.locator(tid('sign-in-error')).filter({ hasText: /refused/i });
    await msg.waitFor();
    expect((await page.locator(tid('whoami')).count()) === 0, 'signed in with a wrong token');
    return `"${(await msg.textContent()).trim()}"`;
  });

  await step('no JavaScript errors in the page', async () => {
    expect(pageErrors.length === 0, pageErrors.slice(0, 3).join(' | '));
  }, { always: true });
} finally {
  // Clean up after a failed run: the policy must not keep taking checkpoints.
  try {
    const r = await apiCall('GET', '/v1/policies');
    const list = Array.isArray(r.data) ? r.data : (r.data && r.data.policies) || [];
    for (const p of list.filter((x) => x.name === POLICY)) {
      await apiCall('DELETE', `/v1/policies/${p.id}`);
      console.log(`note: deleted leftover policy ${POLICY} (#${p.id}) through the API`);
    }
  } catch (e) {
    console.log(`note: cleanup failed: ${e.message}`);
  }
  await context.close().catch(() => {});
  fs.rmSync(userDataDir, { recursive: true, force: true });
}

const failed = results.filter((r) => !r).length;
console.log(`${failed ? 'FAIL' : 'PASS'}: ui test, ${results.length - failed}/${results.length} steps passed${SHOTS ? `, screenshots in ${SHOTS}` : ''}`);
process.exit(failed ? 1 : 0);
