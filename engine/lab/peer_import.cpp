#include "engine/lab/peer_import.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/store_text.h"

namespace p64 {
namespace {

using Fields = std::map<std::string, std::string>;

std::string field(const Fields& f, const char* k) {
  auto it = f.find(k);
  return it == f.end() ? std::string() : it->second;
}
long long num(const Fields& f, const char* k) {
  const std::string v = field(f, k);
  try {
    return v.empty() ? 0 : std::stoll(v);
  } catch (const std::exception&) {
    return 0;
  }
}
double real(const Fields& f, const char* k) {
  const std::string v = field(f, k);
  try {
    return v.empty() ? 0.0 : std::stod(v);
  } catch (const std::exception&) {
    return 0.0;
  }
}
bool flag(const Fields& f, const char* k) {
  const std::string v = field(f, k);
  return v == "1" || v == "true";
}

PeerResult from_fields(const Fields& f, const std::string& path, const std::string& raw) {
  PeerResult p;
  p.source_file = path;
  p.model = field(f, "model_filename");
  p.model_type = field(f, "model_type");
  if (p.model.empty()) p.model = p.model_type;
  p.quant = quant_from_model_type(p.model_type);
  p.n_prompt = static_cast<int32_t>(num(f, "n_prompt"));
  p.n_gen = static_cast<int32_t>(num(f, "n_gen"));
  if (p.n_prompt > 0 && p.n_gen > 0) p.test = "pp" + std::to_string(p.n_prompt) + "+tg" + std::to_string(p.n_gen);
  else if (p.n_gen > 0) p.test = "tg" + std::to_string(p.n_gen);
  else p.test = "pp" + std::to_string(p.n_prompt);
  p.device = field(f, "gpu_info");
  if (p.device.empty()) p.device = field(f, "cpu_info");
  p.backends = field(f, "backends");
  p.n_threads = static_cast<int32_t>(num(f, "n_threads"));
  p.n_gpu_layers = static_cast<int32_t>(num(f, "n_gpu_layers"));
  p.flash_attn = flag(f, "flash_attn");
  p.avg_ts = real(f, "avg_ts");
  p.stddev_ts = real(f, "stddev_ts");
  p.model_size = static_cast<uint64_t>(num(f, "model_size"));
  p.build_commit = field(f, "build_commit");
  p.test_time = field(f, "test_time");
  p.raw_json = raw;
  return p;
}

Fields fields_of(const nlohmann::json& o) {
  Fields f;
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (it->is_string()) f[it.key()] = it->get<std::string>();
    else if (it->is_boolean()) f[it.key()] = it->get<bool>() ? "1" : "0";
    else if (it->is_number()) f[it.key()] = it->dump();
  }
  return f;
}

// The entry as stored beside the parsed fields.
std::string dump_raw(const nlohmann::json& j) { return json_text(j); }

// One CSV row or SQL VALUES list by column. CSV and SQL are read as bytes: a cell that is not
// UTF-8 is imported with U+FFFD in place of its bad bytes, and a warning names the file and column.
Fields fields_of_cells(const std::vector<std::string>& columns, const std::vector<std::string>& cells,
                       const std::string& path) {
  Fields f;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string column = store_text(columns[i], path, "a column name");
    f[column] = store_text(cells[i], path, "column " + column);
  }
  return f;
}

PeerResult from_json_object(const nlohmann::json& o, const std::string& path) {
  if (!o.is_object() || !o.contains("avg_ts")) throw Error(path + ": a llama-bench entry without avg_ts");
  PeerResult p = from_fields(fields_of(o), path, dump_raw(o));
  if (o.contains("samples_ts") && o["samples_ts"].is_array())
    for (const auto& v : o["samples_ts"]) {
      if (!v.is_number()) throw Error(path + ": a llama-bench entry whose samples_ts holds " + dump_raw(v) + ", not a number");
      p.samples_ts.push_back(v.get<double>());
    }
  return p;
}

