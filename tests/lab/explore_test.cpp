// p64 explore: a matrix of models x switch sets, each cell an A/B stored with its run, resumed
// without measuring a stored cell twice; and a bad plan refused before the store is touched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/common/register_backends.h"
#include "engine/common/error.h"
#include "engine/decode_test_models.h"
#include "engine/lab/explore.h"
#include "engine/lab/store.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

// Two model rows: stories260K and a copy of it under another name (another row of the store).
struct TwoModels {
  test::TempDir dir;
  std::string a = test::stories260k_p64();
  std::string b = (dir / "stories-copy.p64").string();
  std::string db = (dir / "lab.db").string();
  TwoModels() { fs::copy_file(a, b); }
};

constexpr const char* kSets = "opt.kv_f16=1;opt.int8_activations=0";
// Two runs a side: the test cannot reach p < 0.05, so a cell that passes the gate is inconclusive.
constexpr const char* kQuick = " --backend cpu --runs 2 --warmup 0 --tokens 4 --prompt-tokens 4 --quality-tokens 8";

std::string quick_flags(const TwoModels& m) {
  // Double quotes: sh and Windows' command line (the tests run under wine too) both take them.
  return "explore --models " + m.a + "," + m.b + " --sets \"" + kSets + "\"" + kQuick + " --db " + m.db;
}

size_t ab_runs(Store& s) {
  RunFilter f;
  f.kind = RunKind::Ab;
  return s.runs(f).size();
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ExplorePlan, SetsSplitOnSemicolonsAndEveryMistakeIsNamed) {
  register_all_backends();
  const auto sets = split_switch_sets(" opt.a=1 ; opt.b=2,opt.c=0 ");
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0], "opt.a=1");
  EXPECT_EQ(sets[1], "opt.b=2,opt.c=0");
  EXPECT_NE(test::error_of([] { split_switch_sets("opt.a=1;;opt.b=1"); }).find("set 2 is empty"), std::string::npos);

  test::TempDir dir;
  ExplorePlan p;
  p.models = {test::stories260k_p64()};
  p.baseline = "backend=cpu";
  p.sets = {"opt.kv_f16=1"};
  EXPECT_NO_THROW(check_explore_plan(p));
  auto refused = [&](std::vector<std::string> sets) {
    ExplorePlan q = p;
    q.sets = std::move(sets);
    return test::error_of([&] { check_explore_plan(q); });
  };
  const std::string unknown = refused({"opt.kv_f16=1", "opt.no_such_switch=1"});
  EXPECT_NE(unknown.find("set 2 'opt.no_such_switch=1'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown switch 'no_such_switch'"), std::string::npos) << unknown;
  EXPECT_NE(refused({"threads=4"}).find("'threads=4' is not opt.NAME=VALUE"), std::string::npos);
  EXPECT_NE(refused({"opt.kv_f16=2"}).find("kv_f16=2"), std::string::npos);
  EXPECT_NE(refused({"opt.kv_f16=0"}).find("changes nothing"), std::string::npos);  // the default
  EXPECT_NE(refused({"opt.kv_f16=1", " opt.kv_f16=1"}).find("sets 1 and 2 are the same"), std::string::npos);
  ExplorePlan missing = p;
  missing.models.push_back((dir / "absent.p64").string());
  const std::string no_file = test::error_of([&] { check_explore_plan(missing); });
  EXPECT_NE(no_file.find("model 2 '" + (dir / "absent.p64").string() + "': no such file"), std::string::npos) << no_file;

  // The derived id follows the plan: the same plan resumes, another set is another explore.
  ExplorePlan same = p;
  const fs::path model(p.models[0]);
  same.models = {(model.parent_path() / "." / model.filename()).string()};  // another spelling of the same file
  EXPECT_EQ(explore_name(p), explore_name(same));
  ExplorePlan other = p;
  other.sets = {"opt.int8_activations=0"};
  EXPECT_NE(explore_name(p), explore_name(other));
  EXPECT_EQ(explore_name(p).rfind("x-", 0), 0u);
}

