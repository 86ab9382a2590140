#include "engine/lab/lab_run.h"

#include <memory>

#include <nlohmann/json.hpp>

#include "engine/common/cpu_isa.h"
#include "engine/format/open_model.h"
#include "engine/format/source_model.h"
#include "engine/lab/store_text.h"
#include "engine/model/model.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {

ConvertOptions::Layout conversion_layout_for(const std::string& backend) {
  const bool cpu_rows = !backend.empty() && resolve_backend_name(backend) == "cpu" && has_interleaved_kernels();
  return cpu_rows ? ConvertOptions::Layout::CpuRows : ConvertOptions::Layout::Keep;
}

std::shared_ptr<const Model> open_lab_model(const std::string& path, const std::string& backend,
                                            const std::string& tokenizer_path, const ProgressFn& progress) {
  // A .p64 opens in a moment; only a conversion is long enough to show progress for.
  const bool converts = detect_model_format(path) != "p64";
  return open_model_for_decode(path, tokenizer_path, converts ? progress : ProgressFn{}, conversion_layout_for(backend));
}

RunBundle begin_run_bundle(const Store* store, RunKind kind, const Model& model, const std::string& model_path,
                           const LoadedBackend& backend, const LabConfig& config) {
  RunBundle b;
  b.run.kind = kind;
  b.run.status = RunStatus::Ok;
  b.run.backend = backend.name;
  b.run.device = backend.passport.device.name;
  LabConfig resolved = config;
  resolved.backend = backend.name;
  b.run.config = resolved.to_string();
  nlohmann::json opts = {{"switches", config.switches}, {"threads", config.threads}, {"load_ms", backend.load_ms}};
  if (!config.device.empty()) opts["device"] = config.device;
  b.run.options_json = json_text(opts);
  b.run.git_revision = backend.passport.build.git_revision;
  b.run.started_at = utc_now_iso();
  b.passport = backend.passport;
  if (store) b.model = store->describe_model(model, model_path);
  return b;
}

}  // namespace p64
