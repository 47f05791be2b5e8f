#!/usr/bin/env bash
# Installs every Debian package mncc needs to build and test; installs
# nothing when all are present. Debian 12 (bookworm) packages only.
set -euo pipefail

packages=(
  # toolchain
  cmake ninja-build ccache g++ make python3
  # LLVM/MLIR 19: headers, libMLIR.so, libLLVM.so, mlir-tblgen, lit, FileCheck
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  # libraries
  libgtest-dev libgmock-dev nlohmann-json3-dev
  # dense linear algebra of the reference kernels (Eigen); OpenBLAS is
  # the host reference of the emulator's bench
  libeigen3-dev libopenblas-dev
  # ONNX: schemas, checker, shape inference, parser, version converter
  libonnx-dev libprotobuf-dev
  # the ONNX backend test data: the conformance suite
  libonnx-testdata
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "make deps: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "make deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
  --no-install-recommends "${missing[@]}"
