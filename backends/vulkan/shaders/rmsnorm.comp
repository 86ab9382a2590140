#version 450
// y[n] = x[n] * g / rms(x[n]) for each token of a prefill batch (one workgroup per token).
// ADD: y[n] += that instead (gemma's post-norms: the normed attention / FFN output into the
// residual stream).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer BX { float x[]; };
layout(std430, binding = 2) readonly buffer BG { float g[]; };
#ifdef ADD
layout(std430, binding = 3) buffer BY { float y[]; };
#else
layout(std430, binding = 3) writeonly buffer BY { float y[]; };
#endif
layout(push_constant) uniform PC { uint K; float eps; } pc;
const uint WG = 256u;
shared float red[WG];
#include "reduce.glsl"
void main() {
  uint tid = gl_LocalInvocationID.x, base = gl_WorkGroupID.x * pc.K;
  float ss = 0.0;
  for (uint k = tid; k < pc.K; k += WG) ss += x[base + k] * x[base + k];
  float scale = inversesqrt(wg_sum(ss) / float(pc.K) + pc.eps);
#ifdef ADD
  for (uint k = tid; k < pc.K; k += WG) y[base + k] += g[k] * (scale * x[base + k]);
#else
  for (uint k = tid; k < pc.K; k += WG) y[base + k] = x[base + k] * scale * g[k];
#endif
}
