// What both decode GEMV kernels (mv.comp, mv_wide.comp) share with the host: specialization
// constants 0-7 and 11, bindings 0-7 and the push constants (MvPC in vulkan_backend.cpp).
#include "overlap.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(constant_id = 2) const uint K = 256;
layout(constant_id = 3) const uint TPR = 32;
layout(constant_id = 4) const uint EPI = 0;
layout(constant_id = 5) const bool FUSE_NORM = false;
layout(constant_id = 7) const bool STEP_POS = true;  // position from the step buffer
layout(constant_id = 11) const bool GEGLU = false;   // EPI_SWIGLU with GELU for silu (gemma)

layout(std430, binding = 0) readonly buffer BW { uint wq[]; };
layout(std430, binding = 1) ACT readonly buffer BX { float x[]; };
layout(std430, binding = 2) readonly buffer BG { float g[]; };
layout(std430, binding = 3) ACT buffer BY { float y[]; };
layout(std430, binding = 4) buffer BS { uint step[]; };  // token, pos, result
layout(std430, binding = 5) readonly buffer BR { vec2 rope[]; };  // [pos][rope_dim/2] cos,sin
layout(std430, binding = 6) buffer BP { uint part[]; };  // argmax partials: value bits, index

layout(push_constant) uniform PC {
  uint M;           // rows (per matrix)
  uint wbase;       // byte offset of the matrix (gate for SwiGLU)
  uint wbase2;      // byte offset of the up matrix (SwiGLU)
  uint nb;          // blocks of one matrix (SoA array offsets)
  uint x_off;       // element offset of the input vector
  uint y_off;       // element offset of the output
  uint pos_stride;  // output advances by pos * pos_stride (KV cache rows); 0 otherwise
  uint head_dim;
  uint rope_dim;
  float eps;
  uint pos;         // when !STEP_POS
  uint ov_wait, ov_target, ov_signal;  // overlap.glsl: stage slot to wait on, its workgroups, own slot
} pc;

shared float res[ROWS];
shared float res2[ROWS];
