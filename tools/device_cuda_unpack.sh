# Sourced by the GPU machine's scripts: unpacks .gpu/cuda.tar.xz (made on the Debian 12 host
# by tools/pack_cuda_device.sh) into $G, copies only the libraries this machine lacks, and
# points the loader and the plugin search path at them.
OUT=${OUT:-/tmp/out}
G=/tmp/gc
mkdir -p "$OUT" "$G"
# Unpacked once per pack: extracting again would overwrite libraries that processes started
# from an earlier unpack (a shell that sourced this file) have mapped, which kills them with
# SIGSEGV (seen: a script run after `source device_cuda_unpack.sh` in the same command).
sum=$(md5sum < .gpu/cuda.tar.xz)
if [ "$(cat "$G/.unpacked" 2>/dev/null)" != "$sum" ]; then
  tar -C "$G" -xJf .gpu/cuda.tar.xz || exit 1
  mkdir -p "$G/needed"
  for f in "$G"/lib/*; do
    n=$(basename "$f")
    ldconfig -p | grep -q " $n " || cp "$f" "$G/needed/"
  done
  echo "$sum" > "$G/.unpacked"
fi
export LD_LIBRARY_PATH=$G/needed${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PLUGSDK_PLUGIN_PATH=$G/plugins
# cuDNN for prims.convolution: torch's wheel ships it (nvidia-cudnn); the CLI tools, which
# do not load torch, find it through the loader's path.
CUDNN_LIB=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null)
[ -n "$CUDNN_LIB" ] && [ -e "$CUDNN_LIB/libcudnn.so.9" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CUDNN_LIB
