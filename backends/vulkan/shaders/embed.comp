#version 450
// Token embedding rows (any weight dtype) to float, for a batch of token ids.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(constant_id = 2) const uint K = 256;
layout(std430, binding = 0) readonly buffer BW { uint wq[]; };
layout(std430, binding = 3) writeonly buffer BY { float y[]; };
layout(std430, binding = 4) readonly buffer BS { uint toks[]; };
layout(push_constant) uniform PC { uint wbase; uint nb; uint tok_off; uint n_vocab; float scale; } pc;  // scale: gemma's sqrt(n_embd), else 1
float xget(uint k) { return 0.0; }
#include "weights.glsl"
void main() {
  uint n = gl_WorkGroupID.y, i = gl_GlobalInvocationID.x;
  uint tok = min(toks[pc.tok_off + n], pc.n_vocab - 1u);
#if defined(DT_FLOAT)
  if (i < K) y[n * K + i] = w_at(pc.wbase, tok, i) * pc.scale;
#else
  if (i < K / 32u) {
    float v[32];
    dq32(pc.wbase, pc.nb, tok, i, v);
    [[unroll]] for (uint j = 0u; j < 32u; ++j) y[n * K + i * 32u + j] = v[j] * pc.scale;
  }
#endif
}
