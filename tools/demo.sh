#!/usr/bin/env bash
# `make demo`: the main job on the embedded default. torchvision resnet18 (random weights,
# batch 8, 224x224) compiled with torch.compile(backend="plugsdk") on the CPU backend
# (BACKEND=NAME picks another plugin), checked against eager torch, with eager / inductor /
# plugsdk run times and compile times (cold, and warm from the disk caches) side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tools/bench_models.py --models resnet18 --batch 8 --device "${BACKEND:-cpu}" "$@"
