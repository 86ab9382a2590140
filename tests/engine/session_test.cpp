// Session: greedy decode of a real trained model against llama2.c's reference, determinism over
// runs and thread counts, the stop conditions, cancellation, and KV reuse across turns.
#include <gtest/gtest.h>

#include <algorithm>

#include "decode_test_models.h"
#include "engine/common/error.h"
#include "engine/format/p64_writer.h"
#include "engine/runtime/chat_session.h"
#include "p64_test_model.h"

using namespace p64;

namespace {

GenerateOptions greedy(int max_tokens) {
  GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampler.temperature = 0;
  return o;
}

// A backend that answers a fixed script of ids (one per forward pass) and records the
// positions it was asked to run: the Session's control flow without a forward pass.
class ScriptedBackend final : public Backend {
 public:
  ScriptedBackend(std::vector<int32_t> script, uint32_t n_ctx) : script_(std::move(script)), n_ctx_(n_ctx) {}
  std::string name() const override { return "scripted"; }
  Passport passport() override { return {}; }
  std::vector<SwitchInfo> switches() const override { return {}; }
  void load(std::shared_ptr<const Model>, const BackendOptions&) override {}
  uint32_t max_context() const override { return n_ctx_; }
  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override {
    prefills.push_back({pos, static_cast<int32_t>(tokens.size())});
    return next();
  }
  int32_t decode_argmax(int32_t, int32_t pos) override {
    if (pos >= static_cast<int32_t>(n_ctx_)) throw Error("scripted: position past the context");
    decoded_at.push_back(pos);
    return next();
  }
  std::span<const float> decode_logits(int32_t t, int32_t pos) override { throw Error("scripted: greedy only"); }
  std::span<const float> logits() override { throw Error("scripted: greedy only"); }
  void set_timeline(TimelineSink*) override {}
  uint64_t device_memory_peak() const override { return 0; }

  std::vector<std::pair<int32_t, int32_t>> prefills;  // (pos, n)
  std::vector<int32_t> decoded_at;

 private:
  int32_t next() { return script_.at(step_++ % script_.size()); }
  std::vector<int32_t> script_;
  uint32_t n_ctx_;
  size_t step_ = 0;
};

// The tiny test model's vocabulary: 0 <unk>, 1 <s>, 2 </s>, then "▁t3".."▁t15".
std::shared_ptr<const Model> tiny_model(const test::TempDir& dir) {
  test::TinyModel tiny = test::tiny_image();
  const std::string path = (dir / "tiny.p64").string();
  write_p64(path, tiny.image);
  return open_p64(path);
}

struct Scripted {
  std::unique_ptr<Session> session;
  ScriptedBackend* backend;
};
Scripted scripted_session(const std::shared_ptr<const Model>& model, std::vector<int32_t> script, uint32_t n_ctx = 64) {
  auto b = std::make_unique<ScriptedBackend>(std::move(script), n_ctx);
  ScriptedBackend* raw = b.get();
  return {std::make_unique<Session>(model, std::move(b)), raw};
}

}  // namespace

TEST(Session, Stories260KGreedyReproducesRunC) {
  auto s = test::cpu_session(test::stories260k_p64(), 2);
  const std::vector<int32_t> bos{s->tokenizer().bos()};
  std::string streamed;
  int calls = 0;
  const GenerateResult r = s->generate(bos, greedy(256), [&](std::string_view text, int32_t) {
    streamed += text;
    ++calls;
    return true;
  });
  // run.c -n 256: BOS at position 0, then 256 sampled tokens, the last one never fed back.
  EXPECT_EQ(r.tokens.size(), 256u);
  EXPECT_EQ(r.stop, StopReason::MaxTokens);
  EXPECT_EQ(r.text, test::stories260k_reference_text());
  EXPECT_EQ(streamed, r.text);
  EXPECT_EQ(calls, 257);  // one per token, one at the end
  EXPECT_EQ(r.stats.decode_steps, 255);
  EXPECT_EQ(s->cached_tokens().size(), 256u);
  // Token for token: each id's own text, the first one's leading space dropped as run.c does.
  std::string pieces;
  for (int32_t id : r.tokens) pieces += s->tokenizer().token_text(id);
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces.substr(pieces[0] == ' ' ? 1 : 0), test::stories260k_reference_text());
}

