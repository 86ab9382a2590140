#include "ui/panels/models_panel.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/core/model_io.h"
#include "ui/core/workbench.h"
#include "ui/charts/manifold_grid.h"
#include "ui/core/job.h"
#include "ui/core/progress_dialog.h"
#include "ui/models/p64_tables.h"
#include "ui/models/passport_model.h"
#include "ui/panels/convert_dialog.h"
#include "ui/panels/synth_dialog.h"
#include "ui/panels/table_view.h"

namespace p64::ui {
namespace {

// An unreadable file is not one: the open job then says why, naming it.
bool is_llama2c_file(const std::string& path) {
  try {
    return detect_model_format(path) == "llama2c";
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

ModelsPanel::ModelsPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  header_ = new KeyValueModel(this);
  hparams_ = new KeyValueModel(this);
  tokenizer_ = new KeyValueModel(this);
  tensors_ = new TensorTableModel(this);
  schedule_ = new ScheduleModel(this);
  manifold_ = new ManifoldModel(this);
  vocab_ = new VocabModel(this);

  title_label_ = new QLabel(tr("No model open. Open a .p64, a .gguf, a llama2.c checkpoint or a Hugging Face "
                               "folder, drop one on the window, or make a synthetic model."), this);
  title_label_->setWordWrap(true);
  title_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  open_button_ = new QPushButton(tr("Open…"), this);
  convert_button_ = new QPushButton(tr("Convert to P64…"), this);
  verify_button_ = new QPushButton(tr("Verify"), this);
  verify_button_->setToolTip(tr("Check every CRC, the padding and the manifold of the open .p64"));
  synth_button_ = new QPushButton(tr("New synthetic model…"), this);
  verify_button_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(title_label_, 1);
  for (QPushButton* b : {open_button_, convert_button_, verify_button_, synth_button_}) buttons->addWidget(b);

  tabs_ = new QTabWidget(this);
  tabs_->addTab(make_table(header_, this), tr("Header"));
  tabs_->addTab(make_table(hparams_, this), tr("Hyperparameters"));

  auto* tok_split = new QSplitter(Qt::Horizontal, this);
  auto* tok_left = new QWidget(tok_split);
  auto* tok_left_layout = new QVBoxLayout(tok_left);
  tok_left_layout->setContentsMargins(0, 0, 0, 0);
  tok_left_layout->addWidget(make_table(tokenizer_, tok_left), 2);
  chat_template_ = new QLabel(tok_left);
  chat_template_->setWordWrap(true);
  chat_template_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  chat_template_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  tok_left_layout->addWidget(chat_template_, 1);
  tok_split->addWidget(tok_left);
  tok_split->addWidget(make_table(vocab_, tok_split));
  tabs_->addTab(tok_split, tr("Tokenizer"));

  auto* tensor_page = new QWidget(this);
  auto* tensor_layout = new QVBoxLayout(tensor_page);
  tensor_search_ = new QLineEdit(tensor_page);
  tensor_search_->setPlaceholderText(tr("Filter tensors by name or type (e.g. blk.3. or Q6_K)"));
  tensor_search_->setClearButtonEnabled(true);
  tensor_filter_ = new QSortFilterProxyModel(this);
  tensor_filter_->setSourceModel(tensors_);
  tensor_filter_->setSortRole(Qt::UserRole);
  tensor_filter_->setFilterKeyColumn(-1);
  tensor_filter_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  auto* tensor_table = make_table(tensor_filter_, tensor_page);
  tensor_table->setSortingEnabled(true);
  tensor_table->sortByColumn(-1, Qt::AscendingOrder);
  tensor_layout->addWidget(tensor_search_);
  tensor_layout->addWidget(tensor_table);
  tabs_->addTab(tensor_page, tr("Tensors"));
  connect(tensor_search_, &QLineEdit::textChanged, tensor_filter_, &QSortFilterProxyModel::setFilterFixedString);

  tabs_->addTab(make_table(schedule_, this), tr("Layer schedule"));

  auto* man_split = new QSplitter(Qt::Vertical, this);
  manifold_grid_ = new ManifoldGrid(man_split);
  man_split->addWidget(manifold_grid_);
  man_split->addWidget(make_table(manifold_, man_split));
  man_split->setStretchFactor(0, 3);
  man_split->setStretchFactor(1, 1);
  tabs_->addTab(man_split, tr("D10 manifold"));

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(tabs_, 1);

  connect(open_button_, &QPushButton::clicked, this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Open model"), QFileInfo(current_path_).absolutePath(),
                                                   tr("Models (*.p64 *.gguf *.bin);;All files (*)"));
    if (!p.isEmpty()) open(p);
  });
  connect(convert_button_, &QPushButton::clicked, this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Convert to P64"), QFileInfo(current_path_).absolutePath(),
                                                   tr("GGUF or llama2.c (*.gguf *.bin);;All files (*)"));
    if (!p.isEmpty()) convert(p);
  });
  connect(verify_button_, &QPushButton::clicked, this, &ModelsPanel::verify);
  connect(synth_button_, &QPushButton::clicked, this, &ModelsPanel::new_synthetic_model);
  connect(&wb_, &Workbench::open_requested, this, &ModelsPanel::open);
}

