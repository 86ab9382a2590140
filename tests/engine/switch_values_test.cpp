// A switch value is checked against what its backend declares before anything loads or measures:
// a typo is an error naming the switch and its allowed values, never a silent default.
#include <gtest/gtest.h>

#include "decode_test_models.h"
#include "engine/common/error.h"
#include "app/common/register_backends.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace {

const std::vector<SwitchInfo> kOffered = {bool_switch("flag", "", true, "default"),
                                          int_switch("rows", "", 4, {1, 2, 4, 8}, "default"),
                                          int_range_switch("ubatch", "", 512, 16, 4096, "default"),
                                          enum_switch("kind", "", "x", {"x", "y"}, "default"),
                                          float_switch("noise", "", 0, "opt-in")};

TEST(SwitchValues, ListsRangesAndFreeTextAreEnforcedAsDeclared) {
  EXPECT_NO_THROW(check_switch_values("toy", kOffered, {{"flag", "0"}, {"rows", "8"}, {"ubatch", "4096"}, {"kind", "y"}}));
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
  try {
    SwitchValues("toy", kOffered, {{"rows", "abc"}});
    FAIL() << "abc read as an integer";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "toy backend: switch rows=abc is not one of 1|2|4|8 (default 4)");
  }
}

TEST(SwitchValues, TheBackendReadsTypedValuesWithTheTableDefaults) {
  const SwitchValues v("toy", kOffered, {{"rows", "8"}, {"noise", "-0.25"}});
  EXPECT_TRUE(v.flag("flag"));  // the table's default
  EXPECT_FALSE(v.given("flag"));
  EXPECT_EQ(v.integer("rows"), 8);
  EXPECT_TRUE(v.given("rows"));
  EXPECT_EQ(v.integer("ubatch"), 512);
  EXPECT_EQ(v.text("kind"), "x");
  EXPECT_DOUBLE_EQ(v.number("noise"), -0.25);
  EXPECT_EQ(test::error_of([] { SwitchValues("toy", kOffered, {{"rowz", "2"}}); }),
            "toy backend: unknown switch 'rowz' (offered: flag, rows, ubatch, kind, noise)");
}

// Two configurations compare by what they run: a number spelled two ways is one value.
TEST(SwitchValues, CanonicalIsOneSpellingPerTypedValue) {
  const SwitchInfo& flag = kOffered[0];
  const SwitchInfo& rows = kOffered[1];
  const SwitchInfo& ubatch = kOffered[2];
  const SwitchInfo& kind = kOffered[3];
  const SwitchInfo& noise = kOffered[4];
  EXPECT_EQ(ubatch.canonical("0512"), "512");
  EXPECT_EQ(ubatch.canonical("512"), "512");
  EXPECT_EQ(noise.canonical("0.50"), "0.5");
  EXPECT_EQ(noise.canonical("5e-1"), "0.5");
  EXPECT_EQ(noise.canonical("-0"), "0");
  EXPECT_EQ(noise.canonical(noise.default_value), "0");
  EXPECT_EQ(noise.canonical("0.1"), "0.1");
  EXPECT_EQ(noise.canonical("0.30000000000000004"), "0.30000000000000004");  // not 0.3: another double
  EXPECT_EQ(flag.canonical("1"), "1");
  EXPECT_EQ(rows.canonical("8"), "8");
  EXPECT_EQ(kind.canonical("y"), "y");
  // Values the table refuses are left as given, for the table's error to name.
  EXPECT_EQ(flag.canonical("on"), "on");
  EXPECT_EQ(rows.canonical("08"), "08");
  EXPECT_EQ(ubatch.canonical("8"), "8");
}

TEST(SwitchValues, TablesDescribeThemselvesForTheStoreAndThePicker) {
  EXPECT_EQ(kOffered[0].values(), "0|1");
  EXPECT_EQ(kOffered[2].values(), "16..4096");
  EXPECT_EQ(kOffered[4].values(), "float");
  // A range is offered as its ends and its default, each a value the table accepts: never the
  // range's text as if it were a value.
  EXPECT_EQ(kOffered[2].picker_values(), (std::vector<std::string>{"16", "512", "4096"}));
  for (const SwitchInfo& s : kOffered)
    for (const std::string& v : s.picker_values()) EXPECT_TRUE(s.allows(v)) << s.name << "=" << v;
}

// Every backend this build has declares defaults its own table accepts, readable without a device.
TEST(SwitchValues, EveryBuiltBackendsDefaultsAreAllowedByItsTable) {
  register_all_backends();
  for (const BackendFactory& f : backend_factories()) {
    const std::vector<SwitchInfo> table = backend_switch_table(f.name);
    EXPECT_FALSE(table.empty()) << f.name;
    for (const SwitchInfo& s : table) {
      EXPECT_TRUE(s.allows(s.default_value)) << f.name << " " << s.name << "=" << s.default_value;
      for (const std::string& v : s.picker_values()) EXPECT_TRUE(s.allows(v)) << f.name << " " << s.name << "=" << v;
      EXPECT_FALSE(s.description.empty()) << f.name << " " << s.name;
    }
    EXPECT_NO_THROW(SwitchValues(f.name, table, {}));
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
