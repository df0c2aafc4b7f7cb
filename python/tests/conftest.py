"""The tests run on the build tree's package: $PLUGSDK_BUILD_DIR/python (default build/),
which the build assembles (the .py sources beside the _C extension)."""
import os
import pathlib
import sys

_root = pathlib.Path(__file__).resolve().parents[2]
_build = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", _root / "build"))
sys.path.insert(0, str(_build / "python"))

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _session_cache_dir(tmp_path_factory):
    """The persistent caches (the core's programs, the CPU plugin's kernels) in a directory of
    this test session, so that no test depends on what an earlier run left behind."""
    old = os.environ.get("PLUGSDK_CACHE_DIR")
    os.environ["PLUGSDK_CACHE_DIR"] = str(tmp_path_factory.mktemp("plugsdk-cache"))
    yield
    if old is None:
        del os.environ["PLUGSDK_CACHE_DIR"]
    else:
        os.environ["PLUGSDK_CACHE_DIR"] = old
