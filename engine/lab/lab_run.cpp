#include "engine/lab/lab_run.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/format/p64_reader.h"
#include "engine/model/model.h"

namespace p64 {

std::shared_ptr<const Model> open_lab_model(const std::string& path) { return open_p64(path); }

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
  b.run.options_json = opts.dump();
  b.run.git_revision = backend.passport.build.git_revision;
  b.run.started_at = utc_now_iso();
  b.passport = backend.passport;
  if (store) b.model = store->describe_model(model, model_path);
  return b;
}

ProgressFn stderr_progress_line(std::string prefix) {
  return [prefix = std::move(prefix)](double fraction, std::string_view what) {
    std::fprintf(stderr, "\r%s [%3.0f%%] %.*s\033[K", prefix.c_str(), fraction * 100.0, static_cast<int>(what.size()),
                 what.data());
    if (fraction >= 1.0) std::fputc('\n', stderr);
    std::fflush(stderr);
    return true;
  };
}

}  // namespace p64
