# Sourced by the GPU machine's scripts: unpacks .gpu/cuda.tar.xz (made on the Debian 12 host
# by tools/pack_cuda_device.sh) into $G, copies only the libraries this machine lacks, and
# points the loader and the plugin search path at them.
OUT=${OUT:-/tmp/out}
G=/tmp/gc
mkdir -p "$OUT" "$G"
tar -C "$G" -xJf .gpu/cuda.tar.xz || exit 1
mkdir -p "$G/needed"
for f in "$G"/lib/*; do
  n=$(basename "$f")
  ldconfig -p | grep -q " $n " || cp "$f" "$G/needed/"
done
export LD_LIBRARY_PATH=$G/needed${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PLUGSDK_PLUGIN_PATH=$G/plugins
# cuDNN for prims.convolution: torch's wheel ships it (nvidia-cudnn); the CLI tools, which
# do not load torch, find it through the loader's path.
CUDNN_LIB=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null)
[ -n "$CUDNN_LIB" ] && [ -e "$CUDNN_LIB/libcudnn.so.9" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CUDNN_LIB
