// p64 report: scoreboard, bars, timeline split, roofline and rejected optimisations.
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/atomic_output.h"
#include "engine/lab/llama_bench_sql.h"
#include "engine/lab/report.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

struct Args {
  std::string db = default_store_path();
  std::string format = "md";
  std::string output;
  bool force = false;
  ReportOptions options;
};

const CommandRegistration reg(48, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("report", "Scoreboard report from the lab store (md, html, csv, json), or its runs as llama-bench SQL");
  c->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  c->add_option("--format", a->format,
                "md | html | csv | json (the scoreboard), or sql: the decode-proxy runs as llama-bench -o sql rows "
                "(for compare-llama-bench.py)")
      ->capture_default_str()
      ->check(CLI::IsMember({"md", "html", "csv", "json", "sql"}));
  c->add_option("-o,--output", a->output, "Write here instead of stdout (never over the store or a non-regular file)");
  c->add_flag("--force", a->force, "Replace an existing -o file")->capture_default_str();
  c->add_option("--model", a->options.model, "Only runs of models whose path/name contains this");
  // The defaults are the plan's bars, judged on the plan's model only; giving any sets bars for
  // the reported model (with --model, the one named).
  const std::vector<CLI::Option*> bars = {
      c->add_option("--g1", a->options.bars.g1_tok_s, "G1 bar, decode tok/s")->capture_default_str(),
      c->add_option("--g2", a->options.bars.g2_tok_s, "G2 bar, decode tok/s")->capture_default_str(),
      c->add_option("--g3", a->options.bars.g3_tok_s, "G3 bar, decode tok/s")->capture_default_str(),
      c->add_option("--g4", a->options.bars.g4_tok_s, "G4 bar, decode tok/s")->capture_default_str(),
      c->add_option("--g5", a->options.bars.g5_bandwidth_share, "G5 bar, share of measured read bandwidth")
          ->capture_default_str()};
  c->callback([a, bars] {
    for (const CLI::Option* bar : bars) a->options.bars_from_user = a->options.bars_from_user || bar->count() > 0;
    OutputPolicy output{a->force};
    protect_store_files(output, a->db);
    if (!a->output.empty()) check_output_path(a->output, output);  // before the store is opened (or made)
    auto store = Store::open(a->db);
    std::string sql;
    if (a->format == "sql") {
      const LlamaBenchSql export_ = llama_bench_sql(*store, a->options.model);
      std::cerr << "report: " << export_.rows << " llama-bench row(s)";
      if (export_.runs_skipped)
        std::cerr << "; " << export_.runs_skipped << " decode-proxy run(s) left out: decode after a prompt of 2+ tokens "
                  << "has no llama-bench tg counterpart, and they measured no prefill";
      std::cerr << "\n";
      sql = export_.text;
    }
    const nlohmann::json rep = a->format == "sql" ? nlohmann::json::object() : build_report(*store, a->options);
    const std::string text = a->format == "sql" ? sql
                             : a->format == "json" ? json_text(rep, 2) + "\n"
                             : a->format == "csv" ? render_csv(rep)
                             : a->format == "html" ? render_html(rep)
                                                   : render_markdown(rep);
    if (a->output.empty()) {
      std::cout << text;
      return;
    }
    write_file_atomically(a->output, text, output);
  });
});

}  // namespace
}  // namespace p64::cli
