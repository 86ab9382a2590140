#include "engine/format/gguf_writer.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/common/atomic_output.h"
#include "engine/common/error.h"

namespace p64 {
namespace {

constexpr uint32_t kGgufVersion = 3;
constexpr size_t kMaxTensorName = 63;  // ggml's GGML_MAX_NAME (64) including the terminator

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);  // little-endian host, as GGUF is
  out.insert(out.end(), p, p + sizeof(T));
}
void put_str(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw Error("gguf writer: alignment must be a power of two, got " + std::to_string(alignment));
  if (alignment != 32) add_u32("general.alignment", alignment);
}

void GgufWriter::begin_kv(std::string_view key, GgufType type) {
  if (key.empty()) throw Error("gguf writer: empty metadata key");
  if (!keys_.emplace(key).second) throw Error("gguf writer: metadata key " + std::string(key) + " added twice");
  put_str(kv_bytes_, key);
  put<uint32_t>(kv_bytes_, static_cast<uint32_t>(type));
  ++kv_count_;
}

void GgufWriter::add_u8(std::string_view k, uint8_t v) { begin_kv(k, GgufType::UINT8); put(kv_bytes_, v); }
void GgufWriter::add_i8(std::string_view k, int8_t v) { begin_kv(k, GgufType::INT8); put(kv_bytes_, v); }
void GgufWriter::add_u16(std::string_view k, uint16_t v) { begin_kv(k, GgufType::UINT16); put(kv_bytes_, v); }
void GgufWriter::add_i16(std::string_view k, int16_t v) { begin_kv(k, GgufType::INT16); put(kv_bytes_, v); }
void GgufWriter::add_u32(std::string_view k, uint32_t v) { begin_kv(k, GgufType::UINT32); put(kv_bytes_, v); }
void GgufWriter::add_i32(std::string_view k, int32_t v) { begin_kv(k, GgufType::INT32); put(kv_bytes_, v); }
void GgufWriter::add_u64(std::string_view k, uint64_t v) { begin_kv(k, GgufType::UINT64); put(kv_bytes_, v); }
void GgufWriter::add_i64(std::string_view k, int64_t v) { begin_kv(k, GgufType::INT64); put(kv_bytes_, v); }
void GgufWriter::add_f32(std::string_view k, float v) { begin_kv(k, GgufType::FLOAT32); put(kv_bytes_, v); }
void GgufWriter::add_f64(std::string_view k, double v) { begin_kv(k, GgufType::FLOAT64); put(kv_bytes_, v); }
void GgufWriter::add_bool(std::string_view k, bool v) { begin_kv(k, GgufType::BOOL); put<uint8_t>(kv_bytes_, v ? 1 : 0); }
void GgufWriter::add_string(std::string_view k, std::string_view v) { begin_kv(k, GgufType::STRING); put_str(kv_bytes_, v); }

void GgufWriter::add_string_array(std::string_view k, const std::vector<std::string>& v) {
  begin_kv(k, GgufType::ARRAY);
  put<uint32_t>(kv_bytes_, static_cast<uint32_t>(GgufType::STRING));
  put<uint64_t>(kv_bytes_, v.size());
  for (const auto& s : v) put_str(kv_bytes_, s);
}
void GgufWriter::add_f32_array(std::string_view k, const std::vector<float>& v) {
  begin_kv(k, GgufType::ARRAY);
  put<uint32_t>(kv_bytes_, static_cast<uint32_t>(GgufType::FLOAT32));
  put<uint64_t>(kv_bytes_, v.size());
  for (float x : v) put(kv_bytes_, x);
}
void GgufWriter::add_i32_array(std::string_view k, const std::vector<int32_t>& v) {
  begin_kv(k, GgufType::ARRAY);
  put<uint32_t>(kv_bytes_, static_cast<uint32_t>(GgufType::INT32));
  put<uint64_t>(kv_bytes_, v.size());
  for (int32_t x : v) put(kv_bytes_, x);
}
void GgufWriter::add_u32_array(std::string_view k, const std::vector<uint32_t>& v) {
  begin_kv(k, GgufType::ARRAY);
  put<uint32_t>(kv_bytes_, static_cast<uint32_t>(GgufType::UINT32));
  put<uint64_t>(kv_bytes_, v.size());
  for (uint32_t x : v) put(kv_bytes_, x);
}

