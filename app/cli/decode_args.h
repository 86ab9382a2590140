#pragma once
// The options `p64 generate` and `p64 chat` share: the model, the backend, and the sampler.
#include <memory>
#include <string>
#include <vector>

#include "engine/model/sampler.h"
#include "engine/runtime/session.h"

namespace CLI {
class App;
}

namespace p64::cli {

struct DecodeArgs {
  std::string model;
  std::string tokenizer;  // llama2.c checkpoints only
  std::string backend = "auto";
  uint32_t threads = 0;
  uint32_t max_context = 4096;
  std::vector<std::string> opts;
  int tokens = 256;
  SamplerSettings sampler;
};

void add_decode_options(CLI::App& cmd, DecodeArgs& a);

// What every command that reads a model says it takes; they all open it with open_lab_model.
inline constexpr const char* kModelHelp =
    "Model: .p64, .gguf, llama2.c .bin (with --tokenizer) or a Hugging Face folder";
// The lab commands' positional model and its --tokenizer (decode-proxy, timeline, ab, compare).
void add_model_argument(CLI::App& cmd, std::string& model, std::string& tokenizer);

struct OpenedSession {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Session> session;
};
// Opens the model (converting a non-P64 file on the fly) and loads it into the backend.
OpenedSession open_session(const DecodeArgs& a);

}  // namespace p64::cli
