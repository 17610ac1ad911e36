// Reading one (possibly encrypted) member of a zip archive into memory with libzip.
#pragma once
#include <filesystem>
#include <string>

namespace kvbench::tasks {

// The member's bytes. Nothing is written to disk. Throws kvbench::Error naming the archive and member
// (cannot open, no such member, wrong password, corrupt data) — never the contents.
std::string read_zip_member(const std::filesystem::path& archive, const std::string& member,
                            const std::string& password = "");

}  // namespace kvbench::tasks
