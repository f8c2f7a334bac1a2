// topod's dashboard: the GPUs, the selected GPU's picture and MIG instances with their L2 shares, the conditions
// the result was measured under, live probe progress (a probe waiting for a busy GPU with its reason) and MIG
// changes from the /v1/events stream, and fit advice. Plain ES modules, no build step.
const $ = (selector) => document.querySelector(selector);
const state = { gpus: [], selected: null };

function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return `${Number(value.toFixed(unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2))} ${units[unit]}`;
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text;
  row.append(td);
}

const span = (a, b) => {
  const low = Math.round(Math.min(a, b));
  const high = Math.round(Math.max(a, b));
  return low === high ? String(low) : `${low}–${high}`;
};

// The document's `conditions` in one line, as the picture's footer says them (server/faces/conditions.ts).
function conditionsNote(conditions) {
  if (conditions.source === 'none') return { text: `conditions unknown${conditions.note ? `: ${conditions.note}` : ''}`, busy: false };
  const processes = conditions.otherProcesses;
  const busy = conditions.probedWhileBusy || conditions.busyAtStart || processes.length > 0;
  const memory = processes.reduce((sum, p) => sum + (p.usedMemoryBytes ?? 0), 0);
  const tenants = processes.length === 0
    ? (conditions.busyReason ?? 'other processes').replace(/^gpu-busy:\s*/, '')
    : `${processes.length} other process${processes.length === 1 ? '' : 'es'}${memory > 0 ? ` (${formatBytes(memory)})` : ''}`;
  const parts = [busy ? `measured on a busy GPU: ${tenants}` : 'idle GPU'];
  if (conditions.smClockMHz) parts.push(`SM ${span(conditions.smClockMHz.min, conditions.smClockMHz.max)} MHz`);
  const { start, end } = conditions.temperatureC;
  if (start !== null || end !== null) parts.push(`${span(start ?? end, end ?? start)} °C`);
  if (conditions.clocksEventReasons.length > 0) parts.push(`clocks held back: ${conditions.clocksEventReasons.join(', ')}`);
  return { text: parts.join(' · '), busy };
}

function showConditions(document_) {
  const element = $('#conditions');
  const note = document_?.conditions ? conditionsNote(document_.conditions) : null;
  element.hidden = note === null;
  element.classList.toggle('busy', note?.busy === true);
  element.textContent = note === null ? '' : `${note.busy ? '⚠ ' : ''}${note.text}${note.busy ? ' — its values are less sure; probe again when the GPU is idle' : ''}`;
}

async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw Object.assign(new Error(`${url}: ${response.status}`), { status: response.status, body: await response.json().catch(() => null) });
  return response.json();
}

async function loadGpus() {
  const { gpus } = await getJson('/v1/gpus');
  state.gpus = gpus;
  const list = $('#gpus');
  list.replaceChildren();
  if (gpus.length === 0) list.innerHTML = '<li class="muted">no GPUs — try TOPOD_BACKEND=sim</li>';
  for (const gpu of gpus) {
    const item = document.createElement('li');
    item.dataset.uuid = gpu.uuid;
    item.textContent = `${gpu.index}: ${gpu.name}${gpu.simulated ? ' (simulated)' : ''} — ${gpu.probe.status}`;
    item.classList.toggle('selected', gpu.uuid === state.selected);
    item.addEventListener('click', () => select(gpu.uuid));
    list.append(item);
  }
  if (!state.selected && gpus[0]) await select(gpus[0].uuid);
}

async function select(uuid) {
  state.selected = uuid;
  for (const item of document.querySelectorAll('#gpus li')) item.classList.toggle('selected', item.dataset.uuid === uuid);
  $('#detail').hidden = false;
  await loadTopology();
}

