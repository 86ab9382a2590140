#include "engine/lab/text_escape.h"

namespace p64 {
namespace {

// HTML, entities, code spans, links and table cells; emphasis (* _ ~) only styles text, and
// escaping it would bury names like Q4_K_M in backslashes.
constexpr std::string_view kMarkdownSpecial = "\\`[]<>|&";

}  // namespace

std::string csv_cell(std::string_view text) {
  std::string out = "\"";
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos) out += '\'';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string markdown_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (kMarkdownSpecial.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_plain(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && kMarkdownSpecial.find(text[i + 1]) != std::string_view::npos) ++i;
    out += text[i];
  }
  return out;
}

std::vector<std::string> markdown_row_cells(std::string_view row) {
  auto trim = [](std::string_view s) {
    const size_t a = s.find_first_not_of(' ');
    if (a == std::string_view::npos) return std::string_view();
    return s.substr(a, s.find_last_not_of(' ') - a + 1);
  };
  std::vector<std::string> cells;
  std::string_view rest = trim(row);
  if (!rest.empty() && rest.front() == '|') rest.remove_prefix(1);
  size_t start = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '\\') {
      ++i;  // an escaped character, a pipe included, belongs to the cell
      continue;
    }
    if (rest[i] != '|') continue;
    cells.push_back(markdown_plain(trim(rest.substr(start, i - start))));
    start = i + 1;
  }
  if (const std::string_view last = trim(rest.substr(start)); !last.empty()) cells.push_back(markdown_plain(last));
  return cells;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace p64
