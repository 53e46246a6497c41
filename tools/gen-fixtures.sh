#!/usr/bin/env bash
# gen-fixtures.sh - produce PHP's own golden optimizer dumps and run outputs for every fixture.
#
# Usage: tools/gen-fixtures.sh [-j JOBS] [REL ...]
#
#   REL   optional fixture names relative to fixtures/php without ".php"
#         (e.g. ctl_if_else inc/helper_inc). Without REL, every fixture is
#         processed and fixtures/expected is rebuilt from scratch.
#   -j N  parallel jobs (default: $JOBS or nproc)
#
# Environment: PHP (default "php"), JOBS, ZOPT (a built zopt; default: build it).
#
# What it does:
#   1. Stages fixtures/php/. into the fixed directory /tmp/zopt-fixtures/ so the
#      absolute file names inside the dumps are identical on every machine.
#   2. For every staged .php file F (including inc/), every optimization level L
#      and every opt_debug_level bit, runs
#        php -n -d zend_extension=opcache ... -d opcache.optimization_level=L
#            -d opcache.opt_debug_level=BITS -r 'opcache_compile_file($argv[1]);' -- F
#      (opcache_compile_file compiles and optimizes F but does not run it).
#      The dump (stderr) goes to fixtures/expected/REL/opt-L/NAME.txt when non-empty.
#      Stdout must stay empty and php must exit 0; anything else is a failure
#      (e.g. a fixture that does not compile).
#   3. Runs each program (`php -n REL.php` in the staged dir, stdin /dev/null,
#      10 s timeout) and stores stdout in fixtures/expected/REL/run.txt and the
#      exit status in fixtures/expected/REL/run.status. A fixture may declare
#      a non-zero expected status with a comment "zopt: expect-status=N";
#      a different status (or a timeout) is a failure.
#   4. Records every fixture with the zopt extension (`zopt record`, optimization
#      level 0) into fixtures/expected/REL/recording.zop. ZOPT=path/to/zopt uses
#      an existing build; otherwise zopt and the extension are built (release).
#
# Concurrent runs are serialized with flock on /tmp/zopt-fixtures.lock, and a
# run fails if the staged tree changes underneath it.
set -euo pipefail

STAGE=/tmp/zopt-fixtures
LOCK=/tmp/zopt-fixtures.lock
RUN_TIMEOUT=10

LEVELS=(0 0x60 0xE0 0x20E0 0x7FFEBFFF)
DEBUG_LEVELS=(
    before=0x10000 after=0x20000
    pass1=0x1 pass2=0x2 pass3=0x4 pass4=0x8 pass5=0x10 pass6=0x20 pass7=0x40
    pass8=0x80 pass9=0x100 pass10=0x200 pass11=0x400 pass12=0x800 pass13=0x1000 pass14=0x2000
    before_block=0x40000 after_block=0x80000 block_vars=0x100000
    before_dfa=0x200000 after_dfa=0x400000
    cfg=0x800000 dom=0x1000000 liveness=0x2000000 phi=0x4000000 ssa=0x8000000
    types=0x10000000 sccp=0x20000000
)

PHP=${PHP:-php}
PHP_OPCACHE_ARGS=(
    -n
    -d zend_extension=opcache
    -d opcache.enable=1
    -d opcache.enable_cli=1
    -d opcache.file_update_protection=0
    -d opcache.jit=0
    -d opcache.memory_consumption=32
    -d display_errors=1
    -d log_errors=0
)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC="$ROOT/fixtures/php"
OUT="$ROOT/fixtures/expected"

die() { echo "gen-fixtures: $*" >&2; exit 2; }

# ---------------------------------------------------------------------------
# Worker modes (invoked through xargs by the main mode below).
# ---------------------------------------------------------------------------

