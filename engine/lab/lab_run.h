#pragma once
// What every lab command does around its measurement: open the model, sync the backend's
// switches into the registry and start a run bundle carrying model + passport + config.
// Shared by the CLI and the GUI so both store the same facts.
#include <memory>
#include <string>

#include "engine/common/progress.h"
#include "engine/format/convert.h"
#include "engine/lab/lab_config.h"
#include "engine/lab/store.h"

namespace p64 {

// The layout a GGUF, llama2.c or Hugging Face input is converted to for `backend` (a name
// resolve_backend_name() knows): the CPU's row-interleaved form where this CPU has kernels for
// it, else the source's own.
ConvertOptions::Layout conversion_layout_for(const std::string& backend);

// Every model file decode reads, the same way for every command and panel: a .p64 in place
// (CRC-checked, whole or nothing), a GGUF, llama2.c checkpoint (with `tokenizer_path`) or Hugging
// Face folder converted first for `backend` (open_model_for_decode). Throws naming the file.
std::shared_ptr<const Model> open_lab_model(const std::string& path, const std::string& backend,
                                            const std::string& tokenizer_path = "", const ProgressFn& progress = {});

// A bundle with run kind, backend, device, config, options and git revision filled in, the
// model described (hashing the file when the store has not seen it) and the passport set.
RunBundle begin_run_bundle(const Store* store, RunKind kind, const Model& model, const std::string& model_path,
                           const LoadedBackend& backend, const LabConfig& config);

}  // namespace p64