QList<QChartView*> ModelsPanel::chart_views() const { return manifold_grid_->views(); }

void ModelsPanel::set_busy(bool busy) {
  for (QPushButton* b : {open_button_, convert_button_, synth_button_}) b->setEnabled(!busy);
  verify_button_->setEnabled(!busy && !verify_path_.isEmpty());
}

void ModelsPanel::open(const QString& path) {
  // What the CLI takes, this takes: a non-P64 file is converted for the backend into the p64
  // cache on the way (Convert to P64… writes a .p64 to keep).
  auto result = std::make_shared<LoadedModel>();
  const std::string p = path.toStdString(), backend = wb_.backend().toStdString();
  // A llama2.c checkpoint needs its tokenizer file (the CLI's --tokenizer): load_model takes the
  // one beside it; without one, the user picks it.
  std::string tokenizer;
  if (interactive_ && llama2c_tokenizer_beside(path).isEmpty() && is_llama2c_file(p))
    tokenizer = QFileDialog::getOpenFileName(this, tr("Tokenizer for %1").arg(QFileInfo(path).fileName()),
                                             QFileInfo(path).absolutePath(),
                                             tr("llama2.c tokenizer (*.bin);;All files (*)"))
                    .toStdString();
  auto* job = new Job(tr("Opening %1").arg(QFileInfo(path).fileName()),
                      [p, backend, tokenizer, result](const ProgressFn& progress, Job&) {
                        *result = load_model(p, backend, progress, tokenizer);
                      });
  set_busy(true);
  connect(job, &Job::succeeded, this, [this, path, result] {
    current_path_ = path;
    verify_path_ = is_p64_path(path) ? path : QString();
    show_contents(result->contents);
    wb_.set_model(path, result->model);
    Q_EMIT opened(path);
  });
  connect(job, &Job::failed, this, [this, path](const QString& m) {
    // Verify lists every problem of a .p64 that failed to open: it checks that file from now on.
    const bool p64 = is_p64_path(path);
    if (p64) verify_path_ = path;
    title_label_->setText(tr("<b>Could not open %1</b><br>%2%3")
                              .arg(QFileInfo(path).fileName(), m.toHtmlEscaped(),
                                   p64 ? tr("<br>Convert the source file again, or press <i>Verify</i> for the full "
                                            "list of problems in this file.")
                                       : QString()));
    Q_EMIT open_failed(m);
  });
  connect(job, &Job::finished, this, [this] { set_busy(false); });
  show_progress_dialog(this, job);
  wb_.track(job);
}

void ModelsPanel::show_contents(std::shared_ptr<const P64Contents> c) {
  const HParams& hp = c->hparams;
  title_label_->setText(tr("<b>%1</b> — %2, %3 layers, %4 wide, %5 heads (%6 KV), vocabulary %7, %8")
                            .arg(QFileInfo(QString::fromStdString(c->path)).fileName().toHtmlEscaped(),
                                 QString::fromStdString(hp.name.empty() ? hp.arch : hp.name).toHtmlEscaped())
                            .arg(hp.n_layer)
                            .arg(hp.n_embd)
                            .arg(hp.n_head)
                            .arg(hp.n_head_kv)
                            .arg(hp.n_vocab)
                            .arg(format_bytes(double(c->header.file_size))));
  header_->set_rows(header_rows(*c));
  hparams_->set_rows(hparams_rows(hp));
  tokenizer_->set_rows(tokenizer_rows(c->vocab));
  chat_template_->setText(c->vocab.chat_template.empty()
                              ? tr("<i>No chat template in this file: Chat uses the plain fallback.</i>")
                              : tr("<b>Chat template</b><pre>%1</pre>")
                                    .arg(QString::fromStdString(c->vocab.chat_template.substr(0, 1500)).toHtmlEscaped()));
  tensors_->set_contents(c);
  schedule_->set_contents(c);
  manifold_->set_contents(c);
  vocab_->set_contents(c);
  manifold_grid_->set_model(manifold_);
  for (QTableView* t : findChildren<QTableView*>()) t->resizeColumnsToContents();
}

