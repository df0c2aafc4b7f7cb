#!/usr/bin/env bash
# Style and layering checks (inside the toolbox):
#   no-vendor-names   no device or vendor name under core/ (capabilities are data)
#   clang-format      every C/C++ file is formatted per .clang-format
#   clang-tidy        the checks in .clang-tidy, over core/, sdk/ and conformance/ (needs compile_commands.json)
# --fix reformats in place instead of checking. --junit FILE writes a JUnit report.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PLUGSDK_BUILD_DIR:-$PWD/build}
fix=0; junit=""
while [ $# -gt 0 ]; do
  case "$1" in --fix) fix=1 ;; --junit) junit=$2; shift ;; *) echo "lint: unknown option $1"; exit 2 ;; esac
  shift
done
mapfile -t files < <(git ls-files '*.h' '*.hpp' '*.c' '*.cc' '*.cpp' 2>/dev/null || find core sdk backends samples conformance python -name '*.cc' -o -name '*.h' -o -name '*.c')
if [ $fix = 1 ]; then clang-format-19 -i "${files[@]}"; echo "lint: reformatted ${#files[@]} files"; exit 0; fi

declare -A result detail
# 1. Vendor and device names in core/ (comments included: the core must not know them).
hits=$(grep -rniE '\b(cuda|nvptx|ptx|spir-?v|level_?zero|avx2|avx512|avx-512|x86|intel|nvidia|amd|rocm|hip)\b' core \
  --include='*.h' --include='*.cc' --include='*.cpp' 2>/dev/null | head -20)
if [ -n "$hits" ]; then result[no-vendor-names]=fail; detail[no-vendor-names]=$hits; else result[no-vendor-names]=pass; fi

# 2. clang-format.
out=$(clang-format-19 --dry-run --Werror "${files[@]}" 2>&1 | head -40)
if [ -n "$out" ]; then result[clang-format]=fail; detail[clang-format]="$out
(run 'make format' to fix)"; else result[clang-format]=pass; fi

# 3. clang-tidy over the core's, the SDK's and the conformance suite's sources (warnings are
#    errors via .clang-tidy).
if [ -f "$BUILD_DIR/compile_commands.json" ]; then
  mapfile -t srcs < <(git ls-files 'core/*.cc' 'sdk/*.cc' 'conformance/*.cc' | grep -v '_test.cc$')
  out=$(printf '%s\n' "${srcs[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy-19 -p "$BUILD_DIR" --quiet 2>/dev/null | grep -E 'warning:|error:' | sort -u | head -40)
  if [ -n "$out" ]; then result[clang-tidy]=fail; detail[clang-tidy]=$out; else result[clang-tidy]=pass; fi
else
  result[clang-tidy]=fail; detail[clang-tidy]="no $BUILD_DIR/compile_commands.json: build first"
fi

rc=0
for k in no-vendor-names clang-format clang-tidy; do
  echo "lint: $k: ${result[$k]}"
  if [ "${result[$k]}" = fail ]; then rc=1; echo "${detail[$k]}" | sed 's/^/    /'; fi
done
if [ -n "$junit" ]; then
  {
    echo '<?xml version="1.0"?><testsuite name="lint">'
    for k in no-vendor-names clang-format clang-tidy; do
      if [ "${result[$k]}" = pass ]; then echo "<testcase classname=\"lint\" name=\"$k\"/>"
      else echo "<testcase classname=\"lint\" name=\"$k\"><failure message=\"$k\"/></testcase>"; fi
    done
    echo '</testsuite>'
  } > "$junit"
fi
exit $rc
