#include "support/safetensors_writer.h"

#include <fstream>

namespace p64::test {

void write_safetensors(const std::filesystem::path& out, const std::vector<SafetensorsEntry>& tensors) {
  std::string header = "{", data;
  for (const SafetensorsEntry& t : tensors) {
    std::string shape;
    for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(t.shape[i]);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + t.dtype +
              "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  const uint64_t len = header.size();
  std::ofstream f(out, std::ios::binary);
  f.write(reinterpret_cast<const char*>(&len), 8);
  f << header << data;
}

}  // namespace p64::test
