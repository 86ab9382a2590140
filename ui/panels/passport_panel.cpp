#include "ui/panels/passport_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMap>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <optional>

#include "ui/core/job.h"
#include "ui/core/passports.h"
#include "ui/core/workbench.h"
#include "ui/core/store_job.h"
#include "ui/models/passport_model.h"
#include "ui/panels/table_view.h"

namespace p64::ui {

namespace {
// Passports measured in this session, per backend (measuring takes seconds; keep them), with
// what NVML said of a CUDA device when it was measured.
QMap<QString, MeasuredPassport>& measured() {
  static QMap<QString, MeasuredPassport> m;
  return m;
}

constexpr int kNameRole = Qt::UserRole;      // the backend's registry name
constexpr int kWhyRole = Qt::UserRole + 1;   // why it cannot run here; empty when it can
}  // namespace

PassportPanel::PassportPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  model_ = new PassportModel(this);
  backends_ = new QListWidget(this);
  backends_->setMaximumWidth(260);
  backends_->setWordWrap(true);
  for (const Workbench::BackendAvailability& b : wb_.registered_backends()) {
    auto* item = new QListWidgetItem(b.name, backends_);
    item->setData(kNameRole, b.name);
    if (!b.why_not.isEmpty()) {
      // Still selectable, so that its reason shows beside the facts; greyed, with the reason.
      item->setData(kWhyRole, b.why_not);
      item->setText(tr("%1 — cannot run here").arg(b.name));
      item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
      item->setToolTip(b.why_not);
    }
  }
  table_ = make_table(model_, this);
  table_->setWordWrap(true);
  measure_ = new QPushButton(tr("Measure again"), this);
  measure_->setToolTip(tr("Create the backend and measure its device facts and bandwidth now"));
  note_ = new QLabel(this);
  note_->setWordWrap(true);

  auto* right = new QVBoxLayout;
  auto* top = new QHBoxLayout;
  top->addWidget(note_, 1);
  top->addWidget(measure_);
  right->addLayout(top);
  right->addWidget(table_);
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(backends_);
  layout->addLayout(right, 1);

  connect(backends_, &QListWidget::currentItemChanged, this,
          [this](QListWidgetItem* item) { show_backend(item ? item->data(kNameRole).toString() : QString()); });
  connect(measure_, &QPushButton::clicked, this, &PassportPanel::measure_again);
  connect(&wb_, &Workbench::store_written, this, [this] { show_backend(current_backend()); });
  connect(&wb_, &Workbench::store_changed, this, [this] { show_backend(current_backend()); });
  // Start on the first backend that can run here (the CPU at worst).
  int first = -1;
  for (int i = 0; i < backends_->count() && first < 0; ++i)
    if (backends_->item(i)->data(kWhyRole).toString().isEmpty()) first = i;
  if (first >= 0) backends_->setCurrentRow(first);
  else show_backend({});
}

QString PassportPanel::current_backend() const {
  const QListWidgetItem* item = backends_->currentItem();
  return item ? item->data(kNameRole).toString() : QString();
}

QListWidgetItem* PassportPanel::item_of(const QString& name) const {
  for (int i = 0; i < backends_->count(); ++i)
    if (backends_->item(i)->data(kNameRole).toString() == name) return backends_->item(i);
  return nullptr;
}

void PassportPanel::show_host_only() {
  Passport host_only;
  host_only.host = collect_host_facts();
  host_only.build = collect_build_facts();
  model_->set_passport(host_only);
}

void PassportPanel::show_backend(const QString& name) {
  const QListWidgetItem* item = item_of(name);
  const QString why = item ? item->data(kWhyRole).toString() : QString();
  measure_->setEnabled(item && why.isEmpty());
  if (item && !why.isEmpty()) {
    show_host_only();
    note_->setText(tr("The <b>%1</b> backend cannot run here: %2").arg(name, why.toHtmlEscaped()));
  } else if (measured().contains(name)) {
    const MeasuredPassport m = measured().value(name);
    model_->set_passport(m.passport);
    QString text = tr("Passport of the <b>%1</b> backend, measured in this session.").arg(name);
    if (const QString& nvml = m.nvml_line; !nvml.isEmpty())
      text += "<br>" + tr("NVML: %1").arg(nvml.toHtmlEscaped());
    note_->setText(text);
  } else {
    show_host_only();
    note_->setText(tr("Host and build facts. The <b>%1</b> device has not been measured yet: "
                      "press <i>Measure again</i>.").arg(name));
    // A run in the store may have measured it already (the Roofline uses that bandwidth).
    if (!name.isEmpty() && !wb_.store_path().isEmpty())
      query_store<std::optional<StoredPassport>>(
          wb_, this, tr("Reading the stored passport of %1").arg(name),
          [backend = name.toStdString()](Store& s) { return latest_stored_passport(s, backend); },
          [this, name](std::optional<StoredPassport> stored) {
            if (!stored || current_backend() != name || measured().contains(name)) return;
            model_->set_passport(stored->passport);
            note_->setText(tr("Passport of the <b>%1</b> backend as measured for run %2 (%3), from the store; "
                              "<i>Measure again</i> measures it now.")
                               .arg(name)
                               .arg(stored->run_id)
                               .arg(QString::fromStdString(stored->at).toHtmlEscaped()));
            table_->resizeColumnsToContents();
            Q_EMIT passport_shown(name);
          });
  }
  table_->resizeColumnsToContents();
  Q_EMIT passport_shown(name);
}

void PassportPanel::measure_again() {
  const QString name = current_backend();
  if (name.isEmpty()) return;
  auto result = std::make_shared<MeasuredPassport>();
  auto* job = new Job(tr("Measuring %1").arg(name), [name, result](const ProgressFn& progress, Job&) {
    *result = measure_passport(name, progress);
  });
  measure_->setEnabled(false);
  connect(job, &Job::succeeded, this, [this, name, result] {
    measured().insert(name, *result);
    if (name == wb_.resolved_backend()) wb_.set_device(QString::fromStdString(result->passport.device.name));
    show_backend(name);
  });
  connect(job, &Job::failed, this, [this, name](const QString& m) {
    note_->setText(tr("<b>%1</b> could not be measured: %2").arg(name, m.toHtmlEscaped()));
  });
  connect(job, &Job::finished, this, [this] { measure_->setEnabled(true); });
  wb_.track(job);
}

}  // namespace p64::ui
