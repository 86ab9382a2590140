// Device faults that can be shown without a GPU: a backend that is not built or cannot run
// here is refused by name with the reason; a device that runs out of memory at load or is
// lost in the middle of a run surfaces as a DeviceError (never a half-finished result), and
// the store, written only after a run completes, keeps exactly what it had.
#include <cstdio>
#include <gtest/gtest.h>

#include <string>

#include "app/common/register_backends.h"
#include "engine/common/error.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/store.h"
#include "engine/runtime/backend_registry.h"
#include "lab/toy_backend.h"
#include "support/device_fault_scenario.h"
#include "support/exit_status.h"
#include "support/store_checks.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

// The toy, with a fault injected: at load (out of device memory) or at a given decode step.
class FaultyBackend : public test::ToyBackend {
 public:
  FaultyBackend(bool fail_load, int lose_at_step) : fail_load_(fail_load), lose_at_step_(lose_at_step) {}
  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override {
    if (fail_load_) throw DeviceError("toy device: out of device memory: weights need 2 GiB, 1 GiB free");
    ToyBackend::load(std::move(model), options);
  }
  int32_t decode_argmax(int32_t token, int32_t pos) override {
    if (++steps_ == lose_at_step_) throw DeviceError("toy device: device lost (Xid 79) at decode step " + std::to_string(steps_));
    return ToyBackend::decode_argmax(token, pos);
  }

 private:
  bool fail_load_;
  int lose_at_step_;
  int steps_ = 0;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DeviceFault, ABackendThatCannotRunIsRefusedWithItsReason) {
  register_all_backends();
  // cuda is either not built here (CI) or built but without a device: both say so.
  bool cuda_registered = false, cuda_available = false;
  std::string why;
  for (const auto& f : backend_factories()) {
    if (f.name == "cuda") {
      cuda_registered = true;
      cuda_available = f.available(&why);
    }
  }
  const std::string cuda = message_of([] { create_backend("cuda"); });
  if (!cuda_registered) {
    EXPECT_NE(cuda.find("unknown backend 'cuda'"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("cpu"), std::string::npos) << "the message lists what was built: " << cuda;
  } else if (!cuda_available) {
    EXPECT_NE(cuda.find("cannot run here"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find(why), std::string::npos) << cuda;
  } else {
    EXPECT_EQ(cuda, "") << "a GPU is present, so cuda must be created";
  }
  // A registered backend whose driver is missing: its own reason is passed on.
  register_backend({"faultdev", 1000, [](std::string* w) { *w = "no driver: libfault.so.1 not found"; return false; },
                    [] { return std::unique_ptr<Backend>(); }});
  const std::string msg = message_of([] { create_backend("faultdev"); });
  EXPECT_NE(msg.find("faultdev"), std::string::npos) << msg;
  EXPECT_NE(msg.find("libfault.so.1 not found"), std::string::npos) << msg;
  // auto never picks a backend that cannot run, whatever its rank.
  EXPECT_NE(resolve_backend_name("auto"), "faultdev");
  const std::string unknown = message_of([] { create_backend("tpu"); });
  EXPECT_NE(unknown.find("unknown backend 'tpu'"), std::string::npos) << unknown;
}

// The CLI user's view of the same: a clear message and exit code 1, not a crash. (On a
// machine with a CUDA device and a CUDA build this would decode; the check is for the rest.)
TEST(DeviceFault, CliAskedForAMissingGpuBackendSaysWhyAndExitsWithOne) {
  register_all_backends();
  std::string cuda_why;
  for (const auto& f : backend_factories())
    if (f.name == "cuda" && f.available(&cuda_why)) GTEST_SKIP() << "a CUDA device is present: nothing to refuse";
  const std::string cmd = std::string(P64_CLI_PATH) + " generate --model " +
                          test::shared_model("stories260K.gguf").string() + " --backend cuda --tokens 2 --prompt hi 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  EXPECT_EQ(test::exit_code(status), 1) << out;
  EXPECT_TRUE(out.find("unknown backend 'cuda'") != std::string::npos || out.find("cannot run here") != std::string::npos)
      << out;
}

TEST(DeviceFault, OutOfMemoryAndDeviceLostAreDeviceErrorsAndTheStoreKeepsItsRuns) {
  test::TempDir dir;
  Store::Options o;
  o.import_plan_history = false;
  auto store = Store::open((dir / "lab.db").string(), o);
  const int64_t kept_id = test::write_run_before_fault(*store, "toy");

  auto model = test::make_toy_model();
  const DecodeProxyParams p = test::three_short_runs();

  FaultyBackend oom(true, 0);
  EXPECT_THROW(oom.load(model, {}), DeviceError);

  FaultyBackend lost(false, 13);  // in the middle of the second run
  lost.load(model, {});
  try {
    run_decode_proxy(lost, *model, lost.passport(), p);
    FAIL() << "a run whose device was lost returned a result";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("device lost"), std::string::npos) << e.what();
  }
  const auto runs = store->runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, kept_id);
  EXPECT_EQ(test::integrity_check(*store), "ok");
}

}  // namespace p64
