#pragma once
// Writes the lab report (engine/lab/report.h) to a file; the format follows the suffix:
// .md, .html/.htm, .csv, .json, and .pdf (the HTML laid out by QTextDocument on a QPdfWriter).
#include <QString>

#include <nlohmann/json_fwd.hpp>

namespace p64::ui {

enum class ReportFormat { Markdown, Html, Csv, Json, Pdf };

// Throws p64::Error naming the file on an unknown suffix or a failed write.
ReportFormat report_format_for(const QString& path);
void export_report(const nlohmann::json& report, const QString& path);

// The report's HTML as QTextDocument lays it out for the PDF: QTextDocument has no SVG, so the
// inline charts (whose labels it would print as loose text) are left out, and the ✅/❌ marks,
// which PDF fonts often lack, become words.
QString pdf_ready_html(const std::string& html);

}  // namespace p64::ui
