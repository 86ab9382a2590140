#include "engine/runtime/gemv_bench.h"

#include <map>

namespace p64 {
namespace {
std::map<std::string, GemvBench, std::less<>>& benches() {
  static std::map<std::string, GemvBench, std::less<>> m;
  return m;
}
std::map<std::string, GemvChainBench, std::less<>>& chain_benches() {
  static std::map<std::string, GemvChainBench, std::less<>> m;
  return m;
}
}  // namespace

void register_gemv_bench(std::string backend, GemvBench bench) { benches()[std::move(backend)] = std::move(bench); }

const GemvBench* find_gemv_bench(std::string_view backend) {
  auto it = benches().find(backend);
  return it == benches().end() ? nullptr : &it->second;
}

void register_gemv_chain_bench(std::string backend, GemvChainBench bench) {
  chain_benches()[std::move(backend)] = std::move(bench);
}

const GemvChainBench* find_gemv_chain_bench(std::string_view backend) {
  auto it = chain_benches().find(backend);
  return it == chain_benches().end() ? nullptr : &it->second;
}

}  // namespace p64
