#include "engine/runtime/gemv_bench.h"

#include <map>

namespace p64 {
namespace {
std::map<std::string, GemvBench, std::less<>>& benches() {
  static std::map<std::string, GemvBench, std::less<>> m;
  return m;
}
}  // namespace

void register_gemv_bench(std::string backend, GemvBench bench) { benches()[std::move(backend)] = std::move(bench); }

const GemvBench* find_gemv_bench(std::string_view backend) {
  auto it = benches().find(backend);
  return it == benches().end() ? nullptr : &it->second;
}

}  // namespace p64
