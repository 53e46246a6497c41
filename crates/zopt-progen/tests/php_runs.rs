//! Every generated program runs under the real PHP 8.2 (`php -n`) to the end: exit status 0,
//! no fatal error, no warning or deprecation, no undefined variable, index or property, and
//! the same output on a second run. Needs `php` 8.2 on PATH (the test fails saying so).

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use zopt_progen::{generate, Config, Edits};

const SEEDS: u64 = 300;

fn run_php(source: &str) -> (Option<i32>, String) {
    let mut child = Command::new("php")
        .args(["-n", "-d", "display_errors=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("this test needs PHP 8.2 on PATH (apt-get install php8.2-cli): {e}")
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

/// What must never appear: PHP's own messages, and the error handler's for notices the
/// generator promises to avoid (E2 is allowed only for the "non-numeric value" warning of
/// deliberate juggling inside a try).
fn problem(output: &str) -> Option<&str> {
    output.lines().find(|l| {
        l.contains("Fatal error")
            || l.contains("Parse error")
            || l.contains("Warning:")
            || l.contains("Deprecated:")
            || l.contains("Notice:")
            || l.contains("Undefined")
            || l.contains("E8192:")
            || l.contains("E8:")
            || (l.contains("E2:") && !l.contains("A non-numeric value encountered"))
    })
}

#[test]
fn php_runs_every_program_cleanly_and_deterministically() {
    let php = Command::new("php").arg("-v").output();
    let version = php
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(
        version.starts_with("PHP 8.2."),
        "this test needs PHP 8.2 on PATH, found {version:?}"
    );
    let config = Config::default();
    let next = AtomicU64::new(0);
    let failures = Mutex::new(Vec::new());
    let strict = AtomicU64::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                if seed >= SEEDS {
                    break;
                }
                let program = generate(seed, &config);
                strict.fetch_add(program.strict_types as u64, Ordering::Relaxed);
                let source = program.source();
                let (status, first) = run_php(&source);
                let (_, second) = run_php(&source);
                let failure = if status != Some(0) {
                    Some(format!("exit status {status:?}"))
                } else if let Some(line) = problem(&first) {
                    Some(format!("printed {line:?}"))
                } else if first != second {
                    Some("two runs printed different output".to_string())
                } else {
                    None
                };
                if let Some(f) = failure {
                    failures.lock().unwrap().push(format!("seed {seed}: {f}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {SEEDS} programs failed (see them with `cargo run -p zopt-progen -- SEED`):\n{}",
        failures.len(),
        failures.join("\n")
    );
    let strict = strict.load(Ordering::Relaxed);
    assert!(
        strict > SEEDS / 4 && strict < SEEDS * 3 / 4,
        "strict_types should be on for about half the seeds, was on for {strict}"
    );
}

#[test]
fn same_seed_same_program() {
    let config = Config::default();
    for seed in [0, 1, 99, u64::MAX] {
        assert_eq!(
            generate(seed, &config).source(),
            generate(seed, &config).source()
        );
    }
    assert_ne!(generate(1, &config).source(), generate(2, &config).source());
}

#[test]
fn programs_cover_what_the_optimizer_reasons_about() {
    let config = Config::default();
    let all: String = (0..200).map(|s| generate(s, &config).source()).collect();
    for needle in [
        "declare(strict_types=1);",
        "goto L",
        "yield from",
        "enum E0",
        "match (",
        "} finally {",
        "static fn",
        "fn(int $",
        "function (",
        "...array_values(",
        "(...)",
        "&$",
        "global $v",
        "static $calls",
        "$GLOBALS[",
        "readonly",
        "trait T0",
        "interface I0",
        "?->",
        "define('D",
        "const C",
        "isset(",
        "empty(",
        " ?? ",
        "\"<$",
        "<<<TXT",
        "continue",
        "break 2",
        "do {",
        "while (",
        "foreach (",
        "switch (",
        "intdiv(",
        "PHP_INT_MAX",
        "NAN",
        "compact(",
        "$$name",
        "new static",
        "parent::m",
        "clone $o0",
        "catch (\\Throwable $t)",
        "K0::$bag = &",
        "unset(K0::$bag)",
        "function &rf",
        "->c--",
        "??= 5",
    ] {
        assert!(
            all.contains(needle),
            "no program of 200 contains {needle:?}"
        );
    }
}

#[test]
fn reduced_programs_stay_valid_php() {
    // The reducer replaces expressions by literals of their type and cuts statements; the
    // result must still parse (it may fail at run time, which the reducer then rejects).
    let config = Config::default();
    for seed in 0..20 {
        let program = generate(seed, &config);
        let mut edits = Edits::default();
        for (id, kind) in program.places(&Edits::default()) {
            match kind {
                zopt_progen::EditKind::Simplify => {
                    edits.simplified.insert(id);
                }
                zopt_progen::EditKind::Cut => {
                    if id % 3 == 0 {
                        edits.cut.insert(id);
                    }
                }
            }
        }
        let source = program.source_with(&edits);
        let mut child = Command::new("php")
            .args(["-n", "-l"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("php on PATH");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(source.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "seed {seed}: the edited program does not parse: {}\n{source}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
