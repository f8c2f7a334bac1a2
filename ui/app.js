// topod's dashboard: the node (its GPUs, their agreement, links and NUMA nodes), each GPU and MIG device (the
// picture, MIG instances with their L2 shares, stale and warning notes, the conditions the result was measured
// under, every measured element), live probe progress and MIG changes from /v1/events, and fit advice.
// Views follow the URL's hash (#/node, #/gpu/<uuid>), so each is a link. Plain ES modules, no build step.
import { logEvent } from './events-log.js';
import { loadPicture, showGpuDocument, showMigDocument, showUnavailable } from './gpu-view.js';
import { showNode } from './node-view.js';

const $ = (selector) => document.querySelector(selector);
const state = { gpus: [], migDevices: [], view: null };

async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok)
    throw Object.assign(new Error(`${url}: ${response.status}`), {
      status: response.status,
      body: await response.json().catch(() => null),
    });
  return response.json();
}

/** The view the hash names: the node, or a GPU or MIG device by UUID; a page opened bare shows the first GPU. */
function route() {
  const match = /^#\/(node|gpu)(?:\/(.+))?$/.exec(location.hash);
  if (match?.[1] === 'node') return { kind: 'node' };
  if (match?.[1] === 'gpu' && match[2]) return { kind: 'gpu', id: decodeURIComponent(match[2]) };
  return state.gpus[0] ? { kind: 'gpu', id: state.gpus[0].uuid } : { kind: 'node' };
}

/** The whole GPU a view's id belongs to (a MIG device's parent), for probe progress. */
function parentUuid(id) {
  return state.migDevices.find((m) => m.uuid === id)?.parent.uuid ?? id;
}

function listItem(href, text, { uuid, className } = {}) {
  const item = document.createElement('li');
  if (uuid) item.dataset.uuid = uuid;
  if (className) item.className = className;
  const link = document.createElement('a');
  link.href = href;
  link.textContent = text;
  item.append(link);
  return item;
}

function markSelected() {
  const selected = state.view?.kind === 'gpu' ? state.view.id : null;
  for (const item of document.querySelectorAll('#gpus li')) item.classList.toggle('selected', item.dataset.uuid === selected);
  $('#node-entry').classList.toggle('selected', state.view?.kind === 'node');
}

async function loadGpus() {
  const { gpus } = await getJson('/v1/gpus');
  state.gpus = gpus;
  const migUuids = gpus.flatMap((gpu) => gpu.migDeviceUuids);
  state.migDevices = (await Promise.all(migUuids.map((uuid) => getJson(`/v1/gpus/${encodeURIComponent(uuid)}`).catch(() => null)))).filter(
    Boolean,
  );
  const list = $('#gpus');
  list.replaceChildren();
  if (gpus.length === 0) list.innerHTML = '<li class="muted">no GPUs — try TOPOD_BACKEND=sim</li>';
  for (const gpu of gpus) {
    list.append(
      listItem(
        `#/gpu/${encodeURIComponent(gpu.uuid)}`,
        `${gpu.index}: ${gpu.name}${gpu.simulated ? ' (simulated)' : ''} — ${gpu.probe.status}`,
        { uuid: gpu.uuid, className: 'gpu' },
      ),
    );
    for (const mig of state.migDevices.filter((m) => m.parent.uuid === gpu.uuid)) {
      const label = `MIG ${(mig.profileName ?? `profile ${mig.profileId}`).replace(/^MIG\s+/, '')} · GI ${mig.gpuInstanceId}${mig.computeInstanceId !== null ? ` CI ${mig.computeInstanceId}` : ''}`;
      list.append(listItem(`#/gpu/${encodeURIComponent(mig.uuid)}`, label, { uuid: mig.uuid, className: 'mig' }));
    }
  }
  markSelected();
}

async function showView() {
  state.view = route();
  markSelected();
  $('#node').hidden = state.view.kind !== 'node';
  $('#detail').hidden = state.view.kind !== 'gpu';
  if (state.view.kind === 'node') await loadNode();
  else await loadTopology();
}

async function loadNode() {
  try {
    showNode(await getJson('/v1/node'), state.migDevices);
  } catch (error) {
    $('#node-title').textContent = error.body?.detail ?? String(error);
  }
}

