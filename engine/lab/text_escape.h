#pragma once
// Text from the store written into a report, escaped for the report's format. Run labels,
// device names and every field of an imported llama-bench file are someone else's text: in a
// CSV opened by a spreadsheet "=cmd|' /C calc'!A0" is a formula, in Markdown "<img onerror=...>"
// is HTML that a renderer passes through.
#include <string>
#include <string_view>
#include <vector>

namespace p64 {

// One quoted CSV cell, quotes doubled. A cell that a spreadsheet would read as a formula
// (first character = + - @, tab or carriage return) gets a leading ' (OWASP's CSV injection
// advice), so it shows as the text it is.
std::string csv_cell(std::string_view text);

// Text for a Markdown table cell or line: the characters Markdown gives a meaning inline
// for markup (\ ` [ ] < > | &) are backslash-escaped, so no HTML, entity, link, code span or
// extra table column comes from the text; line breaks become spaces.
std::string markdown_text(std::string_view text);

// The cells of one Markdown table row ("| a | b\| c |" -> "a", "b| c"), split on the pipes
// that are not escaped, with markdown_text's escapes undone and the padding trimmed.
std::vector<std::string> markdown_row_cells(std::string_view row);
// A line of Markdown text with markdown_text's escapes undone.
std::string markdown_plain(std::string_view text);

// Text for HTML element content or a quoted attribute value.
std::string html_escape(std::string_view text);

}  // namespace p64
