// Helpers every runtime shares (see runtime.h).
#include "backends/level_zero/common/runtime.h"

#include <cstdlib>
#include <fstream>

namespace plugsdk::level_zero {

std::string keepRejectedModule(const std::vector<uint32_t>& words, const std::string& stem,
                               const std::string& keepDir) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = !keepDir.empty() ? keepDir : tmp ? tmp : "/tmp";
  const std::string file = dir + "/" + stem + ".spv";
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  return file;
}

}  // namespace plugsdk::level_zero
