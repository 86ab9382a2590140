#version 450
// SwiGLU h = silu(gate) * up (GEGLU: GELU for silu), in place over the gate buffer (decode
// with fused_gate_up=0).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const bool GEGLU = false;
layout(std430, binding = 2) readonly buffer BU { float up[]; };
layout(std430, binding = 3) buffer BG { float gate[]; };
layout(push_constant) uniform PC { uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) gate[i] = glu(gate[i], up[i], GEGLU);
}
