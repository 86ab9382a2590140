#pragma once
// A backend's optimisation switches, declared once as a static typed table: name, type, default,
// allowed set or range, a one-line doc (and the status a new store first files it under; the
// store owns the status after that). Every value given on the CLI, in a lab config or by the GUI
// is checked against the table in one place (SwitchValues), and the backend reads its settings
// back typed from there, defaults included, so no default is written twice.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace p64 {

enum class SwitchType { Bool, Int, Enum, Float };

struct SwitchInfo {
  std::string name;  // e.g. "graphs", "ffn_fusion", "gemv_rows"
  SwitchType type = SwitchType::Enum;
  std::string description;
  std::string default_value;         // what load() uses when the switch is not given (canonical text)
  std::vector<std::string> choices;  // Bool, Enum and an Int with a set: the allowed values, in order
  int64_t min = 0, max = 0;          // an Int without a set: the allowed range, both ends included
  std::string status;                // default | opt-in | rejected | candidate, when a store first sees it

  std::string values() const;    // the allowed values as text: "0|1", "1|2|4", "16..4096", "float"
  bool allows(const std::string& value) const;
  std::string expected() const;  // "one of 0|1", "an integer in 16..4096", "a finite number"
  // The value as its type reads it, in one spelling, so that two configurations compare by what
  // they run rather than by how they were typed: an Int "016" is "16", a Float "0.50" or "5e-1"
  // is "0.5". A value the switch does not allow is returned as given (checking is allows()'s job).
  std::string canonical(const std::string& value) const;
  // What a picker offers: every choice; for a range its ends and the default between them; for a
  // number its default.
  std::vector<std::string> picker_values() const;
};

// The table's entries. The default must be one of the allowed values (tests check every table).
SwitchInfo bool_switch(std::string name, std::string doc, bool default_on, std::string status);
SwitchInfo int_switch(std::string name, std::string doc, int default_value, std::initializer_list<int> allowed,
                      std::string status);
SwitchInfo int_range_switch(std::string name, std::string doc, int default_value, int64_t min, int64_t max,
                            std::string status);
SwitchInfo enum_switch(std::string name, std::string doc, std::string default_value,
                       std::initializer_list<const char*> allowed, std::string status);
SwitchInfo float_switch(std::string name, std::string doc, double default_value, std::string status);

// Refuses a value outside what `backend` declares for it in `offered`, naming the switch, the
// value and what the switch allows. Names `offered` lacks are left to SwitchValues.
void check_switch_values(const std::string& backend, const std::vector<SwitchInfo>& offered,
                         const std::map<std::string, std::string>& given);

// The switches a backend runs with: each given value checked against its table (unknown names
// and values outside the table are p64::Error), every other switch at its default.
class SwitchValues {
 public:
  SwitchValues(const std::string& backend, const std::vector<SwitchInfo>& table,
               const std::map<std::string, std::string>& given);

  bool flag(std::string_view name) const;
  int integer(std::string_view name) const;
  double number(std::string_view name) const;
  const std::string& text(std::string_view name) const;  // an Enum's value
  bool given(std::string_view name) const;                // set explicitly rather than defaulted

 private:
  struct Entry {
    SwitchType type;
    std::string value;
    bool given = false;
  };
  const Entry& entry(std::string_view name, SwitchType type) const;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace p64
