"""plugsdk: PyTorch 2 graphs compiled through pluggable device backends.

    import torch
    model = torch.compile(model, backend="plugsdk")            # the CPU backend
    model = torch.compile(model, backend="plugsdk", options={"device": "cpu", "fallback": False})

The backend is registered with Dynamo on import and through the `torch_dynamo_backends`
entry point (so backend="plugsdk" works without importing this package first).
"""
from __future__ import annotations

__version__ = "0.1.0"


class Explanation(list):
    """explain()'s result: one GraphReport per graph the backend compiled (ops, compiled and
    eager partitions, the ops that fell back and why, the compile time per stage, autotune
    times), plus `graph_breaks`: the graph breaks Dynamo reported ({reason: count})."""

    graph_breaks: dict


def explain() -> Explanation:
    """What the backend did with each graph so far (see Explanation)."""
    from .backend import reports
    out = Explanation(reports)
    try:
        from torch._dynamo.utils import counters
        out.graph_breaks = dict(counters["graph_break"])
    except ImportError:
        out.graph_breaks = {}
    return out


def cache_info():
    """The core's artifact-cache counters over every compiled graph: compiles, hits, misses
    (miss_reasons: the failed guard of each), fallbacks to eager, entries, compile time."""
    from .runtime import cache_info as info
    return info()


def reset_cache_info() -> None:
    """Starts cache_info()'s counts afresh: graphs compiled so far keep working (and keep
    their artifacts) but are no longer counted."""
    from .runtime import reset_cache_info as reset
    reset()


def _register() -> None:
    try:
        import torch._dynamo
        from torch._dynamo.backends.registry import _COMPILER_FNS
    except ImportError:  # torch without Dynamo: the package is still usable directly
        return
    if "plugsdk" in _COMPILER_FNS:
        return
    if _installed_entry_point():
        return  # torch registers it from the entry point (registering here too would clash)
    from .backend import plugsdk_backend
    torch._dynamo.register_backend(name="plugsdk")(plugsdk_backend)


def _installed_entry_point() -> bool:
    """True when an installed distribution declares backend "plugsdk" for this package."""
    try:
        from importlib.metadata import entry_points
        return any(ep.name == "plugsdk" and ep.value.startswith("plugsdk.")
                   for ep in entry_points(group="torch_dynamo_backends"))
    except Exception:  # noqa: BLE001 - broken metadata must not break the import
        return False


_register()