TEST(Session, Stories260KStopsWhenTheContextIsFull) {
  auto s = test::cpu_session(test::stories260k_p64(), 1, /*max_context=*/256);
  ASSERT_EQ(s->context_length(), 256u);
  const std::vector<int32_t> bos{s->tokenizer().bos()};
  const GenerateResult r = s->generate(bos, greedy(0));
  EXPECT_EQ(r.stop, StopReason::ContextFull);
  EXPECT_EQ(r.tokens.size(), 256u);  // the last one is sampled from position 255 and never fed
  EXPECT_EQ(r.text, test::stories260k_reference_text());
}

TEST(Session, TinyRandomLlamaIsDeterministicOverRunsAndThreadCounts) {
  std::vector<std::vector<int32_t>> runs;
  for (uint32_t threads : {1u, 2u, 1u, 2u}) {
    auto s = test::cpu_session(test::tiny_random_p64(), threads, 128);
    const std::vector<int32_t> prompt = s->encode("Hello world, this is a test", true);
    GenerateOptions o = greedy(40);
    o.stop_at_end_of_generation = false;  // random weights: every step counts
    runs.push_back(s->generate(prompt, o).tokens);
    // The same session again from a reset cache.
    s->reset();
    EXPECT_EQ(s->generate(prompt, o).tokens, runs.back()) << "threads " << threads;
  }
  ASSERT_EQ(runs[0].size(), 40u);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i], runs[0]) << "run " << i;
  // Not a degenerate stream of one id (which any broken pass could repeat identically).
  EXPECT_GT(std::count_if(runs[0].begin(), runs[0].end(), [&](int32_t id) { return id != runs[0][0]; }), 0);
}

