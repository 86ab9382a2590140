// A real device fault in the middle of a decode-proxy run (a kernel that traps, which leaves
// the context failed for the rest of the process, as a lost device does): the run ends in a
// DeviceError naming the CUDA call, not a hang or a result, a new backend in that process is
// refused the same way, and the lab store keeps exactly the runs it had, intact. The failed
// context would poison every later test, so the scenario runs in a re-executed child process
// (a gtest death test) that reports each check on stderr and exits 0 only if all held.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends/cuda/kernels.h"
#include "cuda/cuda_test_support.h"
#include "support/device_fault_scenario.h"
#include "support/store_checks.h"
#include "support/shared_files.h"
#include "support/test_models.h"

namespace p64::test {
namespace {

// The CUDA backend, with the trap launched just before decode step `fault_at`.
class TrappingBackend : public Backend {
 public:
  explicit TrappingBackend(int fault_at) : inner_(make_cuda_backend()), fault_at_(fault_at) {}
  std::string name() const override { return inner_->name(); }
  Passport passport() override { return inner_->passport(); }
  std::vector<SwitchInfo> switches() const override { return inner_->switches(); }
  void load(std::shared_ptr<const Model> m, const BackendOptions& o) override { inner_->load(std::move(m), o); }
  uint32_t max_context() const override { return inner_->max_context(); }
  int32_t prefill(std::span<const int32_t> t, int32_t pos) override { return inner_->prefill(t, pos); }
  int32_t decode_argmax(int32_t token, int32_t pos) override {
    if (++steps_ == fault_at_) cuda::launch_trap(nullptr);
    return inner_->decode_argmax(token, pos);
  }
  std::span<const float> decode_logits(int32_t token, int32_t pos) override { return inner_->decode_logits(token, pos); }
  std::span<const float> logits() override { return inner_->logits(); }
  void set_timeline(TimelineSink* s) override { inner_->set_timeline(s); }
  uint64_t device_memory_peak() const override { return inner_->device_memory_peak(); }

 private:
  std::unique_ptr<Backend> inner_;
  int fault_at_;
  int steps_ = 0;
};

int fails = 0;
void check(bool ok, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++fails;
}

// Every object, the failed backend's included, is destroyed before the child exits: tearing
// down on a failed context must not crash either.
int fault_in_the_middle_of_a_run() {
  TempDir dir;
  const std::string db = (dir / "lab.db").string();
  Store::Options so;
  so.import_plan_history = false;
  auto store = Store::open(db, so);
  const int64_t kept_id = write_run_before_fault(*store, "cuda");

  auto model = make_tiny_model(soa_mix(), 41);
  const DecodeProxyParams p = three_short_runs();
  TrappingBackend gpu(13);  // in the middle of the second run
  BackendOptions o;
  o.max_context = 64;
  gpu.load(model, o);
  std::string error;
  try {
    run_decode_proxy(gpu, *model, gpu.passport(), p);
  } catch (const DeviceError& e) {
    error = e.what();
  } catch (const std::exception& e) {
    error = std::string("not a DeviceError: ") + e.what();
  }
  std::fprintf(stderr, "the run's error: %s\n", error.c_str());
  check(error.rfind("CUDA: ", 0) == 0 && error.find("failed") != std::string::npos,
        "the faulted run raised a DeviceError naming the CUDA call");
  std::string again;
  try {
    auto fresh = make_cuda_backend();
    fresh->load(model, o);
    fresh->decode_argmax(1, 0);
  } catch (const DeviceError& e) {
    again = e.what();
  }
  std::fprintf(stderr, "a new backend afterwards: %s\n", again.c_str());
  check(!again.empty(), "a new backend on the failed context is refused with a DeviceError");
  const auto runs = store->runs();
  check(runs.size() == 1 && runs[0].id == kept_id, "the store holds exactly the run it had");
  check(integrity_check(*store) == "ok", "PRAGMA integrity_check is ok");
  return fails;
}

TEST(CudaDeviceFault, TrapMidRunIsADeviceErrorAndTheStoreKeepsItsRuns) {
  P64_REQUIRE_CUDA_DEVICE();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the parent's context stays usable
  EXPECT_EXIT(
      {
        const int failed = fault_in_the_middle_of_a_run();
        std::fprintf(stderr, "%d checks failed; torn down\n", failed);
        std::fflush(stderr);
        std::_Exit(failed == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "0 checks failed; torn down");
}

}  // namespace
}  // namespace p64::test
