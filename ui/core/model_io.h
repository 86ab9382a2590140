#pragma once
// Model file work the panels run on worker threads: thin calls into engine/format, in one
// place so the panels and the tests use the same sequence (inspect, then open for decode).
#include <QString>
#include <QStringList>

#include <memory>
#include <string>

#include "engine/common/progress.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"

namespace p64 {
class Model;
struct P64Contents;
}  // namespace p64

namespace p64::ui {

struct LoadedModel {
  std::shared_ptr<const P64Contents> contents;  // what the file says about itself
  std::shared_ptr<const Model> model;           // ready for a backend (every CRC checked)
};

bool is_p64_path(const QString& path);
// A .p64 parsed (inspect) and opened (open_p64, tensor CRCs with progress).
LoadedModel load_p64(const std::string& path, const ProgressFn& progress);
// Whatever the CLI opens, the way open_lab_model opens it: a .p64 as load_p64, a GGUF, llama2.c
// checkpoint or Hugging Face folder converted for `backend` into the p64 cache (nothing is
// written beside it); the contents are the converted container's, under the user's path.
// `tokenizer`: a llama2.c checkpoint's tokenizer file (the CLI's --tokenizer); when empty, the
// one shipped beside the checkpoint (llama2c_tokenizer_beside).
LoadedModel load_model(const std::string& path, const std::string& backend, const ProgressFn& progress,
                       const std::string& tokenizer = "");
// The llama2.c tokenizer shipped beside a checkpoint (tokenizer.bin, tok512.bin), or empty.
QString llama2c_tokenizer_beside(const QString& checkpoint);
// The synth presets (model shapes) and the quantizations write_synthetic_gguf offers.
QStringList synth_presets();
QStringList synth_quants();
// Writes a synthetic GGUF of `preset` with `quant` to `gguf_path`.
void write_synthetic_gguf(const std::string& preset, const std::string& quant, uint64_t seed,
                          const std::string& gguf_path, const ProgressFn& progress);
// `source` (GGUF, llama2.c checkpoint, HF folder, P64) converted to the P64 `output`.
void convert_model(const std::string& source, const std::string& output, const ConvertOptions& options,
                   const ProgressFn& progress);
// Every CRC, size and offset of a P64 checked (and its manifold recomputed where it has one).
P64VerifyReport verify_model(const std::string& path, const ProgressFn& progress);
// The .p64 path a conversion of `source` writes by default (beside it).
QString default_p64_path(const QString& source);

}  // namespace p64::ui
