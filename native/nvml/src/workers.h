// The JS entry points: each slow NVML operation runs in a Napi::AsyncWorker
// that fills plain C++ state in Execute() and settles a promise in OnOK().
#pragma once

#include <napi.h>

namespace topod::nvml {

/**
 * read({ libraryPath?, staticMaxAgeMs? }) → Promise<RawSnapshot>; rejects with .code/.stage on load/init
 * failure. staticMaxAgeMs: how old cached static fields may be (default 5 min; 0 = full read).
 */
Napi::Value Read(const Napi::CallbackInfo& info);
/**
 * readActivity({ uuid } | { index }, plus libraryPath?) → Promise<RawActivity>: one GPU's
 * processes (and its MIG devices'), utilization, memory, temperature, power, SM clock,
 * clocks event reasons, persistence and ECC mode. Rejects like read(), and with
 * code TOPOD_NVML_GPU_NOT_FOUND when no such GPU is there.
 */
Napi::Value ReadActivity(const Napi::CallbackInfo& info);
/** open({ libraryPath? }) → Promise<void>: keeps NVML initialised until close(). */
Napi::Value Open(const Napi::CallbackInfo& info);
/** close() → Promise<void>: drops the reference open() took. */
Napi::Value Close(const Napi::CallbackInfo& info);
/** status() → { loaded, references, reinitCount }; never blocks (atomics only). */
Napi::Value Status(const Napi::CallbackInfo& info);

}  // namespace topod::nvml
