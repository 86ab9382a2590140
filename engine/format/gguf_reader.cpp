#include "engine/format/gguf_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "engine/common/error.h"
#include "engine/format/model_limits.h"

namespace p64 {
namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kMaxDims = 4;              // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;             // nested arrays deeper than this are refused
constexpr uint64_t kMaxNameLength = 65535;    // keys and tensor names

// Reads little-endian fields from the map (or from an array's encoded elements, with no file),
// refusing any read past the end with the current section name; never touches memory outside
// [0, size).
class Cursor {
 public:
  Cursor(const GgufFile* f, const uint8_t* base, uint64_t size) : f_(f), base_(base), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  const uint8_t* at(uint64_t pos) const { return base_ + pos; }
  void set_section(const char* s) { section_ = s; }
  const char* section() const { return section_; }

  [[noreturn]] void fail(uint64_t pos, const std::string& problem) const {
    if (f_) f_->fail(section_, pos, problem);
    throw Error("GGUF array value at byte " + std::to_string(pos) + ": " + problem);
  }
  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      fail(pos_, std::string("file ends inside ") + what + " (needs " + std::to_string(n) + " bytes, " +
                     std::to_string(remaining()) + " left)");
  }
  void skip(uint64_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // A u64 length and that many bytes; with `keep` false the bytes are checked and skipped.
  std::string read_string(const char* what, uint64_t max_len = std::numeric_limits<uint64_t>::max(), bool keep = true) {
    uint64_t at = pos_;
    uint64_t len = read<uint64_t>(what);
    if (len > max_len) fail(at, std::string(what) + " length " + std::to_string(len) + " is too long");
    need(len, what);
    std::string s;
    if (keep) s.assign(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(len));
    pos_ += len;
    return s;
  }

 private:
  const GgufFile* f_;
  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const char* section_ = "header";
};

// Encoded size of one value of a fixed-size type; 0 for strings and arrays.
uint64_t fixed_size(GgufType t) {
  switch (t) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::BOOL: return 1;
    case GgufType::UINT16: case GgufType::INT16: return 2;
    case GgufType::UINT32: case GgufType::INT32: case GgufType::FLOAT32: return 4;
    case GgufType::UINT64: case GgufType::INT64: case GgufType::FLOAT64: return 8;
    case GgufType::STRING: case GgufType::ARRAY: return 0;
  }
  return 0;
}

// Smallest encoded size of one value of type t, used to refuse array counts that cannot fit
// in the rest of the file before anything is read or allocated for them.
uint64_t min_encoded_size(GgufType t) {
  if (t == GgufType::STRING) return 8;   // the length
  if (t == GgufType::ARRAY) return 12;   // the element type and the count
  return fixed_size(t);
}

bool known_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::FLOAT64); }

