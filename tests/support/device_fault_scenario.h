#pragma once
// The pieces the device-fault tests share (tests/lab with a toy backend, tests/cuda with a real
// trap): a run stored before the fault and the decode-proxy runs the fault interrupts.
#include <cstdint>
#include <string>

#include "engine/lab/decode_proxy.h"
#include "engine/lab/store.h"

namespace p64::test {

// A decode-proxy run record written before the fault; returns its id.
int64_t write_run_before_fault(Store& store, const std::string& backend);
// Three short runs (4 prompt + 8 decode tokens, no warm-up): decode step 13 is in the second.
DecodeProxyParams three_short_runs();

}  // namespace p64::test
