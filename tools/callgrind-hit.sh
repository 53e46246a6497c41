#!/usr/bin/env bash
# The hit path of the opcode caches, counted in instructions: the page of tools/bench-fpm.sh
# (every class of the libraries under DIR..., default Debian's php-parser and Twig, loaded
# through an autoloader: ~420 scripts a request) run N times in one php-cgi process under
# callgrind, for OPcache and for zopt's shared memory with the settings of bench-fpm.sh's
# `opcache` and `zopt` modes. A request's steady-state cost is the difference between the
# counts of `php-cgi -T HI` and `php-cgi -T LO`, divided by HI - LO: start-up, the first
# request's compiles and stores and shutdown cancel out. Instruction counts do not depend on
# the machine's load.
#
#   tools/callgrind-hit.sh [-e EXTENSION.so] [-l LO] [-h HI] [-m "MODE..."] [-k DIR] [DIR...]
#
# -m picks the modes (default "opcache zopt"); -k keeps the callgrind files and the per
# function differences in DIR. Every run's output must be the page of PHP without an opcode
# cache, HI or LO times: a run that prints anything else (an error, a wrong page) fails the
# script. Prints instructions per request for each mode, zopt's ratio to OPcache, and the
# functions of libzopt_php.so (self cost per request, from the difference of the two runs).
set -euo pipefail

lo=20
hi=120
ext=""
keep=""
modes=(opcache zopt)
while getopts "e:l:h:m:k:" opt; do
    case $opt in
        e) ext=$OPTARG ;;
        l) lo=$OPTARG ;;
        h) hi=$OPTARG ;;
        m) read -r -a modes <<< "$OPTARG" ;;
        k) keep=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(/usr/share/php/PhpParser /usr/share/php/Twig)
[ "$hi" -gt "$lo" ] || { echo "-h must be above -l" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/bench-page.sh
. "$root/tools/bench-page.sh"
ext=$(bench_extension "$ext") || exit 2
CGI=/usr/bin/php-cgi8.2
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null && [ -x $CGI ] \
    || { echo "needs php8.2-cgi and valgrind (apt-get install php8.2-cgi valgrind)" >&2; exit 2; }

work=$(mktemp -d /tmp/zopt-callgrind-hit.XXXXXX)
trap 'rm -rf "$work"' EXIT
bench_page "$work" "${dirs[@]}"
page=$work/app/index.php

# The reference: PHP without an opcode cache, one request.
$CGI -n -q "$page" > "$work/reference" 2> "$work/reference.err"
grep -q '^classes [1-9][0-9]* digest ' "$work/reference" \
    || { echo "the reference page is not a page: $(cat "$work/reference" "$work/reference.err")" >&2; exit 1; }

settings() { # MODE: php-cgi's -d settings, those of bench-fpm.sh's mode
    case $1 in
        opcache) echo "-d zend_extension=opcache -d opcache.enable=1 -d opcache.memory_consumption=128
            -d opcache.interned_strings_buffer=16 -d opcache.max_accelerated_files=10000" ;;
        zopt) echo "-d extension=$ext -d zopt.memory_consumption=128 -d zopt.interned_strings_buffer=16" ;;
        *) echo "unknown mode $1" >&2; exit 2 ;;
    esac
}

run() { # MODE N: callgrind of N requests; prints the total instruction count
    local mode=$1 n=$2 out=$work/cg.$1.$2
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        $CGI -n -d memory_limit=512M $(settings "$mode") -q -T "$n" "$page" \
        > "$work/out.$mode.$n" 2> "$work/err.$mode.$n" \
        || { echo "$mode -T $n failed: $(tail -5 "$work/err.$mode.$n")" >&2; exit 1; }
    # Every request's page must be the reference page, and nothing else printed.
    for _ in $(seq "$n"); do cat "$work/reference"; done > "$work/expected.$n"
    cmp -s "$work/out.$mode.$n" "$work/expected.$n" \
        || { echo "$mode -T $n: the output is not the reference page $n times: $(head -c 400 "$work/out.$mode.$n")" >&2; exit 1; }
    awk '/^totals:/ { print $2 }' "$out"
}

per_function() { # MODE: self instructions per request by function, from the difference of the runs
    local mode=$1
    for n in "$lo" "$hi"; do
        callgrind_annotate --inclusive=no --threshold=100 --auto=no "$work/cg.$mode.$n" 2>/dev/null \
            | sed -n 's/^ *\([0-9,][0-9,]*\) ( *[0-9.]*%)  *\(.*\)$/\1\t\2/p' | grep -v $'\tPROGRAM TOTALS$' | tr -d , \
            > "$work/fn.$mode.$n"
    done
    awk -F'\t' -v d=$((hi - lo)) 'NR == FNR { a[$2] = $1; next } { b[$2] = $1 }
        END { for (f in b) { v = (b[f] - a[f]) / d; if (v >= 1 || v <= -1) printf "%.0f\t%s\n", v, f }
              for (f in a) if (!(f in b)) printf "%.0f\t%s\n", -a[f] / d, f }' \
        "$work/fn.$mode.$lo" "$work/fn.$mode.$hi" | sort -t$'\t' -k1,1nr > "$work/per-request.$mode"
}

echo "page: $(cat "$work/reference")"
echo "requests: -T $hi minus -T $lo, one php-cgi process each; $(php -r "echo count(json_decode(file_get_contents('$work/map.json'), true));") classes of ${dirs[*]}"
declare -A per
for m in "${modes[@]}"; do
    a=$(run "$m" "$lo")
    b=$(run "$m" "$hi")
    per[$m]=$(( (b - a) / (hi - lo) ))
    per_function "$m"
    printf "%-8s %12d instructions per request   (-T %d: %d, -T %d: %d)\n" "$m" "${per[$m]}" "$lo" "$a" "$hi" "$b"
done
if [ -n "${per[opcache]:-}" ] && [ -n "${per[zopt]:-}" ]; then
    awk -v z="${per[zopt]}" -v o="${per[opcache]}" 'BEGIN { printf "zopt / OPcache: %.4fx (%+d instructions per request)\n", z / o, z - o }'
fi
for m in "${modes[@]}"; do
    # The cache's own code (zopt's hot section has no object name in callgrind's output).
    if [ "$m" = zopt ]; then lib='libzopt_php[.]so|zopt_php::|zend_cache::|[[][?][?][?][]]'; else lib='opcache[.]so'; fi
    total=$(awk -F'\t' -v l="$lib" '$2 ~ l { t += $1 } END { print t + 0 }' "$work/per-request.$m")
    echo "$m: the cache's own functions, $total instructions per request; the largest:"
    awk -F'\t' -v l="$lib" '$2 ~ l && n < 25 { printf "  %8d  %s\n", $1, $2; n++ }' "$work/per-request.$m"
done
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp "$work"/cg.* "$work"/per-request.* "$keep"/
    echo "callgrind files and per-function differences in $keep"
fi
