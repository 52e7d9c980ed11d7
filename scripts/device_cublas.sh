# Sourced by the CUDA device scripts (device_cuda_run.sh, device_cuda_check.sh) after device_setup.sh:
# cuBLAS is loaded at run time, and where the loader's path lacks it (a device image whose CUDA came with a
# PyTorch wheel) NOVA_CUBLAS names the toolkit's or a wheel's copy (docs/cuda.md, "Build").
if ! build/nova cuda info | grep -q "cuBLAS: loads"; then
  lib=$(find /usr/local /opt /usr/lib -name 'libcublas.so.13*' 2>/dev/null | sort | head -1)
  [ -n "$lib" ] && export NOVA_CUBLAS=$lib
fi
