#!/usr/bin/env bash
# Installs the Debian PHP packages zopt measures itself on, and prints the directories of
# their PHP code, one per line. The packages are php-parser, php-twig, composer and phpunit.
#   tools/debian-corpus.sh            # install (if needed) and list
#   zopt conformance $(tools/debian-corpus.sh)
set -euo pipefail
packages=(php-parser php-twig composer phpunit)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"; } >&2
fi
# The top-level directories under /usr/share/php that hold each package's .php files.
dpkg -L "${packages[@]}" | grep '\.php$' | awk -F/ 'NF > 5 { print "/" $2 "/" $3 "/" $4 "/" $5 }' | sort -u
