#include "backends/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_passport.h"
#include "backends/cuda/cuda_switches.h"
#include "backends/cuda/decode_step.h"
#include "backends/cuda/gemv_bench.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/op_timer.h"
#include "backends/cuda/prefill_runner.h"
#include "backends/cuda/resident_model.h"
#include "backends/cuda/stream_bench.h"
#include "engine/common/error.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace {

using namespace p64::cuda;

// The Backend face: the device and its stream, the resident model (resident_model.h), the
// decode step (decode_step.h) replayed as a CUDA graph, the batched prefill (prefill_runner.h),
// and the op timer behind `p64 timeline`.
class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    std::string why;
    if (!cuda_device_available(&why)) throw DeviceError("CUDA backend: " + why);
  }
  ~CudaBackend() override {
    release();
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda"; }
  std::vector<SwitchInfo> switches() const override { return switch_table(); }
  // Named, not taken from the table: a new architecture's steps must be added here before it
  // runs (docs/cuda-backend.md lists the steps each one adds to the Llama block).
  bool runs_architecture(std::string_view arch) const override {
    return arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "phi3" || arch == "gemma2" ||
           arch == "gemma3";
  }
  bool runs_sliding_window() const override { return true; }
  uint32_t max_context() const override { return max_ctx_; }
  uint64_t device_memory_peak() const override { return device_bytes_; }
  uint64_t kv_bytes_per_position() const override {
    return model_ ? 2ull * hp_.n_layer * hp_.kv_dim() * (kv_.f16 ? 2 : 4) : 0;  // K and V of every layer
  }
  void set_timeline(TimelineSink* sink) override { sink_ = sink; }

  Passport passport() override {
    ensure_device();
    if (!passport_done_) {
      passport_ = collect_cuda_passport(device_, stream_);
      passport_done_ = true;
    }
    return passport_;
  }

  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override;
  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override;
  int32_t decode_argmax(int32_t token, int32_t pos) override { return step(token, pos); }
  std::span<const float> decode_logits(int32_t token, int32_t pos) override {
    step(token, pos);
    return logits();
  }
  std::span<const float> logits() override;

 private:
  void ensure_device(const std::string& spec = {});
  void release() noexcept;
  void* alloc(size_t bytes, const std::string& what) {
    void* p = device_alloc(bytes, what);
    allocations_.push_back(p);
    device_bytes_ += bytes;
    return p;
  }
  DeviceAlloc allocator() {
    return [this](size_t bytes, const std::string& what) { return alloc(bytes, what); };
  }
  void check_model(const Model& model, uint32_t max_context) const;
  int32_t step(int32_t token, int32_t pos);
  void capture_step_graph();
  void load_batched_prefill();
  int32_t prefill_batched(std::span<const int32_t> tokens, int32_t pos);
  // Starts timing the ops enqueued next when a timeline sink is set.
  void start_timer(bool prefill, int32_t pos);

  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<const Model> model_;
  HParams hp_;
  Switches sw_;
  uint32_t max_ctx_ = 0;
  uint64_t device_bytes_ = 0;
  std::vector<void*> allocations_;

  ResidentWeights weights_;
  KvCache kv_;
  std::unique_ptr<DecodeStep> step_;
  std::unique_ptr<BatchedPrefill> batched_;  // prefill=batched
  StepState* h_state_ = nullptr;             // pinned
  std::vector<float> host_logits_;
  bool host_logits_valid_ = false;

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;

  TimelineSink* sink_ = nullptr;
  OpTimer timer_;
  bool prefill_step_ = false;
  int32_t step_pos_ = 0;

  Passport passport_;
  bool passport_done_ = false;
};

