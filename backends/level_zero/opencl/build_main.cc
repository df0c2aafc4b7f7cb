// plugsdk-opencl-build FILE.spv...: builds SPIR-V modules on the OpenCL device the
// level_zero plugin's runtime=opencl picks (PoCL's CPU device in CI) and prints each
// build's result and log; the command a rejected module's error names to reproduce it.
// Exit status 1 when a build fails, 2 for no device or a bad command line.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/level_zero/opencl/program.h"

namespace cl = plugsdk::level_zero::opencl;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: plugsdk-opencl-build FILE.spv...\n");
    return 2;
  }
  auto api = cl::loadApi("");
  if (!api.isOk()) {
    std::fprintf(stderr, "%s\n", api.status().message().c_str());
    return 2;
  }
  auto device = cl::Device::open(*api);
  if (!device.isOk()) {
    std::fprintf(stderr, "%s\n", device.status().message().c_str());
    return 2;
  }
  std::printf("device: %s (%s)\n", (*device)->props().name.c_str(), (*device)->props().platformVersion.c_str());
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read\n", argv[i]);
      rc = 2;
      continue;
    }
    std::vector<uint32_t> words(bytes.size() / 4);
    std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(words.size() * 4),
              reinterpret_cast<char*>(words.data()));
    const std::string tmp = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    auto p = cl::buildProgram(**device, words, argv[i], "plugsdk_opencl_build", tmp);
    if (p.isOk()) {
      std::printf("%s: built\n", argv[i]);
    } else {
      std::printf("%s\n", p.status().message().c_str());
      rc = 1;
    }
  }
  return rc;
}
