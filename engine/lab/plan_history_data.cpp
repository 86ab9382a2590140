// The plan history (resources/plan_history.json) compiled into the binary, so a fresh store
// is seeded without the resources folder at hand. Keep it identical to the JSON file:
// tests/lab/plan_history_test.cpp fails when they drift. Regenerate after editing the JSON:
//   { sed -n 1,9p engine/lab/plan_history_data.cpp; cat resources/plan_history.json; sed -n '$p' engine/lab/plan_history_data.cpp; } > tmp && mv tmp engine/lab/plan_history_data.cpp
#include "engine/lab/plan_history.h"

namespace p64 {

std::string_view embedded_plan_history_json() { return R"p64json({
  "source": "seed/P64_DECODE_UPGRADE_PLAN.md, rewritten 2026-07-10 (Timothy Charles Holborn): §3 scoreboard, §4.4 rejected-as-default, §11 opportunity captures",
  "date": "2026-07-10",
  "command": "qualia-cli llm decode-proxy <p64> --tokens 32 (QUALIA_LLM_FFN_FUSION=1)",
  "passport": {
    "host": {"os": "Windows", "cpu_model": "", "kernel": ""},
    "device": {
      "backend": "wgpu",
      "name": "NVIDIA RTX A2000 12GB",
      "vendor": "NVIDIA",
      "api_version": "wgpu (Vulkan passport / DX12 default app path)",
      "device_type": "discrete-gpu",
      "memory_bytes": 12884901888,
      "peak_bandwidth_gbs": 288.0
    },
    "measured": {"read_gbs": 0, "copy_gbs": 0},
    "build": {"version": "qualia (imported)", "git_revision": "", "backends": ["wgpu", "cuda-lab"]}
  },
  "model": {
    "path": "C:\\LLM_Models\\P64\\llama-3.2-3b-instruct-q4_k_m.soa.p64",
    "name": "llama-3.2-3b-instruct-q4_k_m.soa",
    "arch": "llama",
    "n_layer": 28, "n_embd": 3072, "n_head": 24, "n_head_kv": 8, "n_ff": 8192, "n_vocab": 128256,
    "dtypes": "Q4_K_SOA (from Q4_K_M)"
  },
  "scoreboard": [
    {"stage": "Session start (2026-07-10 AM)", "decode_tok_s": [6.7]},
    {"stage": "Parallel RMSNorm + no CUDA double-buffer preload", "decode_tok_s": [8.9]},
    {"stage": "Full-vocab logits + dual_gemv subgroup", "decode_tok_s": [9.0, 9.1]},
    {"stage": "Dual multi-row default (rejected)", "decode_tok_s": [8.75], "rejected": true},
    {"stage": "Full-act LDS GEMV (rejected)", "decode_tok_s": [8.51], "rejected": true},
    {"stage": "Barrier-free global-act Q4_SOA (current)", "decode_tok_s": [9.7, 9.9]}
  ],
  "peers": [
    {"tool": "ollama", "model": "llama3.2 3B (Ollama tag not recorded in the plan)", "model_type": "llama 3B Q4_K - Medium",
     "quant": "Q4_K_M", "test": "tg", "n_prompt": 0, "n_gen": 0, "device": "NVIDIA RTX A2000 12GB", "backends": "CUDA",
     "avg_ts": 70.0, "note": "same-host diagnostic (llama.cpp + CUDA), ~70 tok/s, ~7x ahead"}
  ],
  "optimisations": [
    {"name": "ffn_fusion", "backend": "wgpu", "status": "default", "env": "QUALIA_LLM_FFN_FUSION",
     "description": "Fused FFN SwiGLU (fused_ffn.wgsl); default when the quant is supported",
     "history": [{"to": "default", "reason": "§4.2: default product path", "evidence": ""}]},
    {"name": "parallel_rmsnorm", "backend": "wgpu", "status": "default", "env": "",
     "description": "Parallel RMSNorm (256-wide) instead of scalar",
     "history": [{"to": "default", "reason": "§11: parallel RMSNorm + no CUDA preload when off", "evidence": "~6.7 -> ~8.9 tok/s", "a_tok_s": 6.7, "b_tok_s": 8.9}]},
    {"name": "dual_gemv_subgroup", "backend": "wgpu", "status": "default", "env": "",
     "description": "Dual K+V GEMV with subgroupAdd reduce (adapter-gated)",
     "history": [{"to": "default", "reason": "§11: dual_gemv subgroupAdd with full logits", "evidence": "peak ~9.0-9.1 tok/s", "b_tok_s": 9.05}]},
    {"name": "barrier_free_act", "backend": "wgpu", "status": "default", "env": "",
     "description": "Barrier-free global-act Q4_SOA GEMV/FFN/dual",
     "history": [{"to": "default", "reason": "§11: current peak; multirow stays opt-in", "evidence": "~9.7-9.9 tok/s", "b_tok_s": 9.8}]},
    {"name": "multirow", "backend": "wgpu", "status": "rejected", "env": "QUALIA_LLM_MULTIROW, QUALIA_LLM_FFN_MR",
     "description": "Multi-row residual / FFN multi-row GEMV",
     "history": [{"from": "candidate", "to": "rejected", "reason": "§11 E-lab: WGSL multirow default-on A/B lost; opt-in only (§4.4: lose or tie)", "evidence": "B ~6.36 vs A ~6.68 tok/s", "a_tok_s": 6.68, "b_tok_s": 6.36}]},
    {"name": "dual_mr", "backend": "wgpu", "status": "rejected", "env": "QUALIA_LLM_DUAL_MR",
     "description": "Dual multi-row (4 rows) K+V GEMV",
     "history": [{"from": "candidate", "to": "rejected", "reason": "§11: dual_mr lose; BW ~5% of peak -> occupancy/latency wall", "evidence": "B ~8.75 vs A ~9.0-9.1 tok/s", "a_tok_s": 9.05, "b_tok_s": 8.75}]},
    {"name": "triple_qkv", "backend": "wgpu", "status": "rejected", "env": "QUALIA_LLM_TRIPLE_QKV",
     "description": "Triple (fused) Q+K+V GEMV",
     "history": [{"from": "candidate", "to": "rejected", "reason": "§4.4: lose", "evidence": "B ~8.57 tok/s (lose)", "b_tok_s": 8.57}]},
    {"name": "full_act_lds", "backend": "wgpu", "status": "rejected", "env": "(reverted)",
     "description": "Full-activation / 4k-chunk LDS activation GEMV",
     "history": [{"from": "candidate", "to": "rejected", "reason": "§11: full-act LDS lose; occupancy kill on A2000; reverted", "evidence": "B ~8.51 vs A ~9.0-9.1 tok/s", "a_tok_s": 9.05, "b_tok_s": 8.51}]},
    {"name": "warp_gemv", "backend": "wgpu", "status": "rejected", "env": "QUALIA_LLM_WARP_GEMV, QUALIA_LLM_FFN_WARP",
     "description": "Warp GEMV (and FFN warp) as default",
     "history": [{"from": "candidate", "to": "rejected", "reason": "§4.4: not proven win; keep opt-in (M1: passport auto-select if A/B wins on a device)", "evidence": "no A/B win recorded"}]},
    {"name": "cuda_decode", "backend": "cuda-lab", "status": "rejected", "env": "CUDA_DECODE",
     "description": "CUDA_DECODE lab path as-is (host residual, non-sticky chain)",
     "history": [{"from": "candidate", "to": "rejected", "reason": "§11: CUDA_DECODE ~0.74 tok/s; bottleneck host residual / non-sticky chain (-> R2)", "evidence": "B ~0.74 vs A ~9.8 tok/s (resident)", "a_tok_s": 9.8, "b_tok_s": 0.74}]}
  ]
}
)p64json"; }  }  // namespace p64
