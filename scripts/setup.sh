#!/usr/bin/env bash
# Installs what taglane needs on a Debian/Ubuntu machine: system libraries for the window and the
# software (CPU) renderer used by the UI tests, and a Rust toolchain when none is present.
# Safe to run again: it only installs what is missing.
set -euo pipefail

packages=(
  pkg-config
  # The window (eframe/winit, glow on X11 or Wayland) and its OpenGL/EGL loader.
  libx11-6 libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon0 libxkbcommon-x11-0 libwayland-client0
  libegl1 libgl1 libglx-mesa0 libegl-mesa0 libgl1-mesa-dri
  # Rendering UI snapshots on the CPU (Mesa lavapipe) and screenshots of the real window (Xvfb).
  mesa-vulkan-drivers libvulkan1 xvfb x11-utils xdotool
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: installing Rust with rustup"
  command -v curl >/dev/null 2>&1 || { ${sudo:-} apt-get install -y -qq curl ca-certificates; }
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain 1.95.0 -c clippy,rustfmt
  . "$HOME/.cargo/env"
fi
