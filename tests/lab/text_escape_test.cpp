// Reports escape the store's text per format: no spreadsheet formula from a CSV cell, no raw
// HTML or extra table column from a Markdown cell, no markup in the HTML report.
#include "engine/lab/text_escape.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/lab/peer_import.h"
#include "engine/lab/report.h"
#include "engine/lab/store.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

TEST(TextEscape, CsvCellsThatASpreadsheetWouldRunAsFormulasAreQuotedAsText) {
  EXPECT_EQ(csv_cell("=cmd|' /C calc'!A0"), "\"'=cmd|' /C calc'!A0\"");
  EXPECT_EQ(csv_cell("+1+1"), "\"'+1+1\"");
  EXPECT_EQ(csv_cell("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(csv_cell("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(csv_cell("\t=1"), "\"'\t=1\"");
  EXPECT_EQ(csv_cell("\r=1"), "\"'\r=1\"");
  EXPECT_EQ(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell("NVIDIA H200 = fast"), "\"NVIDIA H200 = fast\"");  // only the first character counts
  EXPECT_EQ(csv_cell(""), "\"\"");
}

TEST(TextEscape, MarkdownTextCarriesNoHtmlCodeLinksOrColumns) {
  EXPECT_EQ(markdown_text("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
  EXPECT_EQ(markdown_text("a | b"), "a \\| b");
  EXPECT_EQ(markdown_text("`code` [link](http://x) &lt; \\"), "\\`code\\` \\[link\\](http://x) \\&lt; \\\\");
  EXPECT_EQ(markdown_text("two\nlines\r"), "two lines ");
  EXPECT_EQ(markdown_text("Q4_K_M on NVIDIA H200"), "Q4_K_M on NVIDIA H200");  // names stay readable
}

TEST(TextEscape, MarkdownRowCellsUndoTheEscapes) {
  const std::string hostile = "a | b <i> `c` \\ [d]";
  const std::string row = "| " + markdown_text(hostile) + " | 9.80 |  | last |";
  const auto cells = markdown_row_cells(row);
  ASSERT_EQ(cells.size(), 4u) << row;
  EXPECT_EQ(cells[0], hostile);
  EXPECT_EQ(cells[1], "9.80");
  EXPECT_EQ(cells[2], "");
  EXPECT_EQ(cells[3], "last");
  EXPECT_EQ(markdown_plain(markdown_text(hostile)), hostile);
}

TEST(TextEscape, HtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(html_escape("<b a=\"1\" c='2'>&</b>"), "&lt;b a=&quot;1&quot; c=&#39;2&#39;&gt;&amp;&lt;/b&gt;");
}

// The probe's case: imported llama-bench fields reached the CSV report as formulas and the
// Markdown report as raw HTML.
TEST(TextEscape, ReportsOfAHostileImportEscapeEveryField) {
  test::TempDir dir;
  const std::string csv = (dir / "bench.csv").string();
  std::ofstream(csv) << "model_filename,model_type,n_prompt,n_gen,gpu_info,avg_ts\n"
                     << "\"<img src=x onerror=alert(1)>\",=cmd|' /C calc'!A0,0,16,\"@SUM(1+1)|<script>x</script>\",50\n";
  Store::Options o;
  o.import_plan_history = false;
  auto store = Store::open((dir / "lab.db").string(), o);
  ASSERT_EQ(store->insert_peer_results(read_llama_bench(csv)), 1);
  const nlohmann::json rep = build_report(*store, {});

  const std::string md = render_markdown(rep);
  for (size_t at = md.find('<'); at != std::string::npos; at = md.find('<', at + 1))
    EXPECT_EQ(md[at - 1], '\\') << "raw HTML at " << at << ":\n" << md;
  EXPECT_NE(md.find("\\<img src=x onerror=alert(1)\\>"), std::string::npos) << md;
  EXPECT_NE(md.find("| peer | @SUM(1+1)\\|\\<script\\>x\\</script\\> |"), std::string::npos) << md;

  const std::string html = render_html(rep);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<td>@SUM(1+1)|&lt;script&gt;x&lt;/script&gt;</td>"), std::string::npos) << html;

  // Every string cell is quoted; the device is a formula cell behind a quote.
  const std::string out = render_csv(rep);
  EXPECT_NE(out.find(",\"'@SUM(1+1)|<script>x</script>\","), std::string::npos) << out;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    for (const char* formula : {",=", ",+", ",@", ",\"=", ",\"+", ",\"@"})
      EXPECT_EQ(line.find(formula), std::string::npos) << line;
}

}  // namespace
}  // namespace p64
