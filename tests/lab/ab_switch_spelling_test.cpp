// An A/B compares configurations by the typed values they run, through the backend's switch
// table, not by how they were typed: a default written out, a number spelled another way, the
// order and spacing of items change nothing. A value the table refuses is its error, never a
// difference.
#include <gtest/gtest.h>

#include "engine/decode_test_models.h"
#include "engine/lab/ab.h"
#include "engine/lab/lab_config.h"
#include "lab/toy_backend.h"

namespace p64 {
namespace {

AbParams toy_params() {
  test::register_toy_backend("toy-spelling");
  AbParams p = test::quick_ab_params(8);
  p.reference = LabConfig::parse("backend=toy-spelling");
  return p;
}

TEST(AbSwitchSpelling, SameSwitchesComparesTypedValuesWithDefaultsFilledIn) {
  test::register_toy_backend("toy-spelling");
  const LabConfig plain = LabConfig::parse("backend=toy-spelling,opt.delay_us=250");
  for (const char* same : {"backend=toy-spelling,opt.delay_us=0250",
                           " opt.delay_us = 250 , backend=toy-spelling ",
                           "backend=toy-spelling,opt.delay_us=250,opt.fast=0,opt.logit_noise=0.0",
                           "backend=toy-spelling,opt.logit_noise=-0,opt.delay_us=250,threads=3"}) {
    const LabConfig c = LabConfig::parse(same);
    EXPECT_TRUE(same_switches(plain, c)) << same;
    EXPECT_TRUE(differing_switches(plain, c).empty()) << same;
  }
  EXPECT_FALSE(same_switches(plain, LabConfig::parse("backend=toy-spelling,opt.delay_us=251")));
  EXPECT_FALSE(same_switches(plain, LabConfig::parse("backend=toy-spelling,opt.delay_us=250,opt.fast=1")));
  EXPECT_EQ(switch_value(LabConfig::parse("backend=toy-spelling,opt.logit_noise=5e-1"), "logit_noise"), "0.5");
}

TEST(AbSwitchSpelling, ASideThatSpellsTheReferenceOutIsTheReference) {
  auto model = test::make_toy_model();
  const AbResult r = run_ab(LabConfig::parse("backend=toy-spelling, opt.logit_noise=0.0 ,opt.delay_us=00,opt.fast=0"),
                            LabConfig::parse("backend=toy-spelling,opt.logit_noise=0.5"), model, toy_params());
  EXPECT_EQ(r.reference, "A (backend=toy-spelling)");
  EXPECT_FALSE(r.a_vs_reference.has_value()) << "A was compared with itself as a separate reference";
  ASSERT_TRUE(r.b_vs_reference.has_value());
  EXPECT_FALSE(r.b_vs_reference->pass) << r.b_vs_reference->summary();

  const AbResult rb = run_ab(LabConfig::parse("backend=toy-spelling,opt.logit_noise=0.5"),
                             LabConfig::parse("backend=toy-spelling,opt.logit_noise=0.000"), model, toy_params());
  EXPECT_TRUE(rb.b_is_reference);
  EXPECT_EQ(rb.reference, "B (backend=toy-spelling)");
  EXPECT_TRUE(rb.quality_pass()) << rb.quality_failure();
}

TEST(AbSwitchSpelling, ANumberSpelledTwoWaysIsNoSwitchToJudge) {
  test::register_toy_backend("toy-spelling");
  const LabConfig a = LabConfig::parse("backend=toy-spelling,opt.delay_us=16");
  const LabConfig b = LabConfig::parse("backend=toy-spelling,opt.delay_us=016");
  EXPECT_EQ(judged_switch(a, b), "");
  EXPECT_EQ(test::error_of([&] { judged_switch(a, b, "delay_us"); }),
            "A/B: --switch delay_us is 16 on both sides, so the A/B cannot judge it (A and B differ in no switch)");
}

TEST(AbSwitchSpelling, TwoModelsWithADefaultWrittenOutOnOneSideAreOneChange) {
  auto model_a = test::make_toy_model();
  test::ToyShape other;
  other.seed = 2;
  auto model_b = test::make_toy_model(other);
  AbParams p = toy_params();
  p.compare_reference = false;
  EXPECT_NO_THROW(run_ab(LabConfig::parse("backend=toy-spelling,opt.fast=0"), model_a,
                         LabConfig::parse("backend=toy-spelling"), model_b, p));
}

TEST(AbSwitchSpelling, AValueOutsideTheTableIsTheTablesErrorNotADifference) {
  auto model = test::make_toy_model();
  EXPECT_EQ(test::error_of([&] {
              run_ab(LabConfig::parse("backend=toy-spelling"), LabConfig::parse("backend=toy-spelling,opt.fast=on"),
                     model, toy_params());
            }),
            "toy-spelling backend: switch fast=on is not one of 0|1 (default 0)");
}

}  // namespace
}  // namespace p64
