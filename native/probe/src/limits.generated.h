// Generated from server/protocol/limits.ts by `npm run generate:limits`: do not edit.
// What each limit means, and the rules that use it: server/protocol/limits.ts and
// server/protocol/validate.ts. The checks themselves are in limits.h.
#pragma once

#include <cstdint>

namespace topod::probe::limits {

constexpr uint64_t kConstantTableBytes = 65536;
constexpr uint64_t kDefaultFarnearPasses = 2;
constexpr uint64_t kDefaultFarnearStrideBytes = 256;
constexpr uint64_t kDefaultPartitionArrayBytes = 524288;
constexpr uint64_t kDefaultPartitionStrideBytes = 256;
constexpr uint64_t kDefaultTrafficRepetitions = 3;
constexpr uint64_t kDsmemFixedSharedBytes = 4104;
constexpr uint64_t kFarnearLineBytes = 128;
constexpr uint64_t kMaxArrayBytes = uint64_t{1} << 52;
constexpr uint64_t kMaxBandwidthBlocks = uint64_t{1} << 20;
constexpr uint64_t kMaxBandwidthLaunchBytes = uint64_t{1} << 40;
constexpr uint64_t kMaxBandwidthPasses = 4096;
constexpr uint64_t kMaxCalibrateSamples = 1000000;
constexpr uint64_t kMaxChainBytes = 17179869180;
constexpr uint64_t kMaxClusterSize = 16;
constexpr uint64_t kMaxFarnearPasses = 16;
constexpr uint64_t kMaxFarnearSms = 2;
constexpr uint64_t kMaxLaunchBlocks = uint64_t{1} << 20;
constexpr uint64_t kMaxLaunchRepetitions = 100;
constexpr uint64_t kMaxPartitionStrideBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxRepetitions = 1000;
constexpr uint64_t kMaxSamples = 8192;
constexpr uint64_t kMaxSeed = 4294967295;
constexpr uint64_t kMaxSmidClusters = 65536;
constexpr uint64_t kMaxSmidRepetitions = 64;
constexpr uint64_t kMaxSpinNs = 1000000;
constexpr uint64_t kMaxTextureElements = uint64_t{1} << 27;
constexpr uint64_t kMaxTrafficCases = 256;
constexpr uint64_t kMaxTrafficMetrics = 16;
constexpr uint64_t kMaxTrafficMetricChars = 128;
constexpr uint64_t kMaxTransferBytes = uint64_t{1} << 20;
constexpr uint64_t kPersistLineBytes = 128;
constexpr uint64_t kRuntimeMarginBytes = uint64_t{1} << 26;
constexpr uint64_t kSampleSharedBytes = 4;
constexpr uint64_t kSinkSharedBytes = 4;
constexpr uint64_t kTrafficFlushL2Multiple = 4;

}  // namespace topod::probe::limits
