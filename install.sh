#!/usr/bin/env bash
# Installs everything mtk needs on a Debian machine: the Arm toolchain and QEMU from Debian,
# then mtk itself (editable) with its Python dependencies in a virtual environment, .venv in
# this checkout (PEP 668: Debian's python3 refuses `pip install` outside one). Run mtk as
# .venv/bin/mtk, or `source .venv/bin/activate` first. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

# libstdc++-arm-none-eabi-picolibc: C++ headers for bench/tflm_harness (TFLM is C++)
# ser2net: a labgrid exporter serves a board's serial port with it (tests/target/test_labgrid_lab.py runs one)
DEBIAN_PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm gcc make
                 python3 python3-venv ser2net libstdc++-arm-none-eabi-picolibc)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install.sh: apt-get install ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The distribution's Python by default (not whichever python3 comes first on PATH); PYTHON=... to choose.
PYTHON=${PYTHON:-/usr/bin/python3}
VENV=.venv
if ! "$VENV/bin/python" -c "" 2>/dev/null; then
  echo "install.sh: $PYTHON -m venv $VENV" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
echo "install.sh: $VENV/bin/pip install -e .[test]" >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
# The cycle model's QEMU plugin, built with the host gcc (mtk rebuilds it when its source changes).
echo "install.sh: building the cycle model's QEMU plugin" >&2
"$VENV/bin/python" -c "from mtk.cycles.plugin import ensure_plugin; print('install.sh:', ensure_plugin())" >&2
echo "install.sh: done ($("$VENV/bin/python" --version); $(arm-none-eabi-gcc --version | head -1);" \
     "$(qemu-system-arm --version | head -1)); run $VENV/bin/mtk" >&2
