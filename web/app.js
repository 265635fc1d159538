// cedana-slurm controller web UI: sign-in, shell (header, nav, banner), hash router, poller.
import { api, getToken, setToken, clearToken, onUnauthorized } from './api.js';
import { h, replaceChildren } from './dom.js';
import { initBanner, showError, dismiss, dismissAll, errorText } from './ui.js';
import { clock } from './format.js';
import jobsPage from './pages/jobs.js';
import checkpointsPage from './pages/checkpoints.js';
import policiesPage from './pages/policies.js';
import nodesPage from './pages/nodes.js';
import maintenancePage from './pages/maintenance.js';
import jobPage from './pages/job.js';

const POLL_MS = 2000;
const PAGES = [jobsPage, checkpointsPage, policiesPage, maintenancePage, nodesPage, jobPage];
const DEFAULT_ROUTE = 'checkpoints';

const appEl = document.getElementById('app');
const state = {
  me: null, // {user, admin}
  pageId: null,
  page: null, // {refresh(), unmount(), onParams?(params)}
  gen: 0,
  timer: null,
  inflight: false,
  again: false,
  lastOk: 0,
  failing: false,
  shell: null,
};

// ---------------------------------------------------------------- sign-in

function showSignIn(message, kind = 'error') {
  stopPage();
  state.me = null;
  state.shell = null;
  dismissAll();
  document.title = 'Sign in · cedana SLURM';
  const input = h('input', {
    id: 'token',
    type: 'password',
    class: 'input',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'cdn_…',
    'data-testid': 'token-input',
    required: true,
  });
  const msg = h('p', {
    class: `signin-msg ${kind === 'error' ? 'is-error' : 'is-info'}`,
    'data-testid': 'sign-in-error',
    role: 'alert',
    hidden: !message,
  }, message || '');
  const btn = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'sign-in' }, 'Sign in');
  const form = h(
    'form',
    { class: 'signin-card', 'data-testid': 'sign-in-form', onsubmit: (ev) => { ev.preventDefault(); submit(); } },
    h('div', { class: 'brand brand-lg' }, h('span', { class: 'brand-mark' }, 'cedana'), h('span', { class: 'brand-sub' }, 'SLURM controller')),
    h('label', { for: 'token', class: 'label' }, 'API token'),
    input,
    h('p', { class: 'hint' }, 'The admin token (CEDANA_AUTH_TOKEN) or a user token from ', h('code', {}, 'cedana-slurm token create --user NAME'), '. Kept in this browser tab only.'),
    msg,
    h('div', { class: 'signin-actions' }, btn),
  );

  async function submit() {
    const token = input.value.trim();
    if (!token) {
      msg.textContent = 'Enter a token.';
      msg.className = 'signin-msg is-error';
      msg.hidden = false;
      return;
    }
    btn.disabled = true;
    msg.hidden = true;
    try {
      const me = await api.whoami({ token, noAuthRedirect: true });
      setToken(token);
      startApp(me);
    } catch (e) {
      msg.className = 'signin-msg is-error';
      msg.textContent = e.status === 401
        ? `Token refused by the controller (${e.code}: ${e.message}).`
        : e.status === 0
          ? `Cannot reach the controller: ${e.message}.`
          : `Sign-in failed: ${e.status} ${e.code}: ${e.message}`;
      msg.hidden = false;
      btn.disabled = false;
      input.select();
    }
  }

  replaceChildren(appEl, h('main', { class: 'signin' }, form));
  input.focus();
}

function signOut() {
  clearToken();
  showSignIn('Signed out.', 'info');
}

onUnauthorized((e) => {
  if (!state.me) return; // already on the sign-in page
  clearToken();
  showSignIn(`Your session ended: the controller refused the token (${e.code}: ${e.message}). Sign in again.`);
});

// ---------------------------------------------------------------- shell

