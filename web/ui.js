// Shared UI pieces: the notice banner (errors and short confirmations) and the confirm dialog.
import { h, clear } from './dom.js';

let bannerEl = null;
const notices = new Map(); // key -> {el, timer}
let seq = 0;

export function initBanner(el) {
  bannerEl = el;
}

// Show a notice. kind: 'error' | 'info'. A key replaces the notice with the same key
// (polling errors use one key per page, so they do not pile up). ttl in ms, 0 = until dismissed
// or cleared.
export function notify(kind, message, { key, ttl } = {}) {
  if (!bannerEl) return;
  const k = key || `n${++seq}`;
  dismiss(k);
  const el = h(
    'div',
    { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': kind === 'error' ? 'error-message' : 'info-message' },
    h('span', { class: 'notice-text' }, message),
    h('button', { class: 'notice-close', type: 'button', title: 'Dismiss', 'aria-label': 'Dismiss', onclick: () => dismiss(k) }, '×'),
  );
  bannerEl.appendChild(el);
  const timeout = ttl === undefined ? (kind === 'error' ? 15000 : 5000) : ttl;
  const timer = timeout ? setTimeout(() => dismiss(k), timeout) : null;
  notices.set(k, { el, timer });
  return k;
}

export const showError = (message, opts) => notify('error', message, opts);
export const showInfo = (message, opts) => notify('info', message, opts);

export function dismiss(key) {
  const n = notices.get(key);
  if (!n) return;
  if (n.timer) clearTimeout(n.timer);
  n.el.remove();
  notices.delete(key);
}

export function dismissAll() {
  for (const k of Array.from(notices.keys())) dismiss(k);
}

export function errorText(e) {
  if (e && typeof e.describe === 'function') return e.describe();
  return String((e && e.message) || e);
}

// confirmDialog({title, message, okText, danger, body}) -> Promise<boolean>
// body: optional extra element (e.g. an input) shown in the dialog.
export function confirmDialog({ title, message, okText = 'OK', cancelText = 'Cancel', danger = false, body = null }) {
  return new Promise((resolve) => {
    const dlg = h('dialog', { class: 'confirm', 'data-testid': 'confirm-dialog' });
    const done = (v) => {
      if (!dlg.open) return;
      dlg.close();
      dlg.remove();
      resolve(v);
    };
    const form = h(
      'form',
      { method: 'dialog', onsubmit: (ev) => { ev.preventDefault(); done(true); } },
      h('h3', { class: 'confirm-title' }, title),
      Array.isArray(message) ? message.map((m) => h('p', {}, m)) : h('p', {}, message),
      body,
      h(
        'div',
        { class: 'confirm-actions' },
        h('button', { type: 'button', class: 'btn', 'data-testid': 'confirm-cancel', onclick: () => done(false) }, cancelText),
        h('button', { type: 'submit', class: danger ? 'btn btn-danger' : 'btn btn-primary', 'data-testid': 'confirm-ok' }, okText),
      ),
    );
    dlg.appendChild(form);
    dlg.addEventListener('cancel', (ev) => {
      ev.preventDefault();
      done(false);
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    const input = body && body.querySelector && body.querySelector('input');
    (input || form.querySelector('[data-testid="confirm-cancel"]')).focus();
  });
}

export { clear };