async function loadTopology() {
  const id = state.view?.kind === 'gpu' ? state.view.id : null;
  if (!id) return;
  const gpu = state.gpus.find((g) => g.uuid === id);
  const mig = state.migDevices.find((m) => m.uuid === id);
  $('#gpu-title').textContent = gpu
    ? `${gpu.name} (${gpu.uuid})`
    : mig
      ? `MIG ${(mig.profileName ?? '').replace(/^MIG\s+/, '')} on ${mig.parent.name} (${mig.uuid})`
      : id;
  let document_;
  try {
    document_ = await getJson(`/v1/gpus/${encodeURIComponent(id)}/topology`);
  } catch (error) {
    showUnavailable(error.body?.detail ?? String(error));
    return;
  }
  if (state.view?.id !== id) return;
  if (document_.kind === 'mig-instance') showMigDocument(document_);
  else showGpuDocument(document_);
  await loadPicture(id);
}

function showProbe(job) {
  if (state.view?.kind !== 'gpu' || job.gpuUuid !== parentUuid(state.view.id)) return;
  const waiting = job.state === 'waiting';
  const progress = $('#probe-progress');
  progress.hidden = job.state !== 'running' && job.state !== 'queued';
  progress.value = job.progress;
  $('#probe').classList.toggle('waiting', waiting);
  // A waiting job holds no GPU: it says why (its phase) and since when, and is looked at again with backoff.
  $('#probe-state').textContent = waiting ? 'probe waiting for the GPU' : `probe ${job.state} ${Math.round(job.progress * 100)}%`;
  $('#probe-phase').textContent =
    waiting && job.waitingSince ? `${job.phase ?? 'busy'} (since ${job.waitingSince.slice(11, 19)})` : (job.phase ?? '');
}

/** Refreshes asked for by a burst of events (the replay on load, a probe's end) run once, shortly after. */
const pending = new Set();
let refreshTimer = null;
function refresh(what) {
  pending.add(what);
  refreshTimer ??= setTimeout(async () => {
    const jobs = [...pending];
    pending.clear();
    refreshTimer = null;
    if (jobs.includes('gpus')) await loadGpus().catch(() => undefined);
    if (jobs.includes('gpus') || jobs.includes('view')) await showView().catch(() => undefined);
  }, 100);
}

function concerns(event) {
  if (state.view?.kind === 'node') return true;
  return state.view?.kind === 'gpu' && event.gpuUuid === parentUuid(state.view.id);
}

function listen() {
  // lastEventId=0: the stream sends the events it keeps first, so the log shows what happened before the page opened.
  const source = new EventSource('/v1/events?lastEventId=0');
  source.addEventListener('open', () => {
    $('#connection').textContent = 'live';
    $('#connection').classList.add('live');
  });
  source.addEventListener('error', () => {
    $('#connection').textContent = 'reconnecting…';
    $('#connection').classList.remove('live');
  });
  const on = (type, handler) =>
    source.addEventListener(type, (message) => {
      const event = JSON.parse(message.data);
      logEvent($('#events'), event);
      handler(event);
    });
  for (const type of [
    'probe.queued',
    'probe.waiting',
    'probe.started',
    'probe.progress',
    'probe.succeeded',
    'probe.failed',
    'probe.cancelled',
  ]) {
    on(type, (event) => {
      showProbe(event.job);
      // The GPU list shows each GPU's probe status: refreshed when a job starts, waits or ends.
      if (type !== 'probe.progress' && type !== 'probe.queued') refresh('gpus');
    });
  }
  // A MIG change adds or removes MIG devices: the list and the view follow.
  on('mig.changed', () => refresh('gpus'));
  on('topology.changed', (event) => concerns(event) && refresh('view'));
  for (const type of ['gpu.added', 'gpu.removed']) on(type, () => refresh('gpus'));
}

const SIZE_UNITS = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

$('#fit').addEventListener('submit', async (submit) => {
  submit.preventDefault();
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec($('#fit-size').value);
  const scale = match ? SIZE_UNITS[match[2].toLowerCase()] : undefined;
  if (!match || scale === undefined) {
    $('#fit-summary').textContent = 'write a size: 8MiB, 512KiB, 2GB';
    return;
  }
  try {
    const advice = await getJson(
      `/v1/gpus/${encodeURIComponent(state.view.id)}/fit?workingSetBytes=${Math.round(Number(match[1]) * scale)}`,
    );
    $('#fit-summary').textContent = advice.summary;
  } catch (error) {
    $('#fit-summary').textContent = error.body?.detail ?? String(error);
  }
});

window.addEventListener('hashchange', () => {
  showView().catch(() => undefined);
});
listen();
loadGpus()
  .then(showView)
  .catch((error) => {
    $('#gpus').textContent = String(error);
  });
