// Writes the hostile model files of tests/support/hostile_models.h into OUT_DIR and prints one
// line per case: name, path, tokenizer, prompt and the refusal it must give, tab-separated, "-"
// for an empty field (scripts/hostile-limits.sh reads them; bash's read merges empty fields).
//
// usage: p64_hostile_models OUT_DIR
#include <exception>
#include <iostream>
#include <string>

#include "support/hostile_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: p64_hostile_models OUT_DIR\n";
    return 2;
  }
  try {
    auto field = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    for (const auto& m : p64::test::write_hostile_models(argv[1]))
      std::cout << m.name << '\t' << m.path << '\t' << field(m.tokenizer) << '\t' << m.prompt << '\t' << field(m.refusal) << '\n';
  } catch (const std::exception& e) {
    std::cerr << "p64_hostile_models: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
