#include "ui/shell/recent_files.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace p64::ui {

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {
  files_ = QSettings().value("recent/models").toStringList();
}

void RecentFiles::add(const QString& path) {
  const QString abs = QFileInfo(path).absoluteFilePath();
  files_.removeAll(abs);
  files_.prepend(abs);
  while (files_.size() > kMax) files_.removeLast();
  save();
}

void RecentFiles::clear() {
  files_.clear();
  save();
}

void RecentFiles::save() {
  QSettings().setValue("recent/models", files_);
  Q_EMIT changed();
}

void RecentFiles::fill_menu(QMenu* menu) {
  menu->clear();
  int i = 0;
  for (const QString& f : files_) {
    QAction* a = menu->addAction(QString("&%1 %2").arg(i + 1).arg(QFileInfo(f).fileName()));
    a->setToolTip(f);
    a->setData(f);
    if (i < 9) a->setShortcut(QKeySequence(QString("Ctrl+Shift+%1").arg(i + 1)));
    a->setEnabled(QFileInfo::exists(f));
    connect(a, &QAction::triggered, this, [this, f] { Q_EMIT open_requested(f); });
    ++i;
  }
  if (files_.isEmpty()) menu->addAction(tr("(none)"))->setEnabled(false);
  menu->addSeparator();
  connect(menu->addAction(tr("Clear list")), &QAction::triggered, this, &RecentFiles::clear);
}

}  // namespace p64::ui