# dump REL LEVEL: all debug levels of one fixture at one optimization level.
worker_dump() {
    local rel=$1 level=$2
    local dir="$OUT/$rel/opt-$level"
    local tmp; tmp=$(mktemp -d "$WORK/dump.XXXXXX")
    local spec name bits rc written=0
    mkdir -p "$dir"
    for spec in "${DEBUG_LEVELS[@]}"; do
        name=${spec%%=*}
        bits=${spec#*=}
        "$PHP" "${PHP_OPCACHE_ARGS[@]}" \
            -d "opcache.optimization_level=$level" \
            -d "opcache.opt_debug_level=$bits" \
            -r 'exit(opcache_compile_file($argv[1]) ? 0 : 1);' -- "$STAGE/$rel.php" \
            </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
        rc=$?
        if [[ $rc -ne 0 || -s $tmp/stdout ]]; then
            {
                echo "DUMP $rel opt-$level $name: php exit status $rc (remaining debug levels of this opt level skipped)"
                head -c 2000 "$tmp/stdout" | sed '/^$/d; s/^/    stdout: /' | head -n 10
                head -c 2000 "$tmp/stderr" | grep -v '^[0-9]\{4\} ' | sed '/^$/d' | head -n 5 | sed 's/^/    stderr: /'
            } >>"$WORK/failures/dump.$$"
            break
        fi
        if [[ -s $tmp/stderr ]]; then
            mv "$tmp/stderr" "$dir/$name.txt"
            written=$((written + 1))
        fi
    done
    rm -rf "$tmp"
    rmdir "$dir" 2>/dev/null || true
    echo "$written" >>"$WORK/counts/dump.$$"
    return 0
}

# run REL: execute the fixture normally.
worker_run() {
    local rel=$1
    local dir="$OUT/$rel"
    local expect=0 status=0
    mkdir -p "$dir"
    local m
    m=$(grep -m1 -o 'zopt: expect-status=[0-9]*' "$STAGE/$rel.php" || true)
    [[ -n $m ]] && expect=${m##*=}
    local errf="$WORK/stderr.$$"
    (cd "$STAGE" && timeout -k 2 "$RUN_TIMEOUT" "$PHP" -n "$rel.php" </dev/null >"$dir/run.txt" 2>"$errf")
    status=$?
    echo "$status" >"$dir/run.status"
    if [[ $status -eq 124 || $status -eq 137 ]]; then
        echo "RUN $rel: timed out after ${RUN_TIMEOUT}s" >>"$WORK/failures/run.$$"
    elif [[ $status -ne $expect ]]; then
        {
            echo "RUN $rel: exit status $status, expected $expect"
            sed '/^$/d' "$dir/run.txt" | tail -n 5 | sed 's/^/    stdout: /'
            sed '/^$/d' "$errf" | head -n 5 | sed 's/^/    stderr: /'
        } >>"$WORK/failures/run.$$"
    fi
    if grep -qE '^(PHP )?(Warning|Notice|Deprecated|Fatal error|Parse error): ' "$dir/run.txt" "$errf" 2>/dev/null; then
        echo "$rel" >>"$WORK/noisy.$$"
    fi
    rm -f "$errf"
    echo 2 >>"$WORK/counts/run.$$"
    return 0
}

if [[ ${1:-} == __worker ]]; then
    # Workers handle every error explicitly and must always exit 0
    # (an exit status of 255 would make xargs stop early).
    set +e +o pipefail
    shift
    WORK=$1; mode=$2; shift 2
    case $mode in
        dump) worker_dump "$@" ;;
        run) worker_run "$@" ;;
        *) die "unknown worker mode $mode" ;;
    esac
    exit 0
fi

# ---------------------------------------------------------------------------
# Main mode.
# ---------------------------------------------------------------------------
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
while getopts "j:h" opt; do
    case $opt in
        j) JOBS=$OPTARG ;;
        h) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))

start=$(date +%s)
command -v "$PHP" >/dev/null || die "php not found (set PHP=...)"
[[ -d $SRC ]] || die "no fixtures directory at $SRC"
for tool in timeout xargs find; do command -v "$tool" >/dev/null || die "$tool is required"; done

php_version=$("$PHP" -n -r 'echo PHP_MAJOR_VERSION . "." . PHP_MINOR_VERSION;')
if [[ $php_version != 8.2 ]]; then
    echo "gen-fixtures: WARNING: expected PHP 8.2, found $php_version; dumps will not match the reference" >&2
fi

# Sanity check: the opcache extension loads with -n and dumps to stderr.
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf '<?php\nfunction probe($a) { return $a + 1; }\n' >"$probe_dir/probe.php"
probe_rc=0
"$PHP" "${PHP_OPCACHE_ARGS[@]}" -d opcache.optimization_level=0x7FFEBFFF -d opcache.opt_debug_level=0x20000 \
    -r 'exit(opcache_compile_file($argv[1]) ? 0 : 1);' -- "$probe_dir/probe.php" \
    </dev/null >"$probe_dir/out" 2>"$probe_dir/err" || probe_rc=$?
if [[ $probe_rc -ne 0 || -s $probe_dir/out ]] || ! grep -q '^probe:' "$probe_dir/err" || ! grep -q '(after optimizer)' "$probe_dir/err"; then
    cat "$probe_dir/out" "$probe_dir/err" >&2
    die "opcache did not produce an optimizer dump (is php-opcache installed? tried: $PHP -n -d zend_extension=opcache)"
fi

# Only one run at a time may own the fixed staging directory: take the lock
# (other tools that stage into /tmp/zopt-fixtures should take it too).
if command -v flock >/dev/null; then
    exec 9>"$LOCK"
    if ! flock -n 9; then
        echo "gen-fixtures: waiting for another run holding $LOCK ..." >&2
        flock 9
    fi
fi

# Stage.
rm -rf "$STAGE"
mkdir -p "$STAGE"
cp -r "$SRC/." "$STAGE/"

stage_manifest() { (cd "$STAGE" && stat -c '%i' . && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) 2>&1; }
STAGE_MANIFEST=$(stage_manifest)

