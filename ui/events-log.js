// The event log: the events /v1/events sends, newest first. A page opened now asks for the events the stream
// keeps (?lastEventId=0), so the log starts with what happened recently. One job's progress events share a
// line, updated in place, so a probe's hundreds of steps do not push everything else out.
const MAX_LINES = 200;

function describe(event) {
  const job = event.job ? ` ${Math.round(event.job.progress * 100)}% ${event.job.phase ?? ''}` : '';
  const gpu = event.gpuUuid ? ` ${event.gpuUuid.slice(0, 12)}…` : '';
  return `${event.at.slice(11, 19)} ${event.type}${job}${gpu}`;
}

export function logEvent(list, event) {
  const top = list.firstElementChild;
  if (event.type === 'probe.progress' && top?.dataset.type === 'probe.progress' && top.dataset.job === event.job?.id) {
    top.textContent = describe(event);
    return;
  }
  const item = document.createElement('li');
  item.dataset.type = event.type;
  if (event.job) item.dataset.job = event.job.id;
  item.textContent = describe(event);
  list.prepend(item);
  while (list.children.length > MAX_LINES) list.lastElementChild.remove();
}