namespace {

[[noreturn]] void bad_value(const std::string& key, const char* why) {
  throw Error("gguf writer: metadata " + key + ": " + why);
}

// Appends `v` in GGUF's encoding; an array's elements are already encoded (GgufValue::encoded).
void encode_value(std::vector<uint8_t>& out, const GgufValue& v, const std::string& key) {
  auto u = [&]() -> uint64_t {
    if (const auto* p = std::get_if<uint64_t>(&v.scalar)) return *p;
    if (const auto* p = std::get_if<int64_t>(&v.scalar)) return static_cast<uint64_t>(*p);
    bad_value(key, "integer type without an integer value");
  };
  auto d = [&]() -> double {
    if (const auto* p = std::get_if<double>(&v.scalar)) return *p;
    bad_value(key, "float type without a float value");
  };
  switch (v.type) {
    case GgufType::UINT8: put<uint8_t>(out, static_cast<uint8_t>(u())); break;
    case GgufType::INT8: put<int8_t>(out, static_cast<int8_t>(u())); break;
    case GgufType::UINT16: put<uint16_t>(out, static_cast<uint16_t>(u())); break;
    case GgufType::INT16: put<int16_t>(out, static_cast<int16_t>(u())); break;
    case GgufType::UINT32: put<uint32_t>(out, static_cast<uint32_t>(u())); break;
    case GgufType::INT32: put<int32_t>(out, static_cast<int32_t>(u())); break;
    case GgufType::UINT64: put<uint64_t>(out, u()); break;
    case GgufType::INT64: put<int64_t>(out, static_cast<int64_t>(u())); break;
    case GgufType::FLOAT32: put<float>(out, static_cast<float>(d())); break;
    case GgufType::FLOAT64: put<double>(out, d()); break;
    case GgufType::BOOL: {
      const auto* b = std::get_if<bool>(&v.scalar);
      if (!b) bad_value(key, "bool type without a bool value");
      put<uint8_t>(out, *b ? 1 : 0);
      break;
    }
    case GgufType::STRING: {
      const auto* s = std::get_if<std::string>(&v.scalar);
      if (!s) bad_value(key, "string type without a string value");
      put_str(out, *s);
      break;
    }
    case GgufType::ARRAY:
      if (v.count != 0 && v.encoded.empty()) bad_value(key, "array without its encoded elements (build it with gguf_array)");
      put<uint32_t>(out, static_cast<uint32_t>(v.elem_type));
      put<uint64_t>(out, v.count);
      out.insert(out.end(), v.encoded.begin(), v.encoded.end());
      break;
    default: bad_value(key, "unknown value type");
  }
}

}  // namespace

GgufValue gguf_array(GgufType elem_type, const std::vector<GgufValue>& items) {
  GgufValue a;
  a.type = GgufType::ARRAY;
  a.elem_type = elem_type;
  a.count = items.size();
  for (const GgufValue& item : items) {
    if (item.type != elem_type) bad_value("(array)", "array item of a different type than the array's");
    encode_value(a.encoded, item, "(array)");
  }
  return a;
}

void GgufWriter::add_value(std::string_view key, const GgufValue& v) {
  begin_kv(key, v.type);
  encode_value(kv_bytes_, v, std::string(key));
}

void GgufWriter::add_tensor(std::string name, DType type, std::vector<int64_t> ne, GgufFillFn fill) {
  auto bad = [&](const std::string& why) { throw Error("gguf writer: tensor " + name + ": " + why); };
  if (name.empty() || name.size() > kMaxTensorName) bad("name must be 1.." + std::to_string(kMaxTensorName) + " bytes");
  if (tensor_names_.count(name)) bad("added twice");
  const auto info = dtype_info(type);
  if (!info || dtype_is_packed(type)) bad("dtype " + std::to_string(static_cast<uint32_t>(type)) + " has no GGUF form");
  if (ne.empty() || ne.size() > 4) bad("must have 1 to 4 dimensions");
  int64_t rows = 1;
  for (int64_t d : ne) {
    if (d <= 0) bad("dimensions must be positive");
    rows *= d;
  }
  rows /= ne[0];
  if (ne[0] % info->block_elems != 0)
    bad("row length " + std::to_string(ne[0]) + " is not a multiple of the " + std::string(info->name) + " block size " +
        std::to_string(info->block_elems));
  if (!fill) bad("no fill callback");
  const uint64_t row_bytes = dtype_row_bytes(type, static_cast<uint64_t>(ne[0]));
  tensor_names_.insert(name);
  Tensor t{std::move(name), type, std::move(ne), row_bytes, rows, 0, 0, std::move(fill)};
  t.bytes = t.row_bytes * static_cast<uint64_t>(rows);
  t.offset = data_bytes_;
  data_bytes_ = align_up(t.offset + t.bytes, alignment_);
  tensors_.push_back(std::move(t));
}

