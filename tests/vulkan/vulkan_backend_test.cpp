// The Vulkan backend's own contract: errors, switches, timeline spans from timestamp queries,
// passport, pipeline cache on disk, device selection.
#include <cstdlib>
#include <filesystem>

#include "engine/common/error.h"
#include "support/shared_files.h"
#include "vulkan_fixture.h"

namespace p64::test {
namespace {

class VulkanBackendTest : public VulkanTest {};

struct CollectSpans : TimelineSink {
  std::vector<OpSpan> spans;
  void on_span(const OpSpan& s) override { spans.push_back(s); }
};

TEST_F(VulkanBackendTest, RejectsUnknownSwitchAndBadValues) {
  auto model = make_tiny_model(TinyTypes{}, 21);
  auto vk = make_vulkan();
  BackendOptions o;
  o.switches["no_such_switch"] = "1";
  EXPECT_THROW(vk->load(model, o), Error);
  o.switches.clear();
  o.switches["rows_per_workgroup"] = "3";
  EXPECT_THROW(vk->load(model, o), Error);
  EXPECT_FALSE(vk->switches().empty());
}

TEST_F(VulkanBackendTest, UnknownDeviceIsADeviceErrorListingDevices) {
  auto model = make_tiny_model(TinyTypes{}, 22);
  auto vk = make_vulkan();
  BackendOptions o;
  o.device = "no-such-gpu-name";
  try {
    vk->load(model, o);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-gpu-name"), std::string::npos) << e.what();
  }
  o.device = "99";
  EXPECT_THROW(vk->load(model, o), DeviceError);
  o.device = "0";  // by index
  EXPECT_NO_THROW(vk->load(model, o));
}

TEST_F(VulkanBackendTest, PositionsAndTokensOutsideRangeAreErrors) {
  auto model = make_tiny_model(TinyTypes{}, 23);
  auto vk = make_vulkan();
  EXPECT_THROW(vk->decode_argmax(1, 0), Error);  // nothing loaded
  BackendOptions o;
  o.max_context = 32;
  vk->load(model, o);
  EXPECT_EQ(vk->max_context(), 32u);
  EXPECT_THROW(vk->decode_argmax(1, 32), Error);
  EXPECT_THROW(vk->decode_argmax(384, 0), Error);
  EXPECT_THROW(vk->decode_argmax(-1, 0), Error);
  std::vector<int32_t> toks(20, 3);
  EXPECT_THROW(vk->prefill(toks, 20), Error);
  EXPECT_THROW(vk->prefill({}, 0), Error);
  EXPECT_NO_THROW(vk->decode_argmax(1, 31));
}

// decode-proxy's KV bytes per token come from the backend: f32 K and V for every layer.
TEST_F(VulkanBackendTest, StatesTheKvBytesOfEachPosition) {
  auto model = make_tiny_model(TinyTypes{}, 24);
  auto vk = make_vulkan();
  EXPECT_EQ(vk->kv_bytes_per_position(), 0u) << "nothing loaded";
  vk->load(model, {});
  const HParams& hp = model->hparams();
  EXPECT_EQ(vk->kv_bytes_per_position(), 2ull * hp.n_layer * hp.kv_dim() * 4);
}

TEST_F(VulkanBackendTest, ArgmaxIsTheMaxOfTheReturnedLogits) {
  auto model = make_tiny_model(TinyTypes{}, 24);
  auto vk = make_vulkan();
  vk->load(model, {});
  int32_t t = 5;
  for (int pos = 0; pos < 8; ++pos) {
    const int32_t id = vk->decode_argmax(t, pos);
    auto l = vk->logits();  // logits of the argmax-only step, fetched afterwards
    ASSERT_EQ(l.size(), 384u);
    const int32_t want = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    EXPECT_EQ(id, want) << "pos " << pos;
    t = id;
  }
}

TEST_F(VulkanBackendTest, TimelineSpansComeFromTimestampsOnlyWhenASinkIsSet) {
  auto model = make_tiny_model(TinyTypes{}, 25);
  auto vk = make_vulkan();
  vk->load(model, {});
  CollectSpans sink;
  vk->decode_argmax(1, 0);  // no sink: nothing reported
  vk->set_timeline(&sink);
  std::vector<int32_t> toks = {1, 2, 3, 4};
  vk->prefill(toks, 0);
  vk->decode_argmax(5, 4);
  vk->set_timeline(nullptr);
  vk->decode_argmax(6, 5);
  ASSERT_FALSE(sink.spans.empty());
  int decode_spans = 0, prefill_spans = 0;
  bool saw_sdpa = false, saw_logits = false, saw_down_l1 = false;
  for (const auto& s : sink.spans) {
    EXPECT_GE(s.dur_us, 0.0) << s.name;
    (s.prefill ? prefill_spans : decode_spans)++;
    if (!s.prefill) {
      EXPECT_EQ(s.step, 4);
      saw_sdpa |= s.name == "sdpa" && s.group == OpGroup::Attn;
      saw_logits |= s.name == "logits" && s.group == OpGroup::Logits;
      saw_down_l1 |= s.name == "down" && s.layer == 1;
    }
  }
  EXPECT_GT(prefill_spans, 0);
  EXPECT_GT(decode_spans, 8);
  EXPECT_TRUE(saw_sdpa && saw_logits && saw_down_l1);
  const size_t before = sink.spans.size();
  vk->decode_argmax(7, 6);
  EXPECT_EQ(sink.spans.size(), before);
}

TEST_F(VulkanBackendTest, PassportHasDeviceFactsAndMeasuredBandwidth) {
  auto vk = make_vulkan();
  Passport p = vk->passport();
  EXPECT_EQ(p.device.backend, "vulkan");
  EXPECT_FALSE(p.device.name.empty());
  EXPECT_FALSE(p.device.device_type.empty());
  EXPECT_GT(p.device.subgroup_size, 0u);
  EXPECT_GT(p.device.timestamp_period_ns, 0.0);
  EXPECT_GT(p.measured.read_gbs, 0.0);
  EXPECT_GT(p.measured.copy_gbs, 0.0);
  EXPECT_GT(p.measured.buffer_bytes, 0u);
}

TEST_F(VulkanBackendTest, PipelineCacheIsWrittenAndTheSecondLoadIsWarm) {
  TempDir dir;
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  auto model = make_tiny_model(TinyTypes{}, 26);
  vulkan::LoadReport cold, warm;
  {
    auto vk = make_vulkan();
    vk->load(model, {});
    cold = vulkan::load_report(*vk);
  }
  {
    auto vk = make_vulkan();
    vk->load(model, {});
    warm = vulkan::load_report(*vk);
  }
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_CACHE_HOME");
  EXPECT_FALSE(cold.pipeline_cache_warm);
  EXPECT_TRUE(warm.pipeline_cache_warm);
  EXPECT_GT(cold.pipelines, 0u);
  ASSERT_FALSE(cold.pipeline_cache_path.empty());
  EXPECT_EQ(cold.pipeline_cache_path.rfind(dir.path().string(), 0), 0u) << cold.pipeline_cache_path;
  EXPECT_NE(cold.pipeline_cache_path.find("vulkan-pipelines-"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(cold.pipeline_cache_path));
}

TEST_F(VulkanBackendTest, RankRuleKeepsCpuDevicesBelowTheCpuBackend) {
  int rank = 0;
  std::string why;
  ASSERT_TRUE(vulkan::probe_rank(&rank, &why)) << why;
  auto vk = make_vulkan();
  Passport p = vk->passport();
  if (p.device.device_type == "cpu") {
    EXPECT_LT(rank, 0);
  } else if (p.device.device_type == "discrete-gpu") {
    EXPECT_GT(rank, 0);
  }
}

TEST_F(VulkanBackendTest, UnsupportedDtypeIsAClearError) {
  TinyTypes t;
  t.q = DType::Q4_1;
  auto model = make_tiny_model(t, 27);
  auto vk = make_vulkan();
  try {
    vk->load(model, {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attn_q"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace p64::test
