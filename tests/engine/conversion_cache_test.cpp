// Converted models are kept for the next command: an unchanged GGUF is mapped again without a
// conversion, a changed one (or a damaged entry) is converted again, the folder keeps the most
// recently used entries within its budget, and a budget of 0 keeps nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "engine/common/error.h"
#include "engine/format/conversion_cache.h"
#include "engine/format/open_model.h"
#include "support/scoped_env.h"
#include "support/shared_files.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

struct CacheFolder {
  test::TempDir dir;
  test::ScopedEnv cache{"XDG_CACHE_HOME", (dir / "cache").string()};
  fs::path converted() const { return dir / "cache" / "p64" / "converted"; }
};

// Opens `path` and counts the progress reports of its conversion (none when it was kept).
int conversion_reports(const std::string& path) {
  int reports = 0;
  auto model = open_model_for_decode(path, "", [&](double, std::string_view) {
    ++reports;
    return true;
  });
  EXPECT_TRUE(model);
  return reports;
}

TEST(ConversionCache, AnUnchangedGgufIsMappedAgainAndAChangedOneConvertedAgain) {
  CacheFolder c;
  const fs::path gguf = c.dir / "stories260K.gguf";
  fs::copy_file(test::shared_model("stories260K.gguf"), gguf);
  EXPECT_GT(conversion_reports(gguf.string()), 0);
  ASSERT_EQ(test::names_in(c.converted()).size(), 1u);
  EXPECT_EQ(conversion_reports(gguf.string()), 0) << "the kept conversion is mapped, not made again";
  fs::last_write_time(gguf, fs::last_write_time(gguf) + std::chrono::seconds(10));
  EXPECT_GT(conversion_reports(gguf.string()), 0) << "a changed file is converted again";
  EXPECT_EQ(test::names_in(c.converted()).size(), 2u);
}

TEST(ConversionCache, ADamagedEntryIsConvertedAgain) {
  CacheFolder c;
  const std::string gguf = test::shared_model("stories260K.gguf").string();
  conversion_reports(gguf);
  const fs::path kept = converted_cache_path(gguf, "", int(ConvertOptions::Layout::Keep));
  ASSERT_TRUE(fs::exists(kept));
  const auto whole = fs::file_size(kept);
  fs::resize_file(kept, whole / 2);
  EXPECT_GT(conversion_reports(gguf), 0);
  EXPECT_EQ(fs::file_size(kept), whole);
}

TEST(ConversionCache, ABudgetOfZeroKeepsNothingAndABadOneIsRefusedByName) {
  CacheFolder c;
  {
    const test::ScopedEnv none("P64_CONVERTED_CACHE_MB", "0");
    conversion_reports(test::shared_model("stories260K.gguf").string());
    EXPECT_TRUE(test::names_in(c.converted()).empty());
  }
  const test::ScopedEnv bad("P64_CONVERTED_CACHE_MB", "lots");
  try {
    open_model_for_decode(test::shared_model("stories260K.gguf").string());
    FAIL() << "a budget that is not a number was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("P64_CONVERTED_CACHE_MB='lots'"), std::string::npos) << e.what();
  }
}

TEST(ConversionCache, TrimRemovesTheLeastRecentlyUsedAndNeverTheOneInUse) {
  test::TempDir dir;
  const auto now = fs::file_time_type::clock::now();
  auto entry = [&](const char* name, int age_s) {
    std::ofstream(dir / name) << std::string(1000, 'x');
    fs::last_write_time(dir / name, now - std::chrono::seconds(age_s));
  };
  entry("old-1.p64", 300);
  entry("older-2.p64", 400);
  entry("in-use-3.p64", 500);  // the oldest, but in use
  entry("new-4.p64", 10);
  std::ofstream(dir / "notes.txt") << "not an entry";
  trim_converted_cache(dir.path(), 2500, dir / "in-use-3.p64");
  const std::vector<std::string> want = {"in-use-3.p64", "new-4.p64", "notes.txt"};
  EXPECT_EQ(test::names_in(dir.path()), want);
}

}  // namespace
}  // namespace p64
