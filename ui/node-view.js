// The node: every GPU, whether same-model GPUs measured alike, and how they connect — a matrix as
// `nvidia-smi topo -m` prints it, and the machine as lstopo draws it (NUMA nodes holding their GPUs).
const $ = (selector) => document.querySelector(selector);

/** nvidia-smi topo -m's legend, in its words. */
export const TOPO_LEGEND = [
  ['X', 'Self'],
  ['SYS', 'Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)'],
  ['NODE', 'Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node'],
  ['PHB', 'Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)'],
  ['PXB', 'Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)'],
  ['PIX', 'Connection traversing at most a single PCIe bridge'],
  ['NV#', 'Connection traversing a bonded set of # NVLinks'],
  ['?', 'NVML did not say'],
];

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function gpuLink(gpu, text) {
  const link = element('a', text);
  link.href = `#/gpu/${encodeURIComponent(gpu.uuid)}`;
  return link;
}

function linkTitle(link) {
  const p2p = Object.entries(link.p2p)
    .filter(([, status]) => status !== null)
    .map(([kind, status]) => `${kind} ${status}`)
    .join(', ');
  const nvlink = link.nvlink ? `${link.nvlink.count} NVLinks (${link.nvlink.via})` : 'no NVLink';
  return [
    nvlink,
    link.pcie.commonAncestor ? `PCIe common ancestor: ${link.pcie.commonAncestor}` : null,
    p2p ? `P2P: ${p2p}` : null,
    ...link.degraded,
  ]
    .filter(Boolean)
    .join('\n');
}

function showMatrix(node) {
  const table = $('#topo-matrix');
  table.replaceChildren();
  const head = element('tr');
  head.append(element('th', ''));
  for (const gpu of node.gpus) head.append(element('th', `GPU${gpu.index}`));
  head.append(element('th', 'NUMA Affinity'), element('th', 'PCI bus id'));
  table.append(element('thead'));
  table.tHead.append(head);
  const body = element('tbody');
  for (const row of node.gpus) {
    const tr = element('tr');
    tr.dataset.gpu = String(row.index);
    const label = element('th');
    label.append(gpuLink(row, `GPU${row.index}`));
    tr.append(label);
    for (const column of node.gpus) {
      if (column.uuid === row.uuid) {
        tr.append(element('td', 'X', 'self'));
        continue;
      }
      const link = node.links.find((l) => l.gpus.includes(row.uuid) && l.gpus.includes(column.uuid));
      const td = element('td', link?.topo ?? '?', link?.nvlink ? 'nvlink' : '');
      if (link) td.title = linkTitle(link);
      tr.append(td);
    }
    tr.append(element('td', row.numaNode === null ? 'N/A' : String(row.numaNode)), element('td', row.pciBusId ?? '?'));
    body.append(tr);
  }
  table.append(body);
  $('#topo-legend').replaceChildren(
    ...TOPO_LEGEND.map(([key, meaning]) => {
      const item = element('li');
      item.append(element('code', key), ` = ${meaning}`);
      return item;
    }),
  );
}

/** lstopo's way: the machine, its NUMA nodes, each holding the GPUs attached to it; MIG devices inside their GPU. */
function showMachine(node, migDevices) {
  const machine = $('#machine');
  machine.replaceChildren();
  const title = element('div', `Machine ${node.host}`, 'box-title');
  machine.append(title);
  const numaIds = [...new Set(node.gpus.map((g) => g.numaNode))].sort((a, b) => (a ?? Infinity) - (b ?? Infinity));
  for (const numa of numaIds) {
    const box = element('div', undefined, 'box numa');
    box.dataset.numa = numa === null ? 'unknown' : String(numa);
    box.append(element('div', numa === null ? 'NUMA node unknown' : `NUMANode P#${numa}`, 'box-title'));
    for (const gpu of node.gpus.filter((g) => g.numaNode === numa)) {
      const card = element('div', undefined, `box gpu ${gpu.measured ? 'measured' : 'unmeasured'}`);
      card.dataset.uuid = gpu.uuid;
      const name = element('div', undefined, 'box-title');
      name.append(gpuLink(gpu, `GPU${gpu.index} ${gpu.name}`));
      card.append(name, element('div', `PCI ${gpu.pciBusId ?? '?'} · probe ${gpu.probeStatus}${gpu.simulated ? ' · simulated' : ''}`));
      const migs = migDevices.filter((m) => m.parent.uuid === gpu.uuid);
      if (migs.length > 0) {
        const row = element('div', undefined, 'migs');
        for (const mig of migs) {
          const chip = element('span', undefined, 'box mig');
          const link = element(
            'a',
            `GI ${mig.gpuInstanceId}${mig.computeInstanceId !== null ? `/CI ${mig.computeInstanceId}` : ''} ${mig.profileName ?? ''}`.trim(),
          );
          link.href = `#/gpu/${encodeURIComponent(mig.uuid)}`;
          chip.append(link);
          row.append(chip);
        }
        card.append(row);
      }
      box.append(card);
    }
    machine.append(box);
  }
  const nvlinks = node.links.filter((l) => l.nvlink);
  $('#nvlinks').textContent =
    nvlinks.length === 0
      ? 'No NVLinks between the GPUs.'
      : `NVLink: ${nvlinks.map((l) => `GPU${l.indices[0]} ↔ GPU${l.indices[1]} ${l.topo ?? ''} (${l.nvlink.via === 'switch' ? 'through NVSwitch' : 'direct'})`).join('; ')}`;
}

function showAgreement(node) {
  const verdict = $('#agreement');
  const { agree, models } = node.agreement;
  verdict.className = agree === false ? 'differ' : agree === true ? 'agree' : '';
  verdict.textContent =
    agree === true
      ? 'Same-model GPUs measured alike, within the tolerances.'
      : agree === false
        ? '⚠ Same-model GPUs measured differently: see the differences below.'
        : 'Nothing to compare yet: no model has two measured GPUs.';
  const body = $('#differences tbody');
  body.replaceChildren();
  const byUuid = new Map(node.gpus.map((g) => [g.uuid, g]));
  for (const model of models) {
    for (const difference of model.differences) {
      const tr = element('tr');
      const values = difference.values.map((v) => `GPU${byUuid.get(v.uuid)?.index ?? '?'}: ${v.value}`).join(', ');
      tr.append(
        element('td', model.name),
        element('td', `${difference.element}.${difference.attribute}`),
        element('td', `${(difference.spread * 100).toFixed(1)} % (allowed ${(difference.tolerance * 100).toFixed(0)} %)`),
        element('td', values),
      );
      body.append(tr);
    }
  }
  $('#differences').hidden = body.children.length === 0;
  $('#models').textContent = models
    .map(
      (m) =>
        `${m.name}: ${m.measuredGpus} of ${m.gpuUuids.length} measured, ${m.compared} attributes compared${m.agree === null ? '' : m.agree ? ', alike' : ', different'}`,
    )
    .join(' · ');
}

export function showNode(node, migDevices) {
  $('#node-title').textContent = `Node ${node.host}: ${node.gpus.length} GPU${node.gpus.length === 1 ? '' : 's'}`;
  $('#node-nvml').textContent = node.nvml.available
    ? `NVML read ${node.nvml.readAt?.slice(11, 19) ?? ''}`
    : `No NVML: ${node.nvml.reason ?? 'not available'} — links unknown`;
  showAgreement(node);
  showMatrix(node);
  showMachine(node, migDevices);
}
