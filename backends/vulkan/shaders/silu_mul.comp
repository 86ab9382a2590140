#version 450
// Prefill SwiGLU: h = silu(gate) * up, in place over the gate buffer.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 2) readonly buffer BU { float up[]; };
layout(std430, binding = 3) buffer BG { float gate[]; };
layout(push_constant) uniform PC { uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n) { float v = gate[i]; gate[i] = v / (1.0 + exp(-v)) * up[i]; }
}
