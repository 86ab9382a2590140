// Workgroup reductions over `red` (shared, >= WG floats). Subgroup adds where the device has
// them (one shared slot per subgroup), a shared-memory tree otherwise.
// Sum over the whole workgroup, returned to every invocation.
float wg_sum(float v) {
  uint tid = gl_LocalInvocationID.x;
#ifdef USE_SUBGROUP
  v = subgroupAdd(v);
  barrier();
  if (subgroupElect()) red[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0u; i < gl_NumSubgroups; ++i) s += red[i];
  return s;
#else
  barrier();
  red[tid] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    barrier();
  }
  return red[0];
#endif
}
// Maximum over the whole workgroup, returned to every invocation.
float wg_max(float v) {
  uint tid = gl_LocalInvocationID.x;
#ifdef USE_SUBGROUP
  v = subgroupMax(v);
  barrier();
  if (subgroupElect()) red[gl_SubgroupID] = v;
  barrier();
  float s = red[0];
  for (uint i = 1u; i < gl_NumSubgroups; ++i) s = max(s, red[i]);
  return s;
#else
  barrier();
  red[tid] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1) {
    if (tid < s) red[tid] = max(red[tid], red[tid + s]);
    barrier();
  }
  return red[0];
#endif
}
