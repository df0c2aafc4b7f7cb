#!/usr/bin/env bash
# `pip install ./python` into a scratch prefix (in the toolbox: no build isolation), then a
# fresh python3 that never imports plugsdk compiles a function with backend="plugsdk" (the
# torch_dynamo_backends entry point) on the installed package's own cpu plugin, and the
# import-first path works too. A full Release build: about 4 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 -m pip install -q --no-build-isolation --no-deps --target "$dir/site" -C build-dir="$dir/build" ./python
cd "$dir"
PYTHONPATH="$dir/site" python3 - <<'PY'
import torch
f = torch.compile(lambda x: torch.sin(x) * 2 + 1, backend="plugsdk")   # no import of plugsdk
x = torch.randn(1000)
torch.testing.assert_close(f(x), torch.sin(x) * 2 + 1)
import plugsdk
path = plugsdk.runtime.device("cpu").plugin_path
assert "/site/plugsdk/plugins/" in path, path
assert plugsdk.cache_info()["compiles"] == 1
print("pip install ./python: ok; backend from the entry point, plugin", path)
PY
