#include "engine/lab/software_device.h"

namespace p64 {

std::string software_device_note(const Passport& p) {
  if (p.device.backend == "cpu" || p.device.device_type != "cpu") return {};
  return "the " + p.device.backend + " device '" + p.device.name +
         "' is a software implementation running on the CPU; its figures say nothing about a GPU";
}

}  // namespace p64
