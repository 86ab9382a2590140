#!/usr/bin/env python3
"""Independent reference for the architectures p64 imports from Hugging Face folders.

For each architecture, builds a small random model with transformers' own classes
(AutoModelForCausalLM.from_config), saves it with save_pretrained (safetensors, bf16 weights so
the fixture stays small; the float32 model that makes the logits holds exactly those values),
adds a tiny tokenizer.json (p64's importer wants one; the ids are all that matter here), and
writes transformers' float32 logits for a fixed token sequence:

    OUT/ARCH/config.json, model.safetensors, tokenizer.json   the folder p64 imports
    OUT/ARCH/tokens.txt                                         the token ids, one line
    OUT/ARCH/logits.f32                                         [len(tokens), vocab] float32, little-endian

tests/engine/hf_reference_test.cpp imports each folder, runs the CPU backend teacher-forced on
the same ids and compares (relative RMS error <= 1e-4, top-1 identical). transformers and torch
are on the GPU machine, not here: run it there (CPU is fine) and keep what it writes in
tests/data/hf-reference/.

    python3 scripts/hf_reference_logits.py OUT [ARCH ...]     (default: llama qwen2 qwen3 gemma2 gemma3 phi3)
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

VOCAB = 320
TOKENS = [1, 17, 250, 3, 99, 42, 42, 7, 128, 5, 64, 200, 11, 12, 13, 14, 280, 0, 9, 33, 101, 319, 2, 64]

# The same tiny vocabulary as tests/fuzz/fuzz_samples.h's tiny_tokenizer_json (13 tokens; p64
# pads the vocabulary up to vocab_size).
TOKENIZER = {
    "version": "1.0",
    "added_tokens": [{"id": 11, "content": "<|im_end|>", "special": True},
                     {"id": 12, "content": "<|im_start|>", "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "vocab": {"h": 0, "e": 1, "l": 2, "o": 3, "\u0120": 4, "w": 5, "he": 6, "ll": 7, "hell": 8,
                        "hello": 9, "\u0120w": 10},
              "merges": ["h e", "l l", "he ll", "hell o", "\u0120 w"]},
}

COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=128, rms_norm_eps=1e-6, rope_theta=1000000.0,
              tie_word_embeddings=True)
# Gemma: windows of 8 that the 24 positions cross, a query_pre_attn_scalar that is not head_dim,
# and (gemma2) soft-caps small enough to bend these tiny models' scores and logits.
GEMMA = dict(COMMON, head_dim=16, sliding_window=8, query_pre_attn_scalar=24, hidden_activation="gelu_pytorch_tanh")
CONFIGS = {
    "llama": dict(COMMON),
    "qwen2": dict(COMMON, use_sliding_window=False),
    # head_dim 32 is not hidden_size / num_attention_heads (16), as in Qwen3-0.6B
    "qwen3": dict(COMMON, head_dim=32, attention_bias=False, use_sliding_window=False),
    "gemma2": dict(GEMMA, num_hidden_layers=4, rope_theta=10000.0, attn_logit_softcapping=1.0,
                   final_logit_softcapping=3.0),
    # six layers: five local (RoPE base 10000, unscaled), one global (1e6, linear scaling 2)
    "gemma3": dict(GEMMA, num_hidden_layers=6, head_dim=32),
    # Phi-3.5's LongRope: short factors within original_max_position_embeddings, and an attention
    # factor sqrt(1 + ln 4 / ln 64) from the 4x extension; a window of 8 over every layer; untied.
    # pad_token_id: Phi3Config's default (32000) is outside this vocabulary.
    "phi3": dict(COMMON, rope_theta=10000.0, tie_word_embeddings=False, sliding_window=8, max_position_embeddings=256,
                 original_max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                 rope_scaling={"type": "longrope", "short_factor": [1.0 + 0.25 * i for i in range(8)],
                               "long_factor": [2.0 + i for i in range(8)]}),
}
MODEL_TYPE = {"gemma3": "gemma3_text"}  # HF's text-only Gemma 3


def gemma3_rope(config):
    """transformers 5 takes one rope_parameters block per layer type; 4 a top-level spelling."""
    if int(transformers.__version__.split(".")[0]) >= 5:
        config["rope_parameters"] = {
            "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}
        config.pop("rope_theta", None)
    else:
        config.update(rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window_pattern=6,
                      rope_scaling={"rope_type": "linear", "factor": 2.0})
    return config


def build(arch, out_dir):
    torch.manual_seed({"llama": 1, "qwen2": 2, "qwen3": 3, "gemma2": 4, "gemma3": 5, "phi3": 6}[arch])
    kwargs = gemma3_rope(dict(CONFIGS[arch])) if arch == "gemma3" else CONFIGS[arch]
    config = AutoConfig.for_model(MODEL_TYPE.get(arch, arch), **kwargs)
    config._attn_implementation = "eager"
    model = AutoModelForCausalLM.from_config(config).to(torch.float32).eval()
    # from_config leaves biases at 0 and norms at 1: random values, so a reader that drops or
    # misplaces one gives other logits. Rounded to bf16, the dtype they are saved in.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):  # Gemma's norms scale by 1 + w
                p.copy_((0.0 if arch.startswith("gemma") else 1.0) + 0.3 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.5 * torch.randn_like(p))
            elif "embed_tokens" in name:
                p.copy_(torch.randn_like(p))
            else:
                p.copy_(0.08 * torch.randn_like(p))
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
        logits = model(torch.tensor([TOKENS]), use_cache=False).logits[0].to(torch.float32).contiguous()
    os.makedirs(out_dir, exist_ok=True)
    model.to(torch.bfloat16).save_pretrained(out_dir, safe_serialization=True)
    with open(os.path.join(out_dir, "tokenizer.json"), "w") as f:
        json.dump(TOKENIZER, f)
    with open(os.path.join(out_dir, "tokens.txt"), "w") as f:
        f.write(" ".join(str(t) for t in TOKENS) + "\n")
    with open(os.path.join(out_dir, "logits.f32"), "wb") as f:
        f.write(logits.numpy().astype("<f4").tobytes())
    for extra in ("generation_config.json",):
        path = os.path.join(out_dir, extra)
        if os.path.exists(path):
            os.remove(path)
    top1 = logits.argmax(dim=-1).tolist()
    print(f"{arch}: transformers {transformers.__version__}, torch {torch.__version__}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, logits {tuple(logits.shape)}, top-1 {top1}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for arch in sys.argv[2:] or ["llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"]:
        build(arch, os.path.join(sys.argv[1], arch))


if __name__ == "__main__":
    main()
