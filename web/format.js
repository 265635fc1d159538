// Formatting helpers (pure functions, no DOM).

export function bytes(n) {
  if (n === undefined || n === null || Number.isNaN(Number(n))) return '—';
  let v = Number(n);
  if (v < 1024) return `${v} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = -1;
  do {
    v /= 1024;
    i++;
  } while (v >= 1024 && i < units.length - 1);
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[i]}`;
}

const pad = (n) => String(n).padStart(2, '0');

// 1764480000000 -> "2025-11-30 05:20:00" (local time)
export function time(ms) {
  if (!ms) return '—';
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) return '—';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// 1234 -> "1.2 s", 45000 -> "45 s", 90500 -> "1 min 31 s": a duration given in milliseconds.
export function seconds(ms) {
  const v = Number(ms);
  if (ms === undefined || ms === null || !Number.isFinite(v) || v < 0) return '—';
  if (v < 10000) return `${(v / 1000).toFixed(1)} s`;
  if (v < 60000) return `${Math.round(v / 1000)} s`;
  const s = Math.round(v / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function clock(ms) {
  const d = new Date(Number(ms));
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "12 s ago", "5 min ago", "3 h ago", "2 d ago"
export function ago(ms, now = Date.now()) {
  if (!ms) return '';
  const s = Math.round((now - Number(ms)) / 1000);
  if (s < 0) return 'in the future';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

// 30 -> "30 s", 60 -> "1 min", 5400 -> "1 h 30 min", 90 -> "1 min 30 s"
export function interval(seconds) {
  let s = Number(seconds);
  if (!Number.isFinite(s) || s <= 0) return '—';
  const parts = [];
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const hh = Math.floor(s / 3600);
  s -= hh * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) parts.push(`${d} d`);
  if (hh) parts.push(`${hh} h`);
  if (m) parts.push(`${m} min`);
  if (s) parts.push(`${s} s`);
  return parts.join(' ');
}

// Largest of h/min/s that divides the interval: 3600 -> [1, 'h'], 90 -> [90, 's'].
export function splitInterval(seconds) {
  const s = Number(seconds) || 0;
  if (s > 0 && s % 3600 === 0) return [s / 3600, 'h'];
  if (s > 0 && s % 60 === 0) return [s / 60, 'min'];
  return [s, 's'];
}

export const UNIT_SECONDS = { s: 1, min: 60, h: 3600 };

export function percent(done, total) {
  if (!total || total <= 0) return null;
  return Math.max(0, Math.min(100, (100 * Number(done || 0)) / Number(total)));
}