std::vector<uint8_t> GgufWriter::header_bytes() const {
  std::vector<uint8_t> h;
  h.reserve(kv_bytes_.size() + tensors_.size() * 96 + 64);
  h.insert(h.end(), {'G', 'G', 'U', 'F'});
  put<uint32_t>(h, kGgufVersion);
  put<uint64_t>(h, tensors_.size());
  put<uint64_t>(h, kv_count_);
  h.insert(h.end(), kv_bytes_.begin(), kv_bytes_.end());
  for (const Tensor& t : tensors_) {
    put_str(h, t.name);
    put<uint32_t>(h, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put<int64_t>(h, d);
    put<uint32_t>(h, static_cast<uint32_t>(t.type));
    put<uint64_t>(h, t.offset);
  }
  return h;
}

uint64_t GgufWriter::data_offset() const { return align_up(header_bytes().size(), alignment_); }
uint64_t GgufWriter::file_size() const { return data_offset() + data_bytes_; }

void GgufWriter::write(const std::string& path, const GgufWriteOptions& options) const {
  std::vector<uint8_t> header = header_bytes();
  const uint64_t data_start = align_up(header.size(), alignment_);
  header.resize(data_start, 0);
  const uint64_t total = data_start + data_bytes_;

  AtomicOutput out(path, options.output);
  out.reserve(total);
  out.write_at(0, header.data(), header.size(), "the header");

  struct Chunk {
    size_t tensor;
    int64_t first_row, n_rows;
  };
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(options.chunk_bytes / std::max<uint64_t>(1, t.row_bytes)));
    for (int64_t r = 0; r < t.rows; r += per) chunks.push_back({i, r, std::min(per, t.rows - r)});
  }

  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max(1, std::min<int>(threads, static_cast<int>(chunks.size())));

  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done_bytes{0};
  std::atomic<bool> stop{false};
  std::atomic<int> running{threads};
  std::exception_ptr first_error;
  std::mutex m;
  std::condition_variable cv;

  auto worker = [&] {
    std::vector<uint8_t> buf;
    try {
      for (size_t c; !stop.load() && (c = next.fetch_add(1)) < chunks.size();) {
        const Chunk& ch = chunks[c];
        const Tensor& t = tensors_[ch.tensor];
        const uint64_t n = t.row_bytes * static_cast<uint64_t>(ch.n_rows);
        buf.resize(n);
        t.fill(buf.data(), ch.first_row, ch.n_rows);
        out.write_at(data_start + t.offset + t.row_bytes * static_cast<uint64_t>(ch.first_row), buf.data(), n,
                     "tensor " + t.name);
        done_bytes += n;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!first_error) first_error = std::current_exception();
      stop = true;
    }
    if (--running == 0) {
      std::lock_guard<std::mutex> lock(m);
      cv.notify_all();
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker);

  // The calling thread reports progress (a ProgressFn need not be thread-safe) and relays cancel.
  bool cancelled = false;
  {
    std::unique_lock<std::mutex> lock(m);
    // At least one report even when the work finishes at once, so a cancel is always seen.
    for (bool first = true; first || running.load() > 0; first = false) {
      cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return running.load() == 0; });
      if (options.progress && !cancelled) {
        lock.unlock();
        const double frac = data_bytes_ ? static_cast<double>(done_bytes.load()) / static_cast<double>(data_bytes_) : 1.0;
        if (!options.progress(std::min(frac, 1.0), "writing tensors")) {
          cancelled = true;
          stop = true;
        }
        lock.lock();
      }
    }
  }
  for (auto& th : pool) th.join();
  if (first_error) std::rethrow_exception(first_error);
  if (cancelled) throw Cancelled();
  out.commit(options.sync);
  if (options.progress) options.progress(1.0, "done");
}

}  // namespace p64
