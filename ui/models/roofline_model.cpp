#include "ui/models/roofline_model.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/lab/compute_ceiling.h"
#include "engine/lab/model_flops.h"
#include "ui/core/run_colors.h"

namespace p64::ui {

namespace {

// FLOPs of a run stored before decode-proxy recorded them, from the model's stored shapes.
void count_flops_from_record(const nlohmann::json& j, const ModelRecord& model, RooflinePoint* p) {
  try {
    const ModelFlops f = model_flops(model);
    const auto params = j.value("params", nlohmann::json::object());
    const double decode_tokens = params.value("decode_tokens", 0);
    p->decode_flops = f.decode_token(p->prompt_tokens + (decode_tokens + 1) / 2);
    p->prefill_flops = f.prefill(p->prompt_tokens);
    const double weights = j.value("weight_bytes", static_cast<double>(model.weight_bytes));
    p->prefill_bytes = weights > 0 ? weights + j.value("kv_bytes_per_position", 0.0) * p->prompt_tokens : 0;
    p->flops_source = QObject::tr("counted from the stored model's hyperparameters");
  } catch (const std::exception&) {
    // A record without shapes (an imported model): the run stays off the compute roofline.
  }
}

}  // namespace

QString format_gbs(double gbs) { return QString::number(gbs, 'f', gbs >= 100 ? 0 : gbs >= 1 ? 1 : 2); }

QString format_flop_s(double flop_s) {
  if (flop_s >= 1e12) return QString("%1 TFLOP/s").arg(flop_s / 1e12, 0, 'f', 1);
  if (flop_s >= 1e9) return QString("%1 GFLOP/s").arg(flop_s / 1e9, 0, 'f', flop_s >= 1e11 ? 0 : 1);
  return QString("%1 MFLOP/s").arg(flop_s / 1e6, 0, 'f', 1);
}

QString compute_ceiling_kind(double flops, const QString& s) {
  if (flops <= 0) return QObject::tr("none");
  if (s.startsWith("nominal")) return QObject::tr("nominal");
  if (s.startsWith("passport")) return QObject::tr("passport");
  if (s.startsWith("measured")) return QObject::tr("measured");
  return s;
}

std::optional<RooflinePoint> roofline_point(const RunRecord& run, const QString& model_name, const ModelRecord* model,
                                            const Passport* passport) {
  const auto j = nlohmann::json::parse(run.summary_json.empty() ? "{}" : run.summary_json, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto median = [&](const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) return 0.0;
    if (it->is_number()) return it->get<double>();
    return it->is_object() ? it->value("median", 0.0) : 0.0;
  };
  RooflinePoint p;
  p.tok_s = median("decode_tok_s");
  p.effective_gbs = median("effective_gbs");
  if (p.tok_s <= 0 || p.effective_gbs <= 0) return std::nullopt;
  p.bytes_per_token = j.value("bytes_per_token", 0.0);
  if (p.bytes_per_token <= 0) p.bytes_per_token = p.effective_gbs * 1e9 / p.tok_s;
  p.measured_read_gbs = j.value("measured_read_gbs", 0.0);
  p.run_id = run.id;
  p.model = model_name;
  p.backend = QString::fromStdString(run.backend);
  p.device = QString::fromStdString(run.device);
  const QString what = run.label.empty() ? QString::fromStdString(run.config).remove("backend=") : QString::fromStdString(run.label);
  p.label = QString("#%1 %2").arg(run.id).arg(what.left(40));

  p.prompt_tokens = j.value("params", nlohmann::json::object()).value("prompt_tokens", 0);
  p.prefill_tok_s = median("prefill_tok_s");
  if (const auto f = j.find("flops"); f != j.end() && f->is_object()) {
    p.decode_flops = f->value("decode_per_token", 0.0);
    p.prefill_flops = f->value("prefill", 0.0);
    p.prefill_bytes = f->value("prefill_bytes", 0.0);
    p.flops_source = QObject::tr("counted from the tensor shapes when the run was made");
  } else if (model) {
    count_flops_from_record(j, *model, &p);
  }
  if (const auto c = j.find("compute_ceiling"); c != j.end() && c->is_object()) {
    p.compute_ceiling = c->value("flops", 0.0);
    p.compute_ceiling_source = QString::fromStdString(c->value("source", ""));
  } else if (passport) {
    const ComputeCeiling c = stored_compute_ceiling(*passport);
    p.compute_ceiling = c.flops;
    p.compute_ceiling_source = QString::fromStdString(c.source);
  } else {
    p.compute_ceiling_source = QObject::tr("none: the run has no passport");
  }
  return p;
}

void RooflineModel::set_points(std::vector<RooflinePoint> points, int initial) {
  beginResetModel();
  points_ = std::move(points);
  std::sort(points_.begin(), points_.end(), [](const auto& a, const auto& b) { return a.run_id > b.run_id; });
  QSet<qint64> present;
  for (const auto& p : points_) present.insert(p.run_id);
  chosen_.intersect(present);
  if (!chose_) {
    for (int i = 0; i < initial && i < static_cast<int>(points_.size()); ++i) chosen_.insert(points_[i].run_id);
    chose_ = !points_.empty();
  }
  endResetModel();
  Q_EMIT chosen_changed();
}

std::vector<RooflinePoint> RooflineModel::chosen() const {
  std::vector<RooflinePoint> out;
  for (const auto& p : points_)
    if (chosen_.contains(p.run_id)) out.push_back(p);
  return out;
}

void RooflineModel::set_chosen(qint64 run_id, bool on) {
  for (size_t r = 0; r < points_.size(); ++r)
    if (points_[r].run_id == run_id) setData(index(static_cast<int>(r), kRun), on ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
}

Qt::ItemFlags RooflineModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.column() == kRun) f |= Qt::ItemIsUserCheckable;
  return f;
}

