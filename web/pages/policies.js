// Policies page ("SLURM Policies Page"): policy list and the create/edit form.
import { api } from '../api.js';
import { h, syncRows, badge, replaceChildren } from '../dom.js';
import { interval, splitInterval, UNIT_SECONDS, time, ago } from '../format.js';
import { showError, showInfo, errorText, confirmDialog } from '../ui.js';
import { settle, raise, table, pageHeader, mono, dash } from './common.js';

const SELECTOR_KEYS = ['job_id', 'name_pattern', 'user', 'partition', 'label'];

export default {
  id: 'policies',
  title: 'Policies',
  mount(root, ctx) {
    let alive = true;
    let policies = [];
    let editing = null; // policy id being edited, null when creating
    let saving = false;

    // ---- form (built once; polling never touches what the user typed)
    const f = {
      name: h('input', { type: 'text', class: 'input', id: 'p-name', required: true, maxlength: 128, autocomplete: 'off', placeholder: 'e.g. hourly-high', 'data-testid': 'policy-name' }),
      interval: h('input', { type: 'number', class: 'input input-num', id: 'p-interval', min: 1, step: 1, required: true, value: '1', 'data-testid': 'policy-interval' }),
      unit: h('select', { class: 'input input-unit', id: 'p-unit', 'data-testid': 'policy-interval-unit', 'aria-label': 'Interval unit' },
        h('option', { value: 's' }, 's'), h('option', { value: 'min' }, 'min'), h('option', { value: 'h', selected: true }, 'h')),
      enabled: h('input', { type: 'checkbox', id: 'p-enabled', checked: true, 'data-testid': 'policy-enabled' }),
      job_id: h('input', { type: 'text', class: 'input', id: 'p-job', inputmode: 'numeric', list: 'p-jobs', autocomplete: 'off', placeholder: 'any', 'data-testid': 'policy-job-id' }),
      name_pattern: h('input', { type: 'text', class: 'input', id: 'p-pattern', autocomplete: 'off', placeholder: 'any, e.g. train-*', 'data-testid': 'policy-name-pattern' }),
      user: h('input', { type: 'text', class: 'input', id: 'p-user', autocomplete: 'off', placeholder: 'any', 'data-testid': 'policy-user' }),
      partition: h('input', { type: 'text', class: 'input', id: 'p-partition', list: 'p-partitions', autocomplete: 'off', placeholder: 'any', 'data-testid': 'policy-partition' }),
      label: h('input', { type: 'text', class: 'input', id: 'p-label', list: 'p-labels', autocomplete: 'off', placeholder: 'any', title: 'The CEDANA_CHECKPOINT label of the job', 'data-testid': 'policy-label' }),
      max: h('input', { type: 'number', class: 'input input-num', id: 'p-max', min: 1, step: 1, placeholder: 'default', 'data-testid': 'policy-max' }),
    };
    if (!ctx.me.admin) {
      f.user.value = ctx.me.user;
      f.user.disabled = true;
      f.user.title = 'A user token\'s policies always select that user\'s jobs';
    }
    const lists = {
      jobs: h('datalist', { id: 'p-jobs' }),
      partitions: h('datalist', { id: 'p-partitions' }),
      labels: h('datalist', { id: 'p-labels' }),
    };
    const formTitle = h('h2', { 'data-testid': 'policy-form-title' }, 'Create Policy');
    const errorEl = h('div', { class: 'form-error', role: 'alert', 'data-testid': 'policy-error', hidden: true });
    const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'policy-save' }, 'Create Policy');
    const cancelBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'policy-cancel', onclick: () => resetForm() }, 'Cancel');

    const row = (label, forId, ...inputs) => h('div', { class: 'form-row' }, h('label', { class: 'label', for: forId }, label), h('div', { class: 'form-ctl' }, inputs));
    const form = h('form', { class: 'panel policy-form', 'data-testid': 'policy-form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); save(); } },
      h('div', { class: 'panel-head' }, formTitle),
      row('Name', 'p-name', f.name),
      row('Interval', 'p-interval', h('div', { class: 'input-group' }, f.interval, f.unit)),
      row('Enabled', 'p-enabled', h('label', { class: 'check' }, f.enabled, ' take checkpoints')),
      h('fieldset', { class: 'selector' },
        h('legend', {}, 'Jobs to checkpoint'),
        h('p', { class: 'hint selector-hint' }, 'Every field given must match; empty fields match any job.'),
        row('Job ID', 'p-job', f.job_id),
        row('Name pattern', 'p-pattern', f.name_pattern),
        row('User', 'p-user', f.user),
        row('Partition', 'p-partition', f.partition),
        row('Label', 'p-label', f.label)),
      row('Max checkpoints', 'p-max', f.max),
      h('p', { class: 'hint form-hint' }, 'Checkpoints kept per job; empty: the node\'s retention applies.'),
      errorEl,
      h('div', { class: 'form-actions' }, cancelBtn, saveBtn),
      lists.jobs, lists.partitions, lists.labels);

    const count = h('span', { class: 'muted', 'data-testid': 'policies-count' }, '');
    const t = table(
      ['Name', 'Interval', 'State', 'Selector', { label: 'Max', cls: 'num', title: 'max checkpoints kept per job' }, 'Owner', 'Last run', { label: '', cls: 'actions' }],
      { testid: 'policies-table' },
    );
    root.appendChild(h('section', { class: 'page' },
      pageHeader('Policies', count,
        h('button', { type: 'button', class: 'btn btn-primary', 'data-testid': 'policy-create', onclick: () => { resetForm(); f.name.focus(); } }, 'Create Policy')),
      h('p', { class: 'page-hint muted' }, 'A policy checkpoints the matching Cedana-enabled jobs every interval. Its checkpoints show on the Checkpoints page.'),
      h('div', { class: 'split' }, h('div', { class: 'panel panel-flush split-main' }, t.el), h('div', { class: 'split-side' }, form))));

    // ---- form logic
    function setError(msg) {
      errorEl.textContent = msg || '';
      errorEl.hidden = !msg;
    }

    function resetForm() {
      editing = null;
      form.reset();
      f.interval.value = '1';
      f.unit.value = 'h';
      f.enabled.checked = true;
      if (!ctx.me.admin) f.user.value = ctx.me.user;
      formTitle.textContent = 'Create Policy';
      saveBtn.textContent = 'Create Policy';
      form.classList.remove('is-editing');
      setError('');
      render();
    }

    function edit(p) {
      editing = p.id;
      const [n, unit] = splitInterval(p.interval_seconds);
      f.name.value = p.name || '';
      f.interval.value = String(n);
      f.unit.value = unit;
      f.enabled.checked = !!p.enabled;
      const sel = p.selector || {};
      for (const k of SELECTOR_KEYS) f[k].value = sel[k] === undefined || sel[k] === null ? '' : String(sel[k]);
      if (!ctx.me.admin) f.user.value = ctx.me.user;
      f.max.value = p.max_checkpoints === undefined || p.max_checkpoints === null ? '' : String(p.max_checkpoints);
      formTitle.textContent = `Edit policy ${p.name}`;
      saveBtn.textContent = 'Save changes';
      form.classList.add('is-editing');
      setError('');
      render();
      f.name.focus();
    }

    // Returns [body, null] or [null, message].
    function readForm() {
      const name = f.name.value.trim();
      if (!name) return [null, 'Name is required.'];
      const n = Number(f.interval.value);
      if (!f.interval.value.trim() || !Number.isFinite(n) || n <= 0) return [null, 'Interval must be a positive number.'];
      const seconds = Math.round(n * UNIT_SECONDS[f.unit.value]);
      if (seconds < 1 || !Number.isInteger(n * UNIT_SECONDS[f.unit.value])) return [null, 'Interval must be a whole number of seconds.'];
      const selector = {};
      for (const k of SELECTOR_KEYS) {
        const v = f[k].value.trim();
        if (!v || (k === 'user' && !ctx.me.admin)) continue;
        if (k === 'job_id') {
          if (!/^\d+$/.test(v)) return [null, 'Job ID must be a number.'];
          selector.job_id = Number(v);
        } else {
          selector[k] = v;
        }
      }
      let max = null;
      if (f.max.value.trim()) {
        const m = Number(f.max.value);
        if (!Number.isInteger(m) || m < 1) return [null, 'Max checkpoints must be a whole number ≥ 1 (or empty).'];
        max = m;
      }
      return [{ name, interval_seconds: seconds, enabled: f.enabled.checked, selector, max_checkpoints: max }, null];
    }

    async function save() {
      if (saving) return;
      const [body, msg] = readForm();
      if (!body) {
        setError(msg);
        return;
      }
      saving = true;
      saveBtn.disabled = true;
      setError('');
      try {
        if (editing === null) {
          const p = await api.createPolicy(body);
          showInfo(`Created policy ${body.name}${p && p.id !== undefined ? ` (#${p.id})` : ''}.`);
        } else {
          await api.updatePolicy(editing, body);
          showInfo(`Saved policy ${body.name}.`);
        }
        if (!alive) return;
        resetForm();
        ctx.refreshNow();
      } catch (e) {
        if (!alive) return;
        // Validation errors (400/409/404) go next to the form; the message is the API's.
        setError(e.status && e.status !== 401 ? `${e.message}${e.code ? ` (${e.code})` : ''}` : errorText(e));
      } finally {
        saving = false;
        saveBtn.disabled = false;
      }
    }

    async function remove(p) {
      const ok = await confirmDialog({
        title: 'Delete policy?',
        message: [`Delete policy ${p.name}? It stops taking checkpoints.`, 'Checkpoints it already took are kept.'],
        okText: 'Delete',
        danger: true,
      });
      if (!ok) return;
      try {
        await api.deletePolicy(p.id);
        showInfo(`Deleted policy ${p.name}.`);
        policies = policies.filter((x) => x.id !== p.id);
        if (editing === p.id) resetForm();
        render();
      } catch (e) {
        showError(errorText(e));
      }
      if (alive) ctx.refreshNow();
    }

    // ---- table
    function selectorChips(sel) {
      const keys = SELECTOR_KEYS.filter((k) => sel && sel[k] !== undefined && sel[k] !== null && sel[k] !== '');
      const extra = sel ? Object.keys(sel).filter((k) => !SELECTOR_KEYS.includes(k)) : [];
      if (!keys.length && !extra.length) return h('span', { class: 'muted' }, 'all enabled jobs');
      return keys.concat(extra).map((k) => h('span', { class: 'chip', title: `${k} = ${sel[k]}` }, h('span', { class: 'chip-k' }, k === 'job_id' ? 'job' : k.replace('_', ' ')), ' ', String(sel[k])));
    }

    function renderRow(p) {
      return h('tr', {
        'data-testid': 'policy-row', 'data-id': p.id, 'data-name': p.name || '', 'data-interval': p.interval_seconds,
        'data-enabled': String(!!p.enabled), class: editing === p.id ? 'is-selected' : null,
      },
      h('td', { 'data-testid': 'policy-name-cell', title: p.created_ms ? `#${p.id}, created ${time(p.created_ms)}` : `#${p.id}` }, h('strong', {}, dash(p.name))),
      h('td', { 'data-testid': 'policy-interval-cell', title: `${p.interval_seconds} s` }, interval(p.interval_seconds)),
      h('td', {}, p.enabled ? badge('enabled', 'good') : badge('disabled', 'neutral')),
      h('td', { class: 'chips' }, selectorChips(p.selector)),
      h('td', { class: 'num' }, p.max_checkpoints === undefined || p.max_checkpoints === null ? h('span', { class: 'muted', title: 'the node\'s retention applies' }, 'node') : String(p.max_checkpoints)),
      h('td', {}, dash(p.owner)),
      h('td', { title: time(p.last_run_ms) }, p.last_run_ms ? ago(p.last_run_ms) : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'actions' },
        h('button', { type: 'button', class: 'btn btn-sm', 'data-testid': 'policy-edit', onclick: () => edit(p) }, 'Edit'),
        h('button', { type: 'button', class: 'btn btn-sm btn-danger-ghost', 'data-testid': 'policy-delete', onclick: () => remove(p) }, 'Delete')));
    }

    function render() {
      count.textContent = `${policies.length} polic${policies.length === 1 ? 'y' : 'ies'}`;
      const minute = Math.floor(Date.now() / 30000);
      syncRows(t.tbody, policies, {
        key: (p) => p.id,
        sig: (p) => JSON.stringify([p, editing === p.id, minute]),
        render: renderRow,
        empty: 'No policies yet. Create one to checkpoint jobs on a schedule.',
        colspan: t.colspan,
      });
    }

    // Suggestions for the selector fields, from the current jobs (updated only when they change,
    // so an open suggestion list does not flicker).
    function fillList(list, values) {
      const sig = JSON.stringify(values);
      if (list._sig === sig) return;
      list._sig = sig;
      replaceChildren(list, values.map(([v, label]) => h('option', { value: v }, label || null)));
    }

    function suggest(jobs) {
      const uniq = (a) => Array.from(new Set(a.filter((x) => x !== undefined && x !== null && x !== ''))).sort();
      fillList(lists.jobs, jobs.filter((j) => j.enabled).map((j) => [String(j.job_id), `${j.name || ''} · ${j.user || ''} · ${j.state || ''}`]));
      fillList(lists.partitions, uniq(jobs.map((j) => j.partition)).map((v) => [v]));
      fillList(lists.labels, uniq(jobs.map((j) => j.label)).map((v) => [v]));
    }

    let jobsTick = 0;
    return {
      async refresh() {
        // Jobs only feed the suggestions: fetch them every 5th poll.
        const wantJobs = jobsTick++ % 5 === 0;
        const { values, errors } = await settle([api.policies(), wantJobs ? api.jobs() : Promise.resolve(null)]);
        if (!alive) return;
        if (values[0]) {
          policies = values[0].slice().sort((a, b) => String(a.name).localeCompare(String(b.name)));
          render();
        }
        if (values[1]) suggest(values[1]);
        raise(errors);
      },
      unmount() {
        alive = false;
      },
    };
  },
};
