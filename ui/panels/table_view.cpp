#include "ui/panels/table_view.h"

#include <QHeaderView>

namespace p64::ui {

QTableView* make_table(QAbstractItemModel* model, QWidget* parent, TableSelection selection) {
  auto* t = new QTableView(parent);
  t->setModel(model);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setStretchLastSection(true);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  if (selection == TableSelection::OneRow) t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->setAlternatingRowColors(true);
  t->setWordWrap(false);
  return t;
}

}  // namespace p64::ui
