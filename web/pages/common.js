// Helpers shared by the pages.
import { h } from '../dom.js';

// Run API calls in parallel; returns their results (undefined for the failed ones) and throws
// nothing. errors: the failures, to be reported after the page has rendered what it could.
export async function settle(calls) {
  const res = await Promise.allSettled(calls);
  const errors = res.filter((r) => r.status === 'rejected').map((r) => r.reason);
  return { values: res.map((r) => (r.status === 'fulfilled' ? r.value : undefined)), errors };
}

// Throw the first real error (401s are handled by the sign-in redirect).
export function raise(errors) {
  const e = errors.find((x) => !x || x.status !== 401) || errors[0];
  if (e) throw e;
}

export function table(columns, { testid, cls } = {}) {
  const tbody = h('tbody');
  const el = h('table', { class: `grid ${cls || ''}`, 'data-testid': testid },
    h('thead', {}, h('tr', {}, columns.map((c) => {
      if (typeof c === 'string') return h('th', {}, c);
      return h('th', { class: c.cls || '', title: c.title || null }, c.label);
    }))),
    tbody);
  return { el, tbody, colspan: columns.length };
}

export function pageHeader(title, ...right) {
  return h('div', { class: 'page-head' }, h('h1', {}, title), h('div', { class: 'page-head-right' }, right));
}

export function mono(text, cls = '') {
  return h('span', { class: `mono ${cls}`, title: text === undefined || text === null ? null : String(text) }, text === undefined || text === null || text === '' ? '—' : String(text));
}

export function dash(v) {
  return v === undefined || v === null || v === '' ? '—' : String(v);
}
