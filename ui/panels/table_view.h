#pragma once
// The read-only table every panel shows its item models in: whole-row selection, alternating
// rows, no row numbers, the last column stretched.
#include <QTableView>

class QAbstractItemModel;
class QWidget;

namespace p64::ui {

enum class TableSelection { ManyRows, OneRow };

QTableView* make_table(QAbstractItemModel* model, QWidget* parent, TableSelection selection = TableSelection::ManyRows);

}  // namespace p64::ui
