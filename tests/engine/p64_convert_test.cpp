#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <fstream>
#include <sstream>

#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/format/convert.h"
#include "engine/format/crc32c.h"
#include "engine/format/p64_reader.h"
#include "engine/quant/quant.h"
#include "p64_test_model.h"
#include "support/exit_status.h"
#include "support/shared_files.h"

using namespace p64;

namespace {

std::string model(const char* name) { return test::shared_model(name).string(); }

SourceModel source_of(const test::TinyModel& tiny) {
  SourceModel src;
  src.kind = "memory";
  src.hparams = tiny.image.hparams;
  src.vocab = tiny.image.vocab;
  src.tensors = tiny.image.tensors;
  return src;
}

void expect_same_tensor(const Model& a, const Model& b, const std::string& name) {
  const TensorView* x = a.find(name);
  const TensorView* y = b.find(name);
  ASSERT_NE(x, nullptr) << name;
  ASSERT_NE(y, nullptr) << name;
  EXPECT_EQ(x->dtype, y->dtype) << name;
  ASSERT_EQ(x->bytes, y->bytes) << name;
  EXPECT_EQ(std::memcmp(x->data, y->data, x->bytes), 0) << name;
  EXPECT_EQ(x->crc32c, y->crc32c) << name;
}

// Runs the p64 binary; returns its exit status and what it printed.
int run_cli(const std::string& args, std::string* out) {
  std::string cmd = std::string(P64_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  out->clear();
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return test::exit_code(st);
}

}  // namespace

TEST(P64Convert, Stories260KFromBinAndFromGgufGiveIdenticalTensors) {
  test::TempDir dir;
  const std::string from_bin = (dir / "bin.p64").string(), from_gguf = (dir / "gguf.p64").string();
  ConvertOptions o;
  o.tokenizer_path = model("tok512.bin");
  ConvertResult rb = convert_to_p64(model("stories260K.bin"), from_bin, o);
  EXPECT_EQ(rb.input_kind, "llama2c");
  EXPECT_EQ(rb.write.certification_problem, "");
  ConvertResult rg = convert_to_p64(model("stories260K.gguf"), from_gguf, {});
  EXPECT_EQ(rg.input_kind, "gguf");
  EXPECT_TRUE(verify_p64(from_bin).ok);
  EXPECT_TRUE(verify_p64(from_gguf).ok);

  auto a = open_p64(from_bin);
  auto b = open_p64(from_gguf);
  EXPECT_EQ(a->tensors().size(), 47u);  // shared classifier: no output.weight
  for (const auto& t : a->tensors()) expect_same_tensor(*a, *b, t.name);
  // The GGUF stores the shared classifier as its own output.weight: the same bytes as token_embd.
  const TensorView* out = b->find("output.weight");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(std::memcmp(out->data, a->token_embd().data, out->bytes), 0);
  EXPECT_EQ(a->vocab().tokens, b->vocab().tokens);
  EXPECT_EQ(a->vocab().scores, b->vocab().scores);
  EXPECT_EQ(a->hparams().n_head_kv, 4u);
  EXPECT_EQ(a->hparams().n_ff, 172u);
  // Same weights, same manifold rows.
  P64Contents ca = inspect_p64(from_bin), cb = inspect_p64(from_gguf);
  for (uint32_t l = 0; l < 5; ++l) EXPECT_EQ(std::memcmp(ca.manifold[l].c, cb.manifold[l].c, 40), 0) << l;
}

TEST(P64Convert, LlamaTinyRandomConvertsAndVerifies) {
  test::TempDir dir;
  const std::string out = (dir / "tiny.p64").string();
  convert_to_p64(model("llama-2-tiny-random.gguf"), out, {});
  P64VerifyReport rep = verify_p64(out);
  EXPECT_TRUE(rep.ok);
  auto m = open_p64(out);
  EXPECT_EQ(m->vocab().size(), 32000u);
  EXPECT_FALSE(m->hparams().tied_output);
  EXPECT_EQ(m->find("token_embd.weight")->dtype, DType::F16);
}

TEST(P64Convert, QuantizeAndSoaRepack) {
  // A model whose rows are 256 wide (Q4_K blocks) except attn_output (32 wide: falls back).
  test::TinyModel tiny = test::tiny_image(5, 2, 256, 256);
  const SourceModel src = source_of(tiny);
  ConvertOptions o;
  o.quant = DType::Q4_K;
  o.layout = ConvertOptions::Layout::Soa;
  ConvertResult stats;
  P64Image img = plan_conversion(src, o, &stats);
  test::TempDir dir;
  const std::string out = (dir / "q.p64").string();
  P64WriteResult wr = write_p64(out, img);
  EXPECT_EQ(wr.certification_problem, "");
  EXPECT_TRUE(wr.flags & p64_flags::kQ4kSoa);
  auto m = open_p64(out);
  EXPECT_EQ(m->find("blk.0.attn_q.weight")->dtype, DType::Q4_K_SOA);
  EXPECT_EQ(m->find("blk.0.attn_output.weight")->dtype, DType::Q5_0);  // 32-wide rows
  EXPECT_EQ(m->find("blk.0.attn_norm.weight")->dtype, DType::F32);
  EXPECT_EQ(m->find("token_embd.weight")->dtype, DType::Q4_K_SOA);
  EXPECT_GT(stats.quantized, 0u);
  // The SoA tensor decodes to the same values as quantizing the row directly.
  const TensorView& q = *m->find("blk.1.ffn_up.weight");
  const P64TensorSource* orig = nullptr;
  for (const auto& t : tiny.image.tensors)
    if (t.name == q.name) orig = &t;
  ASSERT_NE(orig, nullptr);
  std::vector<uint8_t> block(dtype_row_bytes(DType::Q4_K, 256));
  std::vector<float> direct(256), from_file(256);
  for (int64_t r = 0; r < q.rows(); r += 37) {
    quantize_row(DType::Q4_K, reinterpret_cast<const float*>(orig->data) + r * 256, block.data(), 256);
    dequantize_row(DType::Q4_K, block.data(), direct.data(), 256);
    dequantize_tensor_row(q.dtype, q.data, q.rows(), r, 256, from_file.data());
    EXPECT_EQ(direct, from_file) << "row " << r;
  }
  EXPECT_TRUE(verify_p64(out).ok);
  // Re-converting the SoA file without options keeps every byte.
  const std::string again = (dir / "again.p64").string();
  convert_to_p64(out, again, {});
  auto m2 = open_p64(again);
  for (const auto& t : m->tensors()) expect_same_tensor(*m, *m2, t.name);
}

// --cpu-rows: Q8_0 matrices of whole row groups become Q8_0_R16, the rest stay Q8_0; --plain
// undoes it byte for byte; the CPU backend computes the same logits from either file.
TEST(P64Convert, CpuRowsLayout) {
  test::TinyModel tiny = test::tiny_image(5, 2, 256, 256);
  const SourceModel src = source_of(tiny);
  test::TempDir dir;
  auto write = [&](const SourceModel& from, ConvertOptions::Layout layout, const std::string& name) {
    ConvertOptions o;
    o.quant = DType::Q8_0;
    o.layout = layout;
    const std::string path = (dir / name).string();
    write_p64(path, plan_conversion(from, o));
    return path;
  };
  const std::string plain = write(src, ConvertOptions::Layout::Keep, "plain.p64");
  const std::string rows = write(src, ConvertOptions::Layout::CpuRows, "rows.p64");
  auto mp = open_p64(plain), mr = open_p64(rows);
  EXPECT_EQ(mr->find("blk.0.attn_q.weight")->dtype, DType::Q8_0_R16);    // 32 rows of 256
  EXPECT_EQ(mr->find("blk.1.ffn_down.weight")->dtype, DType::Q8_0_R16);
  EXPECT_EQ(mr->find("token_embd.weight")->dtype, DType::Q8_0_R16);       // 16 rows
  EXPECT_EQ(mr->find("blk.0.attn_output.weight")->dtype, DType::Q8_0);    // rows of 32: not a pair of blocks
  EXPECT_EQ(mr->find("blk.0.attn_norm.weight")->dtype, DType::F32);
  EXPECT_TRUE(verify_p64(rows).ok);

  ConvertOptions back;
  back.layout = ConvertOptions::Layout::Plain;
  const std::string undone = (dir / "undone.p64").string();
  convert_to_p64(rows, undone, back);
  auto mu = open_p64(undone);
  for (const auto& t : mp->tensors()) expect_same_tensor(*mp, *mu, t.name);
  const std::string kept = (dir / "kept.p64").string();
  convert_to_p64(rows, kept, {});  // no layout flag: the packed form stays
  EXPECT_EQ(open_p64(kept)->find("blk.0.attn_q.weight")->dtype, DType::Q8_0_R16);

  for (const char* int8 : {"0", "1"}) {
    BackendOptions opt;
    opt.switches["int8_activations"] = int8;
    auto a = make_cpu_backend(), b = make_cpu_backend();
    a->load(mp, opt);
    b->load(mr, opt);
    for (int pos = 0; pos < 4; ++pos) {
      const int32_t tok = 3 + pos;
      const std::vector<float> la(a->decode_logits(tok, pos).begin(), a->decode_logits(tok, pos).end());
      std::span<const float> lb = b->decode_logits(tok, pos);
      ASSERT_EQ(la.size(), lb.size());
      float scale = 0;
      for (float v : la) scale = std::max(scale, std::fabs(v));
      for (size_t i = 0; i < la.size(); ++i) {
        if (int8[0] == '0') EXPECT_EQ(la[i], lb[i]) << "exact path, pos " << pos << " logit " << i;
        else EXPECT_NEAR(la[i], lb[i], 1e-4 * scale) << "int8 path, pos " << pos << " logit " << i;
      }
    }
  }
}

// Packed forms are moved, not requantized: --cpu-rows then --plain, or --soa then --plain, gives
// back every byte of the plain K-quant file (requantizing Q4_K / Q6_K would not).
TEST(P64Convert, PackedFormsRoundTripByteForByte) {
  test::TinyModel tiny = test::tiny_image(6, 2, 256, 256);
  const SourceModel src = source_of(tiny);
  test::TempDir dir;
  for (DType q : {DType::Q4_K, DType::Q6_K}) {
    ConvertOptions o;
    o.quant = q;
    const std::string plain = (dir / "plain.p64").string();
    write_p64(plain, plan_conversion(src, o));
    auto mp = open_p64(plain);
    ASSERT_EQ(mp->find("blk.0.ffn_up.weight")->dtype, q);
    for (auto layout : {ConvertOptions::Layout::CpuRows, ConvertOptions::Layout::Soa}) {
      ConvertOptions pack, unpack;
      pack.layout = layout;
      unpack.layout = ConvertOptions::Layout::Plain;
      const std::string packed = (dir / "packed.p64").string(), back = (dir / "back.p64").string();
      convert_to_p64(plain, packed, pack);
      EXPECT_TRUE(dtype_is_packed(open_p64(packed)->find("blk.0.ffn_up.weight")->dtype)) << dtype_name(q);
      convert_to_p64(packed, back, unpack);
      auto mb = open_p64(back);
      for (const auto& t : mp->tensors()) expect_same_tensor(*mp, *mb, t.name);
    }
  }
}

TEST(P64Convert, RowInterleavedTensorOfPartialGroupsIsRefused) {
  test::TinyModel tiny = test::tiny_image(5, 1, 64, 64);
  std::vector<uint8_t> bytes(static_cast<size_t>(8 * 2 * 34));
  for (auto& t : tiny.image.tensors)
    if (t.name == "blk.0.attn_k.weight") {  // 8 rows of 64: not a whole group of 16
      t.dtype = DType::Q8_0_R16;
      t.ne[1] = 8;
      t.data = bytes.data();
    }
  test::TempDir dir;
  const std::string path = (dir / "bad.p64").string();
  try {
    write_p64(path, tiny.image);
    FAIL() << "a Q8_0_R16 tensor of 8 rows was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_k.weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("multiple of 16 rows"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A file whose directory claims Q8_0_R16 for rows that are not pairs of blocks (its CRCs made
// consistent, as a buggy writer would) fails to open, naming the tensor and the shape.
TEST(P64Convert, ReaderRefusesARowInterleavedTensorOfTheWrongShape) {
  test::TinyModel tiny = test::tiny_image(5, 1, 64, 64);
  const SourceModel src = source_of(tiny);
  ConvertOptions o;
  o.quant = DType::Q8_0;
  test::TempDir dir;
  const std::string path = (dir / "m.p64").string();
  write_p64(path, plan_conversion(src, o));
  const P64Contents c = inspect_p64(path);
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const P64TensorEntry* victim = nullptr;
  for (const auto& t : c.tensors)
    if (t.name == "blk.0.attn_output.weight") victim = &t;  // Q8_0, rows of 32 elements: one block
  ASSERT_NE(victim, nullptr);
  ASSERT_EQ(victim->dtype, DType::Q8_0);
  const uint32_t r16 = static_cast<uint32_t>(DType::Q8_0_R16);
  std::memcpy(&bytes[victim->entry_offset + 4 + victim->name.size()], &r16, 4);
  for (uint32_t i = 0; i < kP64MaxSections; ++i) {
    const size_t e = kP64SectionTableOffset + i * kP64SectionEntryBytes;
    uint32_t kind;
    uint64_t off, size;
    std::memcpy(&kind, &bytes[e], 4);
    std::memcpy(&off, &bytes[e + 8], 8);
    std::memcpy(&size, &bytes[e + 16], 8);
    if (kind != static_cast<uint32_t>(P64SectionKind::TensorDirectory)) continue;
    const uint32_t crc = crc32c(&bytes[off], size);
    std::memcpy(&bytes[e + 24], &crc, 4);
  }
  const uint32_t header_crc = crc32c(bytes.data(), 508);
  std::memcpy(&bytes[508], &header_crc, 4);
  const std::string bad = (dir / "bad.p64").string();
  std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  try {
    open_p64(bad);
    FAIL() << "a Q8_0_R16 tensor with rows of one block opened";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("blk.0.attn_output.weight"), std::string::npos) << what;
    EXPECT_NE(what.find("64 elements"), std::string::npos) << what;
  }
}

TEST(P64Convert, LlamaCheckpointWithoutTokenizerIsRefused) {
  test::TempDir dir;
  EXPECT_THROW(convert_to_p64(model("stories260K.bin"), (dir / "x.p64").string(), {}), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.p64"));
}

TEST(P64Cli, ConvertInspectVerify) {
  test::TempDir dir;
  std::string out;
  const std::string p = (dir / "s.p64").string();
  ASSERT_EQ(run_cli("convert -q " + model("stories260K.bin") + " " + p + " --tokenizer " + model("tok512.bin"), &out), 0) << out;
  EXPECT_NE(out.find("CERTIFIED_DECODE_PROFILE"), std::string::npos) << out;
  ASSERT_EQ(run_cli("verify -q " + p, &out), 0) << out;
  EXPECT_NE(out.find("OK"), std::string::npos);
  ASSERT_EQ(run_cli("inspect --json " + p, &out), 0) << out;
  EXPECT_NE(out.find("\"rms_attn_q\""), std::string::npos);
  EXPECT_NE(out.find("\"blk.4.ffn_down.weight\""), std::string::npos);
  for (const char* f : {"stories260K.gguf", "llama-2-tiny-random.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"}) {
    EXPECT_EQ(run_cli(std::string("inspect ") + model(f), &out), 0) << f << out;
    EXPECT_NE(out.find("tokenizer:"), std::string::npos) << f;
  }
  EXPECT_EQ(run_cli("inspect " + model("stories260K.bin") + " --tokenizer " + model("tok512.bin"), &out), 0) << out;
  EXPECT_NE(out.find("shared_classifier"), std::string::npos);

  // A flipped byte in a tensor: exit 1 and the tensor named.
  std::vector<char> bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  P64Contents c = inspect_p64(p);
  bytes[c.tensors[7].offset + 3] ^= 0x10;
  const std::string bad = (dir / "bad.p64").string();
  std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_EQ(run_cli("verify -q " + bad, &out), 1) << out;
  EXPECT_NE(out.find("tensor data"), std::string::npos) << out;
  EXPECT_NE(out.find(c.tensors[7].name), std::string::npos) << out;
}
