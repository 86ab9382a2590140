#include "app/cli/explore_table.h"

#include <algorithm>
#include <cstdio>


namespace p64::cli {
namespace {

std::string file_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && (p.back() == '/' || p.back() == '\\')) p.pop_back();  // a model folder
  const auto slash = p.find_last_of("/\\");
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string cell_text(const ExploreCell* c) {
  if (!c) return "-";
  char text[48];
  std::snprintf(text, sizeof text, "%.3f%s %s%s", c->comparison.ratio_median, c->significant() ? "*" : "",
                short_verdict(c->comparison.verdict).c_str(), c->busy ? "!" : "");
  return text;
}

}  // namespace

std::string short_verdict(Verdict v) {
  switch (v) {
    case Verdict::Rejected: return "rej";
    case Verdict::Inconclusive: return "inc";
    case Verdict::Win: return "win";
    case Verdict::Promoted: return "PROMO";
  }
  return "?";
}

void print_explore_matrix(const ExploreMatrix& m, const std::string& store_path) {
  std::printf("explore %s: %zu models x %zu sets, %zu of %zu cells measured (store %s)\n", m.name.c_str(), m.rows(),
              m.columns(), m.cells.size(), m.size(), store_path.c_str());
  std::printf("A = %s; B = A + the set; %d runs a side, %d decode tokens\n\n", m.plan.baseline.c_str(), m.plan.runs,
              m.plan.tokens);
  size_t model_width = 5;
  for (const auto& p : m.plan.models) model_width = std::max(model_width, file_name(p).size());
  std::printf("%-*s", static_cast<int>(model_width), "model");
  for (size_t s = 0; s < m.columns(); ++s) std::printf("  %-16s", ("[" + std::to_string(s + 1) + "]").c_str());
  std::printf("\n");
  for (size_t r = 0; r < m.rows(); ++r) {
    std::printf("%-*s", static_cast<int>(model_width), file_name(m.plan.models[r]).c_str());
    for (size_t s = 0; s < m.columns(); ++s) std::printf("  %-16s", cell_text(m.cell(r, s)).c_str());
    std::printf("\n");
  }
  std::printf("\n");
  for (size_t s = 0; s < m.columns(); ++s) std::printf("[%zu] %s\n", s + 1, m.plan.sets[s].c_str());
  std::printf("cell: median(B)/median(A) decode tok/s and verdict (win, PROMO(ted), rej(ected), inc(onclusive)); "
              "* p < 0.05 (Mann-Whitney U); ! machine busy; - not measured yet\n");
  if (m.cells.empty()) return;
  std::printf("\n%-*s  %-4s %6s %10s %10s  %s\n", static_cast<int>(model_width), "model", "set", "run", "A tok/s",
              "B tok/s", "verdict");
  for (const auto& c : m.cells)
    std::printf("%-*s  %-4s %6lld %10.2f %10.2f  %s: %s\n", static_cast<int>(model_width),
                file_name(m.plan.models[c.model_index]).c_str(), ("[" + std::to_string(c.set_index + 1) + "]").c_str(),
                static_cast<long long>(c.run_id), c.comparison.a_median, c.comparison.b_median,
                std::string(to_string(c.comparison.verdict)).c_str(), c.comparison.reason.c_str());
}

nlohmann::json explore_matrix_json(const ExploreMatrix& m) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : m.cells)
    cells.push_back({{"model", c.model_index},
                     {"set", c.set_index},
                     {"run_id", c.run_id},
                     {"ratio", c.comparison.ratio_median},
                     {"a_median", c.comparison.a_median},
                     {"b_median", c.comparison.b_median},
                     {"p_value", c.p_value},
                     {"significant", c.significant()},
                     {"busy", c.busy},
                     {"quality_pass", c.comparison.quality_pass},
                     {"switch", c.comparison.switch_name},
                     {"verdict", std::string(to_string(c.comparison.verdict))},
                     {"reason", c.comparison.reason}});
  return {{"id", m.name},
          {"created_at", m.created_at},
          {"plan", explore_plan_json(m.plan)},
          {"cells_total", m.size()},
          {"cells_measured", m.cells.size()},
          {"cells", cells}};
}

}  // namespace p64::cli
