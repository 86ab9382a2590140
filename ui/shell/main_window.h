#pragma once
#include <QMainWindow>
#include <QMap>

class QActionGroup;
class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;
class QToolButton;

namespace p64::ui {

class Panel;
class RecentFiles;
class Workbench;

// The workbench window: one tab per panel, menus and a toolbar whose actions carry the
// shortcuts, a status bar with the backend, the device and the job in flight. Geometry,
// the open tab and the theme are remembered in QSettings; model files can be dropped on it.
class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(Workbench& workbench, QWidget* parent = nullptr);
  ~MainWindow() override;

  Panel* panel(const QString& id) const;
  QList<Panel*> panels() const;
  void show_panel(const QString& id);
  void open_model(const QString& path);
  // The command line's model: opened as File › Open opens one, but the panel named by --panel
  // (when one is) stays in front instead of Models.
  void open_model_at_start(const QString& path, const QString& panel_id);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void add_panel(Panel* panel);
  void build_actions();
  void update_status();
  void choose_open_model();
  void export_charts();

  Workbench& wb_;
  QTabWidget* tabs_ = nullptr;
  QMap<QString, Panel*> panels_;
  RecentFiles* recent_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QLabel* backend_label_ = nullptr;
  QLabel* model_label_ = nullptr;
  QLabel* job_label_ = nullptr;
  QProgressBar* job_bar_ = nullptr;
  QToolButton* job_cancel_ = nullptr;
  QActionGroup* theme_group_ = nullptr;
};

// Model files the window accepts (open dialog, drops): .p64, .gguf, llama2.c .bin, HF folders.
bool looks_like_model_path(const QString& path);

}  // namespace p64::ui
