// `p64 compare`: a backend checked against the reference (the CPU's exact float path) through
// the binary. Only the CPU runs here; the GPU backends run the same command on the GPU machine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "decode_test_models.h"

using namespace p64;

TEST(CompareCli, CpuDefaultsAgainstTheFloatReferenceOnStories260K) {
  const test::CliRun r = test::run_p64("compare " + test::stories260k_p64() +
                                       " --backend cpu --threads 2 --tokens 48 --greedy 64 --json");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reference"], "backend=cpu,opt.int8_activations=0,threads=2");
  EXPECT_EQ(j["positions"], 48);
  EXPECT_TRUE(j["quality_pass"].get<bool>()) << j.dump(2);
  EXPECT_EQ(j["greedy_first_difference"], -1);
  EXPECT_DOUBLE_EQ(j["top1_agreement"].get<double>(), 1.0);
  // F32 weights: the int8 kernels are not used, so the candidate is the reference bit for bit
  EXPECT_EQ(j["rms_rel_error"].get<double>(), 0.0);
}

TEST(CompareCli, TextReportAndBadInput) {
  const test::CliRun ok = test::run_p64("compare " + test::stories260k_p64() + " --backend cpu --tokens 8 --greedy 0");
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("teacher-forced, 8 positions: PASS"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("greedy: not checked (--greedy 0)"), std::string::npos) << ok.out;

  const test::CliRun no_backend = test::run_p64("compare " + test::stories260k_p64() + " --backend nosuch --tokens 8");
  EXPECT_NE(no_backend.status, 0);
  EXPECT_NE(no_backend.err.find("nosuch"), std::string::npos) << no_backend.err;
  const test::CliRun bad_switch =
      test::run_p64("compare " + test::stories260k_p64() + " --backend cpu --opt no_such_switch=1 --tokens 8");
  EXPECT_NE(bad_switch.status, 0);
  EXPECT_NE(bad_switch.err.find("no_such_switch"), std::string::npos) << bad_switch.err;
}
