// p64 tokenize: the ids the model's tokenizer gives a text, space-separated on one line.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/error.h"
#include "engine/model/tokenizer.h"
#include "engine/format/vocab_loader.h"

namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string file;
  bool no_bos = false;
  bool show_pieces = false;
};

void run_tokenize(const TokenizeOptions& o, bool has_text, bool has_file) {
  if (has_text == has_file) throw p64::Error("tokenize: give the text or --file (one of them)");
  std::string text = o.text;
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) throw p64::Error(o.file + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  const auto tok = p64::Tokenizer::create(p64::load_vocabulary(o.model), o.model);
  // --no-bos follows llama.cpp's tokenizer tests: no BOS/EOS and no special-token parsing.
  const auto ids = tok->encode(text, /*add_special=*/!o.no_bos, /*parse_special=*/!o.no_bos);
  std::string line;
  for (int32_t id : ids) {
    if (!line.empty()) line += ' ';
    line += std::to_string(id);
  }
  std::cout << line << "\n";
  if (o.show_pieces)
    for (int32_t id : ids) std::cerr << id << "\t" << tok->token_piece(id) << "\n";
}

const p64::cli::CommandRegistration registration(60, [](CLI::App& root) {
  auto o = std::make_shared<TokenizeOptions>();
  auto* cmd = root.add_subcommand("tokenize", "Print the token ids of a text (space-separated, one line)");
  cmd->add_option("--model", o->model, "model or tokenizer file: .p64, .gguf, llama2.c tokenizer, tiktoken .model, tokenizer.json")
      ->required()
      ->capture_default_str();
  auto* text = cmd->add_option("text", o->text, "the text to tokenize")->capture_default_str();
  auto* file = cmd->add_option("--file", o->file, "read the text from this file instead")->capture_default_str();
  cmd->add_flag("--no-bos", o->no_bos, "add no BOS/EOS and do not parse special-token text (llama.cpp's test convention)")
      ->capture_default_str();
  cmd->add_flag("--pieces", o->show_pieces, "also print id and token string per line on stderr")->capture_default_str();
  cmd->callback([o, text, file] { run_tokenize(*o, text->count() > 0, file->count() > 0); });
});

}  // namespace
