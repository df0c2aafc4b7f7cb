"""`plugsdk plugins`: lists every plugin on the search path; a bad plugin is reported with its
file and cause and does not stop the others from loading."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The ABI version the header declares (the null plugin and the core report it).
_HEADER = (ROOT / "sdk" / "include" / "plugsdk" / "plugsdk.h").read_text()
ABI = ".".join(re.search(rf"#define PLUGSDK_ABI_VERSION_{part} (\d+)", _HEADER).group(1) for part in ("MAJOR", "MINOR"))
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
CLI = BUILD / "bin" / "plugsdk"


def plugins(path: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PLUGSDK_PLUGIN_PATH=path)
    return subprocess.run([str(CLI), "plugins"], capture_output=True, text=True, env=env, timeout=60)


def test_null_backend_is_listed_with_no_devices():
    r = plugins(str(BUILD / "plugins"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"null         ABI {ABI}  0 device(s): the null backend has no devices" in r.stdout


def test_bad_plugins_are_reported_and_the_rest_still_load():
    r = plugins(f"{BUILD / 'test_plugins'}:{BUILD / 'plugins'}")
    assert r.returncode == 1  # some plugin failed
    out = r.stdout
    for name, cause in [("bad_crashes", "crashed while loading"), ("bad_major2", f"implements ABI 2.{ABI.split('.')[1]}"),
                        ("bad_no_symbol", "does not export plugsdk_plugin_init"),
                        ("bad_refuses", "refused this core"), ("bad_small_table", "needs at least"),
                        ("bad_null_functions", "has no error_destroy")]:
        line = next((l for l in out.splitlines() if l.strip().startswith(name)), "")
        assert "FAILED" in line and f"libplugsdk_{name}.so" in line and cause in line, out
    assert f"null         ABI {ABI}  0 device(s)" in out
