#include "ui/models/explore_matrix_model.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>

#include "engine/lab/store.h"

namespace p64::ui {
namespace {

QString verdict_text(Verdict v) { return QString::fromUtf8(to_string(v).data()); }

QString model_label(const std::string& path) {
  const QString p = QString::fromStdString(path);
  const QString name = QFileInfo(p.endsWith('/') ? p.chopped(1) : p).fileName();
  return name.isEmpty() ? p : name;
}

QString cell_tooltip(const ExploreCell& c, const ExplorePlan& plan) {
  const ComparisonRecord& r = c.comparison;
  QString t = ExploreMatrixModel::tr("<b>%1</b> on %2<br>B/A %3 [%4 - %5]: %6 vs %7 tok/s<br>p = %8%9<br>verdict: %10 - %11<br>quality gate: %12")
                  .arg(QString::fromStdString(plan.sets[c.set_index]).toHtmlEscaped(),
                       model_label(plan.models[c.model_index]).toHtmlEscaped())
                  .arg(r.ratio_median, 0, 'f', 3)
                  .arg(r.ratio_min, 0, 'f', 3)
                  .arg(r.ratio_max, 0, 'f', 3)
                  .arg(r.b_median, 0, 'f', 2)
                  .arg(r.a_median, 0, 'f', 2)
                  .arg(c.p_value, 0, 'g', 3)
                  .arg(c.significant() ? ExploreMatrixModel::tr(" (significant)") : ExploreMatrixModel::tr(" (not significant)"))
                  .arg(verdict_text(r.verdict), QString::fromStdString(r.reason).toHtmlEscaped())
                  .arg(r.quality_pass ? ExploreMatrixModel::tr("pass") : ExploreMatrixModel::tr("FAIL"));
  if (c.busy) t += ExploreMatrixModel::tr("<br><b>the machine was busy during this A/B</b>");
  t += ExploreMatrixModel::tr("<br>A/B run %1 (double-click to open)").arg(c.run_id);
  return t;
}

}  // namespace

void ExploreMatrixModel::set_matrix(ExploreMatrix m) {
  beginResetModel();
  m_ = std::move(m);
  endResetModel();
}

int ExploreMatrixModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_.rows());
}

int ExploreMatrixModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_.columns());
}

QColor ExploreMatrixModel::cell_color(const ExploreCell& c) {
  const double change = c.comparison.ratio_median - 1.0;
  const double strength = std::clamp(std::abs(change) / 0.10, 0.0, 1.0) * (c.significant() ? 1.0 : 0.35);
  const QColor base = change >= 0 ? QColor(46, 160, 67) : QColor(207, 34, 46);
  const QColor white(255, 255, 255);
  auto mix = [&](int a, int b) { return static_cast<int>(std::lround(b + (a - b) * (0.15 + 0.85 * strength))); };
  return QColor(mix(base.red(), white.red()), mix(base.green(), white.green()), mix(base.blue(), white.blue()));
}

QVariant ExploreMatrixModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const ExploreCell* c = m_.cell(static_cast<size_t>(index.row()), static_cast<size_t>(index.column()));
  switch (role) {
    case Qt::DisplayRole:
      if (!c) return tr("not measured");
      return QStringLiteral("%1%2 %3%4")
          .arg(c->comparison.ratio_median, 0, 'f', 3)
          .arg(c->significant() ? QStringLiteral("*") : QString())
          .arg(verdict_text(c->comparison.verdict))
          .arg(c->busy ? QStringLiteral(" !") : QString());
    case Qt::ToolTipRole:
      return c ? cell_tooltip(*c, m_.plan) : tr("Not measured yet: `p64 explore` resumes here");
    case Qt::BackgroundRole:
      return c ? cell_color(*c) : QColor(230, 230, 230);
    case Qt::ForegroundRole:
      return QColor(c ? Qt::black : Qt::darkGray);
    case Qt::TextAlignmentRole:
      return int(Qt::AlignCenter);
    case kRunIdRole:
      return QVariant::fromValue<qint64>(c ? c->run_id : 0);
  }
  return {};
}

QVariant ExploreMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (section < 0) return {};
  const auto i = static_cast<size_t>(section);
  if (orientation == Qt::Horizontal && i < m_.columns()) {
    const QString set = QString::fromStdString(m_.plan.sets[i]);
    if (role == Qt::DisplayRole) return QStringLiteral("[%1] %2").arg(section + 1).arg(set);
    if (role == Qt::ToolTipRole) return tr("B = %1 + %2").arg(QString::fromStdString(m_.plan.baseline), set);
  }
  if (orientation == Qt::Vertical && i < m_.rows()) {
    if (role == Qt::DisplayRole) return model_label(m_.plan.models[i]);
    if (role == Qt::ToolTipRole) return QString::fromStdString(m_.plan.models[i]);
  }
  return {};
}

QString ExploreMatrixModel::summary() const {
  int wins = 0, regressions = 0, inconclusive = 0;
  for (const ExploreCell& c : m_.cells) {
    if (c.comparison.verdict == Verdict::Win || c.comparison.verdict == Verdict::Promoted) ++wins;
    else if (c.comparison.verdict == Verdict::Rejected) ++regressions;
    else ++inconclusive;
  }
  return tr("%1 of %2 cells measured: %3 win(s), %4 rejected, %5 inconclusive")
      .arg(m_.cells.size())
      .arg(m_.size())
      .arg(wins)
      .arg(regressions)
      .arg(inconclusive);
}

std::vector<ExploreMatrix> load_explore_matrices(const Store& store) {
  std::vector<ExploreMatrix> matrices;
  const std::vector<ExploreRecord> records = store.explores();
  for (auto it = records.rbegin(); it != records.rend(); ++it) matrices.push_back(load_explore_matrix(store, it->name));
  return matrices;
}

}  // namespace p64::ui
