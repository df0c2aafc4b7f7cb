// Dumper: files per stage, svg through the `dot` tool when present.
#include "core/dump/dumper.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/dump/dot.h"
#include "core/text/printer.h"

namespace plugsdk::dump {

namespace fs = std::filesystem;

bool Dumper::svgAvailable() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::error_code ec;
    if (end > start && fs::exists(fs::path(p.substr(start, end - start)) / "dot", ec)) return true;
    start = end + 1;
  }
  return false;
}

Status Dumper::write(const std::string& graphName, const std::string& file, const std::string& text) const {
  std::error_code ec;
  const fs::path dir = fs::path(dir_) / graphName;
  fs::create_directories(dir, ec);
  if (ec) return unavailable("PLUGSDK_DUMP: cannot create " + dir.string() + ": " + ec.message());
  std::ofstream out(dir / file, std::ios::binary);
  out << text;
  if (!out) return unavailable("PLUGSDK_DUMP: cannot write " + (dir / file).string());
  return Status::ok();
}

Status Dumper::writeDot(const std::string& graphName, const std::string& stem, const std::string& dot) const {
  RETURN_IF_ERROR(write(graphName, stem + ".dot", dot));
  if (!svgAvailable()) return Status::ok();
  const fs::path base = fs::path(dir_) / graphName / stem;
  const std::string cmd = "dot -Tsvg '" + base.string() + ".dot' -o '" + base.string() + ".svg' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0)
    return unavailable("PLUGSDK_DUMP: graphviz failed; reproduce with: " + cmd.substr(0, cmd.size() - 12));
  return Status::ok();
}

Status Dumper::input(const ir::Graph& g) const {
  if (!enabled()) return Status::ok();
  RETURN_IF_ERROR(write(g.name(), "1-input.pgraph", text::printGraph(g)));
  return writeDot(g.name(), "1-input", graphToDot(g));
}

Status Dumper::prims(const ir::Graph& g) const {
  if (!enabled()) return Status::ok();
  RETURN_IF_ERROR(write(g.name(), "2-prims.pgraph", text::printGraph(g)));
  return writeDot(g.name(), "2-prims", graphToDot(g));
}

Status Dumper::program(const ir::Graph& prims, const sched::Program& p) const {
  if (!enabled()) return Status::ok();
  RETURN_IF_ERROR(write(prims.name(), "3-program.txt", sched::printProgram(p)));
  return writeDot(prims.name(), "3-fused", fusedGraphToDot(prims, p));
}

}  // namespace plugsdk::dump