async function loadTopology() {
  const uuid = state.selected;
  if (!uuid) return;
  const gpu = state.gpus.find((g) => g.uuid === uuid);
  $('#gpu-title').textContent = gpu ? `${gpu.name} (${gpu.uuid})` : uuid;
  let document_;
  try {
    document_ = await getJson(`/v1/gpus/${encodeURIComponent(uuid)}/topology`);
  } catch (error) {
    $('#mig-empty').textContent = error.body?.detail ?? String(error);
    $('#picture').removeAttribute('src');
    showConditions(null);
    return;
  }
  showConditions(document_);
  // Fetched (revalidated by its ETag, which follows the document's) and shown from a blob, so a changed picture is redrawn.
  const picture = await fetch(`/v1/gpus/${encodeURIComponent(uuid)}/topology.svg`, { cache: 'no-cache' });
  if (picture.ok) {
    const previous = $('#picture').src;
    $('#picture').src = URL.createObjectURL(await picture.blob());
    if (previous.startsWith('blob:')) URL.revokeObjectURL(previous);
  }
  const body = $('#mig tbody');
  body.replaceChildren();
  const instances = document_.mig?.instances ?? [];
  for (const instance of instances) {
    const row = document.createElement('tr');
    row.dataset.gpuInstanceId = String(instance.gpuInstanceId);
    cell(row, String(instance.gpuInstanceId));
    cell(row, instance.profileName ?? `profile ${instance.profileId}`);
    cell(row, String(instance.multiprocessorCount ?? '?'));
    cell(row, instance.memorySizeBytes === null ? '?' : formatBytes(instance.memorySizeBytes));
    cell(row, instance.l2.bytes === null ? '?' : formatBytes(instance.l2.bytes));
    cell(row, instance.l2.reachablePerSmBytes === null ? '?' : formatBytes(instance.l2.reachablePerSmBytes));
    cell(row, instance.l2.source);
    body.append(row);
  }
  $('#mig-empty').textContent = instances.length > 0 ? '' : document_.mig ? `MIG ${document_.mig.mode?.current ?? 'not supported'}: no GPU instances` : 'no NVML: MIG state unknown';
}

function showProbe(job) {
  if (job.gpuUuid !== state.selected) return;
  const waiting = job.state === 'waiting';
  const progress = $('#probe-progress');
  progress.hidden = job.state !== 'running' && job.state !== 'queued';
  progress.value = job.progress;
  $('#probe').classList.toggle('waiting', waiting);
  // A waiting job holds no GPU: it says why (its phase) and since when, and is looked at again with backoff.
  $('#probe-state').textContent = waiting ? 'probe waiting for the GPU' : `probe ${job.state} ${Math.round(job.progress * 100)}%`;
  $('#probe-phase').textContent = waiting && job.waitingSince ? `${job.phase ?? 'busy'} (since ${job.waitingSince.slice(11, 19)})` : (job.phase ?? '');
}

function logEvent(event) {
  const item = document.createElement('li');
  item.textContent = `${event.at.slice(11, 19)} ${event.type}${event.job ? ` ${Math.round(event.job.progress * 100)}% ${event.job.phase ?? ''}` : ''}`;
  $('#events').prepend(item);
  while ($('#events').children.length > 200) $('#events').lastChild.remove();
}

function listen() {
  const source = new EventSource('/v1/events');
  source.addEventListener('open', () => { $('#connection').textContent = 'live'; $('#connection').classList.add('live'); });
  source.addEventListener('error', () => { $('#connection').textContent = 'reconnecting…'; $('#connection').classList.remove('live'); });
  const on = (type, handler) => source.addEventListener(type, (message) => {
    const event = JSON.parse(message.data);
    logEvent(event);
    handler(event);
  });
  for (const type of ['probe.queued', 'probe.waiting', 'probe.started', 'probe.progress', 'probe.succeeded', 'probe.failed', 'probe.cancelled']) {
    on(type, (event) => {
      showProbe(event.job);
      // The GPU list shows each GPU's probe status: refreshed when a job starts, waits or ends.
      if (type !== 'probe.progress' && type !== 'probe.queued') loadGpus().catch(() => undefined);
    });
  }
  on('mig.changed', (event) => event.gpuUuid === state.selected && loadTopology());
  on('topology.changed', (event) => event.gpuUuid === state.selected && loadTopology());
  for (const type of ['gpu.added', 'gpu.removed']) on(type, () => loadGpus());
}

const SIZE_UNITS = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

$('#fit').addEventListener('submit', async (submit) => {
  submit.preventDefault();
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec($('#fit-size').value);
  const scale = match ? SIZE_UNITS[match[2].toLowerCase()] : undefined;
  if (!match || scale === undefined) { $('#fit-summary').textContent = 'write a size: 8MiB, 512KiB, 2GB'; return; }
  try {
    const advice = await getJson(`/v1/gpus/${encodeURIComponent(state.selected)}/fit?workingSetBytes=${Math.round(Number(match[1]) * scale)}`);
    $('#fit-summary').textContent = advice.summary;
  } catch (error) {
    $('#fit-summary').textContent = error.body?.detail ?? String(error);
  }
});

listen();
loadGpus().catch((error) => { $('#gpus').textContent = String(error); });
