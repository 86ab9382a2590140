#pragma once
// What every lab command does around its measurement: open the model, sync the backend's
// switches into the registry, start a run bundle carrying model + passport + config, and
// show a progress line. Shared by the CLI and the GUI so both store the same facts.
#include <memory>
#include <string>

#include "engine/common/progress.h"
#include "engine/lab/lab_config.h"
#include "engine/lab/store.h"

namespace p64 {

// open_p64 (CRC-checked, whole or nothing); throws FormatError naming the file and section.
std::shared_ptr<const Model> open_lab_model(const std::string& path);

// A bundle with run kind, backend, device, config, options and git revision filled in, the
// model described (hashing the file when the store has not seen it) and the passport set.
RunBundle begin_run_bundle(const Store* store, RunKind kind, const Model& model, const std::string& model_path,
                           const LoadedBackend& backend, const LabConfig& config);

// A single stderr line rewritten in place ("\r"), ended with a newline at fraction 1.
ProgressFn stderr_progress_line(std::string prefix);

}  // namespace p64
