#include "ui/panels/optimisations_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/core/workbench.h"
#include "ui/core/store_job.h"
#include "ui/models/optimisation_model.h"
#include "ui/panels/table_view.h"

namespace p64::ui {

OptimisationsPanel::OptimisationsPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  model_ = new OptimisationModel(this);
  filter_ = new OptimisationFilterProxy(this);
  filter_->setSourceModel(model_);
  history_ = new OptimisationHistoryModel(this);

  status_ = new QComboBox(this);
  status_->addItem(tr("Any status"));
  for (auto s : {OptStatus::Default, OptStatus::OptIn, OptStatus::Rejected, OptStatus::Candidate})
    status_->addItem(QString::fromUtf8(to_string(s).data()), static_cast<int>(s));
  backend_ = new QComboBox(this);
  device_ = new QComboBox(this);
  device_->setMinimumContentsLength(18);
  text_ = new QLineEdit(this);
  text_->setPlaceholderText(tr("Search names, reasons and evidence"));
  text_->setClearButtonEnabled(true);
  summary_ = new QLabel(this);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Status:"), this));
  bar->addWidget(status_);
  bar->addWidget(new QLabel(tr("Backend:"), this));
  bar->addWidget(backend_);
  bar->addWidget(new QLabel(tr("Device:"), this));
  bar->addWidget(device_);
  bar->addWidget(text_, 1);
  bar->addWidget(summary_);

  table_ = make_table(filter_, this, TableSelection::OneRow);
  table_->setSortingEnabled(true);
  history_table_ = make_table(history_, this, TableSelection::OneRow);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  auto* hist_box = new QWidget(split);
  auto* hist_layout = new QVBoxLayout(hist_box);
  hist_layout->setContentsMargins(0, 0, 0, 0);
  hist_layout->addWidget(new QLabel(tr("<b>History of the selected switch</b> (double-click an A/B entry to open its run)"), hist_box));
  hist_layout->addWidget(history_table_);
  split->addWidget(hist_box);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  auto update_summary = [this] {
    summary_->setText(tr("%1 of %2 switches").arg(filter_->rowCount()).arg(model_->rowCount()));
  };
  connect(status_, &QComboBox::currentIndexChanged, this, [this, update_summary](int i) {
    filter_->set_status(i <= 0 ? std::nullopt : std::optional<OptStatus>(static_cast<OptStatus>(status_->itemData(i).toInt())));
    update_summary();
  });
  connect(backend_, &QComboBox::currentIndexChanged, this, [this, update_summary](int i) {
    filter_->set_backend(i <= 0 ? QString() : backend_->itemText(i));
    update_summary();
  });
  connect(device_, &QComboBox::currentIndexChanged, this, [this, update_summary](int i) {
    filter_->set_device(i <= 0 ? QString() : device_->itemText(i));
    update_summary();
  });
  connect(text_, &QLineEdit::textChanged, this, [this, update_summary](const QString& t) {
    filter_->set_text(t);
    update_summary();
  });
  connect(this, &OptimisationsPanel::reloaded, this, update_summary);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& cur) { show_history(cur); });
  connect(history_table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    const OptimisationHistoryEntry* h = history_->entry_at(i.row());
    if (h && h->evidence_run_id) wb_.show_run(h->evidence_run_id);
  });
  connect(&wb_, &Workbench::store_written, this, &OptimisationsPanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &OptimisationsPanel::reload);
  reload();
}

void OptimisationsPanel::reload() {
  query_store<std::vector<OptimisationRow>>(
      wb_, this, tr("Reading the optimisation history"),
      [](Store& s) { return load_optimisation_rows(s); },
      [this](std::vector<OptimisationRow> rows) {
        model_->set_rows(std::move(rows));
        refill_combos();
        table_->resizeColumnsToContents();
        table_->setColumnWidth(OptimisationModel::kReason, std::min(420, table_->columnWidth(OptimisationModel::kReason)));
        Q_EMIT reloaded();
      },
      [this](const QString& m) { summary_->setText(tr("Store not readable: %1").arg(m)); });
}

void OptimisationsPanel::refill_combos() {
  for (auto [box, items, any] : {std::tuple{backend_, model_->backends(), tr("Any backend")},
                                 std::tuple{device_, model_->devices(), tr("Any device")}}) {
    const QString keep = box->currentIndex() > 0 ? box->currentText() : QString();
    QSignalBlocker block(box);
    box->clear();
    box->addItem(any);
    box->addItems(items);
    box->setCurrentIndex(std::max(0, box->findText(keep)));
  }
}

void OptimisationsPanel::show_history(const QModelIndex& proxy_index) {
  const OptimisationRow* row = model_->row_at(filter_->mapToSource(proxy_index).row());
  history_->set_history(row ? row->history : std::vector<OptimisationHistoryEntry>{});
  history_table_->resizeColumnsToContents();
}

}  // namespace p64::ui
