#include "chains.h"

#include <algorithm>

#include "pchase.h"
#include "profile.h"

namespace topod::probe {

namespace {

// element[i * stride] = successor[i] * stride + base: the chain laid into its array.
__global__ void scatter_chain(uint32_t* chain, const uint32_t* successors, uint32_t nodes, uint32_t strideElems, uint32_t base) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nodes; i += gridDim.x * blockDim.x) {
    chain[static_cast<uint64_t>(i) * strideElems] = successors[i] * strideElems + base;
  }
}

}  // namespace

ChainSet::~ChainSet() {
  const profile::Span span("free");
  for (hipTextureObject_t t : textures_) (void)hipDestroyTextureObject(t);
  buffers_.clear();
}

ChaserView ChainSet::add(const ChainSpec& spec) {
  const profile::Span span("chains");
  const uint64_t elems = spec.arrayBytes / 4;
  const uint32_t strideElems = static_cast<uint32_t>(spec.strideBytes / 4);
  const uint32_t nodes = static_cast<uint32_t>(spec.arrayBytes / spec.strideBytes);
  uint32_t base = 0;
  if (spec.space == Space::Constant) {
    if (constantUsedElems_ + elems > kConstantChainElems) {
      throw ProbeFailure(ErrorCode::BadRequest,
                         "constant-space chains must fit together in " + std::to_string(kConstantChainElems * 4) + " bytes");
    }
    base = constantUsedElems_;
  }

  DeviceBuffer<uint32_t> chain(elems);
  chain.zero();
  {
    const std::vector<uint32_t> next = chain_successors(nodes, spec.pattern, spec.seed);
    DeviceBuffer<uint32_t> successors(nodes);
    successors.upload(next.data(), nodes);
    const uint32_t threads = 256;
    const uint32_t blocks = std::min<uint32_t>((nodes + threads - 1) / threads, 4096);
    scatter_chain<<<blocks, threads>>>(chain.get(), successors.get(), nodes, strideElems, base);
    check_launch("scatter_chain");
  }

  ChaserView view{};
  view.space = spec.space;
  view.start = base;
  view.nodes = nodes;
  view.strideElems = strideElems;
  view.elems = static_cast<uint32_t>(elems);
  view.global = chain.get();
  view.tex = 0;
  if (spec.space == Space::Constant) {
    upload_constant_chain(chain.get(), static_cast<uint32_t>(elems), base);
    constantUsedElems_ += static_cast<uint32_t>(elems);
  }
  if (spec.space == Space::Texture) {
    hipResourceDesc res{};
    res.resType = hipResourceTypeLinear;
    res.res.linear.devPtr = chain.get();
    res.res.linear.desc = hipCreateChannelDesc<uint32_t>();
    res.res.linear.sizeInBytes = elems * 4;
    hipTextureDesc tex{};
    tex.readMode = hipReadModeElementType;
    hipTextureObject_t object = 0;
    check(hipCreateTextureObject(&object, &res, &tex, nullptr), "hipCreateTextureObject");
    textures_.push_back(object);
    view.tex = object;
  }
  buffers_.push_back(std::move(chain));
  return view;
}

}  // namespace topod::probe
