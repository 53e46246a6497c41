#!/usr/bin/env bash
# The php-fpm benchmark of the opcode caches: Debian's php8.2-fpm with a static pool on
# 127.0.0.1, FastCGI requests sent by cgi-fcgi (libfcgi-bin), a bounded number of them.
#
#   tools/bench-fpm.sh [-n REQUESTS] [-r ROUNDS] [-c CLIENTS] [-w WORKERS] [-e EXTENSION.so]
#                      [-m "MODE..."] [DIR...]
#
# The application: one page that loads every class of the libraries under DIR... (default
# Debian's php-parser and Twig) through an autoloader, i.e. several hundred scripts per
# request, and prints how many classes it declared and a digest of their names. Modes, one
# server each, run one after the other on the same machine:
#
#   none       no opcode cache (PHP compiles every script of every request)
#   opcache    OPcache in shared memory (its default optimizer level)
#   zopt-file  zopt's file cache only (warm), every request rebuilds every script
#   zopt       zopt's shared-memory cache (filled by the warm-up requests): scripts kept in
#              PHP's run-time form, a hit binds them without rebuilding
#   zopt-fill  zopt's shared memory starting empty, filled from the warm file cache
#   zopt-rebuild  (only with -m) zopt's shared memory with zopt.shm_run_time_form=0: every
#              hit rebuilds its script from the entry (the state before run-time forms)
#
# -m picks the modes (default "none opcache zopt-file zopt zopt-fill").
# Each mode gets REQUESTS requests from CLIENTS parallel clients, split over ROUNDS rounds in
# which every mode runs once (a fresh server each time, warm-up requests not measured), so
# that drifting machine load hits every mode alike. Reported: requests/s, p50 and p99 latency, failed requests (any page differing
# from the reference page of mode `none`), the peak RSS (VmHWM) of the largest worker,
# zopt's own per-script serving time (zopt_get_status() of one worker), and the speed
# ratios to OPcache. Also the workers' CPU time (user + system, from /proc) per timed request:
# on a loaded machine it is steadier than requests/s, which includes waiting for the CPU
# and the client's own cost. It is read from /proc/PID/schedstat (ns) where the kernel has
# it: the user + system times of /proc/PID/stat count 10 ms ticks.
set -euo pipefail

requests=200
rounds=4
clients=2
workers=2
ext=""
modes=(none opcache zopt-file zopt zopt-fill)
while getopts "n:r:c:w:e:m:" opt; do
    case $opt in
        n) requests=$OPTARG ;;
        r) rounds=$OPTARG ;;
        c) clients=$OPTARG ;;
        w) workers=$OPTARG ;;
        e) ext=$OPTARG ;;
        m) read -r -a modes <<< "$OPTARG" ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(/usr/share/php/PhpParser /usr/share/php/Twig)

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$ext" ]; then
    for cand in "${CARGO_TARGET_DIR:-$root/target}/release/libzopt_php.so" "$root/target/release/libzopt_php.so"; do
        [ -f "$cand" ] && ext=$cand && break
    done
fi
[ -n "$ext" ] && [ -f "$ext" ] || { echo "build the extension first: cargo build --release -p zopt-php (or -e SO)" >&2; exit 2; }
FPM=/usr/sbin/php-fpm8.2
command -v cgi-fcgi >/dev/null && [ -x $FPM ] || { echo "needs php8.2-fpm and libfcgi-bin (apt-get install php8.2-fpm libfcgi-bin)" >&2; exit 2; }

work=$(mktemp -d /tmp/zopt-bench-fpm.XXXXXX)
master=""
cleanup() {
    [ -n "$master" ] && kill "$master" 2>/dev/null && wait "$master" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

php -n "$root/crates/zopt/src/bench_driver.php" map "$work/map.json" "${dirs[@]}"
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
echo "classes \$n digest ", md5(implode(',', \$names)), "\n";
EOF
cat > "$work/app/status.php" <<'EOF'
<?php
$s = zopt_get_status(false);
printf("worker %d: %d scripts served (%d from shared memory, %d bound from the run-time form), %.1f us per script served, %d compiled",
    getmypid(), $s['served'], $s['shm_hits'], $s['run_time_hits'] ?? 0, $s['served'] ? $s['served_ns'] / $s['served'] / 1000 : 0, $s['compiles']);
EOF

port=$((20000 + RANDOM % 20000))
request() { # [SCRIPT]
    SCRIPT_FILENAME="$work/app/${1:-index.php}" REQUEST_METHOD=GET QUERY_STRING="" \
        timeout 60 cgi-fcgi -bind -connect "127.0.0.1:$port" 2>/dev/null | tr -d '\r' | sed '1,/^$/d'
}

start() { # INI ARGS...
    cat > "$work/fpm.conf" <<EOF
[global]
error_log = $work/fpm.log
daemonize = no
[www]
listen = 127.0.0.1:$port
pm = static
pm.max_children = $workers
clear_env = no
EOF
    $FPM -n -F -R -y "$work/fpm.conf" -d memory_limit=512M "$@" >/dev/null 2>&1 &
    master=$!
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "php-fpm did not start: $(cat "$work/fpm.log")" >&2
    exit 1
}

stop() {
    kill "$master" 2>/dev/null || true
    wait "$master" 2>/dev/null || true
    master=""
    port=$((port + 1))
}

worker_cpu() { # CPU time of all workers, in ns: the scheduler's run time (schedstat), else
    # user + system time from stat (clock ticks of 10 ms: too coarse for a few hundred requests)
    local t=0 hz
    hz=$(getconf CLK_TCK)
    for p in $(ps -o pid= --ppid "$master"); do
        if [ -r "/proc/$p/schedstat" ]; then
            t=$((t + $(awk '{print $1}' "/proc/$p/schedstat" 2>/dev/null || echo 0)))
        else
            t=$((t + $(awk -v hz="$hz" '{printf "%d", ($14 + $15) * 1e9 / hz}' "/proc/$p/stat" 2>/dev/null || echo 0)))
        fi
    done
    echo "$t"
}

worker_hwm() { # peak RSS of each worker, kB
    for p in $(ps -o pid= --ppid "$master"); do
        awk '/VmHWM/ {printf "%s ", $2}' "/proc/$p/status" 2>/dev/null || true
    done
}

reference=""
measure() { # NAME INI ARGS...: one round of one mode, appended to $work/lat.NAME
    local name=$1
    shift
    start "$@"
    for _ in $(seq $((2 * workers))); do
        local page
        page=$(request)
        [ -n "$reference" ] || reference=$page
    done
    local per=$((requests / rounds / clients))
    local t0 t1 c0 c1
    c0=$(worker_cpu)
    t0=$(date +%s%N)
    local pids=()
    for c in $(seq "$clients"); do
        (
            for _ in $(seq "$per"); do
                local s e page
                s=$(date +%s%N)
                page=$(request)
                e=$(date +%s%N)
                if [ "$page" = "$reference" ]; then echo "ok $(( (e - s) / 1000 ))"; else echo "fail $(( (e - s) / 1000 ))"; fi
            done
        ) > "$work/client.$c" &
        pids+=($!)
    done
    wait "${pids[@]}"
    t1=$(date +%s%N)
    c1=$(worker_cpu)
    echo "$((t1 - t0))" >> "$work/wall.$name"
    echo "$((c1 - c0)) $((per * clients))" >> "$work/cpu.$name"
    worker_hwm >> "$work/hwm.$name"
    case $name in zopt*) request status.php > "$work/detail.$name" ;; esac
    stop
    cat "$work"/client.* >> "$work/lat.$name"
}