TEST(ExplorePlan, PlanFileModelsAreTakenFromItsFolderAndUnknownFieldsRefused) {
  test::TempDir dir;
  fs::create_directory(dir / "plans");
  const std::string plan = test::write_file(
      dir, "plans/p.json", R"({"id": "night", "models": ["../m.p64"], "sets": ["opt.kv_f16=1"], "runs": 3})");
  const ExplorePlan p = read_explore_plan(plan);
  EXPECT_EQ(p.name, "night");
  ASSERT_EQ(p.models.size(), 1u);
  EXPECT_EQ(p.models[0], fs::absolute(dir / "m.p64").lexically_normal().string());
  EXPECT_EQ(p.runs, 3);
  EXPECT_EQ(p.tokens, ExplorePlan{}.tokens);
  const std::string typo = test::write_file(dir, "typo.json", R"({"models": [], "set": []})");
  EXPECT_NE(test::error_of([&] { read_explore_plan(typo); }).find("unknown field 'set'"), std::string::npos);
  const std::string wrong = test::write_file(dir, "wrong.json", R"({"runs": "five"})");
  EXPECT_NE(test::error_of([&] { read_explore_plan(wrong); }).find("'runs' must be a whole number"), std::string::npos);
}

// A plan file, 2 models x 2 sets on the CPU: four cells, each an A/B stored with its verdict,
// then `explore show` reprints the same matrix from the store.
TEST(ExploreCli, TwoModelsTimesTwoSetsStoresFourVerdictsAndShowReprintsThem) {
  TwoModels m;
  const nlohmann::json plan_json = {{"id", "night"},
                                    {"models", {m.a, "stories-copy.p64"}},  // a Windows path needs JSON's escapes
                                    {"baseline", "backend=cpu"},
                                    {"sets", {"opt.kv_f16=1", "opt.int8_activations=0"}},
                                    {"runs", 2},
                                    {"warmup", 0},
                                    {"tokens", 4},
                                    {"prompt_tokens", 4},
                                    {"quality_tokens", 8}};
  const std::string plan = test::write_file(m.dir, "plan.json", plan_json.dump());
  const test::CliRun r = test::run_p64("explore --plan " + plan + " --json --db " + m.db);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["id"], "night");
  EXPECT_EQ(j["cells_total"], 4);
  EXPECT_EQ(j["cells_run"], 4);
  ASSERT_EQ(j["cells"].size(), 4u);
  for (const auto& c : j["cells"]) {
    EXPECT_TRUE(c["quality_pass"].get<bool>()) << c.dump();
    EXPECT_EQ(c["verdict"], "inconclusive") << c.dump();
    EXPECT_EQ(c["switch"], c["set"] == 0 ? "kv_f16" : "int8_activations");
    EXPECT_GT(c["ratio"].get<double>(), 0);
  }
  EXPECT_NE(r.err.find("cell 4/4 stories-copy.p64 x [2] opt.int8_activations=0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ETA"), std::string::npos) << r.err;
  {
    auto store = Store::open(m.db);
    EXPECT_EQ(ab_runs(*store), 4u);
    const ExploreMatrix matrix = load_explore_matrix(*store, "night");
    ASSERT_EQ(matrix.cells.size(), 4u);
    for (size_t row = 0; row < 2; ++row)
      for (size_t set = 0; set < 2; ++set) {
        const ExploreCell* c = matrix.cell(row, set);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(store->comparison_for_run(c->run_id)->config_b, explore_config_b(matrix.plan, set).to_string());
        EXPECT_NE(store->model(store->run(c->run_id)->model_id)->path.find(row ? "stories-copy" : "stories260K"),
                  std::string::npos);
      }
  }
  const test::CliRun show = test::run_p64("explore show night --db " + m.db);
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("4 of 4 cells measured"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("[2] opt.int8_activations=0"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("stories-copy.p64"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(" inc"), std::string::npos) << show.out;
  const test::CliRun unknown = test::run_p64("explore show nosuch --db " + m.db);
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("p64: error: " + m.db + ": no explore 'nosuch'"), std::string::npos) << unknown.err;
}

