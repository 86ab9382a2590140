// A switch value is checked against what its backend declares before anything loads or measures:
// a typo is an error naming the switch and its allowed values, never a silent default.
#include <gtest/gtest.h>

#include "decode_test_models.h"
#include "engine/common/error.h"
#include "engine/runtime/backend.h"

namespace p64 {
namespace {

const std::vector<SwitchInfo> kOffered = {{"flag", "", "1", "0|1", "default"},
                                          {"rows", "", "4", "1|2|4|8", "default"},
                                          {"ubatch", "", "512", "16..4096", "default"},
                                          {"free", "", "", "", "default"},
                                          {"noise", "", "0", "float", "opt-in"}};

TEST(SwitchValues, ListsRangesAndFreeTextAreEnforcedAsDeclared) {
  EXPECT_NO_THROW(check_switch_values("toy", kOffered, {{"flag", "0"}, {"rows", "8"}, {"ubatch", "4096"}, {"free", "x"}}));
  EXPECT_NO_THROW(check_switch_values("toy", kOffered, {{"not_offered", "x"}}));  // the backend's own load() decides
  const std::string not_listed = test::error_of([] { check_switch_values("toy", kOffered, {{"flag", "abc"}}); });
  EXPECT_EQ(not_listed, "toy backend: switch flag=abc is not one of 0|1 (default 1)");
  EXPECT_NE(test::error_of([] { check_switch_values("toy", kOffered, {{"rows", "3"}}); }).find("rows=3"),
            std::string::npos);
  const std::string outside = test::error_of([] { check_switch_values("toy", kOffered, {{"ubatch", "8"}}); });
  EXPECT_EQ(outside, "toy backend: switch ubatch=8 is not an integer in 16..4096 (default 512)");
  EXPECT_NO_THROW(check_switch_values("toy", kOffered, {{"noise", "-0.25"}}));
  for (const char* v : {"nan", "inf", "0.5x", ""})
    EXPECT_NE(test::error_of([&] { check_switch_values("toy", kOffered, {{"noise", v}}); }).find("a finite number"),
              std::string::npos)
        << v;
  for (const char* v : {"abc", "", "64x", "1e3", "99999999999999999999"})
    EXPECT_FALSE(test::error_of([&] { check_switch_values("toy", kOffered, {{"ubatch", v}}); }).empty()) << v;
}

TEST(SwitchValues, ANonNumericIntegerSwitchIsAnErrorNotAStdException) {
  BackendOptions o;
  o.switches["gemv_rows"] = "abc";
  try {
    o.get_int("gemv_rows", 4);
    FAIL() << "abc read as an integer";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "switch gemv_rows=abc: not an integer");
  }
}

TEST(SwitchValues, TheCliRefusesABadValueBeforeMeasuring) {
  for (const std::string& cmd :
       {"decode-proxy " + test::stories260k_p64() + " --backend cpu --no-store --opt int8_activations=abc",
        "generate --model " + test::stories260k_p64() + " --backend cpu --opt isa=avx9 --prompt x"}) {
    const test::CliRun r = test::run_p64(cmd);
    EXPECT_NE(r.status, 0) << cmd;
    EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("cpu backend: switch "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("decode tok/s"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace p64
