// llama-bench import (json, jsonl, csv, sql chosen by content).
#include "engine/common/error.h"
#include "engine/lab/peer_import.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = p64::fuzz::write_scratch("bench.out", data, size);
  try {
    (void)p64::read_llama_bench(path);
  } catch (const p64::Error&) {
  }
  return 0;
}
