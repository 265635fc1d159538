// Tiny DOM helpers. Everything from the API goes through textContent / setAttribute:
// there is no innerHTML anywhere in the UI.

const PROPS = new Set(['value', 'checked', 'disabled', 'selected', 'hidden', 'type', 'min', 'max', 'step', 'open']);

// h('button', {class: 'btn', 'data-testid': 'x', onclick: fn}, 'Label', child, [more])
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (PROPS.has(k)) el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replaceChildren(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

// Keyed update of a <tbody>: rows whose data did not change are kept as they are (so hover,
// focus and scroll position survive a poll), changed rows are re-rendered, gone rows removed.
//   items: array; key(item) -> string; render(item) -> <tr>; sig(item) -> string (what the
//   row depends on; defaults to the item's JSON).
export function syncRows(tbody, items, { key, render, sig, empty, colspan }) {
  const old = new Map();
  for (const tr of Array.from(tbody.children)) {
    if (tr._key !== undefined) old.set(tr._key, tr);
    else tr.remove();
  }
  const rows = [];
  for (const item of items) {
    const k = String(key(item));
    const s = sig ? sig(item) : JSON.stringify(item);
    let tr = old.get(k);
    if (tr && tr._sig === s) {
      old.delete(k);
    } else {
      if (tr) old.delete(k);
      const fresh = render(item);
      fresh._key = k;
      fresh._sig = s;
      if (tr) tr.replaceWith(fresh);
      tr = fresh;
    }
    rows.push(tr);
  }
  for (const tr of old.values()) tr.remove();
  rows.forEach((tr, i) => {
    if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
  });
  if (!items.length && empty) {
    tbody.appendChild(h('tr', { class: 'empty-row' }, h('td', { colspan: colspan || 1, text: empty })));
  }
}

// A status badge: <span class="badge s-good">good</span>
export function badge(text, cls) {
  const t = text === undefined || text === null || text === '' ? '—' : String(text);
  return h('span', { class: `badge s-${cls || statusClass(t)}`, title: t }, t);
}

export function statusClass(s) {
  const v = String(s || '').toLowerCase();
  if (['good', 'done', 'up', 'running', 'completed', 'yes', 'enabled'].includes(v)) {
    return v === 'running' ? 'running' : 'good';
  }
  if (['queued', 'pending', 'requeued', 'configuring', 'completing', 'suspended', 'preempted'].includes(v)) return 'pending';
  if (['failed', 'down', 'bad', 'corrupt', 'node_fail', 'timeout', 'out_of_memory', 'boot_fail', 'deadline'].includes(v)) return 'failed';
  if (['partial', 'incomplete', 'stale', 'cancelled'].includes(v)) return 'warn';
  return 'neutral';
}
