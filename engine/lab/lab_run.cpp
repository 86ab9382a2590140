#include "engine/lab/lab_run.h"

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "engine/common/platform.h"
#include "engine/format/open_model.h"
#include "engine/format/source_model.h"
#include "engine/lab/store_text.h"
#include "engine/quant/dot.h"
#include "engine/runtime/backend_registry.h"
#include "engine/model/model.h"

namespace p64 {

ConvertOptions::Layout conversion_layout_for(const std::string& backend) {
  const bool cpu_rows = !backend.empty() && resolve_backend_name(backend) == "cpu" && dot::has_interleaved_kernels();
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

ProgressFn stderr_progress_line(std::string prefix) {
  // On a terminal one line is rewritten in place; into a log (CI, a pipe) a line is written
  // only each time another tenth is done, so long work does not flood the file.
  const bool terminal = platform::stderr_is_terminal();
  auto last_tenth = std::make_shared<int>(-1);
  return [prefix = std::move(prefix), terminal, last_tenth](double fraction, std::string_view what) {
    if (terminal) {
      std::fprintf(stderr, "\r%s [%3.0f%%] %.*s\033[K", prefix.c_str(), fraction * 100.0,
                   static_cast<int>(what.size()), what.data());
      if (fraction >= 1.0) std::fputc('\n', stderr);
    } else {
      const int tenth = static_cast<int>(fraction * 10.0);
      if (tenth == *last_tenth) return true;
      *last_tenth = tenth;
      std::fprintf(stderr, "%s [%3.0f%%] %.*s\n", prefix.c_str(), fraction * 100.0, static_cast<int>(what.size()),
                   what.data());
    }
    std::fflush(stderr);
    return true;
  };
}

}  // namespace p64
