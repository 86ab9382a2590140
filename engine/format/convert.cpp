#include "engine/format/convert.h"

#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "engine/common/error.h"
#include "engine/format/model_limits.h"
#include "engine/model/architecture.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

bool whole_blocks(DType t, int64_t n) {
  auto info = dtype_info(t);
  return info && n % info->block_elems == 0;
}

// The type a float matrix of row length n gets when `want` is asked for.
DType quant_target(DType want, int64_t n) {
  if (whole_blocks(want, n)) return want;
  // llama.cpp's fallbacks for rows that are not a multiple of 256.
  DType fb = want == DType::Q4_K ? DType::Q5_0 : (want == DType::Q6_K || want == DType::Q5_K) ? DType::Q8_0 : want;
  return whole_blocks(fb, n) ? fb : DType::F32;
}

// The dtype a matrix of AoS type `aos` is stored as, given the input's dtype `from`.
DType stored_form(ConvertOptions::Layout layout, DType from, DType aos, int64_t n, int64_t rows) {
  using Layout = ConvertOptions::Layout;
  const bool keep = layout == Layout::Keep;
  if (layout == Layout::Soa || (keep && dtype_is_soa(from))) return dtype_soa_of(aos);
  if (layout == Layout::CpuRows || (keep && dtype_is_interleaved(from))) return dtype_interleaved_for(aos, n, rows);
  return aos;
}

}  // namespace

bool is_quantizable_matrix(const P64TensorSource& t) {
  const std::string suffix = "_norm.weight";
  bool norm = t.name.size() >= suffix.size() && t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return !norm && t.n_dims >= 2 && t.ne[1] * t.ne[2] * t.ne[3] > 1;
}

P64Image plan_conversion(const SourceModel& src, const ConvertOptions& o, ConvertResult* stats) {
  if (o.quant && (dtype_is_packed(*o.quant) || !dtype_info(*o.quant)))
    throw Error("convert: --quant takes a block type (F32, F16, BF16, Q8_0, Q5_0, Q4_K, Q6_K, ...); --soa and --cpu-rows choose packed forms");
  std::vector<std::string> names;
  for (const P64TensorSource& t : src.tensors) names.push_back(t.name);
  check_layers_present(src.path, hparams_fields(src.kind, src.hparams.arch).n_layer, src.hparams.n_layer, names);
  // The architecture's tensors, named in the user's file rather than in a P64 that will not open.
  validate(src.hparams, src.path);
  std::vector<TensorShapeRef> shapes;
  for (const P64TensorSource& t : src.tensors) shapes.push_back({t.name, t.n_dims, t.ne});
  if (const std::string why = arch_tensors_problem(src.hparams, shapes); !why.empty()) throw Error(src.path + ": " + why);
  P64Image img;
  img.hparams = src.hparams;
  img.vocab = src.vocab;
  img.source = src.path;
  for (const P64TensorSource& in : src.tensors) {
    const DType from = in.dtype;
    const DType from_aos = dtype_aos_of(from);
    DType aos = from_aos;
    if (o.quant && is_quantizable_matrix(in) && is_float(from_aos)) aos = quant_target(*o.quant, in.ne[0]);
    const int64_t n = in.ne[0], rows = in.ne[1] * in.ne[2] * in.ne[3];
    const DType final = stored_form(o.layout, from, aos, n, rows);
    if (final == from) {
      img.tensors.push_back(in);
      continue;
    }
    const bool requant = aos != from_aos;
    const bool repack = dtype_is_packed(final);
    if (stats) {
      stats->quantized += requant;
      stats->repacked += repack;
    }
    P64TensorSource out = in;
    out.dtype = final;
    out.data = nullptr;
    const uint64_t in_bytes = dtype_row_bytes(from, static_cast<uint64_t>(n)) * static_cast<uint64_t>(rows);
    P64TensorSource source = in;
    out.produce = [source, from, aos, final, n, rows, in_bytes, requant, repack](uint8_t* dst, uint64_t bytes) {
      std::vector<uint8_t> in_buf;
      const uint8_t* input = source.data;
      if (!input) {
        in_buf.resize(in_bytes);
        source.produce(in_buf.data(), in_bytes);
        input = in_buf.data();
      }
      std::vector<uint8_t> aos_buf;
      const uint8_t* aos_data = input;
      if (requant || dtype_is_packed(from)) {
        uint8_t* target = repack ? (aos_buf.resize(bytes), aos_buf.data()) : dst;
        if (requant) {
          const uint64_t row_bytes = dtype_row_bytes(aos, static_cast<uint64_t>(n));
          std::vector<float> row(static_cast<size_t>(n));
          for (int64_t r = 0; r < rows; ++r) {
            dequantize_tensor_row(from, input, rows, r, n, row.data());
            quantize_row(aos, row.data(), target + static_cast<uint64_t>(r) * row_bytes, n);
          }
        } else {
          unpack_tensor(from, input, target, rows, n);  // the same blocks: moved, not requantized
        }
        aos_data = target;
      }
      if (repack) {
        pack_tensor(final, aos_data, dst, rows, n);
      } else if (aos_data != dst) {
        std::memcpy(dst, aos_data, bytes);
      }
    };
    img.tensors.push_back(std::move(out));
  }
  if (stats) stats->tensors = img.tensors.size();
  return img;
}

ConvertResult convert_to_p64(const std::string& input, const std::string& output, const ConvertOptions& o,
                             const ProgressFn& progress) {
  OutputPolicy policy = o.output;
  policy.reads(input, "the model being converted").reads(o.tokenizer_path, "the tokenizer being read");
  std::error_code ec;
  if (std::filesystem::is_directory(input, ec))  // a Hugging Face folder: every file in it is read
    for (const auto& f : std::filesystem::directory_iterator(input, ec))
      policy.reads(f.path().string(), "a file of the model folder being converted");
  check_output_path(output, policy);  // before the input is read
  SourceModel src = load_source_model(input, o.tokenizer_path);
  ConvertResult r;
  r.input_kind = src.kind;
  P64Image img = plan_conversion(src, o, &r);
  r.write = write_p64(output, img, progress, policy);
  return r;
}

}  // namespace p64
