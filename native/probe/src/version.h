#pragma once

// Bump when a measurement changes meaning: it is part of the daemon's cache key.
#define TOPOD_PROBE_VERSION "0.1.0"
#define TOPOD_PROTOCOL_VERSION 1