// `spec` is BackendOptions::device: empty = device 0, digits = an index, else a name substring.
void CudaBackend::ensure_device(const std::string& spec) {
  int want = device_ >= 0 ? device_ : 0;
  if (!spec.empty()) {
    int n = 0;
    P64_CUDA_CHECK(cudaGetDeviceCount(&n));
    want = -1;
    if (spec.find_first_not_of("0123456789") == std::string::npos) {
      want = std::stoi(spec);
      if (want >= n) throw DeviceError("CUDA backend: device index " + spec + " but " + std::to_string(n) + " present");
    } else {
      for (int i = 0; i < n && want < 0; ++i) {
        cudaDeviceProp p{};
        P64_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
        if (std::string(p.name).find(spec) != std::string::npos) want = i;
      }
      if (want < 0) throw DeviceError("CUDA backend: no CUDA device whose name contains '" + spec + "'");
    }
  }
  if (device_ == want) return;
  if (stream_) {
    release();
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
    passport_done_ = false;
  }
  device_ = want;
  P64_CUDA_CHECK(cudaSetDevice(device_));
  P64_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

void CudaBackend::release() noexcept {
  if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
  if (graph_) cudaGraphDestroy(graph_);
  graph_exec_ = nullptr;
  graph_ = nullptr;
  timer_.release();
  step_.reset();
  for (void* p : allocations_) device_free(p);
  allocations_.clear();
  if (h_state_) cudaFreeHost(h_state_);
  h_state_ = nullptr;
  device_bytes_ = 0;
  model_.reset();
}

// What this backend cannot run in `model` at `max_context` positions, before any device work:
// names the file and the missing piece.
void CudaBackend::check_model(const Model& model, uint32_t max_context) const {
  check_backend_runs(*this, model);
  if (const std::string why = arch_steps_problem(model, max_context); !why.empty()) throw Error(why);
  const HParams& hp = model.hparams();
  if (hp.head_dim % 2 != 0 || hp.head_dim > 256 || hp.rope_dim > hp.head_dim)
    throw Error("CUDA backend: head_dim " + std::to_string(hp.head_dim) + " / rope_dim " + std::to_string(hp.rope_dim) +
                " not supported (even head_dim <= 256)");
  if (hp.n_head_kv == 0 || hp.n_head % hp.n_head_kv != 0 || hp.n_head / hp.n_head_kv > 8)
    throw Error("CUDA backend: " + std::to_string(hp.n_head) + " q heads over " + std::to_string(hp.n_head_kv) +
                " kv heads is not supported (groups of at most 8)");
  if (max_context == 0) throw Error("CUDA backend: max_context is 0");
}

void CudaBackend::load(std::shared_ptr<const Model> model, const BackendOptions& options) {
  if (!model) throw Error("CUDA backend: load() without a model");
  uint32_t ctx = options.max_context;
  if (model->hparams().n_ctx_train > 0) ctx = std::min(ctx, model->hparams().n_ctx_train);
  check_model(*model, ctx);
  ensure_device(options.device);
  release();
  batched_.reset();
  sw_ = parse_switches(options);
  int multiprocessors = 0;
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device_));
  model_ = model;
  hp_ = model->hparams();
  max_ctx_ = ctx;
  weights_ = upload_weights(*model, sw_.gemv_tiles, max_ctx_, allocator());
  // An f32 model keeps an f32 cache under kv_type=auto (phi3's q/k/v are one fused matrix).
  const LayerWeights& first = model->layers().front();
  const bool float_model = (first.wq ? first.wq : first.wqkv)->dtype == DType::F32;
  kv_ = allocate_kv_cache(hp_, int(max_ctx_), sw_.kv_type == "f16" || (sw_.kv_type == "auto" && !float_model),
                          allocator(), stream_);
  step_ = std::make_unique<DecodeStep>(hp_, sw_, weights_, kv_, multiprocessors, allocator());
  P64_CUDA_CHECK(cudaMallocHost(&h_state_, sizeof(StepState)));
  std::memset(h_state_, 0, sizeof(StepState));
  host_logits_.assign(hp_.n_vocab, 0.f);
  host_logits_valid_ = false;
  if (sw_.batched_prefill) load_batched_prefill();
  // Captured here, so the first token does not pay for the capture and the kernels' first load.
  if (sw_.graphs) capture_step_graph();
  P64_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// The batched prefill reads the resident weights, KV cache, rope frequencies and logits
// buffer; it allocates only its own scratch (prefill_runner.h).
void CudaBackend::load_batched_prefill() {
  PrefillModel pm;
  pm.hp = hp_;
  pm.weights = weights_;
  pm.kv = kv_;
  pm.inv_freq = step_->inv_freq();
  pm.inv_freq_local = step_->inv_freq_local();
  pm.logits = step_->logits();
  PrefillOptions po;
  po.chunk = std::min(sw_.prefill_chunk, int(max_ctx_));
  po.split_k = sw_.prefill_splitk;
  po.attn_group = sw_.prefill_attn_group;
  batched_ = std::make_unique<BatchedPrefill>(std::move(pm), po, device_);
  device_bytes_ += batched_->device_bytes();
}

std::span<const float> CudaBackend::logits() {
  if (!model_) throw Error("CUDA backend: logits() before load()");
  if (!host_logits_valid_) {
    P64_CUDA_CHECK(cudaMemcpyAsync(host_logits_.data(), step_->logits(), host_logits_.size() * sizeof(float),
                                   cudaMemcpyDeviceToHost, stream_));
    P64_CUDA_CHECK(cudaStreamSynchronize(stream_));
    // final logit soft-capping (gemma2) on the host: the device's argmax is the uncapped
    // logits', which the cap (monotonic) leaves where it was, as the CPU's argmax does
    if (hp_.final_softcap > 0.f)
      for (float& x : host_logits_) x = hp_.final_softcap * std::tanh(x / hp_.final_softcap);
    host_logits_valid_ = true;
  }
  return host_logits_;
}

void CudaBackend::start_timer(bool prefill, int32_t pos) {
  prefill_step_ = prefill;
  step_pos_ = pos;
  timer_.start(stream_, sink_ != nullptr);
}

