#include "ui/models/report_export.h"

#include <QFile>
#include <QFileInfo>
#include <QPageSize>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QTextDocument>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/report.h"
#include "ui/core/store_job.h"

namespace p64::ui {

Job* load_report(Workbench& wb, QObject* context, const QString& model_filter,
                 std::function<void(nlohmann::json)> apply, std::function<void(const QString&)> on_error) {
  ReportOptions options;
  options.model = model_filter.trimmed().toStdString();
  return query_store<nlohmann::json>(
      wb, context, QObject::tr("Building the scoreboard"), [options](Store& s) { return build_report(s, options); },
      std::move(apply), std::move(on_error));
}

ReportFormat report_format_for(const QString& path) {
  const QString s = QFileInfo(path).suffix().toLower();
  if (s == "md" || s == "markdown") return ReportFormat::Markdown;
  if (s == "html" || s == "htm") return ReportFormat::Html;
  if (s == "csv") return ReportFormat::Csv;
  if (s == "json") return ReportFormat::Json;
  if (s == "pdf") return ReportFormat::Pdf;
  throw Error(path.toStdString() + ": unknown report format '" + s.toStdString() +
              "' (use .md, .html, .csv, .json or .pdf)");
}

QString pdf_ready_html(const std::string& html) {
  QString h = QString::fromStdString(html);
  h.remove(QRegularExpression("<svg\\b.*?</svg>", QRegularExpression::DotMatchesEverythingOption));
  h.replace(QString::fromUtf8("✅"), QObject::tr("PASS")).replace(QString::fromUtf8("❌"), QObject::tr("not met"));
  return h;
}

void export_report(const nlohmann::json& report, const QString& path) {
  const ReportFormat f = report_format_for(path);
  if (f == ReportFormat::Pdf) {
    QPdfWriter pdf(path);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setTitle(QObject::tr("P64 Lab report"));
    pdf.setCreator("p64lab");
    QTextDocument doc;
    doc.setHtml(pdf_ready_html(render_html(report)));
    doc.print(&pdf);
    if (QFileInfo(path).size() == 0) throw Error(path.toStdString() + ": the PDF could not be written");
    return;
  }
  const std::string text = f == ReportFormat::Json  ? report.dump(2) + "\n"
                           : f == ReportFormat::Csv  ? render_csv(report)
                           : f == ReportFormat::Html ? render_html(report)
                                                     : render_markdown(report);
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate))
    throw Error(path.toStdString() + ": cannot write the report (" + out.errorString().toStdString() + ")");
  if (out.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()))
    throw Error(path.toStdString() + ": write failed (" + out.errorString().toStdString() + ")");
}

}  // namespace p64::ui
