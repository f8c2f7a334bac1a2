/**
 * hwloc's XML of the host with topod's GPU facts added: each topod GPU is
 * matched to hwloc's PCI device by its PCI bus id, and the info attributes of
 * hwloc-gpu-info.ts go on that device's GPU OS device (hwloc's NVML one when
 * there is one: "nvml0", which carries NVIDIAUUID). What hwloc did not list
 * is added and says so (TopodNote):
 * - a PCI device without a GPU OS device (hwloc built without its NVML
 *   plugin) gets an OS device "topod<index>";
 * - a GPU hwloc did not see at all (no PCI discovery, a container, a
 *   simulated GPU) gets a PCI device with its bus id and a GPU OS device,
 *   placed beside the NUMA node NVML names, else under the machine.
 * Everything else of hwloc's document is kept as hwloc wrote it. Pure.
 */
import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { hwlocGpuInfo, type HwlocGpu, type HwlocInfo } from './hwloc-gpu-info.js';

export const HWLOC_XML_MEDIA_TYPE = 'application/xml';

/** hwloc's object types for OS devices (hwloc_obj_osdev_type_e). */
const OSDEV_GPU = '1';
const OSDEV_COPROC = '5';
/** Which of a PCI device's GPU OS devices carries topod's attributes, best first (by name, as hwloc's backends name them). */
const OSDEV_PREFERENCE = ['nvml', 'rsmi', 'cuda', 'opencl', 'card', 'renderD'];
const PCI_VENDOR_IDS: Record<HwlocGpu['vendor'], string> = { nvidia: '10de', amd: '1002' };
/** PCI class 0302: 3D controller, what data-centre GPUs report (and what hwloc's I/O filter keeps by default). */
const PCI_CLASS_3D = '0302';

export class HwlocXmlError extends Error {
  override name = 'HwlocXmlError';
}

/** "00000000:3B:00.0" (NVML) and "0000:3b:00.0" (hwloc) → "0000:3b:00.0"; null when it is no PCI bus id. */
export function normalisePciBusId(busId: string): string | null {
  const match = /^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$/i.exec(busId.trim());
  if (!match) return null;
  const hex = (text: string | undefined, width: number) =>
    Number.parseInt(text ?? '0', 16)
      .toString(16)
      .padStart(width, '0');
  return `${hex(match[1], 4)}:${hex(match[2], 2)}:${hex(match[3], 2)}.${match[4]}`;
}

const objectChildren = (parent: Element): Element[] =>
  Array.from(parent.childNodes).filter((node): node is Element => node.nodeType === 1 && (node as Element).tagName === 'object');

function allObjects(document: Document): Element[] {
  return Array.from(document.getElementsByTagName('object'));
}

/** The indentation of `element`'s own line, as hwloc wrote it (or as topod inserted it). */
function ownIndent(element: Element): string {
  const before = element.previousSibling;
  return before && before.nodeType === 3 ? (/[^\S\n]*$/.exec(before.nodeValue ?? '')?.[0] ?? '') : '';
}

/** Inserts `child` in hwloc's order and indentation: an info before the first child object, an object last. */
function insertChild(document: Document, parent: Element, child: Element): void {
  const indent = ownIndent(parent);
  const line = () => document.createTextNode(`\n${indent}  `);
  const firstObject = child.tagName === 'info' ? objectChildren(parent)[0] : undefined;
  const last = parent.lastChild;
  if (firstObject) {
    parent.insertBefore(child, firstObject);
    parent.insertBefore(line(), firstObject);
  } else if (last && last.nodeType === 3) {
    parent.insertBefore(line(), last);
    parent.insertBefore(child, last);
  } else {
    parent.appendChild(line());
    parent.appendChild(child);
    parent.appendChild(document.createTextNode(`\n${indent}`));
  }
}

function addInfo(document: Document, element: Element, [name, value]: HwlocInfo): void {
  const info = document.createElement('info');
  info.setAttribute('name', name);
  info.setAttribute('value', value);
  insertChild(document, element, info);
}

function gpuOsDevice(pciDevice: Element): Element | null {
  const candidates = objectChildren(pciDevice).filter(
    (o) => o.getAttribute('type') === 'OSDev' && [OSDEV_GPU, OSDEV_COPROC].includes(o.getAttribute('osdev_type') ?? ''),
  );
  const rank = (o: Element) => {
    const at = OSDEV_PREFERENCE.findIndex((prefix) => (o.getAttribute('name') ?? '').startsWith(prefix));
    return at < 0 ? OSDEV_PREFERENCE.length : at;
  };
  return candidates.sort((a, b) => rank(a) - rank(b))[0] ?? null;
}