// Stopped after one cell, the same command measures only the other three; a third run measures none.
TEST(ExploreCli, ResumesWithoutMeasuringAStoredCellAgain) {
  TwoModels m;
  const test::CliRun first = test::run_p64(quick_flags(m) + " --max-cells 1 --json");
  ASSERT_EQ(first.status, 0) << first.err;
  const auto j1 = nlohmann::json::parse(first.out);
  EXPECT_EQ(j1["cells_run"], 1);
  EXPECT_EQ(j1["cells_measured"], 1);
  EXPECT_NE(first.err.find("stopped after 1 cell(s) (--max-cells)"), std::string::npos) << first.err;
  const std::string id = j1["id"];
  int64_t first_run = j1["cells"][0]["run_id"];

  const test::CliRun second = test::run_p64(quick_flags(m) + " --json");
  ASSERT_EQ(second.status, 0) << second.err;
  const auto j2 = nlohmann::json::parse(second.out);
  EXPECT_EQ(j2["id"], id);  // the same flags: the same explore
  EXPECT_EQ(j2["cells_skipped"], 1);
  EXPECT_EQ(j2["cells_run"], 3);
  EXPECT_EQ(j2["cells_measured"], 4);
  EXPECT_EQ(j2["cells"][0]["run_id"], first_run);  // the stored cell kept its run
  EXPECT_NE(second.err.find("1 stored before, 3 to run (resuming)"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("cell 1/4 stories260K.p64 x [1] opt.kv_f16=1: stored before (run " +
                            std::to_string(first_run) + "), skipped"),
            std::string::npos)
      << second.err;
  {
    auto store = Store::open(m.db);
    EXPECT_EQ(ab_runs(*store), 4u);
  }
  // By id alone, with the stored plan: nothing left to measure.
  const test::CliRun third = test::run_p64("explore --id " + id + " --json --db " + m.db);
  ASSERT_EQ(third.status, 0) << third.err;
  EXPECT_EQ(nlohmann::json::parse(third.out)["cells_run"], 0);
  auto store = Store::open(m.db);
  EXPECT_EQ(ab_runs(*store), 4u);
  EXPECT_EQ(store->explores().size(), 1u);
}

// A stop asked for in the middle of a cell (Ctrl-C) leaves the cells before it stored, and no
// run of the cell it stopped.
TEST(Explore, AStopMidCellStoresNothingOfThatCell) {
  register_all_backends();
  TwoModels m;
  ExplorePlan p;
  p.models = {m.a, m.b};
  p.baseline = "backend=cpu";
  p.sets = split_switch_sets(kSets);
  p.runs = 2;
  p.warmup = 0;
  p.tokens = 4;
  p.prompt_tokens = 4;
  p.quality_tokens = 8;
  ExploreOptions o;
  o.store_path = m.db;
  ExploreCallbacks cb;
  size_t cells_started = 0;
  cb.cell_started = [&](const ExploreCellEvent&) { ++cells_started; };
  int calls_in_second_cell = 0;
  // In the second cell, after its first measured run.
  cb.measure = [&](double, std::string_view) { return cells_started < 2 || ++calls_in_second_cell < 3; };
  EXPECT_THROW(run_explore(p, o, cb), Cancelled);
  {
    auto store = Store::open(m.db);
    EXPECT_EQ(ab_runs(*store), 1u);
    EXPECT_EQ(load_explore_matrix(*store, explore_name(p)).cells.size(), 1u);
  }
  cb.measure = {};
  const ExploreOutcome out = run_explore(p, o, cb);
  EXPECT_EQ(out.cells_skipped, 1u);
  EXPECT_EQ(out.cells_run, 3u);
  EXPECT_EQ(out.matrix.cells.size(), 4u);
  auto store = Store::open(m.db);
  EXPECT_EQ(ab_runs(*store), 4u);
}

// Ctrl-C through the command, once the second cell has started: it ends with 130 and says how to
// resume, and every A/B run it stored is a cell of the matrix (no run of the stopped cell).
TEST(ExploreCli, CtrlCStopsWithTheCellsBeforeItStored) {
  TwoModels m;
  const std::string err = (m.dir / "explore.err").string();
  const std::string script = test::write_file(
      m.dir, "stop.sh",
      std::string(P64_CLI_PATH) + " explore --models " + m.a + "," + m.b + " --sets '" + kSets +
          "' --backend cpu --runs 10 --warmup 0 --tokens 64 --prompt-tokens 4 --quality-tokens 8 --id night --db " +
          m.db + " > /dev/null 2> " + err + " &\n"
          "pid=$!\n"
          "for i in $(seq 1 3000); do grep -q 'cell 2/4' " + err + " && break; sleep 0.01; done\n"
          "kill -INT $pid\n"
          "wait $pid\n"
          "echo $?\n");
  const test::CliRun r = test::run_program("sh", script);
  EXPECT_EQ(r.out, "130\n");
  const std::string said = test::read_text_file(err);
  EXPECT_NE(said.find("p64: explore night interrupted; the cell being measured was not stored"), std::string::npos)
      << said;
  EXPECT_NE(said.find("rerun `p64 explore --id night --db " + m.db + "`"), std::string::npos) << said;
  auto store = Store::open(m.db);
  const size_t cells = load_explore_matrix(*store, "night").cells.size();
  EXPECT_GE(cells, 1u);
  EXPECT_LT(cells, 4u);
  EXPECT_EQ(ab_runs(*store), cells);
}

// Each mistake is named and refused before the store is opened: its file stays byte for byte.
TEST(ExploreCli, BadInputIsNamedAndLeavesTheStoreAlone) {
  TwoModels m;
  { Store::open(m.db); }
  const std::string before = file_bytes(m.db);
  const std::string models = " --models " + m.a + "," + m.b + " --backend cpu --db " + m.db;
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      {"explore" + models + " --sets \"opt.kv_f16=1;opt.nosuch=1\"", "p64: error: explore: set 2 'opt.nosuch=1': cpu backend: unknown switch 'nosuch'"},
      {"explore" + models + " --sets \"threads=4\"", "p64: error: explore: set 1 'threads=4': 'threads=4' is not opt.NAME=VALUE"},
      {"explore" + models + " --sets \"opt.kv_f16=1;\"", "p64: error: explore: --sets: set 2 is empty"},
      {"explore --models " + m.a + "," + (m.dir / "gone.p64").string() + " --sets opt.kv_f16=1 --db " + m.db,
       "p64: error: explore: model 2 '" + (m.dir / "gone.p64").string() + "': no such file or folder"},
      {"explore" + models + " --sets opt.kv_f16=1 --runs 1", "p64: error: explore: runs 1 is outside 2..1000"},
  };
  for (const Case& c : cases) {
    const test::CliRun r = test::run_p64(c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_EQ(file_bytes(m.db), before);
  EXPECT_FALSE(fs::exists(m.db + "-wal") && fs::file_size(m.db + "-wal") > 0);
  // An id stored with another plan: refused, naming what differs, before anything is measured.
  ExplorePlan stored;
  stored.models = {m.a};
  stored.baseline = "backend=cpu";
  stored.sets = {"opt.int8_activations=0"};
  { Store::open(m.db)->insert_explore("night", explore_plan_json(stored).dump()); }
  const std::string with_night = file_bytes(m.db);
  const test::CliRun other = test::run_p64(quick_flags(m) + " --id night");
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.err.find("p64: error: " + m.db + ": explore 'night' was started with another plan (models"),
            std::string::npos)
      << other.err;
  EXPECT_NE(other.err.find("sets [\"opt.int8_activations=0\"] there, [\"opt.kv_f16=1\",\"opt.int8_activations=0\"] here"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(file_bytes(m.db), with_night);
  auto store = Store::open(m.db);
  EXPECT_EQ(ab_runs(*store), 0u);
}

}  // namespace
}  // namespace p64
