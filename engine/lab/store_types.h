#pragma once
// The records the lab store holds, one struct per table, typed so that a GUI item model can
// show them column by column. Times are UTC ISO-8601 strings ("2026-12-02T10:21:40Z"), ids
// are SQLite rowids (0 = not stored yet), JSON columns are kept as text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace p64 {

enum class RunKind { DecodeProxy, Timeline, Ab, Chat };
enum class RunStatus { Running, Ok, Failed, Cancelled };
// The outcome of an A/B comparison (docs/measurement.md, "Verdict rules"). Win is a clear win
// that still needs a second consecutive one on the same model and device to be Promoted.
enum class Verdict { Rejected, Inconclusive, Win, Promoted };
enum class OptStatus { Default, OptIn, Rejected, Candidate };

std::string_view to_string(RunKind k);     // decode-proxy | timeline | ab | chat
std::string_view to_string(RunStatus s);   // running | ok | failed | cancelled
std::string_view to_string(Verdict v);     // rejected | inconclusive | win | promoted
std::string_view to_string(OptStatus s);   // default | opt-in | rejected | candidate
// Throw p64::Error naming the accepted values on an unknown string.
RunKind run_kind_from_string(std::string_view s);
RunStatus run_status_from_string(std::string_view s);
Verdict verdict_from_string(std::string_view s);
OptStatus opt_status_from_string(std::string_view s);

std::string utc_now_iso();  // current time, seconds resolution

// A model file as the store knows it. The same content (sha256) at two paths is two rows.
struct ModelRecord {
  int64_t id = 0;
  std::string path;
  std::string sha256;
  uint64_t file_bytes = 0;
  int64_t file_mtime = 0;     // seconds; with path and size, decides whether to re-hash
  std::string name;           // general.name or the file stem
  std::string arch;
  uint64_t weight_bytes = 0;  // bytes a decode step streams
  uint32_t n_layer = 0, n_embd = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_vocab = 0, n_ctx_train = 0;
  std::string dtypes;         // e.g. "Q4_K_SOA x196, Q6_K x29, F32 x57"
  std::string header_json;    // P64 header facts (format version, flags, sections) when known
  std::string added_at;
};

struct PassportRecord {
  int64_t id = 0;
  std::string fingerprint;  // sha256 of the JSON: identical passports share a row
  std::string backend;
  std::string device_name;
  std::string host_cpu;
  std::string json;         // the full Passport (engine/runtime/passport.h)
  bool imported = false;    // from resources/plan_history.json rather than measured here
  std::string created_at;
};

struct RunRecord {
  int64_t id = 0;
  RunKind kind = RunKind::DecodeProxy;
  RunStatus status = RunStatus::Ok;
  int64_t model_id = 0;      // 0 = none
  int64_t passport_id = 0;   // 0 = none
  std::string backend;       // resolved name, e.g. "cpu"
  std::string device;        // passport device name (verdicts are per model + device)
  std::string config;        // the configuration as typed, e.g. "backend=cpu,opt.gemv_rows=2"
  std::string options_json;  // {"switches": {...}, "threads": N, ...}
  std::string params_json;   // the command's parameters (tokens, runs, warm-up, prompt)
  std::string summary_json;  // min/median/max per metric, quality reports, ...
  std::string git_revision;
  std::string started_at;
  std::string finished_at;
  std::string label;         // free text (the plan's stage name for imported runs)
  bool imported = false;
  std::string error;         // why a failed run failed
  std::string uid;           // the same in every store holding this run (run_uid.h); set on write when empty
};

// One repetition of a measured run. An A/B run stores both sides, told apart by `side`.
struct SampleRecord {
  int64_t id = 0;
  int64_t run_id = 0;
  int32_t rep = 0;             // 0-based order in which the repetitions ran
  std::string side;            // "a" | "b" for A/B runs, empty otherwise
  bool warm = false;           // a repeat of a kept-loaded engine (the plan's R6 mode)
  int32_t prompt_tokens = 0;
  int32_t decode_tokens = 0;
  double decode_tok_s = 0;     // decode wall time only
  double prefill_tok_s = 0;
  double ttft_ms = 0;          // prefill + first decode step
  double effective_gbs = 0;    // (weight + KV bytes read per token) x tok/s / 1e9
  double bandwidth_share = 0;  // effective_gbs / passport measured read GB/s (0 when unknown)
  uint64_t peak_device_bytes = 0;
};

