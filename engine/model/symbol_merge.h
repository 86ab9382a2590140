#pragma once
// The merge both subword tokenizers run, BPE by merge rank and SentencePiece by piece score: the
// text is cut into UTF-8 characters (a stray byte is a symbol of its own), then the adjacent pair
// of highest priority is merged, again and again, until no pair may merge; between equal
// priorities the leftmost pair goes first. A heap of candidate pairs keeps it O(n log n); pairs
// made stale by an earlier merge are skipped when they come up.
#include <cstddef>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "engine/model/utf8.h"

namespace p64 {

// `priority(left, right)` is the pair's priority (higher merges first), or nullopt when the two
// pieces may not merge. Returns the pieces left at the end, in order, as views into `text`.
template <typename Priority>
std::vector<std::string_view> merge_symbols(std::string_view text, const Priority& priority) {
  struct Symbol {
    int prev, next;
    size_t begin, len;
  };
  std::vector<Symbol> sym;
  for (size_t pos = 0; pos < text.size();) {
    size_t len = utf8::sequence_length(static_cast<uint8_t>(text[pos]));
    if (len == 0 || pos + len > text.size()) len = 1;
    const int i = static_cast<int>(sym.size());
    sym.push_back({i - 1, -1, pos, len});
    if (i > 0) sym[static_cast<size_t>(i - 1)].next = i;
    pos += len;
  }
  struct Pair {
    int left, right;
    double priority;
    size_t len;
  };
  auto worse = [](const Pair& a, const Pair& b) {
    return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> queue(worse);
  auto try_pair = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const Symbol& L = sym[static_cast<size_t>(l)];
    const Symbol& R = sym[static_cast<size_t>(r)];
    if (const std::optional<double> p = priority(text.substr(L.begin, L.len), text.substr(R.begin, R.len)))
      queue.push({l, r, *p, L.len + R.len});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_pair(static_cast<int>(i - 1), static_cast<int>(i));
  while (!queue.empty()) {
    const Pair pair = queue.top();
    queue.pop();
    Symbol& L = sym[static_cast<size_t>(pair.left)];
    Symbol& R = sym[static_cast<size_t>(pair.right)];
    // Stale: one side was merged away or grew since this pair was queued.
    if (L.len == 0 || R.len == 0 || L.len + R.len != pair.len || L.next != pair.right) continue;
    L.len += R.len;
    R.len = 0;
    L.next = R.next;
    if (R.next >= 0) sym[static_cast<size_t>(R.next)].prev = pair.left;
    try_pair(L.prev, pair.left);
    try_pair(pair.left, L.next);
  }
  std::vector<std::string_view> pieces;
  for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[static_cast<size_t>(i)].next)
    pieces.push_back(text.substr(sym[static_cast<size_t>(i)].begin, sym[static_cast<size_t>(i)].len));
  return pieces;
}

}  // namespace p64
