// Dispatch overlap (overlap=1, decode only): consecutive dependent dispatches are recorded with
// no pipeline barrier between them, so a dispatch's workgroups can start (and issue their weight
// loads) while the previous one finishes; each workgroup then waits, before its first read of an
// activation, until every workgroup of the previous stage has counted itself done in flags[].
// Activation buffers are declared ACT (coherent: read from L2, never a stale L1 line). The wait
// is bounded: a stage that never completes sets flags[0], which the host turns into an error,
// instead of hanging the device. Relies on the GPU starting a dispatch's workgroups only after
// all of the previous dispatch's have started (in-order launch), which NVIDIA's driver does.
#ifdef OVERLAP
#define ACT coherent
layout(std430, binding = 7) coherent volatile buffer BF { uint flags[]; };
void ov_wait(uint slot, uint target) {
  if (target != 0u && gl_LocalInvocationIndex == 0u) {
    uint spins = 0u;
    while (flags[slot] < target && flags[0] == 0u)
      if (++spins == (1u << 20)) atomicOr(flags[0], 1u);  // once set, every later wait passes
  }
  barrier();
  memoryBarrierBuffer();
}
void ov_signal(uint slot) {
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicAdd(flags[slot], 1u);
}
#else
#define ACT
void ov_wait(uint slot, uint target) {}
void ov_signal(uint slot) {}
#endif