bool RooflineModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.column() != kRun || role != Qt::CheckStateRole) return false;
  const qint64 id = points_[static_cast<size_t>(index.row())].run_id;
  const bool on = value.toInt() == Qt::Checked;
  if (on == chosen_.contains(id)) return true;
  if (on) chosen_.insert(id);
  else chosen_.remove(id);
  chose_ = true;
  // Every later chosen row's colour moves with this one.
  Q_EMIT dataChanged(this->index(0, kRun), this->index(rowCount() - 1, kRun), {Qt::CheckStateRole, Qt::DecorationRole});
  Q_EMIT chosen_changed();
  return true;
}

QVariant RooflineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RooflinePoint& p = points_[static_cast<size_t>(index.row())];
  if (role == Qt::CheckStateRole && index.column() == kRun) return chosen_.contains(p.run_id) ? Qt::Checked : Qt::Unchecked;
  if (role == Qt::DecorationRole && index.column() == kRun) {
    // The colour the charts draw this run in: the i-th chosen run, in table order.
    if (!chosen_.contains(p.run_id)) return {};
    int i = 0;
    for (int r = 0; r < index.row(); ++r) i += chosen_.contains(points_[static_cast<size_t>(r)].run_id) ? 1 : 0;
    return run_color(i);
  }
  if (role == Qt::TextAlignmentRole && index.column() >= kTokS) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (index.column()) {
    case kRun: return p.label;
    case kModel: return p.model;
    case kBackend: return p.backend;
    case kDevice: return p.device;
    case kTokS: return QString::number(p.tok_s, 'f', 2);
    case kBytes: return QString::number(p.bytes_per_token / 1e6, 'f', 2);
    case kGbs: return QString::number(p.effective_gbs, 'f', 3);
    case kCeiling: return p.measured_read_gbs > 0 ? QString::number(p.measured_read_gbs, 'f', 1) : QString("—");
    case kShare: return p.measured_read_gbs > 0 ? QString::number(100 * p.share(), 'f', 1) + "%" : QString("—");
    case kPrefillTokS: return p.prefill_tok_s > 0 ? QString::number(p.prefill_tok_s, 'f', 1) : QString("—");
    case kPrefillFlops:
      if (role == Qt::ToolTipRole) return p.flops_source;
      return p.has_prefill() ? format_flop_s(p.prefill_flop_s()) : QString("—");
    case kIntensity: return p.has_prefill() ? QString::number(p.prefill_intensity(), 'f', 1) : QString("—");
    case kComputeCeiling:
      if (role == Qt::ToolTipRole) return p.compute_ceiling_source;
      if (p.compute_ceiling <= 0) return tr("none");
      return QString("%1 (%2)").arg(format_flop_s(p.compute_ceiling), compute_ceiling_kind(p.compute_ceiling, p.compute_ceiling_source));
    default: return {};
  }
}

QVariant RooflineModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kRun: return tr("Run");
    case kModel: return tr("Model");
    case kBackend: return tr("Backend");
    case kDevice: return tr("Device");
    case kTokS: return tr("decode tok/s");
    case kBytes: return tr("MB read / token");
    case kGbs: return tr("eff. GB/s");
    case kCeiling: return tr("measured GB/s");
    case kShare: return tr("share");
    case kPrefillTokS: return tr("prefill tok/s");
    case kPrefillFlops: return tr("prefill FLOP/s");
    case kIntensity: return tr("prefill FLOP/byte");
    case kComputeCeiling: return tr("compute ceiling");
    default: return {};
  }
}

}  // namespace p64::ui
