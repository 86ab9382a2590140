#include <gtest/gtest.h>

#include "engine/quant/dtype.h"

using namespace p64;

TEST(DType, KnownTypesHaveBlockFacts) {
  ASSERT_TRUE(dtype_info(DType::Q4_K));
  EXPECT_EQ(dtype_info(DType::Q4_K)->block_bytes, 144u);
  EXPECT_EQ(dtype_row_bytes(DType::Q6_K, 512), 420u);
  EXPECT_EQ(dtype_row_bytes(DType::Q8_0, 64), 68u);
  EXPECT_FALSE(dtype_info(static_cast<DType>(99)));
  EXPECT_EQ(dtype_from_name("q4_k_soa"), DType::Q4_K_SOA);
  EXPECT_EQ(dtype_soa_of(DType::Q6_K), DType::Q6_K_SOA);
  EXPECT_EQ(dtype_aos_of(DType::Q8_0_SOA), DType::Q8_0);
}
