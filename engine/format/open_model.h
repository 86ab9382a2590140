#pragma once
#include <memory>
#include <string>

#include "engine/common/progress.h"
#include "engine/format/convert.h"
#include "engine/model/model.h"

namespace p64 {

struct P64Contents;

// Opens a model file for decode whatever its format. A .p64 is opened in place (open_p64:
// every CRC checked). A GGUF, a llama2.c checkpoint (needs `tokenizer_path`, its llama2.c
// tokenizer file) or a Hugging Face folder is converted first, into the p64 cache folder, and
// kept there for the next command that opens the same unchanged file (conversion_cache.h); a
// killed conversion leaves only a temporary file the next one removes (temp_files.h). `layout`
// is the converted file's matrix layout (a backend's own: CpuRows for the CPU). Throws
// FormatError/Error naming the file. `contents`, when given, gets what the (converted)
// container says about itself, its path the user's file (the workbench's Models panel shows it).
std::shared_ptr<const Model> open_model_for_decode(const std::string& path, const std::string& tokenizer_path = "",
                                                   const ProgressFn& progress = {},
                                                   ConvertOptions::Layout layout = ConvertOptions::Layout::Keep,
                                                   P64Contents* contents = nullptr);

}  // namespace p64
