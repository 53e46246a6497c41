#!/usr/bin/env bash
# preload-conformance.sh [--each] DIR... - zopt's optimizer on OPcache's preloaded script,
# against PHP's.
#
# Preloads every .php file under the DIRs (`opcache.preload`, `opcache_compile_file()` on
# each; tests, fixtures and php-src's stubs left out), which gives the optimizer one script
# of linked classes (see README, "Real PHP runs our output"). The script is recorded as
# OPcache hands it to the optimizer at level 0 (`zopt.mode=record`), optimized by `zopt opt`,
# and every op_array of zopt's output must appear in PHP's own "after optimizer" dump of the
# same preload. As `zopt conformance`, the comparison reproduces PHP 8.2's optimizer bugs;
# the op_arrays where zopt's correct output differs are counted apart.
# With --each, every file is preloaded on its own (files that redeclare each other's
# functions, as PHP's own tests do).
# Prints the counts; exits 1 on any difference, or when nothing was compared.
#   ZOPT_LEVEL (default 0x7FFEBFFF), ZOPT (default target/release/zopt),
#   ZOPT_PHP_EXTENSION (default libzopt_php.so beside it). Uses PHP's php.ini, as preloading
#   production code does.
set -euo pipefail
each=""
if [ "${1:-}" = --each ]; then
    each=1
    shift
fi
[ $# -gt 0 ] || { echo "usage: tools/preload-conformance.sh [--each] DIR..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
level=${ZOPT_LEVEL:-0x7FFEBFFF}
zopt=$(realpath "${ZOPT:-$here/../target/release/zopt}")
ext=$(realpath "${ZOPT_PHP_EXTENSION:-$(dirname "$zopt")/libzopt_php.so}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for d in "$@"; do
    [ -d "$d" ] || { echo "preload-conformance: no directory $d" >&2; exit 2; }
    find "$(cd "$d" && pwd)" -name '*.php' ! -name '*.stub.php' | grep -Ev '/(Tests?|Fixtures)/' || true
done | sort > "$work/files"
cat > "$work/preload.php" <<'PHP'
<?php
foreach (file(getenv('ZOPT_PRELOAD_LIST'), FILE_IGNORE_NEW_LINES) as $f) {
    @opcache_compile_file($f);
}
PHP
echo '<?php' > "$work/noop.php"
cat > "$work/compare.php" <<'PHP'
<?php
// compare.php OURS CORRECT PHP: "listings identical zopt-correct", then the first differences.
$listings = fn ($f) => array_values(array_filter(array_map(fn ($b) => trim($b, "\n"),
    explode("\n\n", file_get_contents($f))), 'strlen'));
// The preloaded script's own empty main says nothing about what was preloaded.
$mine = fn ($f) => array_values(array_filter($listings($f),
    fn ($l) => !str_contains($l, '; $PRELOAD$:0-0')));
$php = $listings($argv[3]);
$known = array_count_values($php);
// PHP may print the next script's dump right after the last listing.
$in_php = function ($l) use ($known, $php) {
    if (isset($known[$l])) {
        return true;
    }
    foreach ($php as $p) {
        if (str_starts_with($p, $l . "\n")) {
            return true;
        }
    }
    return false;
};
$ours = $mine($argv[1]);
$differ = array_values(array_filter($ours, fn ($l) => !$in_php($l)));
$correct = count(array_filter($mine($argv[2]), fn ($l) => !$in_php($l)));
printf("%d %d %d\n", count($ours), count($ours) - count($differ), $correct);
foreach (array_slice($differ, 0, 3) as $l) {
    fwrite(STDERR, "\ndiffers:\n$l\n");
}
PHP
export ZOPT_PRELOAD_LIST
cd "$work"
# One preload of the files listed in $1; prints "listings identical zopt-correct".
compare() {
    ZOPT_PRELOAD_LIST=$1
    local preload=(-d opcache.enable_cli=1 -d "opcache.preload=$work/preload.php"
                   -d "opcache.preload_user=$(id -un)" -d memory_limit=2G)
    rm -rf rec
    # `$PRELOAD$` has no directory: its recording goes under the working directory's.
    php -d "extension=$ext" "${preload[@]}" -d opcache.optimization_level=0 \
        -d zopt.mode=record -d zopt.record_dir=rec noop.php > record.out 2>&1 || true
    local recording="rec$work/\$PRELOAD\$.zop"
    if [ ! -f "$recording" ]; then
        [ -n "$each" ] || { echo "preload-conformance: PHP preloaded nothing:" >&2; head -5 record.out >&2; }
        echo "0 0 0"
        return
    fi
    php "${preload[@]}" -d "opcache.optimization_level=$level" -d opcache.opt_debug_level=0x20000 \
        noop.php > php.txt 2>&1 || true
    "$zopt" opt --php-ini default --php-bugs all --optimization-level "$level" "$recording" > ours.txt
    "$zopt" opt --php-ini default --optimization-level "$level" "$recording" > correct.txt
    php -n compare.php ours.txt correct.txt php.txt
}
total=0 same=0 correct=0
if [ -n "$each" ]; then
    while read -r f; do
        echo "$f" > one
        read -r n s c < <(compare "$work/one")
        total=$((total + n)) same=$((same + s)) correct=$((correct + c))
        [ "$n" = "$s" ] || echo "  differs: $f" >&2
    done < files
else
    read -r total same correct < <(compare "$work/files")
fi
echo "$total op_arrays preloaded, $same identical to PHP's dump ($correct of them only with" \
     "PHP 8.2's optimizer bugs reproduced; zopt is correct there)"
[ "$total" -gt 0 ] && [ "$total" = "$same" ]
