#!/usr/bin/env bash
# valgrind-writeback.sh - memory check of the zopt write-back under valgrind.
#
# Usage: tools/valgrind-writeback.sh [-e EXTENSION] [PHP_FILE ...]
#
# Runs each program with USE_ZEND_ALLOC=0 (PHP's allocator becomes malloc, so valgrind sees
# every emalloc/efree) under memcheck, in zopt.mode=roundtrip (with zopt.verify=1) and
# zopt.mode=optimize and as the opcode cache (zopt.cache_dir, warm), and also composer and
# phpunit from fixtures/projects, including a run
# with a tiny OPcache (opcache.memory_consumption=8), and a run
# compiling more scripts than opcache.max_accelerated_files holds (the rest is never
# persisted: free_persistent_script destroys our op_arrays). Every run must report no more
# valgrind errors and no more bytes definitely/indirectly/possibly lost than the same run
# with zopt.mode=off (PHP itself is not always clean: closures in cycles at shutdown, some
# default extensions). Without PHP_FILE arguments: every fixtures/php/exec_*.php.
#
# Environment: PHP (default php). Takes minutes: valgrind is ~30x slower.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PHP=${PHP:-php}
EXT="$ROOT/target/debug/libzopt_php.so"
while getopts "e:h" opt; do
    case $opt in
        e) EXT=$OPTARG ;;
        h) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)" >&2; exit 2; }
[[ -f $EXT ]] || { echo "no extension at $EXT (cargo build -p zopt-php)" >&2; exit 2; }

if [[ $# -gt 0 ]]; then
    FILES=("$@")
else
    mapfile -t FILES < <(ls "$ROOT"/fixtures/php/exec_*.php)
fi

failures=0
runs=0
# vg LOG DIR PHP-ARGS... : one valgrind run; prints "ERRORS LOST_BYTES".
vg() {
    local log=$1 dir=$2
    shift 2
    (cd "$dir" && USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 valgrind --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible --log-file="$log" \
        "$PHP" -d opcache.enable_cli=1 -d opcache.jit=0 -d opcache.file_update_protection=0 \
        -d pcre.jit=0 -d "extension=$EXT" "$@" >/dev/null 2>&1 </dev/null)
    local errors lost
    errors=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | grep -o '[0-9]*$')
    lost=$(grep -E 'definitely lost|indirectly lost|possibly lost' "$log" | grep -o 'lost: [0-9,]* bytes' | tr -d ',' | awk '{s += $2} END {print s + 0}')
    echo "${errors:-?} $lost"
}
# check LABEL DIR MODE PHP-ARGS... : the run in zopt.mode=MODE must report no more errors
# and no more lost bytes than the same run with zopt.mode=off (PHP itself is not always
# valgrind-clean: default extensions, cycles left at shutdown).
check() {
    local label=$1 dir=$2 mode=$3
    shift 3
    local log base zopt
    log=$(mktemp)
    base=$(vg "$log.off" "$dir" -d zopt.mode=off "$@")
    zopt=$(vg "$log" "$dir" -d "zopt.mode=$mode" -d zopt.verify=1 "$@")
    judge "$label" "$log" "$base" "$zopt" "without zopt"
}
# judge LABEL LOG BASE ZOPT WHAT : the zopt run (valgrind log LOG) must report no more errors
# and lost bytes than the base run (LOG.off), which is described as WHAT.
judge() {
    local label=$1 log=$2 what=$5 be bl ze zl
    runs=$((runs + 1))
    read -r be bl <<<"$3"
    read -r ze zl <<<"$4"
    if [[ $ze == "?" || $be == "?" || $ze -gt $be || $zl -gt $bl ]]; then
        failures=$((failures + 1))
        echo "FAIL $label: $ze errors, $zl bytes lost; $what: $be errors, $bl bytes lost (logs: $log, $log.off)"
    else
        echo "ok   $label: $ze errors, $zl bytes lost ($what: $be, $bl)"
        rm -f "$log" "$log.off"
    fi
}

# check_cache LABEL DIR PHP-ARGS... : zopt as the opcode cache (OPcache off, zopt.cache_dir):
# the cache is filled by a run outside valgrind, then the warm run (every script built from
# the cache) must report no more errors and lost bytes than the same run compiling.
check_cache() {
    local label=$1 dir=$2
    shift 2
    local log base zopt cache
    log=$(mktemp)
    cache=$(mktemp -d)
    (cd "$dir" && "$PHP" -d opcache.enable_cli=0 -d "extension=$EXT" -d "zopt.cache_dir=$cache" "$@" \
        >/dev/null 2>&1 </dev/null)
    base=$(vg "$log.off" "$dir" -d opcache.enable_cli=0 "$@")
    zopt=$(vg "$log" "$dir" -d opcache.enable_cli=0 -d "zopt.cache_dir=$cache" -d zopt.verify=1 "$@")
    rm -rf "$cache"
    judge "$label" "$log" "$base" "$zopt" "compiling"
}

for f in "${FILES[@]}"; do
    f=$(realpath "$f")
    check_cache "$(basename "$f") [cache]" "$(dirname "$f")" -n -d zend_extension=opcache "$f"
    for mode in roundtrip optimize; do
        check "$(basename "$f") [$mode]" "$(dirname "$f")" "$mode" -n -d zend_extension=opcache \
            -d opcache.optimization_level=0 "$f"
    done
done

export COMPOSER_HOME=$(mktemp -d) COMPOSER_DISABLE_NETWORK=1
SAMPLE="$ROOT/fixtures/projects/sample"
SUITE="$ROOT/fixtures/projects/phpunit-suite"
check "composer validate [roundtrip]" "$SAMPLE" roundtrip -d opcache.optimization_level=0 /usr/bin/composer validate
check "composer show [optimize]" "$SAMPLE" optimize -d opcache.optimization_level=0 /usr/bin/composer show
check "composer show [roundtrip, 8 MB OPcache]" "$SAMPLE" roundtrip \
    -d opcache.memory_consumption=8 -d opcache.interned_strings_buffer=1 -d opcache.optimization_level=0 \
    /usr/bin/composer show
MANY=$(mktemp --suffix=.php)
cat >"$MANY" <<'PHP'
<?php
$files = [];
foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator('/usr/share/php/Composer')) as $f) {
    if (substr($f, -4) === '.php') {
        $files[] = (string) $f;
    }
}
sort($files);
$n = 0;
foreach (array_slice($files, 0, 240) as $f) {
    $n += (int) @opcache_compile_file($f);
}
$s = opcache_get_status(false);
echo $n, ' compiled, ', $s['opcache_statistics']['num_cached_scripts'], " cached\n";
PHP
check "240 composer scripts, 223 cached [roundtrip]" /tmp roundtrip -d opcache.max_accelerated_files=200 \
    -d opcache.optimization_level=0 "$MANY"
rm -f "$MANY"
check_cache "composer show [cache]" "$SAMPLE" /usr/bin/composer show
check "phpunit [roundtrip]" "$SUITE" roundtrip -d opcache.optimization_level=0 /usr/bin/phpunit
check_cache "phpunit [cache]" "$SUITE" /usr/bin/phpunit
check "phpunit [roundtrip over OPcache's optimizer]" "$SUITE" roundtrip -d opcache.optimization_level=0x7FFEBFFF /usr/bin/phpunit
rm -rf "$COMPOSER_HOME"

echo "valgrind: $runs runs, $failures with errors or leaks"
[[ $failures -eq 0 ]]