TEST(Session, StopsOnEndOfGenerationAndDoesNotShowIt) {
  test::TempDir dir;
  auto model = tiny_model(dir);
  Scripted sc = scripted_session(model, {5, 6, 2, 7});  // 2 = </s>
  const GenerateResult r = sc.session->generate(std::vector<int32_t>{1, 3, 4}, greedy(100));
  EXPECT_EQ(r.stop, StopReason::EndOfGeneration);
  EXPECT_EQ(r.stop_token, 2);
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(r.text, " t5 t6");
  EXPECT_EQ(r.stats.generated_tokens, 2);
  EXPECT_EQ(r.stats.decode_steps, 2);
  // 5 and 6 were fed back at positions 3 and 4; the stop token never was.
  EXPECT_EQ(sc.backend->decoded_at, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(sc.session->cached_tokens(), (std::vector<int32_t>{1, 3, 4, 5, 6}));
}

TEST(Session, ExtraStopIdsMaxTokensAndStopStrings) {
  test::TempDir dir;
  auto model = tiny_model(dir);
  {
    Scripted sc = scripted_session(model, {5, 6, 7, 8});
    GenerateOptions o = greedy(100);
    o.stop_ids = {7};
    EXPECT_EQ(sc.session->generate(std::vector<int32_t>{1}, o).tokens, (std::vector<int32_t>{5, 6}));
  }
  {
    Scripted sc = scripted_session(model, {5, 6, 7, 8});
    const GenerateResult r = sc.session->generate(std::vector<int32_t>{1}, greedy(3));
    EXPECT_EQ(r.stop, StopReason::MaxTokens);
    EXPECT_EQ(r.tokens.size(), 3u);
  }
  {
    // " t5 t6 t7": the stop string " t6" is cut out, and nothing of it was streamed first.
    Scripted sc = scripted_session(model, {5, 6, 7, 8});
    GenerateOptions o = greedy(100);
    o.strip_space_after_bos = false;
    o.stop_strings = {" t6"};
    std::string streamed;
    const GenerateResult r = sc.session->generate(std::vector<int32_t>{1}, o, [&](std::string_view t, int32_t) {
      streamed += t;
      return true;
    });
    EXPECT_EQ(r.stop, StopReason::StopString);
    EXPECT_EQ(r.text, " t5");
    EXPECT_EQ(streamed, " t5");
  }
}

TEST(Session, ContextFullAndPromptTooLong) {
  test::TempDir dir;
  auto model = tiny_model(dir);
  Scripted sc = scripted_session(model, {5}, /*n_ctx=*/8);
  const GenerateResult r = sc.session->generate(std::vector<int32_t>{1, 3, 4}, greedy(0));
  EXPECT_EQ(r.stop, StopReason::ContextFull);
  EXPECT_EQ(r.tokens.size(), 6u);  // positions 3..7 fed, the sixth sampled from position 7
  EXPECT_EQ(sc.backend->decoded_at.back(), 7);
  EXPECT_THROW(sc.session->generate(std::vector<int32_t>(9, 3), greedy(1)), Error);
  EXPECT_THROW(sc.session->generate(std::vector<int32_t>{}, greedy(1)), Error);
  EXPECT_THROW(sc.session->generate(std::vector<int32_t>{1, 999}, greedy(1)), Error);
}

TEST(Session, CallbackCancels) {
  auto s = test::cpu_session(test::stories260k_p64(), 2);
  int seen = 0;
  const GenerateResult r = s->generate(s->encode("Once upon a time", true), greedy(200), [&](std::string_view, int32_t id) {
    return id < 0 || ++seen < 5;
  });
  EXPECT_EQ(r.stop, StopReason::Cancelled);
  EXPECT_EQ(r.tokens.size(), 5u);
  EXPECT_EQ(seen, 5);
}

TEST(Session, PrefillsOnlyWhatTheCacheDoesNotHold) {
  test::TempDir dir;
  auto model = tiny_model(dir);
  Scripted sc = scripted_session(model, {5, 6, 2});
  sc.session->generate(std::vector<int32_t>{1, 3, 4}, greedy(10));  // cache: 1 3 4 5 6
  const GenerateResult r = sc.session->generate(std::vector<int32_t>{1, 3, 4, 5, 6, 2, 7, 8}, greedy(10));
  EXPECT_EQ(r.stats.reused_tokens, 5);
  EXPECT_EQ(r.stats.prefilled_tokens, 3);
  EXPECT_EQ(sc.backend->prefills.back(), (std::pair<int32_t, int32_t>{5, 3}));
  // A prompt that diverges early reuses only the common prefix; an identical one runs its last token.
  sc.session->generate(std::vector<int32_t>{1, 9}, greedy(1));
  EXPECT_EQ(sc.backend->prefills.back(), (std::pair<int32_t, int32_t>{1, 1}));
  sc.session->generate(std::vector<int32_t>{1, 9}, greedy(1));
  EXPECT_EQ(sc.backend->prefills.back(), (std::pair<int32_t, int32_t>{1, 1}));
}

TEST(Session, SecondTurnOnTheCacheEqualsAFreshPrefillOfTheWholeHistory) {
  auto a = test::cpu_session(test::stories260k_p64(), 2);
  const std::vector<int32_t> turn1 = a->encode("Once upon a time", true);
  const GenerateResult r1 = a->generate(turn1, greedy(24));
  std::vector<int32_t> history = turn1;
  history.insert(history.end(), r1.tokens.begin(), r1.tokens.end());
  const std::vector<int32_t> more = a->tokenizer().encode(" Then the dog", false, false);
  history.insert(history.end(), more.begin(), more.end());
  const GenerateResult r2 = a->generate(history, greedy(24));
  // Everything but the last sampled token of turn 1 was in the cache.
  EXPECT_EQ(r2.stats.reused_tokens, static_cast<int>(turn1.size() + r1.tokens.size() - 1));

  auto fresh = test::cpu_session(test::stories260k_p64(), 1);
  const GenerateResult f = fresh->generate(history, greedy(24));
  EXPECT_EQ(f.stats.reused_tokens, 0);
  EXPECT_EQ(f.tokens, r2.tokens);
  EXPECT_EQ(f.text, r2.text);
}

TEST(ChatSession, SecondReplyReusesTheCacheAndMatchesAFreshChat) {
  auto a = test::cpu_session(test::stories260k_p64(), 2);
  ChatSession chat(*a);
  EXPECT_FALSE(chat.template_warning().empty());  // stories260K has no template: the plain fallback
  const GenerateOptions o = greedy(20);
  const GenerateResult first = chat.reply("Tell me a story.", o);
  const GenerateResult second = chat.reply("What happened next?", o);
  EXPECT_GT(second.stats.reused_tokens, first.stats.prompt_tokens);
  ASSERT_EQ(chat.history().size(), 4u);
  EXPECT_EQ(chat.history()[0].content, "Tell me a story.");
  EXPECT_EQ(chat.history()[3].role, "assistant");

  auto b = test::cpu_session(test::stories260k_p64(), 1);
  ChatSession fresh(*b);
  fresh.set_history({chat.history()[0], chat.history()[1]});
  const GenerateResult f = fresh.reply("What happened next?", o);
  EXPECT_EQ(f.stats.reused_tokens, 0);
  EXPECT_EQ(f.tokens, second.tokens);

  chat.reset();
  EXPECT_TRUE(chat.history().empty());
  EXPECT_TRUE(a->cached_tokens().empty());
  EXPECT_EQ(chat.reply("Tell me a story.", o).tokens, first.tokens);
}

// The context policy on a 64-position context: replies run until the context is full, yet
// every next turn runs, the oldest whole turns going first while the system prompt stays.
TEST(ChatSession, AFullContextDropsTheOldestTurnsAndKeepsTheSystemPrompt) {
  auto s = test::cpu_session(test::stories260k_p64(), 1, /*max_context=*/64);
  ASSERT_EQ(s->context_length(), 64u);
  ChatSession chat(*s);
  chat.set_system("Be kind.");
  const GenerateOptions o = greedy(0);  // until the end of the turn or a full context
  int dropped = 0;
  for (int turn = 0; turn < 6; ++turn) {
    const std::string message = "Turn " + std::to_string(turn) + ": and then?";
    ASSERT_NO_THROW(chat.reply(message, o)) << "turn " << turn;
    const ChatSession::ContextUse use = chat.context_use();
    EXPECT_EQ(use.length, 64u);
    EXPECT_LE(use.used, 64u);
    EXPECT_EQ(use.used, s->cached_tokens().size());
    dropped += chat.last_fit().dropped_turns;
    EXPECT_EQ(context_notice(chat.last_fit()).empty(), chat.last_fit().dropped_turns == 0);
    // The newest turn is always there, the history starts with a whole turn, the system prompt stays.
    ASSERT_GE(chat.history().size(), 2u);
    EXPECT_EQ(chat.history()[chat.history().size() - 2].content, message);
    EXPECT_EQ(chat.history().front().role, "user");
    EXPECT_EQ(chat.system(), "Be kind.");
    EXPECT_NE(chat.render_prompt("next").find("Be kind."), std::string::npos);
  }
  EXPECT_GT(dropped, 0);
  EXPECT_NE(chat.history().front().content, "Turn 0: and then?");  // the oldest went first
}

TEST(ChatSession, AMessageLongerThanTheContextIsRefusedAndTheHistoryKept) {
  auto s = test::cpu_session(test::stories260k_p64(), 1, /*max_context=*/64);
  ChatSession chat(*s);
  chat.reply("Hi.", greedy(4));
  const auto history = chat.history();
  std::string longer;
  for (int i = 0; i < 40; ++i) longer += "the cat sat ";
  try {
    chat.reply(longer, greedy(4));
    FAIL() << "a message longer than the context was run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("64 positions"), std::string::npos) << e.what();
  }
  EXPECT_EQ(chat.history().size(), history.size());
  EXPECT_EQ(chat.history().front().content, "Hi.");
}

TEST(ChatSession, ReplyRoomIsTheTokenLimitAtMostAQuarterOfTheContext) {
  EXPECT_EQ(ChatSession::wanted_reply_room(8, 64), 8);
  EXPECT_EQ(ChatSession::wanted_reply_room(100, 64), 16);
  EXPECT_EQ(ChatSession::wanted_reply_room(0, 64), 16);
  EXPECT_EQ(ChatSession::wanted_reply_room(0, 2), 1);
}

TEST(Session, SamplingPathAgreesWithGreedyAndIsSeeded) {
  auto s = test::cpu_session(test::stories260k_p64(), 2);
  const std::vector<int32_t> prompt = s->encode("Once upon a time", true);
  const GenerateResult g = s->generate(prompt, greedy(32));
  // Top-k 1 through the full logits (prefill logits(), then decode_logits) is the argmax path.
  GenerateOptions k1 = greedy(32);
  k1.sampler = SamplerSettings{1.0f, 1, 1.0f, 0.0f, 1.0f, 64, 7};
  EXPECT_EQ(s->generate(prompt, k1).tokens, g.tokens);
  // A real draw: the same seed gives the same tokens, from a reset cache or not.
  GenerateOptions t = greedy(32);
  t.sampler = SamplerSettings{};
  t.sampler.temperature = 1.0f;
  t.sampler.seed = 42;
  const GenerateResult a = s->generate(prompt, t);
  s->reset();
  const GenerateResult b = s->generate(prompt, t);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.tokens.size(), 32u);
}
