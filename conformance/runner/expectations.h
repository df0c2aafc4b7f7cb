// A backend's expectations: which tiers and dtypes it claims, how many cases may run at once,
// and the cases it does not support or expects to fail, each with a reason. One text file per
// backend (conformance/expectations/<name>.txt; format in docs/conformance.md). The lists are
// public and carry reasons so that a certification says exactly what it covers, and an
// expected failure that passes is reported so the lists do not go stale (IREE's HAL CTS).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/plugin/device.h"
#include "core/support/status.h"

namespace plugsdk::conformance {

/// One `unsupported:` or `xfail:` line: a case-name glob (`*` matches anything) and why.
struct ExpectationEntry {
  std::string pattern;
  std::string reason;
  int line = 0;
};

struct Expectations {
  std::string source;                          ///< the file read ("" when none was found)
  std::optional<std::set<std::string>> tiers;  ///< the tiers claimed; nullopt: every tier
  std::optional<uint32_t> dtypes;              ///< PLUGSDK_DTYPE_BIT set claimed; nullopt: the device's
  int jobs = 0;                                ///< workers that may run at once; 0: not said
  std::vector<ExpectationEntry> unsupported, xfail;

  bool claimsTier(const std::string& tier) const { return !tiers || tiers->count(tier) != 0; }
  /// The dtypes the run claims: the device's, narrowed by the `dtypes:` line.
  uint32_t claimedDtypes(const plugin::DeviceCaps& caps) const { return caps.dtypes & dtypes.value_or(~0u); }
  /// The first entry of `unsupported` / `xfail` matching `name`, or null.
  const ExpectationEntry* unsupportedEntry(const std::string& name) const;
  const ExpectationEntry* xfailEntry(const std::string& name) const;
};

/// `*` matches any run of characters (dots included); everything else matches itself.
bool globMatch(const std::string& pattern, const std::string& text);

/// Parses an expectations file's text; `source` names it in errors ("FILE:LINE: ...").
/// `knownTiers` are the tier names a `tiers:` line may use.
StatusOr<Expectations> parseExpectations(const std::string& text, const std::string& source,
                                         const std::set<std::string>& knownTiers);

/// Reads and parses FILE.
StatusOr<Expectations> loadExpectations(const std::string& file, const std::set<std::string>& knownTiers);

/// The expectations file of the first of `names` ("minimal", ...) that has one, looked for in
/// the source tree's conformance/expectations, then the installed share directory (beside
/// the executable, then the configured prefix). nullopt when none has one.
std::optional<std::string> findExpectations(const std::vector<std::string>& names);

/// The name a plugin file goes by: libplugsdk_minimal.so -> "minimal".
std::string pluginStem(const std::string& path);

/// An error when the `dtypes:` line claims a dtype the device does not report.
Status checkClaimedDtypes(const Expectations& e, const plugin::DeviceCaps& caps);

}  // namespace plugsdk::conformance
