#pragma once
#include <cstddef>
#include <cstdint>

namespace p64 {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and final xor
// 0xFFFFFFFF), the checksum of every P64 section and tensor. crc32c("123456789") == 0xE3069283.
// `crc` is a previous result, so a large buffer can be checksummed in pieces:
//   crc32c(b, nb, crc32c(a, na)) == crc32c(a ++ b).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

// The portable slice-by-8 path, exposed so tests can compare it with the hardware path.
uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc = 0);
bool crc32c_hardware_available();

}  // namespace p64