/** Where a GPU hwloc did not list is attached: beside its NUMA node (the NUMA node's parent holds its I/O), else the machine. */
function attachmentFor(root: Element, objects: Element[], numaNode: number | null): Element {
  if (numaNode !== null) {
    const numa = objects.find((o) => o.getAttribute('type') === 'NUMANode' && o.getAttribute('os_index') === String(numaNode));
    const parent = numa?.parentNode;
    if (parent && parent.nodeType === 1 && (parent as Element).tagName === 'object') return parent as Element;
  }
  return root;
}

/** The host's hwloc XML (lstopo --of xml) with every topod GPU's facts on its object. */
export function hwlocXmlWithGpus(hostXml: string, gpus: readonly HwlocGpu[]): string {
  const notHwloc = (why: string) => new HwlocXmlError(`not hwloc XML (a <topology> with a root <object>): ${why}`);
  const errors: string[] = [];
  let document: Document;
  try {
    document = new DOMParser({ onError: (level, message) => level !== 'warning' && errors.push(message) }).parseFromString(
      hostXml,
      'text/xml',
    );
  } catch (error) {
    throw notHwloc(error instanceof Error ? error.message : String(error));
  }
  const topology = document.documentElement;
  const root = topology && topology.tagName === 'topology' ? objectChildren(topology)[0] : undefined;
  if (errors.length > 0 || !root) throw notHwloc(errors[0] ?? 'no root object');

  const objects = allObjects(document);
  let nextGpIndex = 1 + Math.max(0, ...objects.map((o) => Number(o.getAttribute('gp_index') ?? 0)).filter(Number.isFinite));
  const newObject = (attributes: Record<string, string>): Element => {
    const element = document.createElement('object');
    for (const [name, value] of Object.entries({ ...attributes, gp_index: String(nextGpIndex++) })) element.setAttribute(name, value);
    return element;
  };
  const pciDevices = new Map<string, Element>();
  for (const o of objects) {
    const busId = o.getAttribute('type') === 'PCIDev' ? normalisePciBusId(o.getAttribute('pci_busid') ?? '') : null;
    if (busId) pciDevices.set(busId, o);
  }

  for (const gpu of [...gpus].sort((a, b) => a.index - b.index)) {
    const busId = gpu.pciBusId === null ? null : normalisePciBusId(gpu.pciBusId);
    let pciDevice = busId === null ? undefined : pciDevices.get(busId);
    const notes: string[] = [];
    if (!pciDevice) {
      const attributes: Record<string, string> = {
        type: 'PCIDev',
        pci_type: `${PCI_CLASS_3D} [${PCI_VENDOR_IDS[gpu.vendor]}:0000] [0000:0000] 00`,
      };
      if (busId) attributes['pci_busid'] = busId;
      pciDevice = newObject(attributes);
      insertChild(document, attachmentFor(root, objects, gpu.numaNode), pciDevice);
      addInfo(document, pciDevice, [
        'TopodNote',
        `hwloc did not list this GPU${busId ? '' : ' (topod knows no PCI bus id for it)'}: topod added this PCI device from its own GPU list; its PCI device id is not known (0000)`,
      ]);
      notes.push('hwloc did not list this GPU: topod added this PCI device and OS device');
    }
    let osDevice = gpuOsDevice(pciDevice);
    if (!osDevice) {
      osDevice = newObject({ type: 'OSDev', name: `topod${gpu.index}`, subtype: 'topod', osdev_type: OSDEV_GPU });
      insertChild(document, pciDevice, osDevice);
      addInfo(document, osDevice, ['Backend', 'topod']);
      addInfo(document, osDevice, ['GPUModel', gpu.name]);
      if (notes.length === 0) notes.push('hwloc listed the PCI device but no GPU OS device for it: topod added this OS device');
    }
    for (const note of notes) addInfo(document, osDevice, ['TopodNote', note]);
    for (const info of hwlocGpuInfo(gpu)) addInfo(document, osDevice, info);
  }
  return new XMLSerializer().serializeToString(document);
}
