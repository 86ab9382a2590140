#pragma once
// Checks on a path before it is opened or written: what kind of file is there, and whether a
// file a model folder names really is a file of that folder.
#include <filesystem>
#include <string>

namespace p64 {

// "a FIFO", "a folder", "a character device", ...: how an error names what is at a path.
const char* file_type_text(std::filesystem::file_type t);

// Throws p64::Error naming `path` unless it is a regular file once symbolic links are followed,
// checked without opening it: open() on a FIFO waits for a writer forever. With `folder`, the
// file must also lie inside that folder after links are resolved (a model folder's files are
// read as that folder's, not through a link to somewhere else).
void check_input_file(const std::string& path, const std::string& folder = "");

}  // namespace p64
