#include "engine/format/p64_manifold.h"

#include <cmath>

#include "engine/format/p64_sections.h"
#include "engine/quant/quant.h"

namespace p64 {

int manifold_family(const std::string& suffix) {
  static const char* const kSuffix[9] = {"attn_q.weight",   "attn_k.weight", "attn_v.weight",
                                         "attn_output.weight", "ffn_gate.weight", "ffn_up.weight",
                                         "ffn_down.weight", "attn_norm.weight", "ffn_norm.weight"};
  for (int i = 0; i < 9; ++i)
    if (suffix == kSuffix[i]) return i;
  return -1;
}

TensorMoments tensor_moments(const TensorView& t) {
  TensorMoments m;
  const int64_t n = t.row_length(), rows = t.rows();
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_tensor_row(t.dtype, t.data, rows, r, n, row.data());
    // A per-row partial keeps the double sums' rounding independent of the tensor's size.
    double s = 0, s2 = 0, s4 = 0;
    for (float x : row) {
      double v = x, v2 = v * v;
      s += v;
      s2 += v2;
      s4 += v2 * v2;
    }
    m.sum += s;
    m.sum2 += s2;
    m.sum4 += s4;
  }
  m.n = static_cast<double>(n) * static_cast<double>(rows);
  return m;
}

void ManifoldBuilder::add(const std::string& name, const TensorMoments& m) {
  int32_t layer = p64io::layer_of_tensor(name);
  if (layer < 0 || static_cast<uint32_t>(layer) >= hp_.n_layer) return;
  std::string suffix = name.substr(name.find('.', 4) + 1);
  int fam = manifold_family(suffix);
  if (fam >= 0) layers_[static_cast<size_t>(layer)].family[fam].add(m);
}

namespace {

// Ten coordinates from nine families' moments: RMS of the seven matrices, mean of the two
// norm weights, and the kurtosis E[w^4]/E[w^2]^2 of all seven matrices' elements pooled
// (3 for Gaussian weights; heavy-tailed, outlier-rich layers score higher).
void coordinates(const TensorMoments* fam, float* c) {
  TensorMoments pooled;
  for (int i = 0; i < 7; ++i) {
    c[i] = fam[i].n > 0 ? static_cast<float>(std::sqrt(fam[i].sum2 / fam[i].n)) : 0.0f;
    pooled.add(fam[i]);
  }
  c[7] = fam[7].n > 0 ? static_cast<float>(fam[7].sum / fam[7].n) : 0.0f;
  c[8] = fam[8].n > 0 ? static_cast<float>(fam[8].sum / fam[8].n) : 0.0f;
  double m2 = pooled.n > 0 ? pooled.sum2 / pooled.n : 0.0;
  c[9] = m2 > 0 ? static_cast<float>((pooled.sum4 / pooled.n) / (m2 * m2)) : 0.0f;
}

}  // namespace

std::vector<ManifoldCoordinate10D> ManifoldBuilder::rows() const {
  std::vector<ManifoldCoordinate10D> out;
  TensorMoments global[9];
  for (uint32_t l = 0; l < hp_.n_layer; ++l) {
    ManifoldCoordinate10D row;
    row.id = l;
    coordinates(layers_[l].family, row.c);
    for (int i = 0; i < 9; ++i) global[i].add(layers_[l].family[i]);
    out.push_back(row);
  }
  ManifoldCoordinate10D g;
  g.id = kManifoldGlobalId;
  g.flags = kManifoldGlobal | (hp_.tied_output ? kManifoldTiedOutput : 0u);
  coordinates(global, g.c);
  out.push_back(g);
  return out;
}

}  // namespace p64
