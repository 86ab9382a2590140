// Shared by every compute shader of the Vulkan backend. Weights are bound as uint words and
// read with byte arithmetic because GGML blocks (34, 22, 210 bytes) are not word aligned;
// this needs no 8/16-bit storage features, so every Vulkan 1.1 device runs it.
#extension GL_EXT_control_flow_attributes : enable
#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif

#define EPI_STORE 0u
#define EPI_ADD 1u
#define EPI_ROPE 2u
#define EPI_SWIGLU 3u
#define EPI_ARGMAX 4u

// The gated FFN's activation of gate `g` times `u`: SwiGLU's silu, or with `gelu` GeGLU's GELU
// in its tanh approximation (gemma).
float glu(float g, float u, bool gelu) {
  if (gelu) return 0.5 * g * (1.0 + tanh(0.7978845608 * (g + 0.044715 * g * g * g))) * u;
  return g / (1.0 + exp(-g)) * u;
}

// Byte `off` of the weight buffer (W must name a uint[] array).
#define RD_U8(W, off) ((W[(off) >> 2] >> (((off) & 3u) * 8u)) & 0xFFu)
#define RD_U16(W, off) ((W[(off) >> 2] >> (((off) & 2u) * 8u)) & 0xFFFFu)
#define RD_F16(W, off) unpackHalf2x16(RD_U16(W, off)).x

// Sign-extends the four bytes of a word.
ivec4 i8x4(uint v) {
  return ivec4(bitfieldExtract(int(v), 0, 8), bitfieldExtract(int(v), 8, 8),
               bitfieldExtract(int(v), 16, 8), bitfieldExtract(int(v), 24, 8));
}
vec4 u4lo(uint v) { return vec4(v & 0xFu, (v >> 8) & 0xFu, (v >> 16) & 0xFu, (v >> 24) & 0xFu); }
vec4 u4hi(uint v) { return vec4((v >> 4) & 0xFu, (v >> 12) & 0xFu, (v >> 20) & 0xFu, (v >> 28) & 0xFu); }
