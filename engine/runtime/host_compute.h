#pragma once
// Measured compute ceilings of the host's SIMD units: the roof a CPU roofline draws. Each is a
// loop of independent multiply-accumulate chains in registers (no memory traffic) on every
// thread the backend uses, so it is what the cores can do, not what a datasheet says.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace p64 {

struct MeasuredCompute {
  double fp32_flops = 0;  // fp32 FMA throughput, 2 FLOP per lane per FMA; 0 = not measured
  double int8_ops = 0;    // int8 dot-product throughput as the int8 kernels issue it, 2 ops per multiply-add
  std::string isa;        // the instruction set both loops ran: avx512 | avx2
  uint32_t threads = 0;
  uint32_t repeats = 0;   // each figure is the median of this many timed passes
};

// `isa` is the CPU kernels' (avx512 | avx2); anything else measures nothing and says so in isa.
MeasuredCompute measure_host_compute(const std::string& isa, uint32_t threads, uint32_t repeats = 5);

namespace host_compute {
// One call runs `rounds` rounds; each returns a value that depends on every lane so that the
// work cannot be dropped. Per round: the constants below.
float fp32_rounds_avx512(uint64_t rounds);
int32_t int8_rounds_avx512(uint64_t rounds);
float fp32_rounds_avx2(uint64_t rounds);
int32_t int8_rounds_avx2(uint64_t rounds);
inline constexpr double kFp32FlopPerRoundAvx512 = 12 * 16 * 2;  // 12 chains × 16 lanes × FMA
inline constexpr double kInt8OpsPerRoundAvx512 = 12 * 64 * 2;   // 12 chains × vpdpbusd's 64 multiply-adds
inline constexpr double kFp32FlopPerRoundAvx2 = 12 * 8 * 2;
inline constexpr double kInt8OpsPerRoundAvx2 = 6 * 32 * 2;      // 6 chains × maddubs' 32 multiply-adds
}  // namespace host_compute

void to_json(nlohmann::json& j, const MeasuredCompute& m);
void from_json(const nlohmann::json& j, MeasuredCompute& m);

}  // namespace p64
