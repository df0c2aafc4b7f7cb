// The VJP table: every family's rules in one place.
#include "core/autograd/vjp.h"

namespace plugsdk::autograd {

std::vector<std::string> VjpTable::prims() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

VjpTable makeVjpTable() {
  VjpTable t;
  addElementwiseVjps(t);
  addStructureVjps(t);
  addReductionVjps(t);
  addLibraryVjps(t);
  addSdpaBackwardVjp(t);
  return t;
}

}  // namespace plugsdk::autograd
