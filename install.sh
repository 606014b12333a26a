#!/usr/bin/env bash
# Installs everything mtk needs on a Debian machine: the Arm toolchain and QEMU from Debian,
# mtk itself (editable) with its Python dependencies. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

DEBIAN_PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm gcc make)

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

PYTHON=${PYTHON:-python3}
echo "install.sh: pip install -e .[test]" >&2
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".[test]"
echo "install.sh: done ($(arm-none-eabi-gcc --version | head -1); $(qemu-system-arm --version | head -1))" >&2