int32_t CudaBackend::step(int32_t token, int32_t pos) {
  if (!model_) throw Error("CUDA backend: decode before load()");
  if (token < 0 || uint32_t(token) >= hp_.n_vocab)
    throw Error("CUDA backend: token id " + std::to_string(token) + " outside the vocabulary of " +
                std::to_string(hp_.n_vocab));
  if (pos < 0 || uint32_t(pos) >= max_ctx_)
    throw Error("CUDA backend: position " + std::to_string(pos) + " outside the KV cache of " +
                std::to_string(max_ctx_) + " positions");
  h_state_->token = token;
  h_state_->pos = pos;
  host_logits_valid_ = false;
  StepState* d_state = step_->state();
  start_timer(prefill_step_, pos);  // on only while a timeline sink is set
  if (sw_.graphs && !timer_.on()) {
    if (!graph_exec_) capture_step_graph();  // load() captures it; not after a load that failed past the weights
    P64_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
  } else {
    P64_CUDA_CHECK(cudaMemcpyAsync(d_state, h_state_, 2 * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
    step_->enqueue(stream_, timer_);
    P64_CUDA_CHECK(cudaMemcpyAsync(&h_state_->argmax, &d_state->argmax, sizeof(int32_t), cudaMemcpyDeviceToHost,
                                   stream_));
  }
  P64_CUDA_CHECK(cudaStreamSynchronize(stream_));  // kernel faults surface here as DeviceError
  if (timer_.on()) timer_.emit(*sink_, prefill_step_, step_pos_);
  return h_state_->argmax;
}

// The decode step as a CUDA graph, instantiated and uploaded, so its first replay costs what
// every other does.
void CudaBackend::capture_step_graph() {
  timer_.start(stream_, false);  // no timeline events inside the graph
  StepState* d_state = step_->state();
  P64_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    // The copies read/write the pinned StepState at replay time, so each replay sees the
    // token and position written just before it.
    P64_CUDA_CHECK(cudaMemcpyAsync(d_state, h_state_, 2 * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
    step_->enqueue(stream_, timer_);
    P64_CUDA_CHECK(cudaMemcpyAsync(&h_state_->argmax, &d_state->argmax, sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);
    if (g) cudaGraphDestroy(g);
    throw;
  }
  P64_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
  P64_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  P64_CUDA_CHECK(cudaGraphUpload(graph_exec_, stream_));
}

int32_t CudaBackend::prefill(std::span<const int32_t> tokens, int32_t pos) {
  if (tokens.empty()) throw Error("CUDA backend: prefill of zero tokens");
  if (batched_ && tokens.size() >= size_t(sw_.prefill_batch_min)) return prefill_batched(tokens, pos);
  // prefill=stepwise: token by token through the decode step (graph replays).
  prefill_step_ = true;
  int32_t id = 0;
  try {
    for (size_t i = 0; i < tokens.size(); ++i) id = step(tokens[i], pos + int32_t(i));
  } catch (...) {
    prefill_step_ = false;
    throw;
  }
  prefill_step_ = false;
  return id;
}

// prefill=batched: the whole prompt as matrices (prefill_runner.h), then the decode's argmax
// on the last token's logits; only the id comes back.
int32_t CudaBackend::prefill_batched(std::span<const int32_t> tokens, int32_t pos) {
  if (!model_) throw Error("CUDA backend: prefill before load()");
  for (int32_t t : tokens)
    if (t < 0 || uint32_t(t) >= hp_.n_vocab)
      throw Error("CUDA backend: token id " + std::to_string(t) + " outside the vocabulary of " +
                  std::to_string(hp_.n_vocab));
  if (pos < 0 || uint64_t(pos) + tokens.size() > max_ctx_)
    throw Error("CUDA backend: prefill of " + std::to_string(tokens.size()) + " tokens at position " +
                std::to_string(pos) + " exceeds the KV cache of " + std::to_string(max_ctx_) + " positions");
  host_logits_valid_ = false;
  start_timer(true, pos);
  StepState* d_state = step_->state();
  try {
    PrefillOpHook hook;
    if (timer_.on())
      hook = [this](const char* name, OpGroup g, int l, const std::function<void()>& f) { timer_.op(name, g, l, f); };
    batched_->enqueue(tokens, pos, stream_, hook);
    timer_.op("argmax", OpGroup::Sample, -1,
              [&] { launch_argmax(step_->logits(), hp_.n_vocab, d_state, stream_, sw_.argmax_batch); });
    P64_CUDA_CHECK(
        cudaMemcpyAsync(&h_state_->argmax, &d_state->argmax, sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
    P64_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (timer_.on()) timer_.emit(*sink_, true, pos);
  } catch (...) {
    prefill_step_ = false;
    throw;
  }
  prefill_step_ = false;
  return h_state_->argmax;
}

}  // namespace

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("no CUDA device: cudaGetDeviceCount: ") + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ")";
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device: the driver reports 0 devices";
    return false;
  }
  return true;
}

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

void register_cuda_backend() {
  register_backend({"cuda", 100, [](std::string* why) { return cuda_device_available(why); },
                    [] { return make_cuda_backend(); }, [] { return switch_table(); }});
  register_gemv_bench("cuda", cuda::run_gemv_bench);
  register_gemv_chain_bench("cuda", cuda::run_gemv_chain_bench);
}

}  // namespace p64
