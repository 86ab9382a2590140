// llama-bench files the fuzz target (tests/fuzz/fuzz_llama_bench.cpp) found escaping the
// import as nlohmann exceptions instead of an import or a p64::Error naming the file.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "engine/common/error.h"
#include "engine/lab/peer_import.h"
#include "support/shared_files.h"

namespace p64 {

// CSV and SQL are read as bytes; a cell that is not UTF-8 made the raw-row JSON dump throw
// (type_error 316). It is imported, with the bad bytes shown as U+FFFD in the raw row.
TEST(PeerImportFuzzRegressions, CsvCellsThatAreNotUtf8AreImported) {
  test::TempDir dir;
  const std::string path = (dir / "bench.csv").string();
  std::ofstream(path, std::ios::binary) << "model_type,mo\xF2\xF2\xF2,n_gen,avg_ts\n"
                                        << "\"llama 7B Q4_K - Medium\",\xF2x,128,55.5\n";
  const auto rows = read_llama_bench(path);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].avg_ts, 55.5);
  EXPECT_EQ(rows[0].quant, "Q4_K_M");
  EXPECT_NE(rows[0].raw_json.find("\xEF\xBF\xBD"), std::string::npos) << rows[0].raw_json;
}

// A samples_ts that holds something other than numbers was a type_error 302.
TEST(PeerImportFuzzRegressions, NonNumericSamplesAreRefusedNamingTheFile) {
  test::TempDir dir;
  const std::string path = (dir / "bench.json").string();
  std::ofstream(path) << R"([{"model_type":"llama 7B F16","n_gen":128,"avg_ts":10.0,"samples_ts":[10.0,"fast"]}])";
  try {
    read_llama_bench(path);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bench.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("samples_ts"), std::string::npos) << e.what();
  }
}

}  // namespace p64
