#!/usr/bin/env bash
# The php-fpm benchmark of the opcode caches: Debian's php8.2-fpm with a static pool behind
# Debian's nginx, both on 127.0.0.1, loaded by ab (apache2-utils) for a bounded number of
# requests.
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
# Each mode gets REQUESTS requests from CLIENTS concurrent ab clients, split over ROUNDS
# rounds in which every mode runs once (a fresh php-fpm and nginx each time, warm-up
# requests not measured), so that drifting machine load hits every mode alike. Reported:
# requests/s (all rounds' requests over all rounds' ab time), the median over the rounds of
# ab's p50 and p99 latency, failed requests (ab's: non-2xx, or a page of another length),
# pages differing from the reference page (the first mode's; every worker's warm-up pages
# and as many after each round's load, compared whole), the peak RSS (VmHWM) of the largest
# worker and its RSS after the load (the peak includes the first requests' compiles) with
# that RSS's parts (anonymous, file-backed, shared memory) for the largest worker, zopt's
# own per-script serving time (zopt_get_status() of one worker), and the ratios to OPcache
# (also per round, paired with OPcache's run of the same round: the median and range of the
# rounds' ratios). Also the workers' CPU time per timed request, from /proc/PID/schedstat
# (ns; the user + system times of /proc/PID/stat count 10 ms ticks): on a loaded machine it
# is steadier than requests/s, which include nginx, ab and waiting for the CPU.
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
# shellcheck source=tools/bench-page.sh
. "$root/tools/bench-page.sh"
ext=$(bench_extension "$ext") || exit 2
FPM=/usr/sbin/php-fpm8.2
NGINX=/usr/sbin/nginx
command -v ab >/dev/null && command -v curl >/dev/null && [ -x $FPM ] && [ -x $NGINX ] \
    || { echo "needs php8.2-fpm, nginx, apache2-utils and curl (apt-get install php8.2-fpm nginx apache2-utils curl)" >&2; exit 2; }

work=$(mktemp -d /tmp/zopt-bench-fpm.XXXXXX)
chmod 755 "$work"
master=""
front=""
cleanup() {
    for p in "$front" "$master"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

bench_page "$work" "${dirs[@]}"
cat > "$work/app/status.php" <<'EOF'
<?php
$s = zopt_get_status(false);
printf("worker %d: %d scripts served (%d from shared memory, %d bound from the run-time form), %.1f us per script served, %d compiled",
    getmypid(), $s['served'], $s['shm_hits'], $s['run_time_hits'] ?? 0, $s['served'] ? $s['served_ns'] / $s['served'] / 1000 : 0, $s['compiles']);
EOF

# nginx's port, below the ephemeral range (32768 and up on Linux); php-fpm listens on a
# unix socket, as Debian's pool does.
web=$((10000 + RANDOM % 20000))
fetch() { # [SCRIPT]: one page through nginx
    curl -s --max-time 60 "http://127.0.0.1:$web/${1:-index.php}"
}

wait_port() { # PORT LOG
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "server on port $1 did not start: $(cat "$2" 2>/dev/null)" >&2
    exit 1
}

start() { # INI ARGS...: php-fpm on $work/fpm.sock, nginx on $web in front of it
    cat > "$work/fpm.conf" <<EOF
[global]
error_log = $work/fpm.log
daemonize = no
[www]
listen = $work/fpm.sock
; nginx's workers run as another user when it is started as root.
listen.mode = 0666
pm = static
pm.max_children = $workers
clear_env = no
EOF
    $FPM -n -F -R -y "$work/fpm.conf" -d memory_limit=512M "$@" >/dev/null 2>&1 &
    master=$!
    for _ in $(seq 200); do
        [ -S "$work/fpm.sock" ] && break
        sleep 0.05
    done
    [ -S "$work/fpm.sock" ] || { echo "php-fpm did not start: $(cat "$work/fpm.log")" >&2; exit 1; }
    mkdir -p "$work/nginx"
    cat > "$work/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    fastcgi_temp_path $work/nginx/fastcgi;
    proxy_temp_path $work/nginx/proxy;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    server {
        listen 127.0.0.1:$web;
        # ab's connections are kept alive: tens of thousands of requests open no
        # connection each (whose TIME_WAITs would use up the ephemeral ports).
        keepalive_requests 1000000;
        root $work/app;
        location ~ \.php\$ {
            fastcgi_pass unix:$work/fpm.sock;
            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
            fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SERVER_PROTOCOL \$server_protocol;
        }
    }
}
EOF
    $NGINX -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" >/dev/null 2>&1 &
    front=$!
    wait_port "$web" "$work/nginx/error.log"
}