// Reads and checks one value of type `type`. With `keep` false the value is only checked and
// skipped (the elements of an array are checked this way, then kept as their encoded bytes).
GgufValue read_value(Cursor& c, GgufType type, int depth, bool keep) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::UINT8: v.scalar = uint64_t{c.read<uint8_t>("a u8 value")}; break;
    case GgufType::INT8: v.scalar = int64_t{c.read<int8_t>("an i8 value")}; break;
    case GgufType::UINT16: v.scalar = uint64_t{c.read<uint16_t>("a u16 value")}; break;
    case GgufType::INT16: v.scalar = int64_t{c.read<int16_t>("an i16 value")}; break;
    case GgufType::UINT32: v.scalar = uint64_t{c.read<uint32_t>("a u32 value")}; break;
    case GgufType::INT32: v.scalar = int64_t{c.read<int32_t>("an i32 value")}; break;
    case GgufType::UINT64: v.scalar = c.read<uint64_t>("a u64 value"); break;
    case GgufType::INT64: v.scalar = c.read<int64_t>("an i64 value"); break;
    case GgufType::FLOAT32: v.scalar = double{c.read<float>("an f32 value")}; break;
    case GgufType::FLOAT64: v.scalar = c.read<double>("an f64 value"); break;
    case GgufType::BOOL: {
      uint64_t at = c.pos();
      uint8_t b = c.read<uint8_t>("a bool value");
      if (b > 1) c.fail(at, "bool value " + std::to_string(b) + " is neither 0 nor 1");
      v.scalar = b != 0;
      break;
    }
    case GgufType::STRING: v.scalar = c.read_string("a string value", std::numeric_limits<uint64_t>::max(), keep); break;
    case GgufType::ARRAY: {
      uint64_t at = c.pos();
      if (depth >= kMaxArrayDepth) c.fail(at, "arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      uint32_t et = c.read<uint32_t>("an array element type");
      if (!known_type(et)) c.fail(at, "array element type " + std::to_string(et) + " is unknown");
      v.elem_type = static_cast<GgufType>(et);
      uint64_t n = c.read<uint64_t>("an array length");
      const std::string what = "array length (" + std::string(gguf_type_name(v.elem_type)) + ")";
      if (const std::string why = count_fits_problem(what, n, min_encoded_size(v.elem_type), c.remaining()); !why.empty())
        c.fail(at, why);
      v.count = n;
      const uint64_t first = c.pos();
      const uint64_t each = fixed_size(v.elem_type);
      if (each != 0 && v.elem_type != GgufType::BOOL) c.skip(n * each, "an array");
      else
        for (uint64_t i = 0; i < n; ++i) read_value(c, v.elem_type, depth + 1, false);
      if (keep) v.encoded.assign(c.at(first), c.at(c.pos()));
      break;
    }
  }
  return v;
}

}  // namespace

