// The compute ceiling a CUDA passport gives (cuda_peak_flops.h): plain arithmetic on the device's
// attributes, so it runs without a GPU. The products are the boards' published dense fp16
// tensor-core figures at their boost clocks, within rounding.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_peak_flops.h"

namespace p64::cuda {
namespace {

TEST(CudaPeakFlops, TensorCoreRateWhereTheArchitectureIsKnown) {
  const PeakFlops h100 = peak_flops(9, 0, 132, 1.83);  // H100 SXM: 989 TFLOP/s dense fp16
  EXPECT_NEAR(h100.flops / 1e12, 989.4, 0.5);
  EXPECT_NE(h100.what.find("fp16 tensor cores, dense"), std::string::npos) << h100.what;
  EXPECT_NE(h100.what.find("132 SMs"), std::string::npos) << h100.what;
  EXPECT_NEAR(peak_flops(8, 0, 108, 1.41).flops / 1e12, 311.9, 0.5);  // A100: 312
  EXPECT_NEAR(peak_flops(7, 0, 80, 1.53).flops / 1e12, 125.3, 0.5);   // V100: 125
}

TEST(CudaPeakFlops, Fp32LanesWhereOnlyTheyAreKnownAndNothingElseGuessed) {
  const PeakFlops ada = peak_flops(8, 9, 142, 2.52);  // RTX 6000 Ada: 91.1 TFLOP/s fp32
  EXPECT_NEAR(ada.flops / 1e12, 91.6, 0.5);
  EXPECT_NE(ada.what.find("fp32 FMA lanes"), std::string::npos) << ada.what;
  const PeakFlops future = peak_flops(12, 0, 100, 2.0);
  EXPECT_EQ(future.flops, 0);
  EXPECT_NE(future.what.find("sm_120"), std::string::npos) << future.what;
  EXPECT_EQ(peak_flops(9, 0, 0, 1.8).flops, 0);
  EXPECT_EQ(peak_flops(9, 0, 132, 0).flops, 0);
}

}  // namespace
}  // namespace p64::cuda
