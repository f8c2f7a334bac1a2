// A tenant for topod's trust checks (issue 17): keeps the GPU busy the way
// another user's job would, for a fixed time, then exits.
//   tenant --mode stream|l2|compute [--seconds S] [--bytes B] [--delay-seconds D]
// stream: read-modify-write over B bytes (default 2 GiB) on every SM, as a
//         memory-bound training step does; l2: the same over an L2-resident
//         32 MiB; compute: FMA chains that barely touch memory (time slicing).
// It never changes device settings, and it exits on its own after S seconds.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t status_ = (call);                                                    \
    if (status_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "tenant: %s: %s\n", #call, cudaGetErrorString(status_)); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__global__ void streamStep(float* data, size_t count) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
    data[i] = data[i] * 1.0001f + 1.0f;
  }
}

__global__ void computeStep(float* sink, int rounds) {
  float a = threadIdx.x * 0.5f, b = 1.0001f;
  for (int r = 0; r < rounds; ++r) a = fmaf(a, b, 0.5f);
  if (a == -1.0f) sink[0] = a;  // never true: keeps the chain alive
}

int main(int argc, char** argv) {
  std::string mode = "stream";
  double seconds = 30, delaySeconds = 0;
  size_t bytes = size_t(2) << 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mode")) mode = argv[i + 1];
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--bytes")) bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--delay-seconds")) delaySeconds = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "tenant: unknown option %s\n", argv[i]); return 2; }
  }
  if (mode == "l2") bytes = size_t(32) << 20;
  if (mode != "stream" && mode != "l2" && mode != "compute") { std::fprintf(stderr, "tenant: unknown mode %s\n", mode.c_str()); return 2; }
  std::this_thread::sleep_for(std::chrono::duration<double>(delaySeconds));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* data = nullptr;
  CHECK(cudaMalloc(&data, bytes));
  CHECK(cudaMemset(data, 0, bytes));
  std::printf("tenant: pid %d, mode %s, %zu bytes, %d SMs, %.0f s\n", getpid(), mode.c_str(), bytes, sms, seconds);
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long launches = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int k = 0; k < 8; ++k, ++launches) {
      if (mode == "compute") computeStep<<<sms * 4, 256>>>(data, 1 << 14);
      else streamStep<<<sms * 8, 256>>>(data, bytes / sizeof(float));
    }
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaFree(data));
  std::printf("tenant: done, %ld kernels\n", launches);
  return 0;
}