std::string_view gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::UINT8: return "u8";
    case GgufType::INT8: return "i8";
    case GgufType::UINT16: return "u16";
    case GgufType::INT16: return "i16";
    case GgufType::UINT32: return "u32";
    case GgufType::INT32: return "i32";
    case GgufType::FLOAT32: return "f32";
    case GgufType::BOOL: return "bool";
    case GgufType::STRING: return "string";
    case GgufType::ARRAY: return "array";
    case GgufType::UINT64: return "u64";
    case GgufType::INT64: return "i64";
    case GgufType::FLOAT64: return "f64";
  }
  return "?";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::UINT16: case GgufType::INT16:
    case GgufType::UINT32: case GgufType::INT32: case GgufType::UINT64: case GgufType::INT64:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> GgufValue::as_int() const {
  if (auto* u = std::get_if<uint64_t>(&scalar)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (auto* i = std::get_if<int64_t>(&scalar)) return *i;
  return std::nullopt;
}

std::optional<uint64_t> GgufValue::as_uint() const {
  if (auto* u = std::get_if<uint64_t>(&scalar)) return *u;
  if (auto* i = std::get_if<int64_t>(&scalar)) {
    if (*i < 0) return std::nullopt;
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

std::optional<double> GgufValue::as_double() const {
  if (auto* d = std::get_if<double>(&scalar)) return *d;
  if (auto* u = std::get_if<uint64_t>(&scalar)) return static_cast<double>(*u);
  if (auto* i = std::get_if<int64_t>(&scalar)) return static_cast<double>(*i);
  return std::nullopt;
}

const std::string* GgufValue::as_string() const { return std::get_if<std::string>(&scalar); }

std::optional<bool> GgufValue::as_bool() const {
  if (auto* b = std::get_if<bool>(&scalar)) return *b;
  return std::nullopt;
}

void GgufValue::for_each_item(const std::function<bool(const GgufValue&)>& f) const {
  if (!is_array()) return;
  Cursor c(nullptr, encoded.data(), encoded.size());
  for (uint64_t i = 0; i < count; ++i)
    if (!f(read_value(c, elem_type, 1, true))) return;
}

GgufValue GgufValue::item(size_t i) const {
  if (!is_array() || i >= count) throw Error("GGUF array of " + std::to_string(count) + " has no element " + std::to_string(i));
  Cursor c(nullptr, encoded.data(), encoded.size());
  if (const uint64_t each = fixed_size(elem_type)) c.skip(i * each, "an array");
  else
    for (size_t k = 0; k < i; ++k) read_value(c, elem_type, 1, false);
  return read_value(c, elem_type, 1, true);
}

std::string GgufValue::summary(size_t max_items) const {
  if (is_array()) {
    std::string s = "[" + std::string(gguf_type_name(elem_type)) + " x " + std::to_string(count) + "]";
    if (count != 0) {
      s += " {";
      size_t shown = 0;
      for_each_item([&](const GgufValue& it) {
        if (shown == max_items) return false;
        s += (shown++ ? ", " : "") + it.summary(2);
        return true;
      });
      if (count > max_items) s += ", ...";
      s += "}";
    }
    return s;
  }
  if (auto* str = as_string()) {
    std::string shown = str->size() > 80 ? str->substr(0, 77) + "..." : *str;
    std::string out = "\"";
    for (char ch : shown) out += (ch == '\n') ? std::string("\\n") : std::string(1, ch);
    return out + "\"";
  }
  if (auto b = as_bool()) return *b ? "true" : "false";
  if (auto* d = std::get_if<double>(&scalar)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", *d);
    return buf;
  }
  if (auto* u = std::get_if<uint64_t>(&scalar)) return std::to_string(*u);
  if (auto* i = std::get_if<int64_t>(&scalar)) return std::to_string(*i);
  return "?";
}

GgufFile GgufFile::open(const std::string& path) { return GgufFile(MappedFile::open(path)); }

GgufFile::GgufFile(std::shared_ptr<const MappedFile> map) : map_(std::move(map)) { parse(); }

void GgufFile::fail(const std::string& section, uint64_t offset, const std::string& problem) const {
  throw FormatError(map_->path(), section, offset, problem);
}

void GgufFile::parse() {
  Cursor c(this, map_->data(), map_->size());
  c.set_section("header");
  uint32_t magic = c.read<uint32_t>("the magic");
  if (magic != kGgufMagic) fail("header", 0, "not a GGUF file (magic is not \"GGUF\")");
  uint32_t version = c.read<uint32_t>("the version");
  if ((version & 0xFFFF) == 0 && version != 0)
    fail("header", 4, "big-endian GGUF (version field " + std::to_string(version) + ") is not supported");
  if (version == 1) fail("header", 4, "GGUF v1 (32-bit counts) is not supported; re-convert with a current llama.cpp");
  if (version != 2 && version != 3) fail("header", 4, "GGUF version " + std::to_string(version) + " is not 2 or 3");
  version_ = version;
  uint64_t n_tensors = c.read<uint64_t>("the tensor count");
  uint64_t n_kv = c.read<uint64_t>("the metadata count");
  // Each KV needs at least 8 (key length) + 4 (type) + 1 bytes; each tensor info 8+4+8+4+8.
  if (const std::string why = count_fits_problem("metadata count", n_kv, 13, c.remaining()); !why.empty())
    fail("header", 16, why);
  if (const std::string why = count_fits_problem("tensor count", n_tensors, 32, c.remaining()); !why.empty())
    fail("header", 8, why);

  c.set_section("metadata");
  kv_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    GgufKV kv;
    kv.offset = c.pos();
    kv.key = c.read_string("a metadata key", kMaxNameLength);
    if (kv.key.empty()) fail("metadata", kv.offset, "empty metadata key");
    uint64_t type_at = c.pos();
    uint32_t t = c.read<uint32_t>("a metadata value type");
    if (!known_type(t)) fail("metadata", type_at, "key '" + kv.key + "' has unknown value type " + std::to_string(t));
    kv.value = read_value(c, static_cast<GgufType>(t), 0, true);
    if (kv_index_.count(kv.key)) fail("metadata", kv.offset, "key '" + kv.key + "' appears twice");
    kv_index_.emplace(kv.key, kv_.size());
    kv_.push_back(std::move(kv));
  }
  if (const GgufKV* a = find_kv("general.alignment")) {
    auto v = a->value.as_uint();
    if (!a->value.is_integer() || !v || *v == 0 || (*v & (*v - 1)) != 0 || *v > (1u << 30))
      fail("metadata", a->offset, "general.alignment must be a power of two, got " + a->value.summary());
    alignment_ = static_cast<uint32_t>(*v);
  }

  c.set_section("tensor info");
  tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo ti;
    ti.info_offset = c.pos();
    ti.name = c.read_string("a tensor name", kMaxNameLength);
    if (ti.name.empty()) fail("tensor info", ti.info_offset, "tensor " + std::to_string(i) + " has an empty name");
    uint64_t at = c.pos();
    ti.n_dims = c.read<uint32_t>("a tensor's dimension count");
    if (ti.n_dims == 0 || ti.n_dims > kMaxDims)
      fail("tensor info", at, "tensor '" + ti.name + "' has " + std::to_string(ti.n_dims) + " dimensions (1 to 4 allowed)");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < ti.n_dims; ++d) {
      uint64_t dim_at = c.pos();
      int64_t ne = c.read<int64_t>("a tensor dimension");
      if (ne <= 0 || static_cast<uint64_t>(ne) > (uint64_t{1} << 40))
        fail("tensor info", dim_at, "tensor '" + ti.name + "' has dimension " + std::to_string(d) + " = " + std::to_string(ne));
      if (elements > (uint64_t{1} << 50) / static_cast<uint64_t>(ne))
        fail("tensor info", dim_at, "tensor '" + ti.name + "' has too many elements");
      elements *= static_cast<uint64_t>(ne);
      ti.ne[d] = ne;
    }
    at = c.pos();
    uint32_t type = c.read<uint32_t>("a tensor type");
    ti.dtype = static_cast<DType>(type);
    auto info = dtype_info(ti.dtype);
    if (!info || dtype_is_packed(ti.dtype))
      fail("tensor info", at, "tensor '" + ti.name + "' has unknown or unsupported dtype " + std::to_string(type));
    if (ti.ne[0] % info->block_elems != 0)
      fail("tensor info", at, "tensor '" + ti.name + "' row length " + std::to_string(ti.ne[0]) +
                                  " is not a multiple of the " + std::string(info->name) + " block size " +
                                  std::to_string(info->block_elems));
    ti.bytes = elements / info->block_elems * info->block_bytes;
    at = c.pos();
    ti.offset = c.read<uint64_t>("a tensor data offset");
    if (ti.offset % alignment_ != 0)
      fail("tensor info", at, "tensor '" + ti.name + "' offset " + std::to_string(ti.offset) + " is not aligned to " +
                                  std::to_string(alignment_));
    if (tensor_index_.count(ti.name)) fail("tensor info", ti.info_offset, "tensor '" + ti.name + "' appears twice");
    tensor_index_.emplace(ti.name, tensors_.size());
    tensors_.push_back(std::move(ti));
  }

  c.set_section("tensor data");
  uint64_t end_of_infos = c.pos();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
  if (!tensors_.empty() && data_offset_ > map_->size())
    fail("tensor data", end_of_infos, "file ends before the tensor data section");
  uint64_t data_size = tensors_.empty() ? 0 : map_->size() - data_offset_;
  std::vector<const GgufTensorInfo*> by_offset;
  for (auto& t : tensors_) {
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      fail("tensor data", data_offset_ + t.offset,
           "tensor '" + t.name + "' (" + std::to_string(t.bytes) + " bytes at data offset " + std::to_string(t.offset) +
               ") runs past the end of the file (" + std::to_string(data_size) + " data bytes)");
    t.data = map_->data() + data_offset_ + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i - 1]->offset + by_offset[i - 1]->bytes > by_offset[i]->offset)
      fail("tensor data", data_offset_ + by_offset[i]->offset,
           "tensor '" + by_offset[i]->name + "' overlaps tensor '" + by_offset[i - 1]->name + "'");
}

