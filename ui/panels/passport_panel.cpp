#include "ui/panels/passport_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMap>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "engine/runtime/backend_registry.h"
#include "ui/app/workbench.h"
#include "ui/jobs/job.h"
#include "ui/models/passport_model.h"
#include "ui/panels/table_view.h"

namespace p64::ui {

namespace {
// Passports measured in this session, per backend (measuring takes seconds; keep them).
QMap<QString, Passport>& measured() {
  static QMap<QString, Passport> m;
  return m;
}
}  // namespace

PassportPanel::PassportPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  model_ = new PassportModel(this);
  backends_ = new QListWidget(this);
  backends_->setMaximumWidth(220);
  for (const auto& f : backend_factories()) {
    std::string why;
    auto* item = new QListWidgetItem(QString::fromStdString(f.name), backends_);
    if (!f.available(&why)) {
      item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
      item->setToolTip(QString::fromStdString(why));
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

  connect(backends_, &QListWidget::currentTextChanged, this, &PassportPanel::show_backend);
  connect(measure_, &QPushButton::clicked, this, &PassportPanel::measure_again);
  // Start on the first backend that can run here (the CPU at worst).
  int first = -1;
  for (int i = 0; i < backends_->count() && first < 0; ++i)
    if (backends_->item(i)->flags() & Qt::ItemIsEnabled) first = i;
  if (first >= 0) backends_->setCurrentRow(first);
  else show_backend({});
}

void PassportPanel::show_backend(const QString& name) {
  const QList<QListWidgetItem*> items = backends_->findItems(name, Qt::MatchExactly);
  const bool available = !items.isEmpty() && (items.front()->flags() & Qt::ItemIsEnabled);
  measure_->setEnabled(available);
  if (!items.isEmpty() && !available) {
    Passport host_only;
    host_only.host = collect_host_facts();
    host_only.build = collect_build_facts();
    model_->set_passport(host_only);
    note_->setText(tr("The <b>%1</b> backend cannot run here: %2").arg(name, items.front()->toolTip().toHtmlEscaped()));
  } else if (measured().contains(name)) {
    model_->set_passport(measured().value(name));
    note_->setText(tr("Passport of the <b>%1</b> backend, measured in this session.").arg(name));
  } else {
    Passport host_only;
    host_only.host = collect_host_facts();
    host_only.build = collect_build_facts();
    model_->set_passport(host_only);
    note_->setText(tr("Host and build facts. The <b>%1</b> device has not been measured yet: "
                      "press <i>Measure again</i>.").arg(name));
  }
  table_->resizeColumnsToContents();
}

void PassportPanel::measure_again() {
  QListWidgetItem* item = backends_->currentItem();
  if (item == nullptr) return;
  const QString name = item->text();
  auto result = std::make_shared<Passport>();
  auto* job = new Job(tr("Measuring %1").arg(name), [name, result](const ProgressFn& progress, Job&) {
    progress(0.0, "creating the backend");
    auto backend = create_backend(name.toStdString());
    progress(0.2, "measuring bandwidth");
    *result = backend->passport();
    progress(1.0, "done");
  });
  measure_->setEnabled(false);
  connect(job, &Job::succeeded, this, [this, name, result] {
    measured().insert(name, *result);
    if (name == wb_.resolved_backend()) wb_.set_device(QString::fromStdString(result->device.name));
    show_backend(name);
  });
  connect(job, &Job::failed, this, [this, name](const QString& m) {
    note_->setText(tr("<b>%1</b> could not be measured: %2").arg(name, m.toHtmlEscaped()));
  });
  connect(job, &Job::finished, this, [this] { measure_->setEnabled(true); });
  wb_.track(job);
}

}  // namespace p64::ui
