#pragma once
// The D10 manifold: ten float32 coordinates per layer computed from the layer's weights
// (docs/p64-container.md "D10 manifold"). The writer computes them while streaming tensor
// data; verify recomputes them from the file and compares bit for bit (the computation is
// deterministic: double accumulators, rows in order).
#include <string>
#include <vector>

#include "engine/format/p64_format.h"
#include "engine/model/model.h"

namespace p64 {

// Moments of a tensor's dequantized elements.
struct TensorMoments {
  double n = 0, sum = 0, sum2 = 0, sum4 = 0;
  void add(const TensorMoments& o) { n += o.n; sum += o.sum; sum2 += o.sum2; sum4 += o.sum4; }
};
TensorMoments tensor_moments(const TensorView& t);

// Collects moments by tensor name and turns them into one row per layer plus the global row.
class ManifoldBuilder {
 public:
  explicit ManifoldBuilder(const HParams& hp) : hp_(hp), layers_(hp.n_layer) {}
  // Tensors not in a coordinate's family (embeddings, output, extras) are ignored.
  void add(const std::string& name, const TensorMoments& m);
  std::vector<ManifoldCoordinate10D> rows() const;  // CRCs are filled by the encoder

 private:
  HParams hp_;
  struct LayerMoments { TensorMoments family[9]; };
  std::vector<LayerMoments> layers_;
};

// Index 0..8 of the family a blk.N tensor belongs to, or -1.
int manifold_family(const std::string& suffix);

}  // namespace p64
