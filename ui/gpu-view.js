// One GPU, or one MIG device: its picture, stale and warning notes, the conditions it was measured under, its
// MIG instances with their L2 shares, and every measured element.
import { conditionsNote, conditionsRows, elementLabel, formatBytes, formatLatency, formatValue, l2ShareBasis } from './format.js';

const $ = (selector) => document.querySelector(selector);

function cell(row, content) {
  const td = document.createElement('td');
  if (content instanceof Node) td.append(content);
  else td.textContent = content;
  row.append(td);
}

function definitions(list, rows) {
  list.replaceChildren();
  for (const [term, value] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = value;
    list.append(dt, dd);
  }
}

function showStale(status) {
  const stale = $('#stale');
  stale.hidden = !status?.stale;
  stale.textContent = status?.stale
    ? `⚠ stale: ${status.staleReason ?? 'measured under another driver or probe version'} — a re-probe is queued; this result is served meanwhile`
    : '';
}

function showConditions(conditions) {
  const note = conditions ? conditionsNote(conditions) : null;
  const element = $('#conditions');
  element.hidden = note === null;
  element.classList.toggle('busy', note?.busy === true);
  element.textContent =
    note === null
      ? ''
      : `${note.busy ? '⚠ ' : ''}${note.text}${note.busy ? ' — its values are less sure; probe again when the GPU is idle' : ''}`;
  $('#conditions-detail').hidden = note === null;
  $('#conditions-card').hidden = note === null;
  if (conditions) definitions($('#conditions-facts'), conditionsRows(conditions));
}

function showWarnings(warnings) {
  $('#warnings-card').hidden = warnings.length === 0;
  const list = $('#warnings');
  list.replaceChildren(...warnings.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
}

/** Every element the document has, one row each, whatever attributes it holds. */
function showElements(elements) {
  const body = $('#elements tbody');
  body.replaceChildren();
  for (const [name, element] of Object.entries(elements)) {
    if (!element) continue;
    const row = document.createElement('tr');
    row.dataset.element = name;
    const value = (key) => (element[key] ? formatValue(element[key]) : '');
    cell(row, elementLabel(name));
    cell(row, value('size'));
    cell(row, element.latency ? formatLatency(element.latency) : '');
    cell(row, value('lineSize'));
    cell(row, value('fetchGranularity'));
    cell(
      row,
      [element.readBandwidth && `read ${value('readBandwidth')}`, element.writeBandwidth && `write ${value('writeBandwidth')}`]
        .filter(Boolean)
        .join(', '),
    );
    const amount = element.amount ? `${element.amount.value} per ${element.amount.per === 'sm' ? 'SM' : 'GPU'}` : '';
    const segment = element.segmentSize ? ` (segments of ${value('segmentSize')})` : '';
    cell(row, amount + segment);
    body.append(row);
  }
}

function migLink(uuid, text) {
  if (!uuid) return text;
  const link = document.createElement('a');
  link.href = `#/gpu/${encodeURIComponent(uuid)}`;
  link.textContent = text;
  return link;
}

function showMigTable(mig) {
  const body = $('#mig tbody');
  body.replaceChildren();
  const instances = mig?.instances ?? [];
  for (const instance of instances) {
    const row = document.createElement('tr');
    row.dataset.gpuInstanceId = String(instance.gpuInstanceId);
    if (instance.migDeviceUuid) row.dataset.migDeviceUuid = instance.migDeviceUuid;
    cell(row, String(instance.gpuInstanceId));
    cell(row, migLink(instance.migDeviceUuid, instance.profileName ?? `profile ${instance.profileId}`));
    cell(row, String(instance.multiprocessorCount ?? '?'));
    cell(row, instance.memorySizeBytes === null ? '?' : formatBytes(instance.memorySizeBytes));
    cell(row, instance.l2.bytes === null ? '?' : formatBytes(instance.l2.bytes));
    cell(row, instance.l2.reachablePerSmBytes === null ? '?' : formatBytes(instance.l2.reachablePerSmBytes));
    cell(row, l2ShareBasis(instance.l2, mig.memorySliceCount));
    body.append(row);
  }
  $('#mig-empty').textContent =
    instances.length > 0 ? '' : mig ? `MIG ${mig.mode?.current ?? 'not supported'}: no GPU instances` : 'no NVML: MIG state unknown';
}

/** The picture, fetched (revalidated by its ETag) and shown from a blob, so a changed picture is redrawn. */
export async function loadPicture(id) {
  const img = $('#picture');
  const response = await fetch(`/v1/gpus/${encodeURIComponent(id)}/topology.svg`, { cache: 'no-cache' });
  if (!response.ok) {
    img.removeAttribute('src');
    return;
  }
  const previous = img.src;
  img.src = URL.createObjectURL(await response.blob());
  $('#picture-link').href = `/v1/gpus/${encodeURIComponent(id)}/topology.svg`;
  if (previous.startsWith('blob:')) URL.revokeObjectURL(previous);
}

function pictureNote(text) {
  $('#picture-note').hidden = text === '';
  $('#picture-note').textContent = text;
}

const ILLUSTRATIVE = 'SM colours are illustrative: NVML gives each GPU instance’s SM count, not which SMs it holds.';

export function showGpuDocument(document_) {
  $('#mig-device').hidden = true;
  $('#mig-card').hidden = false;
  showStale(document_.status);
  showConditions(document_.conditions ?? null);
  showWarnings(document_.warnings);
  showMigTable(document_.mig);
  showElements(document_.elements);
  const migOn = document_.mig?.mode?.current === 'enabled' && document_.mig.instances.length > 0;
  pictureNote(migOn ? ILLUSTRATIVE : '');
}

/** A MIG device: its instance's SMs, memory and L2 share; the per-SM caches its parent's probe measured. */
export function showMigDocument(document_) {
  const { instance, computeInstance, parent } = document_;
  $('#mig-device').hidden = false;
  $('#mig-card').hidden = true;
  showStale(parent.status);
  showConditions(null);
  showWarnings([]);
  showElements(document_.elements);
  definitions($('#mig-device-facts'), [
    ['parent GPU', `${parent.name} (${parent.uuid})`],
    [
      'GPU instance',
      `${instance.gpuInstanceId} · ${instance.profileName ?? `profile ${instance.profileId}`}${instance.placement ? ` · memory slices ${instance.placement.start}–${instance.placement.start + instance.placement.size - 1}` : ''}`,
    ],
    ['compute instance', computeInstance ? `${computeInstance.id} · ${computeInstance.multiprocessorCount} SMs` : 'not listed by NVML'],
    ['SMs', String(computeInstance?.multiprocessorCount ?? instance.multiprocessorCount ?? '?')],
    ['memory', instance.memorySizeBytes === null ? '?' : formatBytes(instance.memorySizeBytes)],
    ['L2 share', instance.l2.bytes === null ? 'unknown' : `${formatBytes(instance.l2.bytes)} (${l2ShareBasis(instance.l2, null)})`],
    ['one SM reaches', instance.l2.reachablePerSmBytes === null ? 'unknown' : formatBytes(instance.l2.reachablePerSmBytes)],
  ]);
  pictureNote(`The parent GPU; this device is GI ${instance.gpuInstanceId}. ${ILLUSTRATIVE}`);
}

export function showUnavailable(message) {
  $('#mig-empty').textContent = message;
  $('#mig tbody').replaceChildren();
  $('#elements tbody').replaceChildren();
  $('#picture').removeAttribute('src');
  showStale(null);
  showConditions(null);
  showWarnings([]);
  pictureNote('');
}
