// Which source the binary was built from (recorded in every result file).
#pragma once

namespace kvbench {

const char* git_commit();  // short hash, "-dirty" when tracked files had changes; "unknown" outside git

}  // namespace kvbench
