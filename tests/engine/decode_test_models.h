#pragma once
// Real models converted to .p64 once per test process (a static temp folder), for the
// Session / generate / chat tests.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/runtime/session.h"
#include "support/exit_status.h"
#include "support/shared_files.h"

namespace p64::test {

inline const TempDir& decode_models_dir() {
  static TempDir dir;
  return dir;
}

// stories260K.bin + tok512.bin (llama2.c) converted to P64.
inline const std::string& stories260k_p64() {
  static const std::string path = [] {
    const std::string out = (decode_models_dir() / "stories260K.p64").string();
    ConvertOptions o;
    o.tokenizer_path = shared_model("tok512.bin").string();
    convert_to_p64(shared_model("stories260K.bin").string(), out, o);
    return out;
  }();
  return path;
}

// llama-2-tiny-random.gguf (random weights, the real Llama 2 vocabulary) converted to P64.
inline const std::string& tiny_random_p64() {
  static const std::string path = [] {
    const std::string out = (decode_models_dir() / "llama-2-tiny-random.p64").string();
    convert_to_p64(shared_model("llama-2-tiny-random.gguf").string(), out, {});
    return out;
  }();
  return path;
}

inline std::unique_ptr<Session> cpu_session(const std::string& p64_path, uint32_t threads, uint32_t max_context = 512) {
  auto model = open_p64(p64_path);
  auto backend = make_cpu_backend();
  BackendOptions bo;
  bo.threads = threads;
  bo.max_context = max_context;
  backend->load(model, bo);
  return std::make_unique<Session>(model, std::move(backend));
}

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The reference text of llama2.c's run.c (it ends the output with a newline of its own).
inline std::string stories260k_reference_text() {
  std::string t = read_text_file(shared_model("expected/stories260K_greedy_noprompt_n256.txt").string());
  if (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

struct CliRun {
  int status = -1;
  std::string out, err;
};

// Runs `program` with `args`, feeding `stdin_text`; stdout and stderr kept apart. With
// `timeout_s`, coreutils' timeout ends a run that hangs: status 124 then. With `address_space_kb`,
// the shell's `ulimit -v` caps the run's memory: an allocation beyond it fails in the run.
inline CliRun run_program(const std::string& program, const std::string& args, const std::string& stdin_text = "",
                          int timeout_s = 0, uint64_t address_space_kb = 0) {
  static int counter = 0;
  const std::string base = (decode_models_dir() / ("cli" + std::to_string(counter++))).string();
  {
    std::ofstream in(base + ".in", std::ios::binary);
    in << stdin_text;
  }
#ifdef _WIN32
  // cmd.exe has neither: a hang is ended by CTest's timeout, and memory is not capped (the
  // tests about the cap itself are not run there: tests/windows/not_on_wine.txt).
  const std::string memory, limit;
  (void)timeout_s;
  (void)address_space_kb;
#else
  const std::string memory = address_space_kb > 0 ? "ulimit -v " + std::to_string(address_space_kb) + "; " : "";
  const std::string limit = timeout_s > 0 ? "timeout -k 2 " + std::to_string(timeout_s) + " " : "";
#endif
  const std::string cmd = memory + limit + program + " " + args + " < " + base + ".in 2> " + base + ".err";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = exit_code(st);
  r.err = read_text_file(base + ".err");
  return r;
}

// run_program of the p64 binary this build made.
inline CliRun run_p64(const std::string& args, const std::string& stdin_text = "", int timeout_s = 0,
                      uint64_t address_space_kb = 0) {
  return run_program(P64_CLI_PATH, args, stdin_text, timeout_s, address_space_kb);
}

}  // namespace p64::test
