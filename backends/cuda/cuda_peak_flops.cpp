#include "backends/cuda/cuda_peak_flops.h"

#include <cstdio>

namespace p64::cuda {
namespace {

struct ArchRate {
  int major, minor;
  double per_sm_clock;  // FLOP per SM and clock
};

constexpr ArchRate kTensorFp16[] = {{7, 0, 1024}, {8, 0, 2048}, {9, 0, 4096}};
constexpr ArchRate kFp32Fma[] = {{6, 0, 128}, {6, 1, 256}, {7, 0, 128}, {7, 5, 128}, {8, 0, 128}, {8, 6, 256},
                                 {8, 7, 256}, {8, 9, 256}, {9, 0, 256}};  // 2 FLOP per lane (FMA)

const ArchRate* find(const ArchRate* begin, const ArchRate* end, int major, int minor) {
  for (const ArchRate* r = begin; r != end; ++r)
    if (r->major == major && r->minor == minor) return r;
  return nullptr;
}

std::string counted(const char* unit, double per_sm_clock, int sms, double ghz, int major, int minor) {
  char text[160];
  std::snprintf(text, sizeof text, "%s: %.0f FLOP per SM and clock x %d SMs x %.3f GHz (sm_%d%d)", unit, per_sm_clock,
                sms, ghz, major, minor);
  return text;
}

}  // namespace

PeakFlops peak_flops(int major, int minor, int multiprocessors, double sm_clock_ghz) {
  if (multiprocessors <= 0 || sm_clock_ghz <= 0) return {0, "the device reports no SM count or clock"};
  const double per_second = multiprocessors * sm_clock_ghz * 1e9;
  if (const ArchRate* r = find(std::begin(kTensorFp16), std::end(kTensorFp16), major, minor))
    return {r->per_sm_clock * per_second,
            counted("fp16 tensor cores, dense, f32 accumulate", r->per_sm_clock, multiprocessors, sm_clock_ghz, major, minor)};
  if (const ArchRate* r = find(std::begin(kFp32Fma), std::end(kFp32Fma), major, minor))
    return {r->per_sm_clock * per_second,
            counted("fp32 FMA lanes (no tensor-core rate known for this architecture)", r->per_sm_clock,
                    multiprocessors, sm_clock_ghz, major, minor)};
  return {0, "no per-SM rate known for sm_" + std::to_string(major) + std::to_string(minor)};
}

}  // namespace p64::cuda