void ModelsPanel::verify() {
  if (verify_path_.isEmpty()) return;
  auto report = std::make_shared<P64VerifyReport>();
  const std::string p = verify_path_.toStdString();
  auto* job = new Job(tr("Verifying %1").arg(QFileInfo(verify_path_).fileName()),
                      [p, report](const ProgressFn& progress, Job&) { *report = verify_model(p, progress); });
  set_busy(true);
  connect(job, &Job::succeeded, this, [this, report] {
    QString summary = tr("%1 tensors, %2 checked").arg(report->tensors_checked).arg(format_bytes(double(report->bytes_checked)));
    if (report->ok) {
      summary = tr("OK: %1; manifold %2").arg(summary, report->manifold_recomputed ? tr("recomputed and equal") : tr("not recomputed"));
      wb_.message(summary);
    } else {
      QStringList problems;
      for (const auto& pr : report->problems) problems << QString::fromStdString(pr);
      summary = tr("FAILED: %1\n%2").arg(summary, problems.join("\n"));
      if (interactive_) QMessageBox::warning(this, tr("Verify"), summary);
    }
    Q_EMIT verified(report->ok, summary);
  });
  connect(job, &Job::finished, this, [this] { set_busy(false); });
  show_progress_dialog(this, job);
  wb_.track(job);
}

void ModelsPanel::convert(const QString& source) {
  ConvertDialog dlg(source, this);
  if (interactive_ && dlg.exec() != QDialog::Accepted) return;
  convert_to(source, dlg.output_path(), dlg.options());
}

void ModelsPanel::convert_to(const QString& source, const QString& output, const ConvertOptions& options) {
  const std::string in = source.toStdString(), out = output.toStdString();
  auto* job = new Job(tr("Converting %1").arg(QFileInfo(source).fileName()),
                      [in, out, options](const ProgressFn& progress, Job&) { convert_model(in, out, options, progress); });
  set_busy(true);
  connect(job, &Job::succeeded, this, [this, output] { open(output); });
  connect(job, &Job::failed, this, [this, source](const QString& m) {
    title_label_->setText(tr("<b>Could not convert %1</b><br>%2").arg(QFileInfo(source).fileName(), m.toHtmlEscaped()));
    Q_EMIT open_failed(m);
  });
  connect(job, &Job::finished, this, [this] { set_busy(false); });
  show_progress_dialog(this, job);
  wb_.track(job);
}

void ModelsPanel::new_synthetic_model() {
  SynthDialog dlg(this);
  if (interactive_ && dlg.exec() != QDialog::Accepted) return;
  if (!interactive_) dlg.set_output_path(synth_path_.isEmpty() ? dlg.output_path() : synth_path_);
  const std::string preset = dlg.preset().toStdString(), quant = dlg.quant().toStdString();
  const std::string gguf = dlg.output_path().toStdString();
  const quint64 seed = dlg.seed();
  auto* job = new Job(tr("Writing synthetic %1 %2").arg(dlg.preset(), dlg.quant()),
                      [=](const ProgressFn& progress, Job&) { write_synthetic_gguf(preset, quant, seed, gguf, progress); });
  set_busy(true);
  const QString gguf_q = dlg.output_path();
  connect(job, &Job::succeeded, this, [this, gguf_q] { convert_to(gguf_q, default_p64_path(gguf_q), {}); });
  connect(job, &Job::finished, this, [this] { set_busy(false); });
  show_progress_dialog(this, job);
  wb_.track(job);
}

}  // namespace p64::ui