stop() {
    for p in "$front" "$master"; do
        [ -n "$p" ] || continue
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    master=""
    front=""
    rm -f "$work/fpm.sock"
    web=$((web + 1))
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

worker_rss() { # RSS of each worker now, kB (the peak includes the first requests' compiles)
    for p in $(ps -o pid= --ppid "$master"); do
        awk '/VmRSS/ {printf "%s ", $2}' "/proc/$p/status" 2>/dev/null || true
    done
}

worker_rss_parts() { # each worker's RSS now and its parts, kB: "rss anon file shmem" a line
    for p in $(ps -o pid= --ppid "$master"); do
        awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^RssFile/ {f = $2} /^RssShmem/ {s = $2}
            END { if (r) print r, a, f, s }' "/proc/$p/status" 2>/dev/null || true
    done
}

reference=""
check_pages() { # NAME COUNT: fetches COUNT pages, counts those differing from the reference
    local name=$1 count=$2 bad=0 page
    for _ in $(seq "$count"); do
        page=$(fetch)
        [ -n "$reference" ] || reference=$page
        [ "$page" = "$reference" ] || bad=$((bad + 1))
    done
    echo "$bad $count" >> "$work/pages.$name"
}

measure() { # NAME INI ARGS...: one round of one mode
    local name=$1
    shift
    start "$@"
    # Warm-up, not timed: every worker fills its caches (and the segment) first.
    check_pages "$name" $((2 * workers))
    local per=$((requests / rounds))
    local c0 c1
    c0=$(worker_cpu)
    ab -q -k -n "$per" -c "$clients" -e "$work/pct.csv" "http://127.0.0.1:$web/index.php" > "$work/ab.out" 2>&1 \
        || { echo "ab failed: $(cat "$work/ab.out")" >&2; exit 1; }
    c1=$(worker_cpu)
    # ab counts a response of another length than the first as failed, and non-2xx apart.
    awk '
        /^Time taken for tests:/ { t = $5 }
        /^Failed requests:/ { f = $3 }
        /^Non-2xx responses:/ { x = $3 }
        /^Complete requests:/ { n = $3 }
        END { printf "%d %d %.6f\n", n, f + x, t }' "$work/ab.out" >> "$work/ab.$name"
    awk -F, '$1 == 50 { p50 = $2 } $1 == 99 { p99 = $2 } END { print p50, p99 }' "$work/pct.csv" >> "$work/lat.$name"
    echo "$((c1 - c0)) $per" >> "$work/cpu.$name"
    # The pages after the load: the same as before it.
    check_pages "$name" "$workers"
    worker_hwm >> "$work/hwm.$name"
    worker_rss >> "$work/rss.$name"
    worker_rss_parts >> "$work/rssparts.$name"
    case $name in zopt*) fetch status.php > "$work/detail.$name" ;; esac
    stop
}

