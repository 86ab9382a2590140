// The decode GEMV's epilogue, shared by mv.comp and mv_wide.comp: res[r] / res2[r] hold the
// finished dot products of rows row0 + r (after a barrier); this does what the next op would
// have done: add into the residual, RoPE + KV-cache write, SwiGLU, or argmax partials.
void mv_epilogue(uint tid, uint row0) {
  uint pos = STEP_POS ? step[1] : pc.pos;
  uint ybase = pc.y_off + pos * pc.pos_stride;
  if (EPI == EPI_ROPE) {
    // Rows come in adjacent pairs (2i, 2i+1) of a head: rotate them together.
    if (tid < ROWS / 2u) {
      uint ra = row0 + 2u * tid;
      if (ra < pc.M) {
        float a = res[2u * tid], b = res[2u * tid + 1u];
        uint d = ra % pc.head_dim;
        if (d < pc.rope_dim) {
          vec2 cs = rope[pos * (pc.rope_dim / 2u) + d / 2u];
          float na = a * cs.x - b * cs.y;
          b = a * cs.y + b * cs.x;
          a = na;
        }
        y[ybase + ra] = a;
        y[ybase + ra + 1u] = b;
      }
    }
  } else if (tid < ROWS && row0 + tid < pc.M) {
    uint ro = row0 + tid;
    float v = res[tid];
    if (EPI == EPI_ADD) {
      y[ybase + ro] += v;
    } else if (EPI == EPI_SWIGLU) {
      y[ybase + ro] = glu(v, res2[tid], GEGLU);
    } else {
      y[ybase + ro] = v;
    }
  }
  if (EPI == EPI_ARGMAX && tid == 0u) {
    // Largest logit of this workgroup's rows; ties go to the lowest id.
    float best = res[0];
    uint bi = row0;
    for (uint i = 1u; i < ROWS && row0 + i < pc.M; ++i)
      if (res[i] > best) { best = res[i]; bi = row0 + i; }
    part[2u * gl_WorkGroupID.x] = floatBitsToUint(best);
    part[2u * gl_WorkGroupID.x + 1u] = bi;
  }
}
