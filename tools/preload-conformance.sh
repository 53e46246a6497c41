#!/usr/bin/env bash
# preload-conformance.sh DIR... - zopt's optimizer on OPcache's preloaded script, against PHP's.
#
# Preloads every .php file under the DIRs (`opcache.preload`, `opcache_compile_file()` on
# each, tests and fixtures left out), which gives the optimizer one script of linked classes
# (see README, "Real PHP runs our output"). The script is recorded as OPcache hands it to
# the optimizer at level 0 (`zopt.mode=record`), optimized by `zopt opt`, and every op_array
# of zopt's output must appear in PHP's own "after optimizer" dump of the same preload.
# Prints the counts; exits 1 on any difference, or when nothing was compared.
#   ZOPT_LEVEL (default 0x7FFEBFFF), ZOPT (default target/release/zopt),
#   ZOPT_PHP_EXTENSION (default libzopt_php.so beside it). Uses PHP's php.ini, as preloading
#   production code does.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: tools/preload-conformance.sh DIR..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
level=${ZOPT_LEVEL:-0x7FFEBFFF}
zopt=${ZOPT:-$here/../target/release/zopt}
ext=${ZOPT_PHP_EXTENSION:-$(dirname "$zopt")/libzopt_php.so}
dirs=()
for d in "$@"; do
    [ -d "$d" ] || { echo "preload-conformance: no directory $d" >&2; exit 2; }
    dirs+=("$(cd "$d" && pwd)")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/preload.php" <<'PHP'
<?php
foreach (explode(PATH_SEPARATOR, getenv('ZOPT_PRELOAD_DIRS')) as $dir) {
    $files = [];
    $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS));
    foreach ($it as $f) {
        $p = $f->getPathname();
        if (str_ends_with($p, '.php') && !preg_match('#/(Tests?|Fixtures)/#', $p)) {
            $files[] = $p;
        }
    }
    sort($files);
    foreach ($files as $f) {
        @opcache_compile_file($f);
    }
}
PHP
echo '<?php' > "$work/noop.php"
export ZOPT_PRELOAD_DIRS
ZOPT_PRELOAD_DIRS=$(IFS=:; echo "${dirs[*]}")
preload=(-d opcache.enable_cli=1 -d "opcache.preload=$work/preload.php"
         -d "opcache.preload_user=$(id -un)" -d memory_limit=2G)
# `$PRELOAD$` has no directory: its recording goes under the working directory's.
cd "$work"
php -d "extension=$ext" "${preload[@]}" -d opcache.optimization_level=0 \
    -d zopt.mode=record -d "zopt.record_dir=$work/rec" noop.php > record.out 2>&1 || true
php "${preload[@]}" -d "opcache.optimization_level=$level" -d opcache.opt_debug_level=0x20000 \
    noop.php > php.txt 2>&1 || true
recording="$work/rec$work/\$PRELOAD\$.zop"
if [ ! -f "$recording" ]; then
    echo "preload-conformance: PHP preloaded nothing (no \$PRELOAD\$ recording):" >&2
    head -20 record.out >&2
    exit 1
fi
# Identity is judged with PHP 8.2's optimizer bugs reproduced (as `zopt conformance` does);
# zopt's own output, correct there, is counted apart.
"$zopt" opt --php-ini default --php-bugs all --optimization-level "$level" "$recording" > ours.txt
"$zopt" opt --php-ini default --optimization-level "$level" "$recording" > correct.txt
php -n -r '
    $listings = fn ($f) => array_values(array_filter(array_map(fn ($b) => trim($b, "\n"),
        explode("\n\n", file_get_contents($f))), "strlen"));
    // The preloaded script'"'"'s own empty main says nothing about what was preloaded.
    $mine = fn ($f) => array_values(array_filter($listings($f),
        fn ($l) => !str_contains($l, "; \$PRELOAD\$:0-0")));
    $php = $listings($argv[3]);
    $known = array_count_values($php);
    // PHP may print the next script'"'"'s dump right after the last listing.
    $in_php = function ($l) use ($known, $php) {
        if (isset($known[$l])) return true;
        foreach ($php as $p) {
            if (str_starts_with($p, $l . "\n")) return true;
        }
        return false;
    };
    $ours = $mine($argv[1]);
    $differ = array_values(array_filter($ours, fn ($l) => !$in_php($l)));
    $bugs = count(array_filter($mine($argv[2]), fn ($l) => !$in_php($l)));
    printf("%d op_arrays of the preloaded script, %d identical to PHP'"'"'s dump (%d of them"
        . " only with PHP 8.2'"'"'s optimizer bugs reproduced; zopt is correct there)\n",
        count($ours), count($ours) - count($differ), $bugs);
    foreach (array_slice($differ, 0, 5) as $l) echo "\ndiffers:\n$l\n";
    exit(!$ours || $differ ? 1 : 0);
' ours.txt correct.txt php.txt