// Splits one CSV or SQL VALUES list on commas outside quotes; strips the quotes.
std::vector<std::string> split_quoted(const std::string& s, char quote) {
  std::vector<std::string> out;
  std::string cur;
  bool in = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == quote) {
      if (in && i + 1 < s.size() && s[i + 1] == quote) {
        cur += quote;
        ++i;
      } else {
        in = !in;
      }
    } else if (c == ',' && !in) {
      out.push_back(cur);
      cur.clear();
    } else if (!(c == ' ' && !in && cur.empty())) {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

nlohmann::json to_raw(const Fields& f) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : f) j[k] = v;
  return j;
}

}  // namespace

std::string quant_from_model_type(const std::string& t) {
  static const std::pair<const char*, const char*> kMap[] = {
      {"Q4_K - Medium", "Q4_K_M"}, {"Q4_K - Small", "Q4_K_S"}, {"Q5_K - Medium", "Q5_K_M"}, {"Q5_K - Small", "Q5_K_S"},
      {"Q6_K", "Q6_K"},           {"Q8_0", "Q8_0"},           {"Q4_0", "Q4_0"},           {"Q3_K - Medium", "Q3_K_M"},
      {"BF16", "BF16"},           {"F16", "F16"},             {"F32", "F32"}};
  for (const auto& [k, v] : kMap)
    if (t.find(k) != std::string::npos) return v;
  return {};
}

std::vector<PeerResult> read_llama_bench(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw Error(path + ": empty file");
  std::vector<PeerResult> out;
  if (text[first] == '[') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ": not valid llama-bench JSON: " + e.what());
    }
    for (const auto& o : j) out.push_back(from_json_object(o, path));
    return out;
  }
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  if (text[first] == '{') {
    while (std::getline(lines, line)) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        out.push_back(from_json_object(nlohmann::json::parse(line), path));
      } catch (const nlohmann::json::exception& e) {
        throw Error(path + ": line " + std::to_string(n) + ": not JSON: " + e.what());
      }
    }
    return out;
  }
  if (text.compare(first, 12, "CREATE TABLE") == 0 || text.compare(first, 11, "INSERT INTO") == 0) {
    while (std::getline(lines, line)) {
      ++n;
      if (line.rfind("INSERT INTO", 0) != 0) continue;
      const size_t c0 = line.find('('), c1 = line.find(')', c0), v0 = line.find("VALUES (", c1),
                   v1 = line.rfind(')');
      if (c0 == std::string::npos || c1 == std::string::npos || v0 == std::string::npos || v1 <= v0)
        throw Error(path + ": line " + std::to_string(n) + ": not an INSERT of llama-bench's form");
      const auto cols = split_quoted(line.substr(c0 + 1, c1 - c0 - 1), '"');
      const auto vals = split_quoted(line.substr(v0 + 8, v1 - v0 - 8), '\'');
      if (cols.size() != vals.size())
        throw Error(path + ": line " + std::to_string(n) + ": " + std::to_string(cols.size()) + " columns but " +
                    std::to_string(vals.size()) + " values");
      const Fields f = fields_of_cells(cols, vals, path);
      out.push_back(from_fields(f, path, dump_raw(to_raw(f))));
    }
    return out;
  }
  std::vector<std::string> header;
  while (std::getline(lines, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto cells = split_quoted(line, '"');
    if (header.empty()) {
      header = cells;
      if (std::find(header.begin(), header.end(), "avg_ts") == header.end())
        throw Error(path + ": not llama-bench output (no avg_ts column; json, jsonl, csv and sql are read)");
      continue;
    }
    if (cells.size() != header.size())
      throw Error(path + ": line " + std::to_string(n) + ": " + std::to_string(cells.size()) + " cells, header has " +
                  std::to_string(header.size()));
    const Fields f = fields_of_cells(header, cells, path);
    out.push_back(from_fields(f, path, dump_raw(to_raw(f))));
  }
  return out;
}

}  // namespace p64
