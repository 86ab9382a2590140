#pragma once
// What a stored run says of its GPU (summary machine.gpu: clocks, power, throttle reasons, sampled
// over the run) and of its energy (summary energy, or a/b energy of an A/B: tokens per joule),
// as property/value rows for the run details. A run without them says why in one row.
#include <QVector>

#include <nlohmann/json_fwd.hpp>

#include "ui/models/key_value_model.h"

namespace p64::ui {

QVector<KeyValueModel::Row> gpu_energy_rows(const nlohmann::json& summary);

}  // namespace p64::ui
