#include "ui/shell/main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QChartView>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>

#include "p64/build_info.h"
#include "ui/shell/application.h"
#include "ui/shell/recent_files.h"
#include "ui/core/theme.h"
#include "ui/core/workbench.h"
#include "ui/core/job.h"
#include "ui/panels/chart_export_actions.h"
#include "ui/panels/panel.h"
#include "ui/panels/panel_factory.h"

namespace p64::ui {

bool looks_like_model_path(const QString& path) {
  const QFileInfo fi(path);
  if (fi.isDir()) return QFileInfo::exists(fi.filePath() + "/config.json");  // HF folder
  const QString s = fi.suffix().toLower();
  return s == "p64" || s == "gguf" || s == "bin";
}

MainWindow::MainWindow(Workbench& workbench, QWidget* parent) : QMainWindow(parent), wb_(workbench) {
  init_resources();
  setWindowTitle("P64 Lab");
  setWindowIcon(QIcon(":/icons/p64lab.svg"));
  setAcceptDrops(true);
  setObjectName("MainWindow");

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);
  for (Panel* p : create_panels(wb_)) add_panel(p);

  recent_ = new RecentFiles(this);
  connect(recent_, &RecentFiles::open_requested, this, &MainWindow::open_model);
  build_actions();

  backend_label_ = new QLabel(this);
  model_label_ = new QLabel(this);
  job_label_ = new QLabel(this);
  job_bar_ = new QProgressBar(this);
  job_bar_->setRange(0, 1000);
  job_bar_->setMaximumWidth(160);
  job_cancel_ = new QToolButton(this);
  job_cancel_->setIcon(style()->standardIcon(QStyle::SP_DialogCancelButton));
  job_cancel_->setToolTip(tr("Cancel the running job (Esc)"));
  connect(job_cancel_, &QToolButton::clicked, &wb_, &Workbench::cancel_all);
  statusBar()->addWidget(model_label_, 1);
  statusBar()->addPermanentWidget(job_label_);
  statusBar()->addPermanentWidget(job_bar_);
  statusBar()->addPermanentWidget(job_cancel_);
  statusBar()->addPermanentWidget(backend_label_);

  connect(&wb_, &Workbench::backend_changed, this, &MainWindow::update_status);
  connect(&wb_, &Workbench::model_changed, this, [this] {
    update_status();
    if (!wb_.model_path().isEmpty()) recent_->add(wb_.model_path());
  });
  connect(&wb_, &Workbench::jobs_changed, this, [this] {
    update_status();
    for (Job* j : wb_.jobs()) {
      // Qt::UniqueConnection does not work with lambdas: a property marks the jobs already followed.
      if (j->property("p64_status_bar").toBool()) continue;
      j->setProperty("p64_status_bar", true);
      connect(j, &Job::progress, this, [this](double f, const QString& what) {
        job_bar_->setValue(static_cast<int>(f * 1000));
        job_label_->setText(what);
      });
    }
  });
  connect(&wb_, &Workbench::message, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(&wb_, &Workbench::panel_requested, this, &MainWindow::show_panel);
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) {
    if (auto* p = qobject_cast<Panel*>(tabs_->widget(i))) QSettings().setValue("window/panel", p->id());
  });

  QSettings s;
  restoreGeometry(s.value("window/geometry").toByteArray());
  restoreState(s.value("window/state").toByteArray());
  if (s.contains("window/panel")) show_panel(s.value("window/panel").toString());
  if (!s.contains("window/geometry")) resize(1280, 820);
  update_status();
}

MainWindow::~MainWindow() = default;

void MainWindow::add_panel(Panel* panel) {
  panels_.insert(panel->id(), panel);
  tabs_->addTab(panel, panel->title());
  int n = 0;
  for (QChartView* v : panel->chart_views()) add_chart_context_menu(v, QString("%1-%2").arg(panel->id()).arg(++n), wb_);
}

Panel* MainWindow::panel(const QString& id) const { return panels_.value(id, nullptr); }

QList<Panel*> MainWindow::panels() const {
  QList<Panel*> out;
  for (int i = 0; i < tabs_->count(); ++i) out << qobject_cast<Panel*>(tabs_->widget(i));
  return out;
}