mapfile -t ALL < <(cd "$STAGE" && find . -type f -name '*.php' | sed 's|^\./||; s|\.php$||' | LC_ALL=C sort)
[[ ${#ALL[@]} -gt 0 ]] || die "no fixtures found in $SRC"

if [[ $# -gt 0 ]]; then
    SELECTED=()
    for rel in "$@"; do
        rel=${rel%.php}
        rel=${rel#fixtures/php/}
        [[ -f $STAGE/$rel.php ]] || die "no such fixture: $rel"
        SELECTED+=("$rel")
    done
    for rel in "${SELECTED[@]}"; do rm -rf "${OUT:?}/$rel"; done
else
    SELECTED=("${ALL[@]}")
    rm -rf "$OUT"
fi
mkdir -p "$OUT"

WORK=$(mktemp -d)
trap 'rm -rf "$probe_dir" "$WORK"' EXIT
mkdir -p "$WORK/failures" "$WORK/counts"

echo "gen-fixtures: php $php_version, ${#SELECTED[@]} fixtures, ${#LEVELS[@]} optimization levels x ${#DEBUG_LEVELS[@]} debug levels, $JOBS jobs"

# Biggest fixtures first so the long ones do not end up last in the queue.
mapfile -t ORDERED < <(for rel in "${SELECTED[@]}"; do printf '%s %s\n' "$(wc -c <"$STAGE/$rel.php")" "$rel"; done | LC_ALL=C sort -k1,1nr -k2 | cut -d' ' -f2-)
{
    for rel in "${ORDERED[@]}"; do
        for level in "${LEVELS[@]}"; do printf 'dump\0%s\0%s\0' "$rel" "$level"; done
    done
    for rel in "${ORDERED[@]}"; do printf 'run\0%s\0-\0' "$rel"; done
} | xargs -0 -n 3 -P "$JOBS" "$0" __worker "$WORK" || true

# Recordings: the zopt extension records each fixture as PHP compiled it (optimization
# level 0); fixtures/expected/REL/recording.zop is the input of our side of every stage.
ZOPT=${ZOPT:-}
if [[ -z $ZOPT ]]; then
    (cd "$ROOT" && cargo build --release -q -p zopt -p zopt-php) || die "building zopt and its extension failed"
    ZOPT="$ROOT/target/release/zopt"
fi
if "$ZOPT" record --php "$PHP" --debug-level 0 -o "$WORK/recordings" "$STAGE" >"$WORK/record.log" 2>&1; then
    for rel in "${SELECTED[@]}"; do
        if [[ -f $WORK/recordings/$rel.php.zop ]]; then
            mkdir -p "$OUT/$rel"
            mv "$WORK/recordings/$rel.php.zop" "$OUT/$rel/recording.zop"
        else
            echo "RECORD $rel: no recording written" >>"$WORK/failures/record"
        fi
    done
else
    { echo "RECORD: zopt record failed"; sed 's/^/    /' "$WORK/record.log" | head -n 20; } >>"$WORK/failures/record"
fi

if [[ $(stage_manifest) != "$STAGE_MANIFEST" ]]; then
    echo "gen-fixtures: $STAGE was modified by another process during the run; results are unreliable, run again" >&2
    echo "STAGE $STAGE changed during the run" >>"$WORK/failures/stage"
fi

end=$(date +%s)
failures=$(cat "$WORK"/failures/* 2>/dev/null | grep -c '^[A-Z]' || true)
dump_files=$(cat "$WORK"/counts/dump.* 2>/dev/null | awk '{s += $1} END {print s + 0}')
run_files=$(cat "$WORK"/counts/run.* 2>/dev/null | awk '{s += $1} END {print s + 0}')
dump_jobs_done=$(cat "$WORK"/counts/dump.* 2>/dev/null | wc -l)
run_jobs_done=$(cat "$WORK"/counts/run.* 2>/dev/null | wc -l)
expected_dump_jobs=$((${#SELECTED[@]} * ${#LEVELS[@]}))
if [[ $dump_jobs_done -ne $expected_dump_jobs || $run_jobs_done -ne ${#SELECTED[@]} ]]; then
    echo "gen-fixtures: only $dump_jobs_done/$expected_dump_jobs dump jobs and $run_jobs_done/${#SELECTED[@]} run jobs completed" >&2
    failures=$((failures + 1))
fi

echo "fixtures:      ${#SELECTED[@]}"
echo "files written: $((dump_files + run_files)) ($dump_files dumps, $run_files run outputs)"
echo "failures:      $failures"
if [[ $failures -gt 0 ]]; then
    cat "$WORK"/failures/* 2>/dev/null | head -n 60 >&2
fi
if compgen -G "$WORK/noisy.*" >/dev/null; then
    echo "note: PHP diagnostics (Warning/Notice/Deprecated/Fatal) printed by: $(sort -u "$WORK"/noisy.* | tr '\n' ' ')"
fi
echo "size:          $(du -sh "$OUT" | cut -f1) in fixtures/expected"
echo "time:          $((end - start)) s"
[[ $failures -eq 0 ]]
