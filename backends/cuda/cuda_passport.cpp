#include "backends/cuda/cuda_passport.h"

#include <algorithm>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_peak_flops.h"
#include "backends/cuda/kernels.h"

namespace p64::cuda {
namespace {

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

Passport collect_cuda_passport(int dev, cudaStream_t stream) {
  Passport p;
  p.host = collect_host_facts();
  p.build = collect_build_facts();
  DeviceFacts& d = p.device;
  cudaDeviceProp prop{};
  P64_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  d.backend = "cuda";
  d.name = prop.name;
  d.vendor = "NVIDIA";
  int drv = 0, rt = 0;
  P64_CUDA_CHECK(cudaDriverGetVersion(&drv));
  P64_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  d.driver_version = "CUDA driver API " + version_string(drv);
  d.api_version = "CUDA runtime " + version_string(rt);
  d.compute_capability = std::to_string(attr(cudaDevAttrComputeCapabilityMajor, dev)) + "." +
                         std::to_string(attr(cudaDevAttrComputeCapabilityMinor, dev));
  d.device_type = "gpu";
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, dev) == cudaSuccess) d.pci_bus_id = bus_id;
  else cudaGetLastError();  // no bus id: the lab then reads NVML only where one GPU is present
  d.multiprocessors = uint32_t(attr(cudaDevAttrMultiProcessorCount, dev));
  size_t free_b = 0, total_b = 0;
  P64_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  d.memory_bytes = total_b;
  d.l2_bytes = uint64_t(attr(cudaDevAttrL2CacheSize, dev));
  d.subgroup_size = uint32_t(attr(cudaDevAttrWarpSize, dev));
  const double mem_khz = attr(cudaDevAttrMemoryClockRate, dev), bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth, dev);
  d.peak_bandwidth_gbs = mem_khz * 1e3 * 2.0 * bus_bits / 8.0 / 1e9;  // DDR: two transfers per clock
  const PeakFlops peak = peak_flops(attr(cudaDevAttrComputeCapabilityMajor, dev),
                                    attr(cudaDevAttrComputeCapabilityMinor, dev), int(d.multiprocessors),
                                    attr(cudaDevAttrClockRate, dev) / 1e6);
  d.peak_flops = peak.flops;
  d.peak_flops_source = peak.what;

  // Bandwidth: buffer >= 8x L2 and >= 1 GiB, but never more than a quarter of what is free.
  size_t bytes = std::max<size_t>(size_t(1) << 30, 8 * size_t(d.l2_bytes));
  bytes = std::min(bytes, free_b / 4) / 256 * 256;
  if (bytes < (size_t(64) << 20)) return p;
  void* buf = device_alloc(2 * bytes, "passport bandwidth buffer");
  unsigned* sink = static_cast<unsigned*>(device_alloc(sizeof(unsigned), "passport sink"));
  try {
    P64_CUDA_CHECK(cudaMemsetAsync(buf, 0x5a, 2 * bytes, stream));
    const int repeats = 9;
    std::vector<double> rd, cp;
    measure_read_kernel_ms(buf, bytes, sink, stream);  // warm-up
    for (int i = 0; i < repeats; ++i) rd.push_back(double(bytes) / (measure_read_kernel_ms(buf, bytes, sink, stream) * 1e-3) / 1e9);
    cudaEvent_t a, b;
    P64_CUDA_CHECK(cudaEventCreate(&a));
    P64_CUDA_CHECK(cudaEventCreate(&b));
    P64_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(buf) + bytes, buf, bytes, cudaMemcpyDeviceToDevice, stream));
    for (int i = 0; i < repeats; ++i) {
      P64_CUDA_CHECK(cudaEventRecord(a, stream));
      P64_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(buf) + bytes, buf, bytes, cudaMemcpyDeviceToDevice, stream));
      P64_CUDA_CHECK(cudaEventRecord(b, stream));
      P64_CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      P64_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      cp.push_back(2.0 * double(bytes) / (double(ms) * 1e-3) / 1e9);  // read + write
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    p.measured.read_gbs = median(rd);
    p.measured.copy_gbs = median(cp);
    p.measured.buffer_bytes = bytes;
    p.measured.repeats = repeats;
  } catch (...) {
    device_free(buf);
    device_free(sink);
    throw;
  }
  device_free(buf);
  device_free(sink);
  return p;
}

}  // namespace p64::cuda
