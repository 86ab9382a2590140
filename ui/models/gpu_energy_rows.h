#pragma once
// What a stored run says of its GPU (summary machine.gpu: clocks, power, throttle reasons, sampled
// over the run) and of its energy (summary energy, or a/b energy of an A/B: tokens per joule),
// as property/value rows for the run details. A run without them says why in one row.
#include <QVector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/run_gpu_figures.h"
#include "ui/models/key_value_model.h"

namespace p64::ui {

QVector<KeyValueModel::Row> gpu_energy_rows(const nlohmann::json& summary);

// The figures a row shows beside tok/s, "—" for each one the run did not record:
// "tok/J 1.250 · power 401 W · not throttled", "tok/J — · power — · throttled —".
QString gpu_figures_text(const RunGpuFigures& f);
QString throttled_text(const std::optional<bool>& throttled);  // "THROTTLED", "not throttled", "—"

}  // namespace p64::ui
