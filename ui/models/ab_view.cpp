#include "ui/models/ab_view.h"

#include <QBrush>
#include <QColor>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "ui/models/timeline_model.h"

namespace p64::ui {

namespace {
// The A/B's GPU figures (B's GPU, else A's) say nothing of a side that ran elsewhere.
RunGpuFigures side_gpu(RunGpuFigures f, const QString& backend) {
  if (backend != "cuda") f.power_w_mean.reset(), f.throttled.reset();
  return f;
}

AbSideView side_view(const AbSide& s, const std::optional<GpuLoad>& gpu) {
  AbSideView v;
  v.config = QString::fromStdString(s.config.to_string());
  v.backend = QString::fromStdString(s.backend);
  v.device = QString::fromStdString(s.passport.device.name);
  v.model = QString::fromStdString(s.model);
  for (const SampleRecord& r : s.samples)
    if (!r.warm) v.tok_s << r.decode_tok_s;
  v.median = s.decode_tok_s.median;
  v.min = s.decode_tok_s.min;
  v.max = s.decode_tok_s.max;
  v.gpu = side_gpu(run_gpu_figures(s.energy, gpu), v.backend);
  return v;
}

QString sci(double v) { return QString::number(v, 'e', 2); }
}  // namespace

AbView make_ab_view(const AbResult& r, const VerdictOutcome& o, std::optional<Verdict> previous, qint64 run_id) {
  AbView v;
  v.a = side_view(r.a, r.machine.gpu);
  v.b = side_view(r.b, r.machine.gpu);
  v.ratio_median = o.ratio_median;
  v.ratio_min = o.ratio_min;
  v.ratio_max = o.ratio_max;
  v.switch_name = QString::fromStdString(r.switch_name);
  v.quality << AbQualityRow{QObject::tr("B vs A"), r.b_vs_a, {}};
  if (r.b_vs_reference)
    v.quality << AbQualityRow{QObject::tr("B vs reference"), r.b_vs_reference, {}};
  else
    v.quality << AbQualityRow{QObject::tr("B vs reference"), std::nullopt, reference_note(r.reference)};
  v.quality_pass = r.quality_pass();
  v.verdict = o.verdict;
  v.reason = QString::fromStdString(o.reason);
  v.previous = previous;
  v.run_id = run_id;
  return v;
}

namespace {
AbSideView side_from_json(const nlohmann::json& summary, const char* side, const std::string& device) {
  const nlohmann::json& j = summary[side];
  AbSideView v;
  v.config = QString::fromStdString(j.value("config", ""));
  v.backend = QString::fromStdString(j.value("backend", ""));
  v.model = QString::fromStdString(j.value("model", ""));
  v.device = QString::fromStdString(device);
  for (const auto& t : j.value("samples", nlohmann::json::array())) v.tok_s << t.get<double>();
  const auto m = j.value("decode_tok_s", nlohmann::json::object());
  v.median = m.value("median", 0.0);
  v.min = m.value("min", 0.0);
  v.max = m.value("max", 0.0);
  v.gpu = side_gpu(run_gpu_figures(summary, side), v.backend);
  return v;
}

std::optional<QualityReport> quality_from_json(const nlohmann::json& q) {
  if (!q.is_object()) return std::nullopt;
  QualityReport r;
  r.positions = q.value("positions", 0);
  r.compared_positions = q.value("compared_positions", 0);
  r.top1_agreement = q.value("top1_agreement", 0.0);
  r.rms_rel_error = q.value("rms_rel_error", 0.0);
  r.max_rel_error = q.value("max_rel_error", 0.0);
  r.mean_kl = q.value("mean_kl", 0.0);
  r.max_kl = q.value("max_kl", 0.0);
  r.pass = q.value("pass", false);
  r.failure = q.value("failure", "");
  return r;
}
}  // namespace

AbView ab_view_from_stored(const RunRecord& run) {
  const auto j = nlohmann::json::parse(run.summary_json, nullptr, false);
  if (!j.is_object() || !j.contains("a") || !j.contains("b") || !j.contains("verdict"))
    throw Error("run " + std::to_string(run.id) + ": its summary is not an A/B result");
  try {
    AbView v;
    v.a = side_from_json(j, "a", run.device);
    v.b = side_from_json(j, "b", run.device);
    const auto ratio = j.value("ratio", nlohmann::json::object());
    v.ratio_median = ratio.value("median", 0.0);
    v.ratio_min = ratio.value("min", 0.0);
    v.ratio_max = ratio.value("max", 0.0);
    v.switch_name = QString::fromStdString(j.value("switch", ""));
    const auto q = j.value("quality", nlohmann::json::object());
    v.quality << AbQualityRow{QObject::tr("B vs A"), quality_from_json(q.value("b_vs_a", nlohmann::json())), {}};
    auto ref = quality_from_json(q.value("b_vs_reference", nlohmann::json()));
    v.quality << AbQualityRow{QObject::tr("B vs reference"), ref,
                              ref ? QString() : reference_note(q.value("reference", ""))};
    v.quality_pass = v.quality[0].report && v.quality[0].report->pass && (!ref || ref->pass);
    v.verdict = verdict_from_string(j["verdict"].get<std::string>());
    v.reason = QString::fromStdString(j.value("reason", ""));
    v.run_id = run.id;
    return v;
  } catch (const nlohmann::json::exception& e) {
    throw Error("run " + std::to_string(run.id) + ": malformed A/B summary (" + e.what() + ")");
  }
}

void set_ab_split(AbView* v, const std::vector<OpSpan>& a_spans, const std::vector<OpSpan>& b_spans) {
  auto split = [](const std::vector<OpSpan>& spans) {
    TimelineSplitModel m;
    m.set_spans(spans);
    std::array<double, 6> ms{};
    for (int g = 0; g < TimelineSplitModel::kGroups; ++g) ms[g] = m.group_total_ms(g);
    return ms;
  };
  v->a_split_ms = split(a_spans);
  v->b_split_ms = split(b_spans);
  v->has_split = !a_spans.empty() && !b_spans.empty();
}

QString reference_note(const std::string& reference) {
  const QString r = QString::fromStdString(reference);
  return r.startsWith("B ") ? QObject::tr("B is the reference (%1)").arg(r) : QObject::tr("A is the reference (%1)").arg(r);
}

QString verdict_name(Verdict verdict) { return QString::fromUtf8(to_string(verdict).data()).toUpper(); }

QString verdict_rule_text(Verdict verdict, const VerdictRules& rules) {
  const QString limit = QString::number(100 * rules.regression_limit, 'g', 3);
  const QString margin = QString::number(100 * rules.win_margin, 'g', 3);
  const QString alpha = QString::number(rules.alpha, 'g', 3);
  switch (verdict) {
    case Verdict::Rejected:
      return QObject::tr("REJECTED when any quality gate fails, or when median(B)/median(A) < 1 − %1% and the "
                         "Mann-Whitney test finds the difference significant (p < %2)")
          .arg(limit)
          .arg(alpha);
    case Verdict::Win:
      return QObject::tr("WIN when B is faster by more than %1% and the Mann-Whitney test finds it significant "
                         "(p < %2); a second consecutive win on this switch, model and device promotes it")
          .arg(margin)
          .arg(alpha);
    case Verdict::Promoted:
      return QObject::tr("PROMOTED after two consecutive wins on the same switch, model and device");
    case Verdict::Inconclusive:
      return QObject::tr("INCONCLUSIVE when the quality gates pass and the test finds no difference beyond "
                         "−%1%..+%2%, or the runs are too noisy or too few to tell (the reason says how many more "
                         "runs a side; at least %3 runs a side)")
          .arg(limit)
          .arg(margin)
          .arg(rules.min_runs);
  }
  return {};
}

void AbQualityModel::set_rows(QVector<AbQualityRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

QVariant AbQualityModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const AbQualityRow& row = rows_[index.row()];
  const auto& q = row.report;
  if (role == Qt::ForegroundRole && index.column() == kResult && q)
    return QBrush(q->pass ? QColor(0x2e, 0x9d, 0x4a) : QColor(0xd0, 0x3a, 0x3a));
  // A failure's reasons can run to a paragraph: the cell says FAIL, its tooltip (and the verdict
  // line under the table) the reasons, so the figures' columns stay in view.
  if (role == Qt::ToolTipRole && q && index.column() == kResult && !q->pass) return QString::fromStdString(q->failure);
  if (role == Qt::ToolTipRole && q) return QString::fromStdString(q->summary());
  if (role == Qt::TextAlignmentRole && index.column() >= kTop1)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (index.column() == kAgainst) return row.against;
  if (!q) return index.column() == kResult ? row.note : QString("—");
  switch (index.column()) {
    case kResult: return q->pass ? tr("PASS") : tr("FAIL");
    case kTop1: return QString::number(q->top1_agreement, 'f', 3);
    case kRmsRel: return sci(q->rms_rel_error);
    case kWorstRel: return sci(q->max_rel_error);
    case kMeanKl: return sci(q->mean_kl);
    case kMaxKl: return sci(q->max_kl);
    case kPositions: return QString("%1 (%2 compared)").arg(q->positions).arg(q->compared_positions);
    default: return {};
  }
}

QVariant AbQualityModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kAgainst: return tr("Quality gate");
    case kResult: return tr("Result");
    case kTop1: return tr("Top-1 agreement");
    case kRmsRel: return tr("RMS rel. error");
    case kWorstRel: return tr("Worst position");
    case kMeanKl: return tr("Mean KL");
    case kMaxKl: return tr("Max KL");
    case kPositions: return tr("Positions");
    default: return {};
  }
}

}  // namespace p64::ui
