#version 450
// Read-only stream for the passport's bandwidth figure: every word is read once; the sum is
// stored only under a condition no data meets, so the reads cannot be dropped.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer BW { uvec4 v[]; };
layout(std430, binding = 3) writeonly buffer BY { uint y[]; };
layout(push_constant) uniform PC { uint n; } pc;
void main() {
  uvec4 acc = uvec4(0);
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 256u) acc ^= v[i];
  if (acc.x == 0x9E3779B9u && acc.y == 0x7F4A7C15u) y[0] = acc.z;
}