median() { # of the numbers on stdin
    sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

report() { # NAME
    local name=$1
    local n fails rps bad checked p50 p99 hwm rss cpu
    read -r n fails rps < <(awk '{ n += $1; f += $2; t += $3 } END { printf "%d %d %.1f\n", n, f, n / t }' "$work/ab.$name")
    read -r bad checked < <(awk '{ b += $1; c += $2 } END { print b + 0, c + 0 }' "$work/pages.$name")
    p50=$(awk '{ print $1 }' "$work/lat.$name" | median)
    p99=$(awk '{ print $2 }' "$work/lat.$name" | median)
    hwm=$(tr ' ' '\n' < "$work/hwm.$name" | sort -n | tail -1)
    rss=$(tr ' ' '\n' < "$work/rss.$name" | sort -n | tail -1)
    cpu=$(awk '{ t += $1; r += $2 } END { printf "%.3f", t / 1e6 / r }' "$work/cpu.$name")
    echo "$name $rps $cpu $p99" >> "$work/rps"
    printf "%-10s %8s req/s   p50 %6s ms   p99 %6s ms   failed %s/%s   pages differing %s/%s   peak worker RSS %s kB (%s kB after the load)   worker CPU %s ms/request\n" \
        "$name" "$rps" "$p50" "$p99" "$fails" "$n" "$bad" "$checked" "$hwm" "$rss" "$cpu"
    # The largest worker after the load: its RSS as private memory (anon: heap, request
    # memory), file pages (binaries and libraries, shared with the page cache) and shared
    # memory (the cache's segment, present once however many workers map it).
    sort -n "$work/rssparts.$name" | tail -1 | awk '{ printf "           largest worker after the load: %s kB = anon %s + file %s + shmem %s\n", $1, $2, $3, $4 }'
    [ ! -f "$work/detail.$name" ] || echo "           $(cat "$work/detail.$name")"
}

echo "php-fpm: $workers static workers, $requests requests from $clients clients per mode in $rounds interleaved rounds; app: $(php -r "echo count(json_decode(file_get_contents('$work/map.json'), true));") classes of ${dirs[*]}"
# The file cache is filled by php-fpm's own warm-up requests: a CLI fill would be another
# system id (the optimizer folds what each process has, and the CLI is another SAPI).
mkdir -p "$work/zcache"
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
opc_p99=$(awk '$1 == "opcache" { print $4 }' "$work/rps")
[ -z "$opc" ] || awk -v o="$opc" -v oc="$opc_cpu" -v op="$opc_p99" \
    '{ printf "  %-12s %.2fx OPcache (requests/s)   %.2fx OPcache'"'"'s worker CPU per request   p99 %+.2f ms\n", $1, $2 / o, $3 / oc, $4 - op }' "$work/rps"

paired() { # MODE FILE FIELD...: per round, the mode's value over OPcache's in the same round
    paste -d' ' "$work/$2.$1" "$work/$2.opcache" | awk -v kind="$2" '{
        h = NF / 2
        if (kind == "ab") print ($1 / $3) / ($(h + 1) / $(h + 3))   # requests / time
        else print ($1 / $2) / ($(h + 1) / $(h + 2))                # CPU / request
    }'
}
spread() { # >=|<=: of the ratios on stdin, median [lowest .. highest], rounds on that side of 1
    sort -g | awk -v side="$1" '{ v[NR] = $1; if (side == ">=" ? $1 >= 1 : $1 <= 1) k++ }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.3fx [%.3f .. %.3f], %d of %d rounds %s 1", m, v[1], v[NR], k, NR, side }'
}
# Each round runs every mode once, minutes apart at most: the round's ratio cancels the
# drift of the machine's load that the totals above carry, and the spread over the rounds
# says how far a difference of the totals is noise.
if [ -n "$opc" ] && [ "$rounds" -gt 1 ]; then
    echo "per round, paired with OPcache's run of the same round (median [range]):"
    for m in "${modes[@]}"; do
        [ "$m" != opcache ] || continue
        printf "  %-12s requests/s %s   worker CPU per request %s\n" "$m" \
            "$(paired "$m" ab | spread '>=')" "$(paired "$m" cpu | spread '<=')"
    done
fi
