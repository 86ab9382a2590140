#include "ui/panels/pending_panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace p64::ui {

PendingPanel::PendingPanel(Workbench& wb, QString id, QString title, QString needs, QWidget* parent)
    : Panel(wb, parent), id_(std::move(id)), title_(std::move(title)) {
  auto* label = new QLabel(tr("<h3>%1</h3><p>This page needs <code>%2</code>, which this build of "
                              "the engine does not have yet.</p>")
                               .arg(title_, needs.toHtmlEscaped()));
  label->setWordWrap(true);
  label->setAlignment(Qt::AlignCenter);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(label);
}

}  // namespace p64::ui
