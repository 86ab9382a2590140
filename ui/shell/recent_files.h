#pragma once
#include <QObject>
#include <QStringList>

class QMenu;

namespace p64::ui {

// The File > Open Recent list, kept in QSettings ("recent/models"), newest first.
class RecentFiles : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMax = 8;
  explicit RecentFiles(QObject* parent = nullptr);

  QStringList files() const { return files_; }
  void add(const QString& path);
  void clear();
  // Rebuilds `menu` with one action per file (Ctrl+Shift+1..) and a "Clear" entry.
  void fill_menu(QMenu* menu);

 Q_SIGNALS:
  void open_requested(const QString& path);
  void changed();

 private:
  void save();
  QStringList files_;
};

}  // namespace p64::ui
