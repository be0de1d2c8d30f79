// Output files (-o, --output, --json, --csv): one set of rules for every command.
// - Checked before anything is measured or read (`checkOutputPath`), leaving nothing behind.
// - A regular file, or a new one, is written whole or not at all: to a temporary file beside it,
//   renamed over it only when every byte is on disk; removed on failure.
// - A symlink is followed: the file it points to is written (the link stays a link); a symlink to
//   nothing is refused.
// - An existing file that is not a regular file (a FIFO, a character device such as /dev/stdout
//   or /dev/null) is written through in place, never replaced; a FIFO with no reader is refused
//   instead of waiting for one.
#pragma once

#include <string>
#include <string_view>

namespace cb {

// Throws UsageError ("<flag> '<path>' ...", one line) when path cannot be written: empty, a
// directory, a symlink to nothing, a missing or unwritable folder, an unwritable file. It makes
// and removes a temporary file in the folder, the one way to know a rename there will work.
void checkOutputPath(const std::string& path, std::string_view flag);

// Writes text to path under the rules above; EnvironmentError names the flag, path and cause.
void writeOutputFile(const std::string& path, std::string_view text, std::string_view flag);

}  // namespace cb