void MainWindow::show_panel(const QString& id) {
  if (Panel* p = panel(id)) tabs_->setCurrentWidget(p);
}

void MainWindow::open_model(const QString& path) {
  show_panel("models");
  wb_.request_open(path);
}

void MainWindow::open_model_at_start(const QString& path, const QString& panel_id) {
  if (panel_id.isEmpty() || !panel(panel_id)) {
    open_model(path);
    return;
  }
  wb_.request_open(path);
  show_panel(panel_id);
}

void MainWindow::choose_open_model() {
  QSettings s;
  const QString dir = s.value("dialogs/model_dir", QDir::homePath()).toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open model"), dir,
      tr("Models (*.p64 *.gguf *.bin);;P64 containers (*.p64);;GGUF (*.gguf);;llama2.c checkpoints "
         "(*.bin);;All files (*)"));
  if (path.isEmpty()) return;
  s.setValue("dialogs/model_dir", QFileInfo(path).absolutePath());
  open_model(path);
}

void MainWindow::build_actions() {
  QStyle* st = style();
  // File
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(st->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open Model…"),
                                  QKeySequence::Open, this, &MainWindow::choose_open_model);
  open->setObjectName("action_open");
  QAction* open_dir = file->addAction(st->standardIcon(QStyle::SP_DirOpenIcon), tr("Open &HF Folder…"),
                                      QKeySequence(tr("Ctrl+Shift+O")), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Open Hugging Face folder"));
    if (!d.isEmpty()) open_model(d);
  });
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  connect(recent_menu_, &QMenu::aboutToShow, this, [this] { recent_->fill_menu(recent_menu_); });
  recent_->fill_menu(recent_menu_);
  QAction* synth = file->addAction(QIcon(":/icons/synth.svg"), tr("&New Synthetic Model…"),
                                   QKeySequence::New, this, [this] {
    show_panel("models");
    QMetaObject::invokeMethod(panel("models"), "new_synthetic_model");
  });
  synth->setObjectName("action_synth");
  file->addSeparator();
  file->addAction(tr("Export &Charts…"), QKeySequence(tr("Ctrl+Shift+E")), this, &MainWindow::export_charts);
  file->addAction(tr("Choose &Store…"), this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Lab store (SQLite)"), wb_.store_path(),
                                                   tr("SQLite (*.sqlite *.db)"), nullptr,
                                                   QFileDialog::DontConfirmOverwrite);
    if (p.isEmpty()) return;
    QSettings().setValue("store/path", p);
    wb_.set_store_path(p);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  // View: one shortcut per panel, and the theme.
  QMenu* view = menuBar()->addMenu(tr("&View"));
  int n = 0;
  for (Panel* p : panels()) {
    QAction* a = view->addAction(p->title());
    if (n < 9) a->setShortcut(QKeySequence(QString("Ctrl+%1").arg(n + 1)));
    const QString id = p->id();
    connect(a, &QAction::triggered, this, [this, id] { show_panel(id); });
    ++n;
  }
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("&Theme"));
  theme_group_ = new QActionGroup(this);
  const QString current = QSettings().value("view/theme", "system").toString();
  for (const auto& [name, label] : {std::pair{"system", tr("Follow the &system")},
                                    std::pair{"light", tr("&Light")}, std::pair{"dark", tr("&Dark")}}) {
    QAction* a = theme->addAction(label);
    a->setCheckable(true);
    a->setChecked(current == name);
    theme_group_->addAction(a);
    const QString n2 = name;
    connect(a, &QAction::triggered, this, [n2] {
      QSettings().setValue("view/theme", n2);
      apply_theme(theme_from_name(n2));
    });
  }
  view->addAction(tr("&Full Screen"), QKeySequence::FullScreen, this,
                  [this] { isFullScreen() ? showNormal() : showFullScreen(); });

  // Run
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  QMenu* backend = run->addMenu(tr("&Backend"));
  auto* backend_group = new QActionGroup(this);
  QStringList why;
  QStringList names = wb_.available_backends(&why);
  names.prepend("auto");
  for (const QString& b : names) {
    QAction* a = backend->addAction(b);
    a->setCheckable(true);
    a->setChecked(wb_.backend() == b);
    backend_group->addAction(a);
    connect(a, &QAction::triggered, this, [this, b] { wb_.set_backend(b); });
  }
  for (const QString& w : why) backend->addAction(w)->setEnabled(false);
  QAction* proxy = run->addAction(st->standardIcon(QStyle::SP_MediaPlay), tr("&Decode-proxy"),
                                  QKeySequence(tr("Ctrl+R")), this, [this] {
    show_panel("runs");
    QMetaObject::invokeMethod(panel("runs"), "start_decode_proxy");
  });
  QAction* timeline = run->addAction(QIcon(":/icons/timeline.svg"), tr("&Timeline"), QKeySequence(tr("Ctrl+T")),
                                     this, [this] {
    show_panel("runs");
    QMetaObject::invokeMethod(panel("runs"), "start_timeline");
  });
  QAction* ab = run->addAction(QIcon(":/icons/ab.svg"), tr("&A/B…"), QKeySequence(tr("Ctrl+B")), this, [this] {
    show_panel("ab");
    QMetaObject::invokeMethod(panel("ab"), "start_ab");
  });
  QAction* stop = run->addAction(st->standardIcon(QStyle::SP_MediaStop), tr("&Stop"),
                                 QKeySequence(Qt::Key_Escape), &wb_, &Workbench::cancel_all);
  stop->setObjectName("action_stop");

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&User Guide"), QKeySequence::HelpContents, this, [] {
    QDesktopServices::openUrl(QUrl("https://github.com/p64lab/p64lab/blob/main/docs/user-guide.md"));
  });
  help->addAction(tr("&About P64 Lab"), this, [this] {
    QMessageBox::about(this, tr("About P64 Lab"),
                       tr("<h3>P64 Lab %1</h3><p>A workbench for native LLM decode research.</p>"
                          "<p>Revision %2, %3.</p>")
                           .arg(build::version, build::git_revision, build::compiler));
  });

  QToolBar* tb = addToolBar(tr("Main"));
  tb->setObjectName("main_toolbar");
  tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  tb->addAction(open);
  tb->addAction(open_dir);
  tb->addAction(synth);
  tb->addSeparator();
  tb->addAction(proxy);
  tb->addAction(timeline);
  tb->addAction(ab);
  tb->addAction(stop);
}

