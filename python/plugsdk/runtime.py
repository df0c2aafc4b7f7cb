"""Devices and compiled graphs: torch tensors in, torch tensors out, no copies where the
backend can use the tensors' memory in place (buffer_import, ABI 1.1)."""
from __future__ import annotations

import os
import pathlib
import threading
from typing import Dict, List, Optional, Tuple

import torch

from .fx_import import DTYPES, TORCH_DTYPES, Imported

_devices: Dict[Tuple[str, int, str], object] = {}
_devices_lock = threading.Lock()


def _C():
    from . import _C as c  # the extension: imported on first use, so fx_import works without it
    return c


def plugin_search_path() -> List[str]:
    """The package's own plugins (an installed wheel), then the build tree's."""
    here = pathlib.Path(__file__).resolve().parent
    path = [str(here / "plugins")]
    build = getattr(_C(), "BUILD_PLUGIN_DIR", "")
    if build:
        path.append(build)
    return path


def device(name: str = "cpu", index: int = 0, options: str = ""):
    """The open device for (plugin name, index, client options), opened once per process."""
    key = (name, index, options)
    with _devices_lock:
        d = _devices.get(key)
        if d is None:
            probe = os.environ.get("PLUGSDK_PROBE", "1") != "0"
            d = _C().open_device(name, index, options, plugin_search_path(), probe)
            _devices[key] = d
        return d


def _memory_kind(t: torch.Tensor) -> int:
    return _C().MEMORY_HOST if t.device.type == "cpu" else _C().MEMORY_DEVICE


def _tensor_tuple(t: torch.Tensor):
    if t.dtype not in DTYPES:
        raise TypeError(f"plugsdk: tensors of dtype {t.dtype} are not supported")
    return (t.data_ptr(), DTYPES[t.dtype], list(t.shape), list(t.stride()), _memory_kind(t))


class CompiledGraph:
    """A graph compiled for one device. Called with the FX graph's flat arguments (tensors
    and SymInt sizes); returns its outputs as a list of tensors."""

    def __init__(self, imported: Imported, program, out_device: torch.device):
        self.imported = imported
        self.program = program
        self.out_device = out_device
        self.out_dtypes = [TORCH_DTYPES[d] for d in program.output_dtypes()]
        self.imported_count = 0
        self.copied_count = 0

    def __call__(self, *args) -> List[torch.Tensor]:
        ins = [args[i] for i in self.imported.tensor_inputs]
        shapes = self.program.output_shapes([(DTYPES[t.dtype], list(t.shape)) for t in ins])
        outs = [torch.empty(s, dtype=dt, device=self.out_device) for s, dt in zip(shapes, self.out_dtypes)]
        imported, copied = self.program.run([_tensor_tuple(t) for t in ins], [_tensor_tuple(t) for t in outs])
        self.imported_count += imported
        self.copied_count += copied
        result = []
        for kind, i in self.imported.outputs:
            result.append(outs[i] if kind == "program" else args[i])
        return result


def compile_imported(imported: Imported, dev, dump_dir: str = "", out_device: Optional[torch.device] = None):
    program = _C().compile(dev, imported.text, dump_dir)
    return CompiledGraph(imported, program, out_device or torch.device("cpu"))


def stage_seconds(compiled: CompiledGraph) -> Dict[str, float]:
    return dict(compiled.program.stage_seconds)

