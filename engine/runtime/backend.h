#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/passport.h"
#include "engine/runtime/switch_table.h"
#include "engine/runtime/timeline.h"

namespace p64 {

// Options a backend is loaded with. `switches` holds the named optimisation switches
// (`opt.NAME=value` on the CLI); each backend reads them through SwitchValues against the table
// switches() returns.
struct BackendOptions {
  std::map<std::string, std::string> switches;
  uint32_t max_context = 4096;  // KV cache positions; capped by the model's n_ctx_train
  uint32_t threads = 0;         // CPU threads; 0 = all logical cores
  std::string device;           // device name substring or index; empty = the first
};

// A backend owns the whole forward pass of a token or of a prefill batch (not single ops
// dispatched from a host graph), so it can fuse, keep the residual stream on the device and
// copy back only what is asked for. Positions are absolute; KV for positions < pos is
// whatever earlier calls wrote (writing position p again overwrites it).
class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;                  // "cpu", "cuda", "vulkan"
  virtual Passport passport() = 0;                       // device facts + measured bandwidth
  virtual std::vector<SwitchInfo> switches() const = 0;  // the backend's static switch table
  // Whether its forward pass implements an architecture of engine/model/architecture.h (the
  // Llama block unless it says more); check_backend_runs() asks before a model is loaded.
  virtual bool runs_architecture(std::string_view arch) const { return arch == "llama"; }
  // Whether its attention implements local layers over a sliding window (HParams::sliding_window).
  virtual bool runs_sliding_window() const { return false; }

  // Upload weights once (one residency) and allocate the KV cache. Throws p64::Error on an
  // unsupported dtype or switch, p64::DeviceError when the device refuses (memory, driver).
  virtual void load(std::shared_ptr<const Model> model, const BackendOptions& options) = 0;
  virtual uint32_t max_context() const = 0;              // KV positions allocated by load()

  // Runs tokens at positions [pos, pos + n) as one batch, writes their KV, and keeps the last
  // token's logits. Returns the argmax of those logits.
  virtual int32_t prefill(std::span<const int32_t> tokens, int32_t pos) = 0;
  // One decode step; only the sampled id crosses to the host.
  virtual int32_t decode_argmax(int32_t token, int32_t pos) = 0;
  // One decode step returning the full logits (valid until the next call).
  virtual std::span<const float> decode_logits(int32_t token, int32_t pos) = 0;
  // Full logits of the most recent prefill or decode step (valid until the next call).
  virtual std::span<const float> logits() = 0;

  // Per-op spans from the device's own clock; nullptr turns timing off (no cost).
  virtual void set_timeline(TimelineSink* sink) = 0;
  virtual uint64_t device_memory_peak() const = 0;       // bytes, weights + KV + scratch
  // Bytes of K and V that one cached position holds across all layers (what attention reads
  // per position per token; the lab's effective-GB/s figure uses it). 0 = not stated, and
  // the lab then assumes fp16 K and V.
  virtual uint64_t kv_bytes_per_position() const { return 0; }
};

// "" when `backend` runs the model's architecture (and its sliding window, if it has one), else
// why not, naming the model's file, its architecture, the backend and which backends do.
std::string backend_run_problem(const Backend& backend, const Model& model);
// Throws p64::Error with backend_run_problem's reason, before anything is uploaded.
void check_backend_runs(const Backend& backend, const Model& model);

}  // namespace p64
