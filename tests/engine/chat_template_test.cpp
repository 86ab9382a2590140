// Each family's rendering against the format its model card / reference template documents.
#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/model/chat_template.h"
#include "engine/model/tiktoken.h"
#include "support/shared_files.h"

using namespace p64;

namespace {
const std::vector<ChatMessage> kSysUser = {{"system", "You are terse."}, {"user", "Hi"}};
const std::vector<ChatMessage> kTwoTurns = {{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};
}  // namespace

TEST(ChatTemplate, DetectsFamiliesByMarkers) {
  EXPECT_EQ(ChatTemplate::detect("{{ '<|start_header_id|>' + role + '<|end_header_id|>' }}").family(), ChatFamily::Llama3);
  EXPECT_EQ(ChatTemplate::detect("{{'<|im_start|>' + message['role']}}").family(), ChatFamily::ChatML);
  EXPECT_EQ(ChatTemplate::detect("{{ bos_token + '[INST] ' + '<<SYS>>\\n' }}").family(), ChatFamily::Llama2);
  EXPECT_EQ(ChatTemplate::detect("{{ bos_token }}{{ '[INST] ' + message['content'] + ' [/INST]' }}").family(),
            ChatFamily::Mistral);
  EXPECT_EQ(ChatTemplate::detect("{{ '<|user|>\\n' + message['content'] + eos_token }}").family(), ChatFamily::Zephyr);
  EXPECT_EQ(ChatTemplate::detect("{{'<|user|>' + '\\n' + message['content'] + '<|end|>'}}").family(), ChatFamily::Phi3);
  EXPECT_EQ(ChatTemplate::detect("{{ '<start_of_turn>' + role }}").family(), ChatFamily::Gemma);
  const auto unknown = ChatTemplate::detect("{% for m in messages %}### {{ m.role }}: {{ m.content }}{% endfor %}");
  EXPECT_EQ(unknown.family(), ChatFamily::Plain);
  EXPECT_FALSE(unknown.warning().empty());
  EXPECT_FALSE(ChatTemplate::detect("").warning().empty());
  EXPECT_TRUE(ChatTemplate::detect("<|im_start|>").warning().empty());
}

TEST(ChatTemplate, Llama3) {
  const auto t = ChatTemplate::for_family(ChatFamily::Llama3);
  EXPECT_EQ(t.render(kSysUser, true),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(t.render({{{"user", "  padded \n"}}}, false), "<|start_header_id|>user<|end_header_id|>\n\npadded<|eot_id|>");
  // The tiktoken reader's template is recognised, and its end-of-turn ids are eot and eos.
  const Vocabulary v = read_tiktoken_model(test::shared_model("llama3_tokenizer.model").string());
  const auto d = ChatTemplate::detect(v.chat_template);
  EXPECT_EQ(d.family(), ChatFamily::Llama3);
  EXPECT_EQ(d.end_of_turn_ids(v), (std::vector<int32_t>{128001, 128009}));
}

TEST(ChatTemplate, Llama2) {
  const auto t = ChatTemplate::for_family(ChatFamily::Llama2);
  std::vector<ChatMessage> m = kSysUser;
  m.push_back({"assistant", "Hello!"});
  m.push_back({"user", "Bye"});
  EXPECT_EQ(t.render(m, true), "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]");
  EXPECT_EQ(t.render(kTwoTurns, true), "[INST] Hi [/INST] Hello! </s><s>[INST] Bye [/INST]");
  EXPECT_THROW(t.render({{{"tool", "x"}}}, true), Error);
}

TEST(ChatTemplate, ChatMLWithAndWithoutDefaultSystem) {
  const auto t = ChatTemplate::for_family(ChatFamily::ChatML);
  EXPECT_EQ(t.render(kSysUser, true),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  // SmolLM2's template writes its default system prompt literally.
  const std::string smol =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
      "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
      "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}";
  const auto s = ChatTemplate::detect(smol);
  EXPECT_EQ(s.default_system(), "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  EXPECT_EQ(s.render({{{"user", "Hi"}}}, true),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(s.render(kSysUser, false), "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(t.end_of_turn_tokens().front(), "<|im_end|>");
}

TEST(ChatTemplate, MistralZephyrPhi3Gemma) {
  EXPECT_EQ(ChatTemplate::for_family(ChatFamily::Mistral).render(kTwoTurns, true), "[INST] Hi [/INST]Hello!</s>[INST] Bye [/INST]");
  EXPECT_EQ(ChatTemplate::for_family(ChatFamily::Mistral).render(kSysUser, true), "[INST] You are terse.\n\nHi [/INST]");
  EXPECT_EQ(ChatTemplate::for_family(ChatFamily::Zephyr).render(kSysUser, true),
            "<|system|>\nYou are terse.</s>\n<|user|>\nHi</s>\n<|assistant|>\n");
  EXPECT_EQ(ChatTemplate::for_family(ChatFamily::Phi3).render(kTwoTurns, true),
            "<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\nBye<|end|>\n<|assistant|>\n");
  EXPECT_EQ(ChatTemplate::for_family(ChatFamily::Gemma).render(kSysUser, true),
            "<start_of_turn>user\nYou are terse.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(ChatTemplate::for_family(ChatFamily::Gemma).render(kTwoTurns, false),
            "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
            "<start_of_turn>user\nBye<end_of_turn>\n");
}

TEST(ChatTemplate, PlainFallbackAndBoundedOutput) {
  const auto t = ChatTemplate::detect("{% macro x() %}{{ x() }}{% endmacro %}{{ x() }}");  // a template that would recurse forever
  ASSERT_EQ(t.family(), ChatFamily::Plain);
  EXPECT_EQ(t.render(kSysUser, true), "You are terse.\n\nUser: Hi\nAssistant:");
  EXPECT_EQ(t.stop_strings(), (std::vector<std::string>{"\nUser:"}));
  std::vector<ChatMessage> many(200, {"user", std::string(100, 'x')});
  size_t content = 0;
  for (const auto& m : many) content += m.content.size();
  EXPECT_LT(t.render(many, true).size(), content + many.size() * 16 + 16);
}
