#!/usr/bin/env bash
# Writes tests/data/peer-reference/PRESET-QUANT.txt: what llama.cpp's llama-perplexity
# (../shared/peers/bin/llama-perplexity-cpu) prints for a p64 synth GGUF and
# tests/data/peer-reference/text.txt, with the GGUF's sha256, for
# tests/engine/peer_perplexity_test.cpp to hold the CPU backend against.
#
#   scripts/peer_perplexity_fixtures.sh BUILD_DIR [PRESET ...]     (default: tiny-k tiny-gemma2 tiny-phi3)
#
# Each preset is written as an F32 GGUF (llama-perplexity with an F32 KV cache: the exact float
# path of both engines) and as a Q8_0 one (llama.cpp's default fp16 KV cache). Run it again when
# synth changes what it writes (the test says so by the hash).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [PRESET ...]}
shift
presets=("${@:-tiny-k tiny-gemma2 tiny-phi3}")
read -r -a presets <<<"${presets[*]}"
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/tests/data/peer-reference"
peer="$root/../shared/peers/bin/llama-perplexity-cpu"
weight_std=0.125
ctx=128
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for preset in "${presets[@]}"; do
  for quant in F32 Q8_0; do
    gguf="$tmp/$preset-$quant.gguf"
    kv=$([ "$quant" = F32 ] && echo f32 || echo f16)
    "$build/app/cli/p64" synth --preset "$preset" --quant "$quant" --weight-std "$weight_std" -q -o "$gguf" >/dev/null
    "$peer" -m "$gguf" -f "$out/text.txt" -c "$ctx" -t 2 -ctk "$kv" -ctv "$kv" >"$tmp/out" 2>"$tmp/err"
    ppl=$(grep -o 'Final estimate: PPL = [0-9.]*' "$tmp/out" "$tmp/err" | head -1 | awk '{print $NF}')
    chunks=$(grep -o 'over [0-9]* chunks' "$tmp/err" | awk '{print $2}')
    fixture="$out/$preset-$(echo "$quant" | tr 'A-Z' 'a-z').txt"
    {
      echo "# What llama-perplexity-cpu (llama.cpp c392e509) printed, made by scripts/peer_perplexity_fixtures.sh:"
      echo "#   p64 synth --preset $preset --quant $quant --weight-std $weight_std -o m.gguf"
      echo "#   llama-perplexity-cpu -m m.gguf -f text.txt -c $ctx -t 2 -ctk $kv -ctv $kv"
      echo "# Its running estimate per chunk: $(grep -o '\[[0-9]*\][0-9.]*' "$tmp/out" | tr '\n' ' ')"
      echo "preset $preset"
      echo "quant $quant"
      echo "kv_cache $kv"
      echo "weight_std $weight_std"
      echo "ctx $ctx"
      echo "gguf_sha256 $(sha256sum "$gguf" | cut -d' ' -f1)"
      echo "chunks $chunks"
      echo "ppl $ppl"
    } >"$fixture"
    echo "$fixture: PPL $ppl over $chunks chunks"
  done
done