struct TimelineOpRecord {
  int64_t run_id = 0;
  std::string name;
  std::string group;  // RMS | ATTN | FFN | LOGITS | SAMPLE | OTHER
  int32_t layer = -1;
  bool prefill = false;
  int32_t step = 0;
  double start_us = 0;
  double dur_us = 0;
  uint64_t bytes = 0;  // OpSpan::bytes; 0: unknown (and every op of a store before schema 5)
  double flops = 0;    // OpSpan::flops; 0: unknown (and every op of a store before schema 8)
};

// The A/B evidence and its verdict; `run_id` is the A/B run it belongs to.
struct ComparisonRecord {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string switch_name;   // the optimisation switch the verdict is about ("" = none)
  std::string backend;
  int64_t model_id = 0;
  std::string device;
  std::string config_a, config_b;
  double a_median = 0, b_median = 0;  // decode tok/s
  double ratio_median = 0;            // median(B) / median(A)
  double ratio_min = 0, ratio_max = 0;  // over interleaved pairs B_i / A_i
  bool quality_pass = false;
  std::string quality_json;  // {"b_vs_a", "a_vs_reference", "b_vs_reference": QualityReport, "pass"}
  Verdict verdict = Verdict::Inconclusive;
  std::string reason;
  std::string created_at;
};

// A named explore matrix (explore.h): its plan as canonical JSON (models, baseline, sets and the
// A/B parameters), the identity a rerun is checked against.
struct ExploreRecord {
  int64_t id = 0;
  std::string name;
  std::string plan_json;
  std::string created_at;
};

// One measured cell of an explore: the A/B run of set `set_index` on model `model_index`.
struct ExploreCellRecord {
  int64_t explore_id = 0;
  int32_t model_index = 0;
  int32_t set_index = 0;
  int64_t run_id = 0;
};

struct OptimisationRecord {
  int64_t id = 0;
  std::string name;
  std::string backend;  // the backend that offers it ("wgpu" for the plan's imported history)
  std::string description;
  OptStatus status = OptStatus::OptIn;
  std::string default_value;
  std::string values;
  bool imported = false;
  std::string updated_at;
};

struct OptimisationHistoryEntry {
  int64_t id = 0;
  int64_t optimisation_id = 0;
  std::string at;
  std::optional<OptStatus> old_status;  // nullopt for the first entry
  OptStatus new_status = OptStatus::OptIn;
  std::string reason;
  int64_t evidence_run_id = 0;  // the A/B run (0 = none)
  std::string evidence;         // e.g. "8.75 tok/s vs 9.0 (lose)"; measured tok/s for imports
  bool imported = false;
};

// One llama-bench test result, a diagnostic recorded beside our runs (never our runtime).
struct PeerResult {
  int64_t id = 0;
  std::string tool = "llama-bench";
  std::string source_file;
  std::string model;        // model_filename (or model_type when no file name)
  std::string model_type;   // e.g. "llama 3B Q4_K - Medium"
  std::string quant;        // derived from model_type, e.g. "Q4_K_M"
  std::string test;         // "pp512" | "tg128" | "pp512+tg128"
  int32_t n_prompt = 0, n_gen = 0;
  std::string device;       // gpu_info, or cpu_info when no GPU
  std::string backends;     // "CUDA", "CPU", ...
  int32_t n_threads = 0, n_gpu_layers = 0;
  bool flash_attn = false;
  double avg_ts = 0, stddev_ts = 0;
  std::vector<double> samples_ts;
  uint64_t model_size = 0;
  std::string build_commit;
  std::string test_time;
  std::string raw_json;     // every field as read
};

struct ChatSessionRecord {
  int64_t id = 0;
  int64_t model_id = 0;
  std::string backend;
  std::string title;
  std::string template_name;
  std::string sampler_json;
  std::string created_at;
};

struct ChatMessageRecord {
  int64_t id = 0;
  int64_t session_id = 0;
  int32_t seq = 0;
  std::string role;  // system | user | assistant
  std::string content;
  int32_t tokens = 0;
  double decode_tok_s = 0;
  std::string created_at;
};

}  // namespace p64
