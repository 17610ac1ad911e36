#include "tasks/zip.h"

#include <zip.h>

#include <memory>

#include "common/error.h"

namespace kvbench::tasks {

namespace {
struct ArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }  // read-only: discard, never write back
};
struct FileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

std::string error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}
}  // namespace

std::string read_zip_member(const std::filesystem::path& archive_path, const std::string& member,
                            const std::string& password) {
  const std::string where = archive_path.string() + ": " + member;
  int open_error = 0;
  std::unique_ptr<zip_t, ArchiveCloser> archive(zip_open(archive_path.c_str(), ZIP_RDONLY, &open_error));
  if (!archive) fail("{}: cannot open zip archive: {}", archive_path.string(), error_text(open_error));

  zip_stat_t stat;
  if (zip_stat(archive.get(), member.c_str(), 0, &stat) != 0) fail("{}: no such member in the archive", where);

  std::unique_ptr<zip_file_t, FileCloser> file(
      zip_fopen_encrypted(archive.get(), member.c_str(), 0, password.empty() ? nullptr : password.c_str()));
  if (!file) {
    const int code = zip_error_code_zip(zip_get_error(archive.get()));
    if (code == ZIP_ER_WRONGPASSWD || code == ZIP_ER_NOPASSWD) fail("{}: wrong or missing password", where);
    fail("{}: cannot open member: {}", where, error_text(code));
  }
  std::string bytes(stat.size, '\0');
  const zip_int64_t read = zip_fread(file.get(), bytes.data(), bytes.size());
  // ZipCrypto's one-byte password check passes 1 time in 256; then inflating or the CRC check (done
  // when the stream reaches its end, hence the extra read) fails.
  char past_end;
  if (read < 0 || static_cast<zip_uint64_t>(read) != stat.size || zip_fread(file.get(), &past_end, 1) != 0)
    fail("{}: cannot decompress (wrong password or corrupt archive): {}", where,
         zip_error_strerror(zip_file_get_error(file.get())));
  return bytes;
}

}  // namespace kvbench::tasks
