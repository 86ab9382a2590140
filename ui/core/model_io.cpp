#include "ui/core/model_io.h"

#include <QDir>
#include <QFileInfo>

#include "engine/format/open_model.h"
#include "engine/format/p64_reader.h"
#include "engine/format/source_model.h"
#include "engine/format/synth.h"
#include "engine/lab/lab_run.h"

namespace p64::ui {

bool is_p64_path(const QString& path) { return QFileInfo(path).suffix().compare("p64", Qt::CaseInsensitive) == 0; }

LoadedModel load_p64(const std::string& path, const ProgressFn& progress) {
  LoadedModel out;
  if (progress && !progress(0.0, "reading the sections")) throw Cancelled();
  out.contents = std::make_shared<const P64Contents>(inspect_p64(path));
  out.model = open_p64(path, [&](double f, std::string_view what) {
    return progress ? progress(0.05 + 0.95 * f, what) : true;
  });
  return out;
}

LoadedModel load_model(const std::string& path, const std::string& backend, const ProgressFn& progress,
                       const std::string& tokenizer) {
  const std::string format = detect_model_format(path);
  if (format == "p64") return load_p64(path, progress);
  std::string tok = tokenizer;
  if (tok.empty() && format == "llama2c") tok = llama2c_tokenizer_beside(QString::fromStdString(path)).toStdString();
  auto contents = std::make_shared<P64Contents>();
  LoadedModel out;
  out.model = open_model_for_decode(path, tok, progress, conversion_layout_for(backend), contents.get());
  out.contents = std::move(contents);
  return out;
}

QString llama2c_tokenizer_beside(const QString& checkpoint) {
  for (const char* name : {"tokenizer.bin", "tok512.bin"}) {
    const QString candidate = QFileInfo(checkpoint).absolutePath() + "/" + QLatin1String(name);
    if (QFileInfo::exists(candidate)) return candidate;
  }
  return {};
}

QStringList synth_presets() {
  QStringList names;
  for (const auto& n : synth_preset_names()) names << QString::fromStdString(n);
  return names;
}

QStringList synth_quants() {
  QStringList names;
  for (SynthQuant q : {SynthQuant::Q8_0, SynthQuant::Q4_K_M, SynthQuant::F16})
    names << QString::fromUtf8(synth_quant_name(q).data(), static_cast<qsizetype>(synth_quant_name(q).size()));
  return names;
}

void write_synthetic_gguf(const std::string& preset, const std::string& quant, uint64_t seed,
                          const std::string& gguf_path, const ProgressFn& progress) {
  QDir().mkpath(QFileInfo(QString::fromStdString(gguf_path)).absolutePath());
  SynthOptions options;
  options.seed = seed;
  options.progress = progress;
  write_synth(plan_synth(synth_preset(preset), synth_quant_from_name(quant)), gguf_path, options);
}

void convert_model(const std::string& source, const std::string& output, const ConvertOptions& options,
                   const ProgressFn& progress) {
  convert_to_p64(source, output, options, progress);
}

P64VerifyReport verify_model(const std::string& path, const ProgressFn& progress) { return verify_p64(path, progress); }

QString default_p64_path(const QString& source) {
  const QFileInfo fi(source);
  if (fi.isDir()) return fi.absoluteFilePath() + ".p64";
  return fi.absolutePath() + "/" + fi.completeBaseName() + ".p64";
}

}  // namespace p64::ui
