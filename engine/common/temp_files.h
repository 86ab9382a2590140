#pragma once
// Where p64 puts files that are not the user's: an output still being written (beside its
// target, see atomic_output.h) and a model converted for decode (in the p64 cache folder).
// Each temporary file's name carries the id of the process that made it,
// "<stem>.p64tmp-<pid>-XXXXXX<suffix>". A process killed before it could remove its file leaves
// it behind; the next p64 that makes a temporary file in that folder removes those whose
// process is no longer running, so killed conversions do not pile up gigabytes.
#include <filesystem>
#include <string>
#include <string_view>

namespace p64 {

// $XDG_CACHE_HOME/p64, else ~/.cache/p64, else <system temp folder>/p64-cache. Not created here.
std::filesystem::path p64_cache_dir();

// Removes the stale temporary files in `dir` (see above), then creates a new empty one there
// named for this process. Returns an open read-write descriptor and sets `path`; -1 with
// errno when the file cannot be made. 0600 unless `shared_read` (0644, an output).
int create_temp_file(const std::filesystem::path& dir, std::string_view stem, std::string_view suffix,
                     std::string& path, bool shared_read = false);

// The process id in a temporary file's name; 0 when the name is not one of ours.
int temp_file_owner(std::string_view file_name);

// Removes the regular files in `dir` that temp_file_owner() names a process that is not
// running; returns how many. Errors (a folder that cannot be read) remove nothing.
int remove_stale_temp_files(const std::filesystem::path& dir);

}  // namespace p64
