#!/usr/bin/env bash
# Installs what building Strata needs on Debian/Ubuntu, skipping what is already there.
# CUDA is optional: with nvcc in /usr/local/cuda (or on the PATH) the CUDA backend is built too.
# Usage: scripts/setup.sh [PACKAGE...] (more packages, for what needs them: the fuzz targets' clang)
set -euo pipefail

# The Python module's: the system's interpreter, its headers, pybind11, DLPack, NumPy and pytest;
# MPI for runs over ranks; parallel HDF5 for the checkpoints every rank writes at once (h5py: the
# tests read them as a user would).
packages=(cmake ninja-build g++ libgtest-dev libcli11-dev nlohmann-json3-dev libpng-dev
          python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest
          libopenmpi-dev openmpi-bin libhdf5-openmpi-dev python3-h5py "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
