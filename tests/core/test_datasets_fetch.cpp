// `datasets fetch` from an archive source (the canonical Qasper release is a .tgz): the member is
// extracted and checked; a wrong archive checksum or a missing member leaves nothing behind. The
// archive is made by tar and its checksum taken by sha256sum, not by the code under test.
#include "torch_catch.h"

#include <cstdio>
#include <fstream>

#include "common/error.h"
#include "run/datasets.h"
#include "test_support.h"

using namespace kvbench;

namespace {

std::string shell_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[256];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  return out;
}

struct ArchiveFixture {
  std::filesystem::path dir = kvbench::testing::scratch_path("fetch");
  std::string archive_sha;
  ArchiveFixture() {
    std::filesystem::create_directories(dir / "release");
    std::ofstream(dir / "release/qasper-test-v0.3.json") << "tiny qasper\n";
    std::ofstream(dir / "release/README") << "not the member\n";
    REQUIRE(std::system(("cd '" + dir.string() + "' && tar czf release.tgz release").c_str()) == 0);
    archive_sha = shell_output("sha256sum '" + (dir / "release.tgz").string() + "'").substr(0, 64);
  }
  ~ArchiveFixture() { std::filesystem::remove_all(dir); }
  DatasetSource source() const {
    return {"qasper", {"qasper"}, "qasper/qasper-test-v0.3.json",
            "f07f12f6c51752205fdf3edb62300aad0adf0d647e27162f7d65e6b1c2413174",  // sha256sum of "tiny qasper\n"
            "file://" + (dir / "release.tgz").string(), archive_sha, "qasper-test-v0.3.json", ""};
  }
};

}  // namespace

TEST_CASE("datasets fetch extracts and verifies an archive member", "[datasets]") {
  ArchiveFixture fixture;
  const std::filesystem::path root = fixture.dir / "root";
  fetch_dataset(fixture.source(), root, "");
  std::ifstream in(root / "qasper/qasper-test-v0.3.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "tiny qasper\n");
  CHECK(dataset_status(root, fixture.source()) == DatasetStatus::Verified);
  CHECK(std::distance(std::filesystem::directory_iterator(root / "qasper"), {}) == 1);  // no temp files left
}

TEST_CASE("datasets fetch refuses a corrupted archive or a missing member, leaving nothing", "[datasets]") {
  ArchiveFixture fixture;
  const std::filesystem::path root = fixture.dir / "root";
  DatasetSource wrong_archive = fixture.source();
  wrong_archive.archive_sha256[0] = wrong_archive.archive_sha256[0] == '0' ? '1' : '0';
  CHECK_THROWS_WITH(fetch_dataset(wrong_archive, root, ""), Catch::Contains("checksum mismatch"));
  DatasetSource no_member = fixture.source();
  no_member.member = "absent.json";
  CHECK_THROWS_WITH(fetch_dataset(no_member, root, ""), Catch::Contains("no member absent.json"));
  DatasetSource wrong_member = fixture.source();
  wrong_member.sha256[0] = wrong_member.sha256[0] == '0' ? '1' : '0';
  CHECK_THROWS_WITH(fetch_dataset(wrong_member, root, ""), Catch::Contains("checksum mismatch"));
  CHECK(std::distance(std::filesystem::directory_iterator(root / "qasper"), {}) == 0);
}
