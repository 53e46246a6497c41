#!/usr/bin/env bash
# The main job on a fresh machine: install PHP 8.2, build zopt and its extension, and
# measure conformance of our dumps with PHP's on the bundled fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v php8.2 >/dev/null || ! command -v php-config >/dev/null || ! dpkg -s libclang-dev >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq php8.2-cli php8.2-opcache php8.2-dev libclang-dev clang >/dev/null
fi
cargo build --release -p zopt -p zopt-php
exec target/release/zopt conformance --levels before,after "$@" fixtures/php
