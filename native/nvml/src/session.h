// One read against the process-wide NVML session: acquire it (load and init
// on first use), run the read, tear NVML down and start over when the driver
// changed under it, release it. Shared by the snapshot and activity reads.
#pragma once

#include <mutex>
#include <string>

#include "field-log.h"
#include "nvml-library.h"
#include "nvml-return.h"

namespace topod::nvml {

/** Thrown out of a read that cannot go on for a reason no reload fixes. */
struct ReadFailed {
  Outcome outcome;
};

// A read that meets LIB_RM_VERSION_MISMATCH (driver upgraded) or
// UNINITIALIZED (driver reloaded) tears NVML down, loads it again and starts
// over; twice is enough for a driver that has finished changing.
constexpr int kReadAttempts = 3;

/**
 * Blocking (worker thread). read(const Library&) may throw SessionLost or
 * ReadFailed; finish(const Library&) runs afterwards, whatever happened,
 * still under the library's mutex (path and counters are stable there).
 */
template <typename Read, typename Finish>
Outcome readInSession(const std::string& libraryPath, Read read, Finish finish) {
  Library& library = Library::instance();
  std::lock_guard<std::mutex> lock(library.mutex());
  Outcome outcome = library.acquire(libraryPath);
  if (!outcome.ok) {
    finish(static_cast<const Library&>(library));
    return outcome;
  }
  for (int attempt = 1;; ++attempt) {
    try {
      read(static_cast<const Library&>(library));
      break;
    } catch (const SessionLost& lost) {
      if (attempt >= kReadAttempts) {
        outcome = Outcome::failure(returnFullName(lost.code), "read", "NVML session lost and not recovered: " + returnFullName(lost.code));
        break;
      }
      Outcome reloaded = library.reload();
      if (!reloaded.ok) {
        outcome = reloaded;
        break;
      }
    } catch (const ReadFailed& failed) {
      outcome = failed.outcome;
      break;
    }
  }
  finish(static_cast<const Library&>(library));
  library.release();
  return outcome;
}

}  // namespace topod::nvml