void MainWindow::update_status() {
  QString b = wb_.backend();
  const QString resolved = wb_.resolved_backend();
  if (b == "auto") b = tr("auto → %1").arg(resolved);
  backend_label_->setText(tr("Backend: %1  Device: %2").arg(b, wb_.device().isEmpty() ? tr("(not measured)") : wb_.device()));
  model_label_->setText(wb_.model_path().isEmpty() ? tr("No model open — File › Open Model… or drop a file here")
                                                   : wb_.model_path());
  const bool busy = !wb_.jobs().isEmpty();
  job_bar_->setVisible(busy);
  job_cancel_->setVisible(busy);
  job_label_->setVisible(busy);
  if (busy) job_label_->setText(wb_.jobs().first()->title());
}

void MainWindow::export_charts() {
  if (auto* p = qobject_cast<Panel*>(tabs_->currentWidget())) export_panel_charts_dialog(p, wb_);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  wb_.cancel_all();
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!event->mimeData()->hasUrls()) return;
  for (const QUrl& u : event->mimeData()->urls())
    if (u.isLocalFile() && looks_like_model_path(u.toLocalFile())) {
      event->acceptProposedAction();
      return;
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& u : event->mimeData()->urls())
    if (u.isLocalFile() && looks_like_model_path(u.toLocalFile())) {
      open_model(u.toLocalFile());
      event->acceptProposedAction();
      return;  // one model at a time
    }
}

void MainWindow::changeEvent(QEvent* event) {
  // The platform switched light/dark: re-read it when the user follows the system.
  if (event->type() == QEvent::ThemeChange &&
      QSettings().value("view/theme", "system").toString() == "system") {
    apply_theme(ThemeChoice::System);
  }
  QMainWindow::changeEvent(event);
}

}  // namespace p64::ui
