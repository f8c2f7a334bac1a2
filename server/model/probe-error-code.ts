/** Stable error codes a measurement backend answers with (the probe protocol's, and its channels'). */
export type ProbeErrorCode =
  | 'bad_request' // malformed JSON, unknown field values, out-of-range numbers
  | 'unknown_op'
  | 'out_of_memory' // array larger than free device memory
  | 'kernel_fault' // a launch or a kernel failed; the probe exits after answering
  | 'timeout' // the operation overran its deadline
  | 'unsupported' // valid request this device cannot do (e.g. texture on a runtime without it)
  | 'internal'
  // Transport-level codes the daemon's channels raise (never sent by a probe):
  | 'cancelled' // the caller aborted the request
  | 'closed' // the channel was closed while the request was pending
  | 'crashed' // the probe process died mid-request
  | 'spawn_failed';
