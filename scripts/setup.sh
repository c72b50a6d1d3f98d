#!/usr/bin/env bash
# Installs the Debian 12 packages ClothLab builds and tests with. Needs root or sudo.
# Usage: scripts/setup.sh            (build + test dependencies)
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libeigen3-dev               # Eigen 3.4: dense/sparse linear algebra
  libsuitesparse-dev          # CHOLMOD 5.12 (with METIS) for the per-step factorization
  libopenblas0-serial         # OpenBLAS (serial build) as the BLAS CHOLMOD runs on (not netlib)
  libtinyobjloader-dev        # OBJ loading
  nlohmann-json3-dev          # scene files, stats, CLI JSON output
  libcli11-dev                # command-line parsing
  libgtest-dev                # unit and scenario tests
  # viewer
  libglfw3-dev                # GLFW 3.3 window and input
  python3-glad                # generates the OpenGL 3.3 core loader at build time (offline)
  libimgui-dev                # Dear ImGui 1.86 (+ its GLFW/OpenGL3 back-end sources)
  libglm-dev                  # camera and transform maths
  libstb-dev                  # stb_image_write for screenshots
  libgl1-mesa-dri libegl-mesa0 libegl-dev  # Mesa (llvmpipe when there is no GPU), EGL for X-less tests
  # GUI tests: a real X server and real input
  xvfb xauth xdotool imagemagick
)
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
