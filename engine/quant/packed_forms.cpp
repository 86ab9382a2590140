// Whole tensors to and from their packed forms, whichever family (SoA or row-interleaved).
#include <string>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {

void pack_tensor(DType packed, const void* aos, void* dst, int64_t rows, int64_t n) {
  const DType plain = dtype_aos_of(packed);
  if (dtype_is_interleaved(packed)) return interleave_rows(plain, aos, dst, rows, n);
  if (dtype_is_soa(packed)) return soa_pack(plain, aos, dst, n / dtype_info(plain)->block_elems * rows);
  throw Error("pack_tensor: " + std::string(dtype_name(packed)) + " is not a packed form");
}

void unpack_tensor(DType packed, const void* src, void* aos, int64_t rows, int64_t n) {
  const DType plain = dtype_aos_of(packed);
  if (dtype_is_interleaved(packed)) return deinterleave_rows(plain, src, aos, rows, n);
  if (dtype_is_soa(packed)) return soa_unpack(plain, src, aos, n / dtype_info(plain)->block_elems * rows);
  throw Error("unpack_tensor: " + std::string(dtype_name(packed)) + " is not a packed form");
}

}  // namespace p64
