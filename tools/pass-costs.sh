#!/usr/bin/env bash
# What each pass costs PHP's optimizer and zopt's, counted in instructions (callgrind): the
# whole optimizer at LEVEL, then LEVEL without one PASS_N bit at a time; a pass costs the
# difference. PHP compiles the PHP files of DIR... in one process (opcache_compile_file,
# counted inside zend_optimize_script); zopt optimizes the recordings of the same files
# (optimize_loop, counted inside optimize_script_in). Both sides get the same toggles, so the
# ratio says where zopt is slower than PHP and by how much. The differences are approximate:
# a pass that others stand on (PASS_6, the DFA pass) takes their cost with it (SCCP, DCE),
# and a pass's changes make later passes cheaper or dearer. Instruction counts do not depend
# on the machine's load.
#
#   tools/pass-costs.sh [-l LEVEL] [-r RECORDINGS] [DIR...]
#
# LEVEL defaults to 0x7FFEBFFF (PHP's default), DIR... to the Debian corpus
# (tools/debian-corpus.sh), RECORDINGS to bench-data/recordings (tools/record-corpus.sh
# records the corpus there). About 80 s of callgrind per level on both sides; a level whose
# run counts nothing, or files PHP did not compile, fail the script.
set -euo pipefail

level=0x7FFEBFFF
recordings=""
while getopts "l:r:" opt; do
    case $opt in
        l) level=$OPTARG ;;
        r) recordings=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))

root=$(cd "$(dirname "$0")/.." && pwd)
recordings=${recordings:-$root/bench-data/recordings}
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
    mapfile -t dirs < <("$root/tools/debian-corpus.sh")
fi
command -v valgrind >/dev/null || { echo "pass-costs: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
zops=$(find "$recordings" -name '*.zop' 2>/dev/null | wc -l)
[ "$zops" -gt 0 ] || { echo "pass-costs: no recordings under $recordings (tools/record-corpus.sh)" >&2; exit 2; }

(cd "$root" && cargo build --release -q -p zend-optimizer --example optimize_loop)
loop=$root/target/release/examples/optimize_loop

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find "${dirs[@]}" -name '*.php' | sort > "$work/files"
[ -s "$work/files" ] || { echo "pass-costs: no .php files under ${dirs[*]}" >&2; exit 2; }
cat > "$work/compile.php" <<'PHP'
<?php
$ok = 0;
foreach (file($argv[1], FILE_IGNORE_NEW_LINES) as $f) {
    if (@opcache_compile_file($f)) {
        $ok++;
    }
}
echo "$ok\n";
PHP
files=$(wc -l < "$work/files")

# instructions LEVEL: "PHP ZOPT", instructions inside each optimizer at LEVEL.
instructions() {
    local l=$1 php zopt compiled
    compiled=$(valgrind --tool=callgrind --callgrind-out-file="$work/php.out" \
        --toggle-collect=zend_optimize_script \
        php -n -d zend_extension=opcache.so -d opcache.enable_cli=1 -d opcache.jit=0 \
        -d opcache.file_update_protection=0 -d opcache.memory_consumption=512 \
        -d opcache.max_accelerated_files=100000 -d opcache.optimization_level="$l" \
        "$work/compile.php" "$work/files" 2>"$work/php.err")
    if [ "$compiled" != "$files" ]; then
        echo "pass-costs: PHP compiled ${compiled:-0} of $files files at level $l" >&2
        exit 1
    fi
    php=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/php.err")
    valgrind --tool=callgrind --callgrind-out-file="$work/zopt.out" \
        --toggle-collect='zend_optimizer::script::optimize_script_in' \
        "$loop" "$recordings" 1 "$l" >/dev/null 2>"$work/zopt.err"
    zopt=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/zopt.err")
    if [ -z "$php" ] || [ -z "$zopt" ] || { [ "$php" -eq 0 ] && [ "$l" != 0 ]; } || [ "$zopt" -eq 0 ]; then
        echo "pass-costs: nothing counted at level $l (PHP ${php:-none}, zopt ${zopt:-none})" >&2
        exit 1
    fi
    echo "$php $zopt"
}

echo "PHP: $files files; zopt: $zops recordings; level $level (instructions, millions)"
counts=$(instructions "$level")
read -r php_all zopt_all <<< "$counts"
printf '%-10s %10s %10s %7s\n' "pass" "PHP" "zopt" "ratio"
row() {
    awk -v n="$1" -v p="$2" -v z="$3" 'BEGIN {
        # A ratio only where both sides cost something (a pass that removes work, or one
        # the level does not change, has none).
        r = (p >= 1e5 && z >= 1e5) ? sprintf("%.2fx", z / p) : "-";
        printf "%-10s %10.1f %10.1f %7s\n", n, p / 1e6, z / 1e6, r }'
}
row "all" "$php_all" "$zopt_all"
for n in $(seq 1 16); do
    bit=$((1 << (n - 1)))
    [ $((level & bit)) -ne 0 ] || continue
    counts=$(instructions "$(printf '0x%X' $((level & ~bit)))")
    read -r php_without zopt_without <<< "$counts"
    row "pass$n" $((php_all - php_without)) $((zopt_all - zopt_without))
done
counts=$(instructions 0)
read -r php_none zopt_none <<< "$counts"
row "level 0" "$php_none" "$zopt_none"
