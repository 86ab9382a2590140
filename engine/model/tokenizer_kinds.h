#pragma once
// Internal: the two tokenizer algorithms behind Tokenizer::create.
#include <memory>

#include "engine/model/tokenizer.h"

namespace p64 {

std::unique_ptr<Tokenizer> make_spm_tokenizer(const Vocabulary& vocab);
std::unique_ptr<Tokenizer> make_bpe_tokenizer(const Vocabulary& vocab);

}  // namespace p64
