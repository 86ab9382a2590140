#include "engine/lab/rapl.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace p64 {
namespace {
namespace fs = std::filesystem;

std::optional<double> read_number(const std::string& path) {
  std::ifstream in(path);
  double v = 0;
  if (!(in >> v) || v < 0) return std::nullopt;
  return v;
}

std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

std::unique_ptr<RaplCounter> RaplCounter::open(std::string& why, std::string root) {
  if (root.empty()) {
    const char* env = std::getenv("P64_POWERCAP_ROOT");
    root = env && *env ? env : "/sys/class/powercap";
  }
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why = "no " + root + " (the kernel's powercap interface is not exposed here: a VM, a container or no RAPL driver)";
    return nullptr;
  }
  std::unique_ptr<RaplCounter> c(new RaplCounter);
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    // top-level zones only ("intel-rapl:0"); "intel-rapl:0:0" is a core/uncore part of package 0
    if (name.rfind("intel-rapl:", 0) == 0 && name.find(':', 11) == std::string::npos) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& d : dirs) {
    if (read_line(d / "name").rfind("package", 0) != 0) continue;
    Domain dom;
    dom.energy_file = (d / "energy_uj").string();
    const std::optional<double> now = read_number(dom.energy_file);
    if (!now) {
      why = dom.energy_file + " is not readable (root only since Linux 5.10; run as root or relax its mode)";
      return nullptr;
    }
    dom.last_uj = *now;
    dom.range_uj = read_number((d / "max_energy_range_uj").string()).value_or(0);
    c->domains_.push_back(dom);
  }
  if (c->domains_.empty()) {
    why = "no package zone (intel-rapl:N named package-N) under " + root;
    return nullptr;
  }
  return c;
}

std::optional<double> RaplCounter::energy_j() const {
  std::lock_guard lock(mutex_);
  double total = 0;
  for (Domain& d : domains_) {
    const std::optional<double> now = read_number(d.energy_file);
    if (!now) return std::nullopt;
    // a counter below its last value wrapped at range_uj (unknown range: count from zero)
    d.total_uj += *now >= d.last_uj ? *now - d.last_uj : *now + (d.range_uj > d.last_uj ? d.range_uj - d.last_uj : 0);
    d.last_uj = *now;
    total += d.total_uj;
  }
  return total * 1e-6;
}

std::string RaplCounter::source() const {
  return "RAPL package energy (" + std::to_string(domains_.size()) + (domains_.size() == 1 ? " package)" : " packages)");
}

CpuEnergySource cpu_energy_source_for(const DeviceFacts& device) {
  CpuEnergySource s;
  if (device.backend != "cpu") return s;
  std::string why;
  s.counter = RaplCounter::open(why);
  if (!s.counter) s.unavailable = why.empty() ? "RAPL not available" : why;
  return s;
}

}  // namespace p64
