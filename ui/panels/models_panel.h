#pragma once
#include <memory>

#include "ui/panels/panel.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace p64 {
struct P64Contents;
struct ConvertOptions;
}

namespace p64::ui {

class KeyValueModel;
class ManifoldGrid;
class ManifoldModel;
class ScheduleModel;
class TensorTableModel;
class VocabModel;

// Open, convert, verify and inspect model files; make synthetic ones. A .p64 is inspected
// (header, hparams, tokenizer, tensors, schedule, manifold) and opened for decode; other
// formats open as the CLI opens them, converted on the way into the p64 cache.
class ModelsPanel : public Panel {
  Q_OBJECT
 public:
  explicit ModelsPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "models"; }
  QString title() const override { return tr("Models"); }
  QList<QChartView*> chart_views() const override;

  TensorTableModel* tensors() const { return tensors_; }
  KeyValueModel* hparams() const { return hparams_; }
  ManifoldModel* manifold() const { return manifold_; }
  QTabWidget* inspect_tabs() const { return tabs_; }
  QPushButton* verify_button() const { return verify_button_; }
  QLabel* title_label() const { return title_label_; }
  // Tests and the first-start flow: no dialogs, defaults everywhere; synth writes to `path`.
  void set_interactive(bool on) { interactive_ = on; }
  void set_synth_path(const QString& path) { synth_path_ = path; }

 public Q_SLOTS:
  void open(const QString& path);
  void verify();
  void convert(const QString& source);
  void new_synthetic_model();
  void convert_to(const QString& source, const QString& output, const p64::ConvertOptions& options);

 Q_SIGNALS:
  void opened(const QString& path);      // the model is set on the workbench
  void open_failed(const QString& message);
  void verified(bool ok, const QString& summary);

 private:
  void show_contents(std::shared_ptr<const P64Contents> contents);
  void set_busy(bool busy);

  QLabel* title_label_;
  QPushButton* open_button_;
  QPushButton* convert_button_;
  QPushButton* verify_button_;
  QPushButton* synth_button_;
  QTabWidget* tabs_;
  KeyValueModel* header_;
  KeyValueModel* hparams_;
  KeyValueModel* tokenizer_;
  TensorTableModel* tensors_;
  QSortFilterProxyModel* tensor_filter_;
  ScheduleModel* schedule_;
  ManifoldModel* manifold_;
  VocabModel* vocab_;
  ManifoldGrid* manifold_grid_;
  QLineEdit* tensor_search_;
  QLabel* chat_template_;
  QString current_path_;
  QString verify_path_;  // the .p64 Verify checks: the open one, or one that failed to open
  QString synth_path_;
  bool interactive_ = true;
};

}  // namespace p64::ui