function startApp(me) {
  state.me = { user: String(me && me.user !== undefined ? me.user : '?'), admin: !!(me && me.admin) };
  const nav = h('nav', { class: 'nav' },
    PAGES.filter((p) => !p.hidden && (!p.adminOnly || state.me.admin)).map((p) =>
      h('a', { href: `#/${p.id}`, class: 'nav-link', 'data-testid': `nav-${p.id}`, 'data-page': p.id }, p.title)),
  );
  const updated = h('span', { class: 'last-updated', 'data-testid': 'last-updated', title: 'Pages refresh every 2 s' }, '');
  const who = h('span', { class: 'whoami', 'data-testid': 'whoami', 'data-user': state.me.user, 'data-admin': String(state.me.admin) },
    h('span', { class: 'whoami-label' }, 'signed in as '),
    h('strong', { 'data-testid': 'whoami-user' }, state.me.user),
    state.me.admin ? h('span', { class: 'badge s-admin', 'data-testid': 'whoami-admin' }, 'admin') : h('span', { class: 'badge s-neutral' }, 'user'));
  const header = h('header', { class: 'topbar' },
    h('a', { class: 'brand', href: '#/' + DEFAULT_ROUTE }, h('span', { class: 'brand-mark' }, 'cedana'), h('span', { class: 'brand-sub' }, 'SLURM')),
    nav,
    h('div', { class: 'topbar-right' }, updated, who,
      h('button', { type: 'button', class: 'btn btn-ghost', 'data-testid': 'sign-out', onclick: signOut }, 'Sign out')),
  );
  const banner = h('div', { class: 'banner', 'data-testid': 'error-banner', 'aria-live': 'polite' });
  const main = h('main', { class: 'content', id: 'content' });
  replaceChildren(appEl, header, banner, main);
  initBanner(banner);
  state.shell = { nav, updated, main };
  state.lastOk = 0;
  state.failing = false;
  renderUpdated();
  route();
}

function renderUpdated() {
  if (!state.shell) return;
  const el = state.shell.updated;
  if (!state.lastOk) {
    el.textContent = 'loading…';
    el.className = 'last-updated';
    return;
  }
  el.textContent = `${state.failing ? 'last updated' : 'updated'} ${clock(state.lastOk)}`;
  el.className = state.failing ? 'last-updated is-stale' : 'last-updated';
}

// ---------------------------------------------------------------- routing

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { id: parts[0] || '', rest: parts.slice(1), params: new URLSearchParams(qs || '') };
}

function route() {
  if (!state.me) return;
  const r = parseHash();
  let page = PAGES.find((p) => p.id === r.id);
  if (!page) {
    location.replace(`#/${DEFAULT_ROUTE}`);
    return;
  }
  for (const a of state.shell.nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.page === (page.navId || page.id));
  if (state.pageId === page.id && state.page) {
    if (state.page.onParams) state.page.onParams(r.params, r.rest);
    return;
  }
  stopPage();
  document.title = `${page.title} · cedana SLURM`;
  replaceChildren(state.shell.main);
  window.scrollTo(0, 0);
  if (page.adminOnly && !state.me.admin) {
    state.shell.main.appendChild(h('section', { class: 'panel' }, h('h2', {}, page.title), h('p', { class: 'muted' }, 'This page is for the admin token only.')));
    return;
  }
  state.pageId = page.id;
  const ctx = {
    me: state.me,
    refreshNow,
    params: r.params,
    rest: r.rest,
  };
  state.page = page.mount(state.shell.main, ctx);
  state.gen++;
  tick();
}

function stopPage() {
  clearTimeout(state.timer);
  state.timer = null;
  state.gen++;
  if (state.page && state.page.unmount) state.page.unmount();
  state.page = null;
  state.pageId = null;
}

// ---------------------------------------------------------------- polling

function schedule(ms) {
  clearTimeout(state.timer);
  state.timer = setTimeout(tick, ms);
}

// Refresh the visible page now (after an action), then keep polling every 2 s.
function refreshNow() {
  schedule(0);
}

async function tick() {
  clearTimeout(state.timer);
  if (!state.page || !state.me) return;
  if (state.inflight) {
    state.again = true;
    return;
  }
  if (document.hidden) {
    schedule(POLL_MS);
    return;
  }
  const gen = state.gen;
  const page = state.page;
  state.inflight = true;
  try {
    await page.refresh();
    if (gen === state.gen) {
      state.lastOk = Date.now();
      state.failing = false;
      dismiss('poll');
    }
  } catch (e) {
    if (gen === state.gen && state.me && e.status !== 401) {
      state.failing = true;
      showError(errorText(e), { key: 'poll', ttl: 0 });
    }
  } finally {
    state.inflight = false;
  }
  if (!state.me || !state.page) return;
  renderUpdated();
  if (gen !== state.gen || state.again) {
    state.again = false;
    schedule(0);
  } else {
    schedule(POLL_MS);
  }
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && state.page) refreshNow();
});
window.addEventListener('hashchange', route);

// ---------------------------------------------------------------- boot

async function boot() {
  const token = getToken();
  if (!token) {
    showSignIn('');
    return;
  }
  replaceChildren(appEl, h('p', { class: 'boot' }, 'Connecting…'));
  try {
    startApp(await api.whoami({ noAuthRedirect: true }));
  } catch (e) {
    if (e.status === 401) {
      clearToken();
      showSignIn(`The controller refused the saved token (${e.code}: ${e.message}). Sign in again.`);
    } else {
      showSignIn(`Cannot check the saved token: ${errorText(e)}`);
    }
  }
}

boot();
