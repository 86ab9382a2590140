#pragma once
#include <QString>

#include <vector>

class QChart;

namespace p64 {
struct RevisionPoint;
}

namespace p64::ui {

// One measurement group's decode tok/s over the builds that measured it: the median per revision
// as a line with points, min and max as a band of two thin lines; revisions on the x axis in the
// order they first ran. `group` names what was measured (title).
void fill_revision_chart(QChart* chart, const std::vector<RevisionPoint>& points, const QString& group);

}  // namespace p64::ui
