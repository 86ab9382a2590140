#pragma once
// Writes the lab report (engine/lab/report.h) to a file; the format follows the suffix:
// .md, .html/.htm, .csv, .json, and .pdf (the HTML laid out by QTextDocument on a QPdfWriter).
#include <QString>

#include <functional>

#include <nlohmann/json_fwd.hpp>

class QObject;

namespace p64::ui {

class Job;
class Workbench;

// Builds the lab report from the workbench's store off the GUI thread: the runs of models whose
// name contains `model_filter` (every model when it is empty). `apply` gets it on the GUI thread,
// `on_error` the store's refusal.
Job* load_report(Workbench& wb, QObject* context, const QString& model_filter,
                 std::function<void(nlohmann::json)> apply, std::function<void(const QString&)> on_error);

enum class ReportFormat { Markdown, Html, Csv, Json, Pdf };

// Throws p64::Error naming the file on an unknown suffix or a failed write.
ReportFormat report_format_for(const QString& path);
void export_report(const nlohmann::json& report, const QString& path);

// The report's HTML as QTextDocument lays it out for the PDF: QTextDocument has no SVG, so the
// inline charts (whose labels it would print as loose text) are left out, and the ✅/❌ marks,
// which PDF fonts often lack, become words.
QString pdf_ready_html(const std::string& html);

}  // namespace p64::ui
