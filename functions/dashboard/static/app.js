// The crawlstack dashboard: reads the crawl's view from server-sent events (api/events; one per
// second) and draws it. Plain browser JavaScript, no build step. Everything from the crawl (URLs,
// patterns, reasons) is set as text, never as HTML: it comes from the web. The cloud dashboard
// (cloud-dashboard.ts) serves the same page with a list of crawls to pick from (`?crawl=<id>`).

const $ = (id) => document.getElementById(id);
// The core's error reasons (functions/core/step/page-record.ts), served as reasons.js.
const ERROR_REASONS = new Set(window.crawlstackErrorReasons || []);
let chart;
let lastView;

const int = (n) => (n === undefined || n === null ? '–' : Math.round(n).toLocaleString('en-US'));
const pct = (x) => (x === undefined || x === null || Number.isNaN(x) ? '–' : `${(x * 100).toFixed(1)}%`);

function bytes(n) {
  if (n === undefined || n === null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

function duration(ms) {
  if (ms === undefined || ms === null) return '–';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (x) => String(x).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

function cell(row, text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function fillTable(id, rows, columns, empty) {
  const body = $(id).querySelector('tbody');
  body.replaceChildren();
  if (rows.length === 0) {
    const tr = document.createElement('tr');
    const td = cell(tr, empty, 'empty');
    td.colSpan = columns;
    body.appendChild(tr);
    return;
  }
  for (const build of rows) {
    const tr = document.createElement('tr');
    build(tr);
    body.appendChild(tr);
  }
}

/** A count table with a bar per row, largest first. */
function countTable(id, counts, isError, empty) {
  const entries = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]);
  const max = Math.max(1, ...entries.map((e) => e[1]));
  fillTable(
    id,
    entries.map(([key, n]) => (tr) => {
      if (isError(key)) tr.className = 'error';
      cell(tr, key);
      cell(tr, int(n), 'num');
      const bar = cell(tr, '', 'bar');
      const span = document.createElement('span');
      span.style.width = `${(n / max) * 100}%`;
      bar.appendChild(span);
    }),
    3,
    empty,
  );
}

function nextRequest(host, at) {
  if (host.dead) return `given up (${host.dead})`;
  if (host.inFlight) return 'in flight';
  if (host.nextAllowedAt === undefined) return '–';
  const wait = host.nextAllowedAt - at;
  const text = wait <= 0 ? 'now' : `in ${(wait / 1000).toFixed(1)} s`;
  return host.waitingFor ? `${text} (${host.waitingFor})` : text;
}

function robotsText(host) {
  const parts = [];
  if (host.robots)
    parts.push(host.robots.detail ? `${host.robots.status} (${host.robots.detail})` : host.robots.status);
  if (host.robotsDisallowed) parts.push(`${int(host.robotsDisallowed)} disallowed`);
  return parts.length > 0 ? parts.join(', ') : '–';
}

function drawChart(rate) {
  const container = $('chart');
  $('chart-empty').hidden = rate.length > 0;
  if (rate.length === 0) return;
  const data = [
    rate.map((p) => p.elapsedMs / 1000),
    rate.map((p) => p.pagesPerSecond),
    rate.map((p) => p.pages),
  ];
  const width = Math.max(300, container.clientWidth);
  if (chart === undefined) {
    chart = new uPlot(
      {
        width,
        height: 240,
        scales: { x: { time: false } },
        legend: { live: false },
        axes: [
          { label: 'crawl time (s)' },
          { label: 'pages/s', scale: 'rate' },
          { label: 'pages', scale: 'pages', side: 1, grid: { show: false } },
        ],
        series: [
          { label: 'seconds' },
          { label: 'pages/s', scale: 'rate', stroke: '#0b63c5', width: 2, fill: 'rgba(11,99,197,0.08)' },
          { label: 'pages', scale: 'pages', stroke: '#9a6700', width: 1.5, dash: [6, 4] },
        ],
      },
      data,
      container,
    );
  } else {
    chart.setData(data);
  }
}

/** The cloud dashboard's crawl list: a choice of crawls, the shown one selected. */
function renderCrawls(view) {
  const select = $('crawl');
  if (!view.crawls) return;
  // The shown crawl's status from its snapshot (the list is a few seconds older).
  const shown = { id: view.crawlId, status: view.snapshot.state, createdAt: '', seeds: view.seeds };
  const options = view.crawls.some((c) => c.id === view.crawlId)
    ? view.crawls.map((c) => (c.id === view.crawlId ? { ...c, status: shown.status } : c))
    : [shown, ...view.crawls];
  const key = options.map((c) => `${c.id} ${c.status}`).join(',');
  if (select.dataset.key !== key) {
    select.replaceChildren(
      ...options.map((c) => {
        const option = document.createElement('option');
        option.value = c.id;
        option.textContent = `${c.seeds[0] ?? c.id} (${c.status}${c.createdAt ? `, ${new Date(c.createdAt).toLocaleString()}` : ''})`;
        return option;
      }),
    );
    select.dataset.key = key;
  }
  select.value = view.crawlId;
  select.hidden = false;
}

function render(view) {
  if (view.error !== undefined) {
    $('updated').textContent = view.error;
    return;
  }
  lastView = view;
  renderCrawls(view);
  const s = view.snapshot;
  const state = $('state');
  state.textContent = s.state;
  const badge =
    s.state === 'running'
      ? ''
      : s.state === 'not running' || s.state === 'cancelled'
        ? 'stale'
        : s.state === 'interrupted' || s.state === 'failed'
          ? 'interrupted'
          : 'done';
  state.className = `badge ${badge}`;
  $('seeds').textContent = `${view.seeds.join(' ')}  ·  ${view.outDir}`;
  $('source').textContent =
    {
      live: 'live from the crawler',
      status: 'from status.json',
      files: 'from the crawl files',
      cloud: 'from the cloud API',
    }[view.source] || view.source;
  $('updated').textContent = `updated ${new Date(s.at).toLocaleTimeString()}`;
  $('pages').textContent = int(s.pages);
  $('rate').textContent = s.pagesPerSecond === undefined ? '–' : s.pagesPerSecond.toFixed(1);
  $('queued').textContent = int(s.queued);
  $('inflight').textContent = int(s.running);
  $('errors').textContent = int(s.errors);
  $('skipped').textContent = int(s.skipped);
  $('hosts').textContent = int(s.hosts);
  $('hitrate').textContent = s.urlSeen ? pct(s.urlSeen.hitRate) : '–';
  $('memory-label').textContent = s.memory?.peak ? 'peak memory' : 'memory (RSS)';
  $('memory').textContent = s.memory ? bytes(s.memory.rssBytes) : '–';
  $('bytes').textContent = bytes(s.bytes);
  $('elapsed').textContent = duration(s.elapsedMs);
  drawChart(s.rate || []);
  countTable(
    'status-table',
    s.byStatus,
    (k) => k === 'none' || k === '429' || k.startsWith('5'),
    'no responses yet',
  );
  countTable('reason-table', s.byReason, (k) => ERROR_REASONS.has(k), 'none');
  countTable(
    'links-table',
    s.linksSkipped,
    () => false,
    s.linksSkipped ? 'none' : 'known at the end of the crawl',
  );
  fillTable(
    'host-table',
    (s.hostTable || []).map((h) => (tr) => {
      cell(tr, h.host);
      cell(tr, int(h.queued), 'num');
      cell(tr, nextRequest(h, s.at));
      cell(tr, h.lastResponseMs === undefined ? '–' : `${int(h.lastResponseMs)} ms`, 'num');
      cell(tr, int(h.fetched), 'num');
      const errors = cell(
        tr,
        h.errors ? `${int(h.errors)}${h.lastError ? ` (${h.lastError})` : ''}` : '0',
        'num',
      );
      if (h.errors) errors.classList.add('bad');
      cell(tr, robotsText(h));
      cell(tr, h.crawlDelayMs === undefined ? '–' : `${(h.crawlDelayMs / 1000).toFixed(1)} s`, 'num');
    }),
    8,
    'no hosts yet',
  );
  fillTable(
    'trap-table',
    (s.traps || []).map((t) => (tr) => {
      cell(tr, t.reason);
      cell(tr, t.pattern, 'url');
      cell(tr, int(t.count), 'num');
      cell(tr, t.examples.slice(0, 3).join('\n'), 'examples');
    }),
    4,
    'none caught',
  );
  fillTable(
    'top-table',
    (s.topPages || []).map((p, i) => (tr) => {
      cell(tr, String(i + 1), 'num');
      cell(tr, p.importance.toFixed(5), 'num');
      cell(tr, p.url, 'url');
    }),
    3,
    'no pages yet',
  );
}

function connect() {
  // The page's own query (`?crawl=<id>` on the cloud dashboard) names the crawl to follow.
  const events = new EventSource(`api/events${window.location.search}`);
  events.addEventListener('view', (event) => render(JSON.parse(event.data)));
  // The server is stopping (the crawl ended): keep the last view, do not reconnect.
  events.addEventListener('end', () => {
    events.close();
    $('updated').textContent = 'the dashboard has stopped (crawlstack ui --out DIR shows the crawl again)';
  });
  events.onerror = () => {
    $('updated').textContent = 'connection lost, retrying…';
  };
}

$('crawl').addEventListener('change', (event) => {
  window.location.search = `?crawl=${encodeURIComponent(event.target.value)}`;
});
window.addEventListener('resize', () => {
  if (chart !== undefined) chart.setSize({ width: Math.max(300, $('chart').clientWidth), height: 240 });
});
window.crawlstackDashboard = { lastView: () => lastView };
connect();
