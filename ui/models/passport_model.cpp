#include "ui/models/passport_model.h"

#include "engine/lab/compute_ceiling.h"

namespace p64::ui {

QString format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? QString("%1 B").arg(bytes, 0, 'f', 0) : QString("%1 %2").arg(bytes, 0, 'f', 1).arg(units[u]);
}

namespace {
QString text_or_dash(const std::string& s) { return s.empty() ? QString("—") : QString::fromStdString(s); }
template <typename T>
QString number_or_dash(T v, const QString& suffix = {}) {
  return v == T{} ? QString("—") : QString::number(v) + suffix;
}
QString gbs_or_dash(double v) { return v <= 0 ? QString("—") : QString("%1 GB/s").arg(v, 0, 'f', 1); }
// The ceiling the roofline draws for this passport, with its origin (measured on a CPU).
QString compute_ceiling_text(const Passport& p) {
  const ComputeCeiling c = compute_ceiling(p, {});
  if (c.flops <= 0) return "—";
  return QString("%1 GFLOP/s (%2)").arg(c.flops / 1e9, 0, 'f', 0).arg(QString::fromStdString(c.source.substr(0, c.source.find(':'))));
}

}  // namespace

void PassportModel::set_passport(const Passport& p) {
  beginResetModel();
  passport_ = p;
  rows_.clear();
  const QString host = tr("Host"), dev = tr("Device"), meas = tr("Measured"), build = tr("Build");
  rows_ << Row{host, tr("CPU"), text_or_dash(p.host.cpu_model)} << Row{host, tr("CPU identity"), text_or_dash(p.host.cpu_id)}
        << Row{host, tr("Logical cores"), number_or_dash(p.host.logical_cores)}
        << Row{host, tr("Memory"), p.host.memory_bytes ? format_bytes(double(p.host.memory_bytes)) : "—"}
        << Row{host, tr("OS"), text_or_dash(p.host.os)}
        << Row{host, tr("Kernel"), text_or_dash(p.host.kernel)}
        << Row{host, tr("CPU features"), text_or_dash(p.host.cpu_features)}
        << Row{host, tr("Caches"), p.host.caches.source.empty()
                                       ? QString("—")
                                       : QString::fromStdString(describe_caches(p.host.caches) + " (" +
                                                                p.host.caches.source + ")")};
  if (!p.device.backend.empty()) {
    const DeviceFacts& d = p.device;
    rows_ << Row{dev, tr("Backend"), text_or_dash(d.backend)} << Row{dev, tr("Name"), text_or_dash(d.name)}
          << Row{dev, tr("Vendor"), text_or_dash(d.vendor)}
          << Row{dev, tr("Driver"), text_or_dash(d.driver_version)}
          << Row{dev, tr("API"), text_or_dash(d.api_version)}
          << Row{dev, tr("Compute capability"), text_or_dash(d.compute_capability)}
          << Row{dev, tr("Device type"), text_or_dash(d.device_type)}
          << Row{dev, tr("Multiprocessors"), number_or_dash(d.multiprocessors)}
          << Row{dev, tr("Memory"), d.memory_bytes ? format_bytes(double(d.memory_bytes)) : "—"}
          << Row{dev, tr("Last-level cache"), d.l2_bytes ? format_bytes(double(d.l2_bytes)) : "—"}
          << Row{dev, tr("Subgroup / warp"), number_or_dash(d.subgroup_size)}
          << Row{dev, tr("Timestamp period"), number_or_dash(d.timestamp_period_ns, " ns")}
          << Row{dev, tr("Peak bandwidth (spec)"), gbs_or_dash(d.peak_bandwidth_gbs)}
          << Row{dev, tr("Compute ceiling"), compute_ceiling_text(p)};
    rows_ << Row{meas, tr("Read bandwidth"), gbs_or_dash(p.measured.read_gbs)}
          << Row{meas, tr("Copy bandwidth"), gbs_or_dash(p.measured.copy_gbs)}
          << Row{meas, tr("Buffer"), p.measured.buffer_bytes ? format_bytes(double(p.measured.buffer_bytes)) : "—"}
          << Row{meas, tr("Repeats"), number_or_dash(p.measured.repeats)};
    if (p.compute.fp32_flops > 0)
      rows_ << Row{meas, tr("fp32 FMA"), QString("%1 GFLOP/s").arg(p.compute.fp32_flops / 1e9, 0, 'f', 1)}
            << Row{meas, tr("int8 dot products"), QString("%1 Gop/s").arg(p.compute.int8_ops / 1e9, 0, 'f', 1)};
  }
  QStringList backends;
  for (const auto& b : p.build.backends) backends << QString::fromStdString(b);
  rows_ << Row{build, tr("Version"), text_or_dash(p.build.version)}
        << Row{build, tr("Git revision"), text_or_dash(p.build.git_revision)}
        << Row{build, tr("Compiler"), text_or_dash(p.build.compiler)}
        << Row{build, tr("Flags"), text_or_dash(p.build.flags)}
        << Row{build, tr("Backends"), backends.isEmpty() ? "—" : backends.join(", ")};
  endResetModel();
}

void PassportModel::clear() {
  beginResetModel();
  passport_ = {};
  rows_.clear();
  endResetModel();
}

QString PassportModel::value_of(const QString& section, const QString& fact) const {
  for (const Row& r : rows_)
    if (r.section == section && r.fact == fact) return r.value;
  return {};
}

QVariant PassportModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const Row& r = rows_[index.row()];
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kSection: return (index.row() > 0 && rows_[index.row() - 1].section == r.section) ? QString() : r.section;
      case kFact: return r.fact;
      case kValue: return r.value;
    }
  }
  return {};
}

QVariant PassportModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kSection: return tr("Section");
    case kFact: return tr("Fact");
    case kValue: return tr("Value");
  }
  return {};
}

}  // namespace p64::ui
