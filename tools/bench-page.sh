# The benchmark page of the opcode caches, shared by tools/bench-fpm.sh and
# tools/callgrind-hit.sh (source this file, then call bench_page).
#
#   bench_page WORK DIR...
#   bench_extension [SO]   prints SO, or the built extension; fails saying how to build it
#
# writes WORK/map.json (each class of the libraries under DIR... to its file, lowercased) and
# WORK/app/index.php: one page that loads every class of the map through an autoloader, i.e.
# several hundred scripts per request, and prints how many classes it declared and a digest
# of their names.
bench_page() {
    local work=$1
    shift
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    php -n "$root/crates/zopt/src/bench_driver.php" map "$work/map.json" "$@"
    mkdir -p "$work/app"
    cat > "$work/app/index.php" <<EOF
<?php
\$map = json_decode(file_get_contents('$work/map.json'), true);
spl_autoload_register(function (\$c) use (\$map) { \$k = strtolower(\$c); if (isset(\$map[\$k])) require_once \$map[\$k]; });
\$n = 0;
foreach (array_keys(\$map) as \$c) {
    try { if (class_exists(\$c) || interface_exists(\$c) || trait_exists(\$c)) \$n++; } catch (Throwable \$e) {}
}
\$names = array_merge(get_declared_classes(), get_declared_interfaces(), get_declared_traits());
sort(\$names);
\$page = "classes \$n digest " . md5(implode(',', \$names)) . "\n";
// A length, so that ab's HTTP/1.0 keep-alive connections stay open.
header('Content-Length: ' . strlen(\$page));
echo \$page;
EOF
}

bench_extension() {
    local ext=${1:-}
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    if [ -z "$ext" ]; then
        for cand in "${CARGO_TARGET_DIR:-$root/target}/release/libzopt_php.so" "$root/target/release/libzopt_php.so"; do
            [ -f "$cand" ] && ext=$cand && break
        done
    fi
    [ -n "$ext" ] && [ -f "$ext" ] || { echo "build the extension first: cargo build --release -p zopt-php (or -e SO)" >&2; return 2; }
    echo "$ext"
}