report() { # NAME
    local name=$1
    local n fails stats rps hwm
    n=$(wc -l < "$work/lat.$name")
    fails=$(grep -c '^fail' "$work/lat.$name" || true)
    stats=$(awk '{print $2}' "$work/lat.$name" | sort -n | awk -v n="$n" '
        { v[NR] = $1 }
        END { p50 = v[int((n - 1) * 0.50) + 1]; p99 = v[int((n - 1) * 0.99) + 1]; printf "%.1f %.1f", p50 / 1000, p99 / 1000 }')
    rps=$(awk -v n="$n" '{ ns += $1 } END { printf "%.1f", n / (ns / 1e9) }' "$work/wall.$name")
    hwm=$(tr ' ' '\n' < "$work/hwm.$name" | sort -n | tail -1)
    cpu=$(awk '{ t += $1; r += $2 } END { printf "%.3f", t / 1e6 / r }' "$work/cpu.$name")
    echo "$name $rps $cpu" >> "$work/rps"
    printf "%-10s %8s req/s   p50 %7s ms   p99 %7s ms   failed %s/%s   peak worker RSS %s kB   worker CPU %s ms/request\n" \
        "$name" "$rps" ${stats} "$fails" "$n" "$hwm" "$cpu"
    [ ! -f "$work/detail.$name" ] || echo "           $(cat "$work/detail.$name")"
}

echo "php-fpm: $workers static workers, $requests requests from $clients clients per mode in $rounds interleaved rounds; app: $(php -r "echo count(json_decode(file_get_contents('$work/map.json'), true));") classes of ${dirs[*]}"
mkdir -p "$work/zcache"
php -n -d extension="$ext" -d zopt.cache_dir="$work/zcache" "$work/app/index.php" >/dev/null
# The reference page is the first mode's: put `none` first when changing the modes.
for round in $(seq "$rounds"); do
    for m in "${modes[@]}"; do
        case $m in
            none) measure none ;;
            opcache) measure opcache -d zend_extension=opcache -d opcache.enable=1 -d opcache.memory_consumption=128 \
                -d opcache.interned_strings_buffer=16 -d opcache.max_accelerated_files=10000 ;;
            zopt-file) measure zopt-file -d extension="$ext" -d zopt.cache_dir="$work/zcache" ;;
            zopt) measure zopt -d extension="$ext" -d zopt.memory_consumption=128 -d zopt.interned_strings_buffer=16 ;;
            zopt-fill) measure zopt-fill -d extension="$ext" -d zopt.memory_consumption=128 \
                -d zopt.interned_strings_buffer=16 -d zopt.cache_dir="$work/zcache" ;;
            zopt-rebuild) measure zopt-rebuild -d extension="$ext" -d zopt.memory_consumption=128 \
                -d zopt.interned_strings_buffer=16 -d zopt.shm_run_time_form=0 ;;
            *) echo "unknown mode $m" >&2; exit 2 ;;
        esac
    done
done
echo "reference page: $reference"
for m in "${modes[@]}"; do report "$m"; done
opc=$(awk '$1 == "opcache" { print $2 }' "$work/rps")
opc_cpu=$(awk '$1 == "opcache" { print $3 }' "$work/rps")
[ -z "$opc" ] || awk -v o="$opc" -v oc="$opc_cpu" \
    '{ printf "  %-12s %.2fx OPcache (requests/s)   %.2fx OPcache'"'"'s worker CPU per request\n", $1, $2 / o, $3 / oc }' "$work/rps"
