#include "support/cpu_logits.h"

#include <span>

#include "backends/cpu/cpu_backend.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "support/shared_files.h"

namespace p64::test {

std::vector<float> cpu_teacher_forced_logits(const std::string& model_path, const std::vector<int32_t>& tokens,
                                             uint32_t max_context) {
  TempDir tmp;
  const std::string p64 = (tmp / "m.p64").string();
  convert_to_p64(model_path, p64, {});
  auto be = make_cpu_backend();
  BackendOptions opt;
  opt.threads = 2;
  if (max_context) opt.max_context = max_context;
  be->load(open_p64(p64), opt);
  std::vector<float> all;
  for (size_t p = 0; p < tokens.size(); ++p) {
    const std::span<const float> l = be->decode_logits(tokens[p], static_cast<int32_t>(p));
    all.insert(all.end(), l.begin(), l.end());
  }
  return all;
}

}  // namespace p64::test
