#include "engine/lab/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "engine/common/error.h"

namespace p64 {
namespace {

constexpr int kExactMax = 20;  // runs a side; C(40, 20) ~ 1.4e11 counts stay exact in a double

// counts[u]: the orderings of m A's and n B's with U = u (U counts pairs with the B above the A).
// Built from the largest element down: a B on top sits above all i A's, an A on top above none.
std::vector<double> u_counts(int m, int n) {
  std::vector<std::vector<std::vector<double>>> f(static_cast<size_t>(m + 1),
                                                  std::vector<std::vector<double>>(static_cast<size_t>(n + 1)));
  for (int i = 0; i <= m; ++i)
    for (int j = 0; j <= n; ++j) {
      auto& c = f[i][j];
      c.assign(static_cast<size_t>(i * j + 1), 0.0);
      if (i == 0 || j == 0) {
        c[0] = 1;
        continue;
      }
      const auto& a_top = f[i - 1][j];
      const auto& b_top = f[i][j - 1];
      for (size_t u = 0; u < a_top.size(); ++u) c[u] += a_top[u];
      for (size_t u = 0; u < b_top.size(); ++u) c[u + static_cast<size_t>(i)] += b_top[u];
    }
  return f[m][n];
}

double total(const std::vector<double>& counts) {
  double t = 0;
  for (double c : counts) t += c;
  return t;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

double normal_quantile(double q) {
  if (!(q > 0 && q < 1)) throw Error("normal quantile of " + std::to_string(q) + ": needs 0 < q < 1");
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) throw Error("Mann-Whitney: a side has no runs");
  MannWhitney r;
  r.m = static_cast<int>(a.size());
  r.n = static_cast<int>(b.size());
  bool ties = false;
  for (double x : a)
    for (double y : b) {
      if (y > x) r.u += 1;
      else if (y == x) r.u += 0.5, ties = true;
    }
  // Ties within a side change the null distribution too.
  std::map<double, int> groups;
  for (double x : a) ++groups[x];
  for (double y : b) ++groups[y];
  for (const auto& [value, count] : groups) ties = ties || count > 1;

  const double mn = static_cast<double>(r.m) * r.n;
  if (!ties && r.m <= kExactMax && r.n <= kExactMax) {
    const std::vector<double> counts = u_counts(r.m, r.n);
    const double all = total(counts);
    const auto u = static_cast<size_t>(r.u);
    double below = 0, above = 0;  // P(U <= u), P(U >= u)
    for (size_t k = 0; k < counts.size(); ++k) {
      if (k <= u) below += counts[k];
      if (k >= u) above += counts[k];
    }
    r.p_two_sided = std::min(1.0, 2 * std::min(below, above) / all);
    r.exact = true;
    return r;
  }
  const double big_n = r.m + r.n;
  double tie_term = 0;
  for (const auto& [value, count] : groups) tie_term += std::pow(count, 3) - count;
  const double var = mn / 12.0 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)));
  if (var <= 0) return r;  // every run the same value: no evidence either way
  const double z = std::max(0.0, std::abs(r.u - mn / 2) - 0.5) / std::sqrt(var);
  r.p_two_sided = std::min(1.0, 2 * (1 - normal_cdf(z)));
  return r;
}

RatioInterval ratio_interval(std::span<const double> a, std::span<const double> b, double alpha) {
  RatioInterval r;
  const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size());
  if (m == 0 || n == 0) return r;
  // k: the most pairwise ratios each end may drop, the largest k with P(U <= k) <= alpha / 2.
  int k = -1;
  if (m <= kExactMax && n <= kExactMax) {
    const std::vector<double> counts = u_counts(m, n);
    const double all = total(counts);
    double cumulative = 0;
    for (size_t u = 0; u < counts.size(); ++u) {
      cumulative += counts[u];
      if (cumulative / all > alpha / 2) break;
      k = static_cast<int>(u);
    }
  } else {
    const double mn = static_cast<double>(m) * n;
    const double sd = std::sqrt(mn * (m + n + 1) / 12.0);
    k = static_cast<int>(std::floor(mn / 2 - normal_quantile(1 - alpha / 2) * sd - 0.5));
  }
  if (k < 0) return r;
  std::vector<double> ratios;
  for (double x : a)
    for (double y : b) ratios.push_back(y / x);
  std::sort(ratios.begin(), ratios.end());
  r.bounded = true;
  r.low = ratios[static_cast<size_t>(k)];
  r.high = ratios[ratios.size() - 1 - static_cast<size_t>(k)];
  return r;
}

int min_runs_for_alpha(double alpha) {
  // The smallest p the exact test gives with n a side is 2 / C(2n, n) (every B above every A).
  double c = 2;  // C(2, 1)
  for (int n = 1; n <= kExactMax; ++n) {
    if (2 / c < alpha) return n;
    c = c * (2 * n + 2) * (2 * n + 1) / ((n + 1) * (n + 1.0));  // C(2n+2, n+1)
  }
  return kExactMax;
}

}  // namespace p64
