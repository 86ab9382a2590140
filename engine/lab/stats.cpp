#include "engine/lab/stats.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace p64 {

MinMedianMax min_median_max(std::span<const double> values) {
  MinMedianMax m;
  if (values.empty()) return m;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  m.min = v.front();
  m.max = v.back();
  m.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  m.n = static_cast<int>(n);
  double sum = 0;
  for (double x : v) sum += x;
  m.mean = sum / static_cast<double>(n);
  if (n >= 2) {
    double ss = 0;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    m.stddev = std::sqrt(ss / static_cast<double>(n - 1));
    m.cv = m.mean > 0 ? m.stddev / m.mean : 0.0;
  }
  return m;
}

void to_json(nlohmann::json& j, const MinMedianMax& m) {
  j = nlohmann::json{{"min", m.min},   {"median", m.median}, {"max", m.max}, {"mean", m.mean},
                     {"stddev", m.stddev}, {"cv", m.cv},       {"n", m.n}};
}

void from_json(const nlohmann::json& j, MinMedianMax& m) {
  m.min = j.value("min", 0.0);
  m.median = j.value("median", 0.0);
  m.max = j.value("max", 0.0);
  m.mean = j.value("mean", 0.0);
  m.stddev = j.value("stddev", 0.0);
  m.cv = j.value("cv", 0.0);
  m.n = j.value("n", 0);
}

}  // namespace p64