const GgufKV* GgufFile::find_kv(std::string_view key) const {
  auto it = kv_index_.find(std::string(key));
  return it == kv_index_.end() ? nullptr : &kv_[it->second];
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  return kv ? &kv->value : nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
[[noreturn]] void missing(const GgufFile& f, std::string_view key) {
  f.fail("metadata", 0, "required key '" + std::string(key) + "' is missing");
}
[[noreturn]] void wrong(const GgufFile& f, const GgufKV& kv, const char* wanted) {
  f.fail("metadata", kv.offset,
         "key '" + kv.key + "' is " + std::string(gguf_type_name(kv.value.type)) + " " + kv.value.summary() +
             ", expected " + wanted);
}
}  // namespace

std::optional<std::string> GgufFile::get_string_opt(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (!kv->value.as_string()) wrong(*this, *kv, "a string");
  return *kv->value.as_string();
}
std::string GgufFile::get_string(std::string_view key) const {
  auto v = get_string_opt(key);
  if (!v) missing(*this, key);
  return *v;
}

std::optional<uint32_t> GgufFile::get_u32_opt(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  if (!kv) return std::nullopt;
  auto u = kv->value.as_uint();
  if (!u || *u > std::numeric_limits<uint32_t>::max()) wrong(*this, *kv, "an unsigned 32-bit integer");
  return static_cast<uint32_t>(*u);
}
uint32_t GgufFile::get_u32(std::string_view key) const {
  auto v = get_u32_opt(key);
  if (!v) missing(*this, key);
  return *v;
}

