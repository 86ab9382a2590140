#include "engine/format/safetensors.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"

namespace p64 {

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.map_ = MappedFile::open(path);
  const MappedFile& m = *f.map_;
  auto fail = [&](const char* section, uint64_t off, const std::string& why) { throw FormatError(path, section, off, why); };
  if (m.size() < 8) fail("header", 0, "file is shorter than the 8-byte header length");
  uint64_t n;
  std::memcpy(&n, m.data(), 8);
  if (n < 2 || n > m.size() - 8) fail("header", 0, "header length " + std::to_string(n) + " does not fit in the file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(m.data() + 8, m.data() + 8 + n);
  } catch (const nlohmann::json::exception& e) {
    fail("header", 8, std::string("header is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail("header", 8, "header is not a JSON object");
  const uint64_t data_start = 8 + n, data_size = m.size() - data_start;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string& name = it.key();
    const nlohmann::json& e = it.value();
    auto bad = [&](const std::string& why) { fail("header", 8, "tensor '" + name + "': " + why); };
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets")) bad("needs dtype, shape, data_offsets");
    if (!e["dtype"].is_string() || !e["shape"].is_array() || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
      bad("malformed entry");
    SafetensorsTensor t;
    t.name = name;
    const std::string dt = e["dtype"].get<std::string>();
    uint64_t elem = 0;
    if (dt == "F32") { t.dtype = DType::F32; elem = 4; }
    else if (dt == "F16") { t.dtype = DType::F16; elem = 2; }
    else if (dt == "BF16") { t.dtype = DType::BF16; elem = 2; }
    else bad("dtype " + dt + " is not supported (F32, F16, BF16)");
    uint64_t count = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() == 0 || d.get<uint64_t>() > (uint64_t{1} << 40)) bad("bad shape");
      if (count > (uint64_t{1} << 50) / d.get<uint64_t>()) bad("too many elements");
      count *= d.get<uint64_t>();
      t.shape.push_back(d.get<int64_t>());
    }
    if (t.shape.empty() || t.shape.size() > 4) bad("has " + std::to_string(t.shape.size()) + " dimensions (1 to 4 supported)");
    const auto& off = e["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) bad("data_offsets are not integers");
    uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
    if (b > en || en > data_size)
      fail("tensor data", data_start + std::min(b, data_size),
           "tensor '" + name + "' bytes [" + std::to_string(b) + ", " + std::to_string(en) + ") are outside the " +
               std::to_string(data_size) + "-byte data (truncated file?)");
    if (en - b != count * elem)
      bad("has " + std::to_string(en - b) + " bytes, its shape and dtype need " + std::to_string(count * elem));
    t.data = m.data() + data_start + b;
    t.bytes = en - b;
    f.index_.emplace(name, f.tensors_.size());
    f.tensors_.push_back(std::move(t));
  }
  std::vector<const SafetensorsTensor*> by(f.tensors_.size());
  for (size_t i = 0; i < by.size(); ++i) by[i] = &f.tensors_[i];
  std::sort(by.begin(), by.end(), [](auto* a, auto* b) { return a->data < b->data; });
  for (size_t i = 1; i < by.size(); ++i)
    if (by[i - 1]->data + by[i - 1]->bytes > by[i]->data)
      fail("tensor data", static_cast<uint64_t>(by[i]->data - m.data()), "tensor '" + by[i]->name + "' overlaps '" + by[i - 1]->name + "'");
  return f;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace p64
