#!/usr/bin/env bash
# php-tests.sh OUT_DIR [DIR ...] - PHP 8.2's own tests as PHP files, for `zopt conformance`
# and `zopt exec-diff`.
#
# Downloads Debian's php8.2 source package (`apt-get source`, adding Debian's deb-src
# entry for bookworm when apt has none: needs root) into OUT_DIR/source, and extracts the
# code of every .phpt test under each DIR (default: ext/opcache/tests Zend/tests tests/lang
# tests/classes) into OUT_DIR/tests/DIR with tools/phpt-extract.php. Prints OUT_DIR/tests.
# A DIR already extracted there is kept; the source is downloaded and unpacked once.
set -euo pipefail

out=${1:?usage: tools/php-tests.sh OUT_DIR [DIR ...]}
shift
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(ext/opcache/tests Zend/tests tests/lang tests/classes)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

missing=()
for dir in "${dirs[@]}"; do
    [ -d "$out/tests/$dir" ] || missing+=("$dir")
done
if [ ${#missing[@]} -gt 0 ]; then
    mkdir -p "$out/source"
    cd "$out/source"
    if [ ! -d php-src ]; then
        if ! ls php8.2_*.orig.tar.* >/dev/null 2>&1; then
            if ! apt-get source --download-only php8.2 >/dev/null 2>&1; then
                if [ "$(id -u)" != 0 ]; then
                    echo "php-tests.sh: apt has no source for php8.2; as root, this script adds Debian's deb-src entry" >&2
                    exit 1
                fi
                cat > /etc/apt/sources.list.d/zopt-php-source.sources <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
                apt-get update -qq
                apt-get source --download-only php8.2 >/dev/null
            fi
        fi
        tarball=$(ls php8.2_*.orig.tar.* | head -n 1)
        rm -rf php-src.partial && mkdir php-src.partial
        tar xf "$tarball" -C php-src.partial --strip-components=1
        mv php-src.partial php-src
    fi
    rm -rf "$out/tests.partial"
    php "$here/phpt-extract.php" php-src "$out/tests.partial" "${missing[@]}" >&2
    for dir in "${missing[@]}"; do
        mkdir -p "$(dirname "$out/tests/$dir")"
        mv "$out/tests.partial/$dir" "$out/tests/$dir"
    done
    rm -rf "$out/tests.partial"
fi
echo "$out/tests"
