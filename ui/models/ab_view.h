#pragma once
// What the A/B page shows of one finished comparison, copied out of the harness's result so the
// chart, the quality table and the verdict text are built from one plain value (tested headless).
#include <QAbstractTableModel>
#include <QString>
#include <QVector>

#include <array>

#include <optional>

#include "engine/lab/ab.h"
#include "engine/lab/run_gpu_figures.h"

namespace p64::ui {

struct AbSideView {
  QString config, backend, device;
  QString model;  // the model file this side ran (empty in runs stored before sides could differ)
  QVector<double> tok_s;  // decode tok/s of each measured run, in the order they ran
  double median = 0, min = 0, max = 0;
  // This side's tok/J; the power and throttling NVML saw over the whole A/B, on a CUDA side only.
  RunGpuFigures gpu;
};

struct AbQualityRow {
  QString against;                      // "B vs A", "B vs reference"
  std::optional<QualityReport> report;  // nullopt: not measured (A is the reference itself)
  QString note;                         // why there is no report
};

struct AbView {
  AbSideView a, b;
  double ratio_median = 0, ratio_min = 0, ratio_max = 0;  // B/A
  QString switch_name;
  QVector<AbQualityRow> quality;
  bool quality_pass = false;
  Verdict verdict = Verdict::Inconclusive;
  QString reason;
  std::optional<Verdict> previous;
  qint64 run_id = 0;  // 0 = not stored
  // Per-op split (ms per decode token by op group, OpGroup order) of each side, when measured.
  bool has_split = false;
  std::array<double, 6> a_split_ms{}, b_split_ms{};
  bool empty() const { return a.tok_s.isEmpty() && b.tok_s.isEmpty(); }
  bool two_models() const { return !a.model.isEmpty() && !b.model.isEmpty() && a.model != b.model; }
};

AbView make_ab_view(const AbResult& result, const VerdictOutcome& outcome, std::optional<Verdict> previous,
                    qint64 run_id);

// Adds each side's per-op split from its timeline spans (ms per decode token by op group).
void set_ab_split(AbView* view, const std::vector<OpSpan>& a_spans, const std::vector<OpSpan>& b_spans);

// The same view read back from a stored A/B run (its summary_json is ab_to_json's object), so the
// page can show the latest comparison when it opens. Throws p64::Error when the JSON is not one.
AbView ab_view_from_stored(const RunRecord& run);

// Why there is no "B vs reference" report: A, or with two models B, is the reference itself.
QString reference_note(const std::string& reference);

// The plan's rule that produced this verdict, in words (docs/measurement.md, "Verdict rules").
QString verdict_rule_text(Verdict verdict, const VerdictRules& rules = {});
QString verdict_name(Verdict verdict);  // "WIN", "PROMOTED", ...

// The quality-gate figures: one row per comparison (B vs A, B vs the reference).
class AbQualityModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kAgainst, kResult, kTop1, kRmsRel, kWorstRel, kMeanKl, kMaxKl, kPositions, kColumns };
  explicit AbQualityModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_rows(QVector<AbQualityRow> rows);
  const QVector<AbQualityRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : rows_.size(); }
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  QVector<AbQualityRow> rows_;
};

}  // namespace p64::ui