std::optional<int32_t> GgufFile::get_i32_opt(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  if (!kv) return std::nullopt;
  auto i = kv->value.as_int();
  if (!i || *i < std::numeric_limits<int32_t>::min() || *i > std::numeric_limits<int32_t>::max())
    wrong(*this, *kv, "a 32-bit integer");
  return static_cast<int32_t>(*i);
}
int32_t GgufFile::get_i32(std::string_view key) const {
  auto v = get_i32_opt(key);
  if (!v) missing(*this, key);
  return *v;
}

std::optional<float> GgufFile::get_f32_opt(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  if (!kv) return std::nullopt;
  auto d = kv->value.as_double();
  if (!d) wrong(*this, *kv, "a number");
  return static_cast<float>(*d);
}
float GgufFile::get_f32(std::string_view key) const {
  auto v = get_f32_opt(key);
  if (!v) missing(*this, key);
  return *v;
}

std::optional<bool> GgufFile::get_bool_opt(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  if (!kv) return std::nullopt;
  if (auto b = kv->value.as_bool()) return *b;
  // Some writers store flags as integers 0/1.
  if (auto u = kv->value.as_uint(); u && *u <= 1) return *u == 1;
  wrong(*this, *kv, "a bool");
}
bool GgufFile::get_bool(std::string_view key) const {
  auto v = get_bool_opt(key);
  if (!v) missing(*this, key);
  return *v;
}

const GgufValue* GgufFile::get_array_opt(std::string_view key) const {
  const GgufKV* kv = find_kv(key);
  if (!kv) return nullptr;
  if (!kv->value.is_array()) wrong(*this, *kv, "an array");
  return &kv->value;
}
const GgufValue& GgufFile::get_array(std::string_view key) const {
  const GgufValue* v = get_array_opt(key);
  if (!v) missing(*this, key);
  return *v;
}

std::optional<std::vector<std::string>> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue* a = get_array_opt(key);
  if (!a) return std::nullopt;
  if (a->elem_type != GgufType::STRING) wrong(*this, *find_kv(key), "an array of strings");
  std::vector<std::string> out;
  out.reserve(a->size());
  a->for_each_item([&](const GgufValue& it) {
    out.push_back(*it.as_string());
    return true;
  });
  return out;
}

std::optional<std::vector<float>> GgufFile::get_f32_array(std::string_view key) const {
  const GgufValue* a = get_array_opt(key);
  if (!a) return std::nullopt;
  std::vector<float> out;
  out.reserve(a->size());
  a->for_each_item([&](const GgufValue& it) {
    auto d = it.as_double();
    if (!d) wrong(*this, *find_kv(key), "an array of numbers");
    out.push_back(static_cast<float>(*d));
    return true;
  });
  return out;
}

std::optional<std::vector<int32_t>> GgufFile::get_i32_array(std::string_view key) const {
  const GgufValue* a = get_array_opt(key);
  if (!a) return std::nullopt;
  std::vector<int32_t> out;
  out.reserve(a->size());
  a->for_each_item([&](const GgufValue& it) {
    auto i = it.as_int();
    if (!i || *i < std::numeric_limits<int32_t>::min() || *i > std::numeric_limits<int32_t>::max())
      wrong(*this, *find_kv(key), "an array of 32-bit integers");
    out.push_back(static_cast<int32_t>(*i));
    return true;
  });
  return out;
}

}  // namespace p64
