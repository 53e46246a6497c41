//! zopt's shared-memory cache under Debian's php-fpm (`php-fpm8.2`, pool of 2 static
//! workers on 127.0.0.1, requests sent with `cgi-fcgi` from libfcgi-bin; both installed
//! with apt when missing): the workers share one segment, a worker serves what the other
//! stored without compiling, and workers killed with SIGKILL — while running a request, or
//! while holding the segment's writer lock in the middle of a store — leave a cache that
//! keeps serving correct pages. Every page is compared with what `php -n` prints for the
//! same script without zopt. Servers are started and stopped by the tests; request counts
//! are bounded.

#[path = "../../zopt/tests/apps/mod.rs"]
mod apps;
mod common;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

const FPM: &str = "/usr/sbin/php-fpm8.2";
const CGI_FCGI: &str = "/usr/bin/cgi-fcgi";

/// php-fpm and cgi-fcgi, installed with apt (as .ci/run does) when missing.
fn tools() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| common::apt_install(&["php8.2-fpm", "libfcgi-bin"], &[FPM, CGI_FCGI]));
}

/// A php-fpm master with a static pool of 2 workers, stopped on drop.
struct Fpm {
    master: Child,
    port: u16,
    dir: PathBuf,
}

impl Fpm {
    /// A server with PHP's built-in defaults only (`-n`).
    fn start(dir: &Path, ini: &[(&str, String)], env: &[(&str, String)]) -> Fpm {
        Fpm::launch(dir, ini, env, false)
    }

    /// A server with Debian's php.ini for php-fpm and the extensions it loads, as a real
    /// application needs them.
    fn start_with_php_ini(dir: &Path, ini: &[(&str, String)]) -> Fpm {
        Fpm::launch(dir, ini, &[], true)
    }

    fn launch(dir: &Path, ini: &[(&str, String)], env: &[(&str, String)], php_ini: bool) -> Fpm {
        tools();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let conf = dir.join("fpm.conf");
        std::fs::write(
            &conf,
            format!(
                "[global]\nerror_log = {log}\ndaemonize = no\npid = {pid}\n\
                 [www]\nlisten = 127.0.0.1:{port}\npm = static\npm.max_children = 2\n\
                 catch_workers_output = yes\nclear_env = no\n",
                log = dir.join("fpm.log").display(),
                pid = dir.join("fpm.pid").display(),
            ),
        )
        .unwrap();
        let mut cmd = Command::new(FPM);
        if !php_ini {
            cmd.arg("-n");
        }
        cmd.args(["-F", "-R", "-y"]).arg(&conf);
        cmd.arg("-d")
            .arg(format!("extension={}", common::extension().display()));
        for (k, v) in ini {
            cmd.arg("-d").arg(format!("{k}={v}"));
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let master = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting php-fpm");
        let fpm = Fpm {
            master,
            port,
            dir: dir.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "php-fpm did not listen: {}",
                std::fs::read_to_string(dir.join("fpm.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        fpm
    }

    /// Where it listens, for zopt's FastCGI client.
    fn address(&self) -> zopt::fastcgi::Address {
        zopt::fastcgi::Address::Tcp(format!("127.0.0.1:{}", self.port))
    }

    /// The body of one GET of `script` (a path under the app directory).
    fn get(&self, script: &Path, query: &str) -> String {
        let out = Command::new("timeout")
            .arg("90")
            .arg(CGI_FCGI)
            .args(["-bind", "-connect"])
            .arg(format!("127.0.0.1:{}", self.port))
            .env("SCRIPT_FILENAME", script)
            .env("REQUEST_METHOD", "GET")
            .env("QUERY_STRING", query)
            .output()
            .expect("running cgi-fcgi");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match text.split_once("\r\n\r\n") {
            Some((_, body)) => body.to_string(),
            None => text,
        }
    }

    /// The worker processes (children of the master).
    fn workers(&self) -> Vec<u32> {
        let master = self.master.id();
        let mut pids = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(master) {
                pids.push(pid);
            }
        }
        pids.sort();
        pids
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("fpm.log")).unwrap_or_default()
    }
}

impl Drop for Fpm {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.master.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.master.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.master.kill();
        let _ = self.master.wait();
    }
}

fn kill9(pid: u32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A small application: a page that requires three library files (classes with
/// inheritance, an interface, a trait, functions, a closure, static variables, constant
/// arrays with non-ASCII keys) and prints what it computed; a status script.
fn app(dir: &Path) -> PathBuf {
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    let files = [
        (
            "shapes.php",
            r#"<?php
interface Shape { public function area(): float; }
trait Named { public function name(): string { return static::class; } }
abstract class Base implements Shape { use Named; const UNITS = ['m²' => 'square metres', 'é' => 'e-acute'];
    public function describe(): string { return sprintf("%s %.2f %s", $this->name(), $this->area(), self::UNITS['m²']); } }
final class Circle extends Base { public function __construct(private float $r) {} public function area(): float { return M_PI * $this->r ** 2; } }
final class Rect extends Base { public function __construct(private float $w, private float $h) {} public function area(): float { return $this->w * $this->h; } }
"#,
        ),
        (
            "util.php",
            r#"<?php
function counter(): int { static $n = 0; return ++$n; }
function total(array $shapes): float { return array_sum(array_map(fn(Shape $s) => $s->area(), $shapes)); }
const GREETING = "héllo";
"#,
        ),
        (
            "render.php",
            r#"<?php
namespace View;
function render(array $lines): string { $out = ''; foreach ($lines as $k => $v) { $out .= "$k: $v\n"; } return $out; }
class Table { public static array $rows = []; public static function add(string $k, string $v): void { self::$rows[$k] = $v; } }
"#,
        ),
        (
            "page.php",
            r#"<?php
require_once __DIR__ . '/shapes.php';
require_once __DIR__ . '/util.php';
require_once __DIR__ . '/render.php';
if (isset($_GET['sleep'])) { usleep((int) $_GET['sleep'] * 1000); }
$shapes = [new Circle(1.5), new Rect(2, 3.25), new Circle(0.5)];
foreach ($shapes as $i => $s) { View\Table::add("shape $i", $s->describe()); }
View\Table::add('total', sprintf('%.3f', total($shapes)));
View\Table::add('counter', (string) (counter() + counter()));
View\Table::add('greeting', GREETING . ' ' . Base::UNITS['é']);
$key = 'é'; View\Table::add('lookup', isset(Base::UNITS[$key]) ? 'found' : 'missing');
echo View\render(View\Table::$rows);
"#,
        ),
        (
            "status.php",
            r#"<?php
$s = zopt_get_status(false);
$s['worker'] = getmypid();
echo json_encode($s);
"#,
        ),
    ];
    for (name, text) in files {
        std::fs::write(app.join(name), text).unwrap();
    }
    app
}

/// What `php -n` prints for the page, without zopt.
fn reference(page: &Path) -> String {
    let out = common::php().arg("-n").arg(page).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("lookup: found"), "{text}");
    text
}

fn status(fpm: &Fpm, app: &Path) -> Value {
    let body = fpm.get(&app.join("status.php"), "");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("status {body:?}: {e}"))
}

fn shm_ini() -> Vec<(&'static str, String)> {
    vec![("zopt.memory_consumption", "32".into())]
}

/// Two pages at once, so that both workers serve one (each is busy `sleep_ms`): the
/// statuses of both workers afterwards.
fn both_workers(fpm: &Fpm, app: &Path, want: &str) -> Vec<Value> {
    let page = app.join("page.php");
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..10 {
        std::thread::scope(|s| {
            let a = s.spawn(|| fpm.get(&page, "sleep=400"));
            std::thread::sleep(Duration::from_millis(100));
            let b = s.spawn(|| fpm.get(&page, "sleep=400"));
            assert_eq!(a.join().unwrap(), want);
            assert_eq!(b.join().unwrap(), want);
        });
        // A worker's status: ask while the other is kept busy.
        for _ in 0..2 {
            std::thread::scope(|s| {
                let busy = s.spawn(|| fpm.get(&page, "sleep=300"));
                std::thread::sleep(Duration::from_millis(100));
                let st = status(fpm, app);
                seen.insert(st["worker"].as_u64().unwrap(), st);
                assert_eq!(busy.join().unwrap(), want);
            });
        }
        if seen.len() >= 2 {
            break;
        }
    }
    assert!(seen.len() >= 2, "only one worker answered: {seen:?}");
    seen.into_values().collect()
}

#[test]
fn two_workers_share_one_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let want = reference(&app.join("page.php"));
    let fpm = Fpm::start(tmp.path(), &shm_ini(), &[]);

    // The first page compiles and stores page.php and its three files.
    assert_eq!(fpm.get(&app.join("page.php"), ""), want);
    let statuses = both_workers(&fpm, &app, &want);
    let compiled: u64 = statuses
        .iter()
        .map(|s| s["compiles"].as_u64().unwrap())
        .sum();
    // page.php + 3 libraries + status.php, each compiled once by one worker of the two.
    assert_eq!(compiled, 5, "{statuses:?}");
    // The worker that did not compile the page (it may have compiled status.php) served
    // the page's 4 scripts from what the other stored.
    assert!(
        statuses
            .iter()
            .any(|s| s["compiles"].as_u64().unwrap() <= 1 && s["shm_hits"].as_u64().unwrap() >= 4),
        "no worker served from what the other stored: {statuses:?}"
    );
    let shm = &statuses[0]["shm"];
    assert_eq!(shm["scripts"], 5, "{shm}");
    assert_eq!(shm["stores"], 5, "{shm}");
    assert_eq!(shm["writer_deaths"], 0);
    // At least the two pages served at once: 4 scripts each from shared memory.
    assert!(shm["hits"].as_u64().unwrap() >= 8, "{shm}");

    // A changed source is picked up (revalidate_freq=2 by default) and stored once more.
    std::thread::sleep(Duration::from_millis(2100));
    let util = app.join("util.php");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("héllo", "hallo")).unwrap();
    let changed = want.replace("héllo", "hallo");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = fpm.get(&app.join("page.php"), "");
        if got == changed {
            break;
        }
        assert_eq!(got, want, "neither the old page nor the new one");
        assert!(Instant::now() < deadline, "the change was never served");
        std::thread::sleep(Duration::from_millis(200));
    }
    let s = status(&fpm, &app);
    assert!(s["shm"]["stale"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["shm"]["scripts"], 5, "{s}");
    assert!(!fpm.log().contains("zopt:"), "{}", fpm.log());
}

/// The cache's PHP functions across workers, with `validate_timestamps=0` (a changed
/// source is only seen once invalidated): `zopt_invalidate` from one worker makes every
/// worker serve the new source, `zopt_reset` retires every script, and `zopt_compile_file`
/// in one worker primes the segment for the other.
#[test]
fn invalidate_reset_and_compile_file_act_for_every_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let lib = |name: &str| app.join(name).display().to_string();
    std::fs::write(
        app.join("admin.php"),
        format!(
            r#"<?php
$libs = ['{}', '{}', '{}'];
switch ($_GET['do'] ?? '') {{
    case 'invalidate': var_dump(zopt_invalidate($libs[1], true)); break;
    case 'reset': var_dump(zopt_reset()); break;
    case 'prime': foreach ($libs as $f) {{ var_dump(zopt_compile_file($f)); }} break;
}}
"#,
            lib("shapes.php"),
            lib("util.php"),
            lib("render.php")
        ),
    )
    .unwrap();
    let page = app.join("page.php");
    let admin = app.join("admin.php");
    let want = reference(&page);
    let mut ini = shm_ini();
    ini.push(("zopt.validate_timestamps", "0".into()));
    let fpm = Fpm::start(tmp.path(), &ini, &[]);

    // Priming from the admin script: its worker compiles the three libraries (their
    // functions are bound there, its classes are not), and the page, in whichever worker,
    // compiles only itself.
    assert_eq!(
        fpm.get(&admin, "do=prime"),
        "bool(true)\nbool(true)\nbool(true)\n"
    );
    let statuses = both_workers(&fpm, &app, &want);
    let compiled: u64 = statuses
        .iter()
        .map(|s| s["compiles"].as_u64().unwrap())
        .sum();
    // admin.php, the three libraries, page.php and status.php, each compiled once.
    assert_eq!(compiled, 6, "{statuses:?}");
    let shm = &statuses[0]["shm"];
    assert_eq!(shm["scripts"], 6, "{statuses:?}");
    assert_eq!(shm["stores"], 6, "{statuses:?}");

    // Changed on disk: with validate_timestamps=0 the old page stays until invalidated.
    let util = app.join("util.php");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("héllo", "hallo")).unwrap();
    let changed = want.replace("héllo", "hallo");
    assert_eq!(fpm.get(&page, ""), want);
    assert_eq!(fpm.get(&admin, "do=invalidate"), "bool(true)\n");
    for st in both_workers(&fpm, &app, &changed) {
        assert!(st["shm"]["invalidations"].as_u64().unwrap() >= 1, "{st}");
    }

    // A reset retires every script: both workers compile and store them again.
    assert_eq!(fpm.get(&admin, "do=reset"), "bool(true)\n");
    let statuses = both_workers(&fpm, &app, &changed);
    let shm = &statuses[0]["shm"];
    assert!(shm["invalidations"].as_u64().unwrap() >= 7, "{shm}");
    assert!(shm["scripts"].as_u64().unwrap() >= 5, "{shm}");
    assert!(!fpm.log().contains("zopt:"), "{}", fpm.log());
}

#[test]
fn workers_killed_mid_request_and_mid_store_leave_the_cache_usable() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let want = reference(&app.join("page.php"));
    let marker = tmp.path().join("pause-next-store");
    let fpm = Fpm::start(
        tmp.path(),
        &shm_ini(),
        &[("ZOPT_TEST_PAUSE_STORE", marker.display().to_string())],
    );
    // status.php is stored first, so that asking for it never needs the writer lock.
    let _ = status(&fpm, &app);

    // A worker killed while it holds the writer lock, its entry written but unpublished.
    std::fs::write(&marker, "").unwrap();
    let used_before = status(&fpm, &app)["shm"]["data_used"].as_u64().unwrap();
    let (stuck, other) = std::thread::scope(|s| {
        let page = s.spawn(|| fpm.get(&app.join("page.php"), ""));
        let deadline = Instant::now() + Duration::from_secs(30);
        let other = loop {
            if marker.exists() {
                assert!(Instant::now() < deadline, "no store paused");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            let st = status(&fpm, &app);
            // The paused store's allocation is visible; the worker answering is the other.
            assert!(
                st["shm"]["data_used"].as_u64().unwrap() > used_before,
                "{st}"
            );
            break st["worker"].as_u64().unwrap() as u32;
        };
        let stuck: Vec<u32> = fpm.workers().into_iter().filter(|&p| p != other).collect();
        assert_eq!(stuck.len(), 1, "workers {:?}, other {other}", fpm.workers());
        kill9(stuck[0]);
        // The killed request gets no page.
        assert_ne!(page.join().unwrap(), want);
        (stuck[0], other)
    });
    let _ = other;

    // The next store takes over the dead worker's lock; every page is right.
    let deadline = Instant::now() + Duration::from_secs(20);
    while fpm.workers().len() < 2 || fpm.workers().contains(&stuck) {
        assert!(
            Instant::now() < deadline,
            "php-fpm did not replace the worker"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..6 {
        assert_eq!(fpm.get(&app.join("page.php"), ""), want);
    }
    let statuses = both_workers(&fpm, &app, &want);
    let shm = &statuses[0]["shm"];
    assert_eq!(shm["writer_deaths"], 1, "{shm}");
    assert!(shm["wasted"].as_u64().unwrap() > 0, "{shm}");
    assert_eq!(shm["scripts"], 5, "{shm}");

    // A worker killed in the middle of a request (not storing): the rest keep serving from
    // shared memory, and its replacement compiles nothing.
    let before = fpm.workers();
    let victim = std::thread::scope(|s| {
        let page = s.spawn(|| fpm.get(&app.join("page.php"), "sleep=3000"));
        std::thread::sleep(Duration::from_millis(300));
        let busy_other = status(&fpm, &app)["worker"].as_u64().unwrap() as u32;
        let victim: Vec<u32> = fpm
            .workers()
            .into_iter()
            .filter(|&p| p != busy_other)
            .collect();
        assert_eq!(victim.len(), 1);
        kill9(victim[0]);
        assert_ne!(page.join().unwrap(), want);
        victim[0]
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while fpm.workers().len() < 2 || fpm.workers().contains(&victim) {
        assert!(
            Instant::now() < deadline,
            "php-fpm did not replace the worker"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let statuses = both_workers(&fpm, &app, &want);
    let replacement: Vec<&Value> = statuses
        .iter()
        .filter(|s| {
            !before
                .iter()
                .any(|&p| s["worker"].as_u64() == Some(u64::from(p)))
        })
        .collect();
    assert_eq!(replacement.len(), 1, "{before:?} {statuses:?}");
    assert_eq!(
        replacement[0]["compiles"], 0,
        "the replacement worker compiled"
    );
    assert!(replacement[0]["shm_hits"].as_u64().unwrap() >= 4);
    assert_eq!(statuses[0]["shm"]["writer_deaths"], 1);
}

/// After its first hit a script is persisted in PHP's run-time form, and later hits of both
/// workers bind that form without rebuilding anything. With `zopt.verify=1` every script
/// bound (from the run-time form too) is captured again and compared with its entry: a
/// difference would be a warning in the page, which must stay `php -n`'s.
#[test]
fn hits_bind_the_run_time_form_and_serve_identical_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let want = reference(&app.join("page.php"));
    let mut ini = shm_ini();
    ini.push(("zopt.verify", "1".into()));
    let fpm = Fpm::start(tmp.path(), &ini, &[]);
    for _ in 0..6 {
        assert_eq!(fpm.get(&app.join("page.php"), ""), want);
    }
    let statuses = both_workers(&fpm, &app, &want);
    let sum = |k: &str| -> u64 { statuses.iter().map(|s| s[k].as_u64().unwrap()).sum() };
    // page.php and its three libraries (status.php too, once it was hit twice).
    assert!(sum("run_time_stores") >= 4, "{statuses:?}");
    assert_eq!(sum("run_time_refusals"), 0, "{statuses:?}");
    // Pages after the first two bind their four scripts from the run-time form.
    assert!(sum("run_time_hits") >= 4 * 4, "{statuses:?}");
    assert!(
        statuses
            .iter()
            .all(|s| s["run_time_hits"].as_u64().unwrap() >= 4),
        "a worker never bound a run-time form: {statuses:?}"
    );
    assert!(!fpm.log().contains("zopt:"), "{}", fpm.log());
}

/// A worker killed (SIGKILL) while it holds the writer lock persisting a script's run-time
/// form: the form is never published half-written, the next writer recovers the lock and
/// counts the allocation as wasted, the script gets its run-time form after all, and every
/// page stays `php -n`'s.
#[test]
fn worker_killed_while_persisting_a_run_time_form_leaves_the_cache_usable() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let want = reference(&app.join("page.php"));
    let marker = tmp.path().join("pause-next-run-time-form");
    let fpm = Fpm::start(
        tmp.path(),
        &shm_ini(),
        &[(
            "ZOPT_TEST_PAUSE_RUN_TIME_FORM",
            marker.display().to_string(),
        )],
    );
    // status.php stored and in run-time form first, so that asking for it never needs the
    // writer lock; page.php and its libraries stored.
    for _ in 0..3 {
        let _ = status(&fpm, &app);
    }
    assert_eq!(fpm.get(&app.join("page.php"), ""), want);

    std::fs::write(&marker, "").unwrap();
    let stuck = std::thread::scope(|s| {
        let page = s.spawn(|| fpm.get(&app.join("page.php"), ""));
        let deadline = Instant::now() + Duration::from_secs(30);
        while marker.exists() {
            assert!(Instant::now() < deadline, "no run-time form paused");
            std::thread::sleep(Duration::from_millis(50));
        }
        let other = status(&fpm, &app)["worker"].as_u64().unwrap() as u32;
        let stuck: Vec<u32> = fpm.workers().into_iter().filter(|&p| p != other).collect();
        assert_eq!(stuck.len(), 1, "workers {:?}, other {other}", fpm.workers());
        kill9(stuck[0]);
        assert_ne!(page.join().unwrap(), want);
        stuck[0]
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while fpm.workers().len() < 2 || fpm.workers().contains(&stuck) {
        assert!(
            Instant::now() < deadline,
            "php-fpm did not replace the worker"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..6 {
        assert_eq!(fpm.get(&app.join("page.php"), ""), want);
    }
    let statuses = both_workers(&fpm, &app, &want);
    let shm = &statuses[0]["shm"];
    assert_eq!(shm["writer_deaths"], 1, "{shm}");
    assert!(shm["wasted"].as_u64().unwrap() > 0, "{shm}");
    assert_eq!(shm["scripts"], 5, "{shm}");
    let sum = |k: &str| -> u64 { statuses.iter().map(|s| s[k].as_u64().unwrap()).sum() };
    assert_eq!(sum("run_time_refusals"), 0, "{statuses:?}");
    assert!(
        statuses
            .iter()
            .all(|s| s["run_time_hits"].as_u64().unwrap() >= 4),
        "a worker never bound a run-time form: {statuses:?}"
    );
}

/// Every fixture program as a php-fpm page, four times from one zopt server with shared
/// memory (compiled and stored; rebuilt and persisted in run-time form; then bound from the
/// run-time form by either worker), against the same page from a server without a cache:
/// identical every time. Where OPcache's page differs from the uncached one (a class whose
/// parent is declared later in the file is bound before the script runs when a cache loads
/// it, as `zend_accel_do_delayed_early_binding` does), OPcache's page is the reference.
#[test]
fn every_fixture_is_the_same_page_from_shared_memory() {
    // php-fpm refuses a SCRIPT_FILENAME with `..` in it: the canonical path.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/php")
        .canonicalize()
        .unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "php"))
        .collect();
    files.sort();
    assert!(
        files.len() > 100,
        "fixtures not found under {}",
        fixtures.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let plain_dir = tmp.path().join("plain");
    let zopt_dir = tmp.path().join("zopt");
    std::fs::create_dir_all(&plain_dir).unwrap();
    std::fs::create_dir_all(&zopt_dir).unwrap();
    let plain = Fpm::start(&plain_dir, &[], &[]);
    let opcache_dir = tmp.path().join("opcache");
    std::fs::create_dir_all(&opcache_dir).unwrap();
    let opcache = Fpm::start(
        &opcache_dir,
        &[
            ("zend_extension", "opcache".into()),
            ("opcache.enable", "1".into()),
            ("opcache.file_update_protection", "0".into()),
        ],
        &[],
    );
    let mut ini = shm_ini();
    ini.push(("zopt.memory_consumption", "64".into()));
    ini.push(("zopt.verify", "1".into()));
    let zopt = Fpm::start(&zopt_dir, &ini, &[("ZOPT_DEBUG_RUN_TIME_FORM", "1".into())]);
    let mut differing = Vec::new();
    for f in &files {
        let want = plain.get(f, "");
        assert!(
            !want.contains("File not found.") && !want.contains("Access denied."),
            "{}: {want}",
            f.display()
        );
        // OPcache's page, once it serves the script from its cache.
        let mut cached = String::new();
        for _ in 0..3 {
            cached = opcache.get(f, "");
        }
        for round in 0..4 {
            let got = zopt.get(f, "");
            if got != want && got != cached {
                differing.push(format!(
                    "{} (request {}): first difference at byte {}",
                    f.display(),
                    round + 1,
                    got.bytes()
                        .zip(want.bytes())
                        .position(|(a, b)| a != b)
                        .unwrap_or(got.len().min(want.len()))
                ));
                break;
            }
        }
    }
    // What the workers did (each asked a few times: the pool picks the worker).
    let status_page = tmp.path().join("status.php");
    std::fs::write(
        &status_page,
        "<?php echo json_encode(zopt_get_status(false));",
    )
    .unwrap();
    let mut workers = std::collections::BTreeMap::new();
    for _ in 0..8 {
        let st: Value = serde_json::from_str(&zopt.get(&status_page, "")).unwrap();
        workers.insert(st["pid"].as_u64().unwrap(), st);
    }
    let sum = |k: &str| -> u64 { workers.values().map(|s| s[k].as_u64().unwrap()).sum() };
    eprintln!(
        "{} fixtures; run-time forms: {} stored, {} refused, {} hits bound from them",
        files.len(),
        sum("run_time_stores"),
        sum("run_time_refusals"),
        sum("run_time_hits")
    );
    let log = zopt.log();
    // Every fixture (enums, traits, closures, statics, attributes, early binding) persists.
    assert_eq!(sum("run_time_refusals"), 0, "{workers:?}\n{log}");
    assert!(
        sum("run_time_hits") >= files.len() as u64,
        "{workers:?}\n{}",
        log.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    for line in log
        .lines()
        .filter(|l| l.contains("zopt:") || l.contains("exited"))
        .take(40)
    {
        eprintln!("{line}");
    }
    assert!(differing.is_empty(), "{differing:#?}");
    assert!(
        !log.contains("cannot serve") && !log.contains("not loaded exactly"),
        "{log}"
    );
}

/// `include_once` / `require_once` of one script under several names — its real path, a
/// path through a symlinked directory, a relative name — includes it once, whether the
/// names are resolved by PHP or found in shared memory (`zend_resolve_path` answers an exact
/// real path of a fresh entry without `realpath`), and whether the name is a string built
/// at run time (which zopt hands the entry's hash of the path) or an interned literal
/// (whose hash PHP computed): every page is `php -n`'s.
#[test]
fn include_once_under_several_names_includes_once() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, tmp.path().join("link")).unwrap();
    std::fs::write(
        real.join("lib.php"),
        "<?php function lib_once(): string { return 'lib'; } echo \"lib loaded\\n\";\n",
    )
    .unwrap();
    std::fs::write(
        real.join("page.php"),
        format!(
            "<?php\n$d = __DIR__;\nvar_dump(require_once \"$d/lib.php\");\nvar_dump(require_once '{real}/lib.php');\n\
             var_dump(require_once '{link}/lib.php');\nvar_dump(require_once \"$d/lib.php\");\n\
             var_dump(include_once __DIR__ . '/./lib.php');\nchdir(__DIR__);\nvar_dump(include_once 'lib.php');\n\
             echo lib_once(), ' ', count(get_included_files()), \"\\n\";\n",
            real = real.display(),
            link = tmp.path().join("link").display()
        ),
    )
    .unwrap();
    let page = real.join("page.php");
    let want = {
        let out = common::php().arg("-n").arg(&page).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(
        want.contains("lib loaded") && want.contains("lib 2"),
        "{want}"
    );
    let fpm = Fpm::start(tmp.path(), &shm_ini(), &[]);
    for _ in 0..6 {
        assert_eq!(fpm.get(&page, ""), want);
    }
    assert!(!fpm.log().contains("zopt:"), "{}", fpm.log());
}

/// A script whose main op_array only declares classes bound to their parent when it is
/// loaded (its `ZEND_DECLARE_CLASS_DELAYED` ops and a `RETURN`) is handed to PHP as that
/// `RETURN` alone, which PHP does not execute: the page is the same as without a cache
/// whether the parent is declared already, is autoloaded by the op itself (the script then
/// runs whole), the file returns a value of its own, or the class is declared a second time
/// (the op's error). An include whose result is unused gets no op_array at all for such a
/// script (`ZEND_FAKE_OP_ARRAY`, as for a file included already), nor for one that only
/// returns a value.
#[test]
fn scripts_declaring_early_bound_classes_serve_the_uncached_page() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    let files = [
        (
            "base.php",
            "<?php\nclass Base { public function who(): string { return static::class . ' < ' . self::class; } }\n",
        ),
        ("child.php", "<?php\nclass Child extends Base {}\n"),
        (
            "two.php",
            "<?php\nclass First extends Base {}\nclass Second extends Child {}\n",
        ),
        ("answer.php", "<?php\nclass Answer extends Base {}\nreturn 42;\n"),
        ("lazy.php", "<?php\nclass Lazy extends Base {}\n"),
        ("late.php", "<?php\nclass Late extends Lazy {}\n"),
        ("twice.php", "<?php\nclass Twice extends Base {}\n"),
        ("plain.php", "<?php\nclass Plain {}\n"),
        ("config.php", "<?php\nreturn ['answer' => 42];\n"),
        ("counted.php", "<?php\nclass Counted extends Base {}\n$GLOBALS['counted'] = ($GLOBALS['counted'] ?? 0) + 1;\n"),
        (
            "status.php",
            "<?php\n$s = zopt_get_status(false);\n$s['worker'] = getmypid();\necho json_encode($s);\n",
        ),
        (
            "page.php",
            r#"<?php
spl_autoload_register(function ($c) { echo "autoload $c\n"; if ($c === 'Lazy') require __DIR__ . '/lazy.php'; });
var_dump(require_once __DIR__ . '/base.php');
var_dump(require_once __DIR__ . '/child.php');
var_dump(require_once __DIR__ . '/child.php');
var_dump(include __DIR__ . '/two.php');
var_dump(require_once __DIR__ . '/answer.php');
var_dump(require __DIR__ . '/late.php');
foreach (['Child', 'First', 'Second', 'Answer', 'Late'] as $c) { echo (new $c)->who(), ' ', get_parent_class($c), "\n"; }
var_dump(include __DIR__ . '/twice.php');
// Includes whose result is unused, of files that only declare classes or return a value.
require __DIR__ . '/plain.php';
include_once __DIR__ . '/plain.php';
include __DIR__ . '/config.php';
eval('require_once __DIR__ . "/config.php";');
var_dump(class_exists('Plain', false), require __DIR__ . '/config.php', include_once __DIR__ . '/config.php');
include __DIR__ . '/counted.php';
var_dump($counted, get_parent_class('Counted'));
if (isset($_GET['again'])) { include __DIR__ . '/twice.php'; }
echo "end\n";
"#,
        ),
    ];
    for (name, text) in files {
        std::fs::write(app.join(name), text).unwrap();
    }
    let page = app.join("page.php");
    let plain_dir = tmp.path().join("plain");
    let zopt_dir = tmp.path().join("zopt");
    std::fs::create_dir_all(&plain_dir).unwrap();
    std::fs::create_dir_all(&zopt_dir).unwrap();
    let plain = Fpm::start(&plain_dir, &[], &[]);
    let want = plain.get(&page, "");
    let want_again = plain.get(&page, "again=1");
    assert!(
        want.contains("Late < Base Lazy") && want.contains("int(42)") && want.ends_with("end\n"),
        "{want}"
    );
    assert!(
        want.contains("[\"answer\"]=>") && want.contains("string(4) \"Base\""),
        "{want}"
    );
    assert!(
        want_again.contains("Cannot declare class Twice"),
        "{want_again}"
    );
    let fpm = Fpm::start(&zopt_dir, &shm_ini(), &[]);
    // Compiled and stored, persisted in run-time form, then bound from it by either worker.
    for _ in 0..6 {
        assert_eq!(fpm.get(&page, ""), want);
        assert_eq!(fpm.get(&page, "again=1"), want_again);
    }
    let st = status(&fpm, &app);
    assert!(st["run_time_hits"].as_u64().unwrap() > 0, "{st}");
    assert!(!fpm.log().contains("zopt:"), "{}", fpm.log());
}

/// `zopt cache warm --fastcgi` fills a running php-fpm's shared memory before any page is
/// requested: the page is then served without a compile, a second warm finds every file
/// fresh, `force` compiles them again, and a file PHP cannot compile is reported with PHP's
/// message while the others are cached.
#[test]
fn zopt_cache_warm_fills_a_running_servers_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let app = app(tmp.path());
    let want = reference(&app.join("page.php"));
    let fpm = Fpm::start(tmp.path(), &shm_ini(), &[]);
    let address = fpm.address();
    let scripts = tmp.path().join("scripts");
    std::fs::create_dir(&scripts).unwrap();
    let warm = |force: bool, path: &Path| {
        zopt::cache::warm_fastcgi(&address, &scripts, force, &[path.to_path_buf()])
    };

    let report = warm(false, &app).unwrap();
    // page.php, its three libraries and status.php.
    assert_eq!((report.stored, report.fresh), (5, 0), "{report:?}");
    assert_eq!(report.directives["zopt.memory_consumption"], 32 << 20);
    let before = status(&fpm, &app);
    assert_eq!(fpm.get(&app.join("page.php"), ""), want);
    let after = status(&fpm, &app);
    // Nothing stored since the warm (its own script's entry retired), and the page's four
    // scripts came from the segment.
    assert_eq!(before["shm"]["stores"], 6, "{before}");
    assert_eq!(after["shm"]["stores"], 6, "{after}");
    assert_eq!(after["shm"]["scripts"], 5, "{after}");
    assert!(
        after["shm"]["hits"].as_u64().unwrap() >= before["shm"]["hits"].as_u64().unwrap() + 4,
        "{before}\n{after}"
    );
    // The warm script is gone from the directory it was written to.
    assert_eq!(std::fs::read_dir(&scripts).unwrap().count(), 0);

    let again = warm(false, &app).unwrap();
    assert_eq!((again.stored, again.fresh), (0, 5), "{again:?}");
    let forced = warm(true, &app.join("page.php")).unwrap();
    assert_eq!((forced.stored, forced.fresh), (1, 0), "{forced:?}");
    assert_eq!(fpm.get(&app.join("page.php"), ""), want);

    let broken = tmp.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(
        broken.join("ok.php"),
        "<?php\nfunction fine() { return 1; }\n",
    )
    .unwrap();
    std::fs::write(broken.join("syntax.php"), "<?php\nfunction f( {\n").unwrap();
    let err = warm(false, &broken).unwrap_err();
    assert_eq!(format!("{err:#}"), "1 file(s) could not be cached");
    assert!(status(&fpm, &app)["shm"]["scripts"].as_u64().unwrap() >= 6);

    // A server without the cache is refused by name.
    drop(fpm);
    let bare = tempfile::tempdir().unwrap();
    let fpm = Fpm::start(bare.path(), &[], &[]);
    let address = fpm.address();
    let err = zopt::cache::warm_fastcgi(&address, &scripts, false, std::slice::from_ref(&app))
        .unwrap_err();
    assert!(err.to_string().contains("has zopt's cache off"), "{err:#}");
}

/// MediaWiki (Debian's, on a SQLite wiki of the test's own) served by php-fpm from zopt's
/// shared memory, optimized at the default level: every page, API answer and ResourceLoader
/// response is the one the same php-fpm serves without any opcode cache, on the first
/// request (compiled and stored) and on the next ones (served from shared memory by either
/// worker).
#[test]
fn mediawiki_is_served_from_shared_memory_as_without_a_cache() {
    let (wiki, settings) = apps::install_mediawiki();
    let requests: Vec<(String, Vec<(String, String)>)> = apps::MEDIAWIKI_REQUESTS
        .iter()
        .map(|&(script, query)| {
            let params = apps::mediawiki_cgi_params(&settings, script, query);
            (format!("{script}?{query}"), params)
        })
        .collect();
    let reference = assert_served_from_shared_memory_as_without_a_cache(
        wiki.path(),
        &requests,
        &apps::mediawiki_normalize(),
        500,
    );
    assert!(
        reference[0].contains("MediaWiki has been installed"),
        "{}",
        reference[0]
    );
}

/// WordPress (Debian's, with the block theme and the classic one, on a MariaDB server of
/// the test's own) served by php-fpm from zopt's shared memory, optimized at the default
/// level: every page, feed, REST answer and sitemap is the one the same php-fpm serves
/// without any opcode cache, compiled and stored, then served from shared memory.
#[test]
fn wordpress_is_served_from_shared_memory_as_without_a_cache() {
    let wordpress = apps::install_wordpress();
    let requests: Vec<(String, Vec<(String, String)>)> = apps::WORDPRESS_REQUESTS
        .iter()
        .map(|&(theme, query)| {
            let params = apps::wordpress_cgi_params(&wordpress, theme, query);
            (format!("{theme} /?{query}"), params)
        })
        .collect();
    let reference = assert_served_from_shared_memory_as_without_a_cache(
        wordpress.dir.path(),
        &requests,
        &[],
        300,
    );
    // The post with blocks, by its request rather than its place in the list.
    let post = apps::WORDPRESS_REQUESTS
        .iter()
        .position(|&r| r == ("", "p=4"))
        .expect("the requests include the post with blocks");
    assert!(
        reference[post].contains("Premature optimization"),
        "{}",
        reference[post]
    );
}

/// Serves `requests` (a name and the FastCGI parameters of each) with php-fpm (Debian's
/// php.ini) without any opcode cache, once to let the application fill its own caches and
/// once for reference, then three times from zopt's shared memory at the default level:
/// every response must be the reference (after `normalize`), at least `min_stores` scripts
/// stored and served again, no writer death, no warning. `dir` gets a status script.
/// Returns the reference responses.
fn assert_served_from_shared_memory_as_without_a_cache(
    dir: &Path,
    requests: &[(String, Vec<(String, String)>)],
    normalize: &[zopt::exec_diff::Normalize],
    min_stores: u64,
) -> Vec<String> {
    use zopt::fastcgi;
    let status_script = dir.join("status.php");
    std::fs::write(
        &status_script,
        "<?php echo json_encode(zopt_get_status(false));",
    )
    .unwrap();
    let get = |fpm: &Fpm, params: &[(String, String)]| -> String {
        let address = fpm.address();
        let params: Vec<(&str, &str)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let r = fastcgi::request(&address, &params, b"", Duration::from_secs(120)).unwrap();
        let status = r.status();
        let mut body = r.body;
        for n in normalize {
            body = n.apply(&body);
        }
        format!("status {status}\n{}", String::from_utf8_lossy(&body))
    };

    let plain_dir = tempfile::tempdir().unwrap();
    let plain = Fpm::start_with_php_ini(plain_dir.path(), &[("opcache.enable", "0".into())]);
    for (_, params) in requests {
        get(&plain, params);
    }
    let reference: Vec<String> = requests
        .iter()
        .map(|(_, params)| get(&plain, params))
        .collect();
    drop(plain);
    assert!(reference[0].starts_with("status 200\n"), "{}", reference[0]);

    let cached_dir = tempfile::tempdir().unwrap();
    let cached = Fpm::start_with_php_ini(
        cached_dir.path(),
        &[
            ("opcache.enable", "0".into()),
            ("zopt.memory_consumption", "128".into()),
        ],
    );
    for round in 0..3 {
        for (k, (name, params)) in requests.iter().enumerate() {
            let page = get(&cached, params);
            assert!(
                page == reference[k],
                "round {round}, {name}: the page differs from the one served without a \
                 cache:\n{}",
                first_difference(&reference[k], &page)
            );
        }
    }
    let address = cached.address();
    let status_path = status_script.display().to_string();
    let r = fastcgi::request(
        &address,
        &[
            ("SCRIPT_FILENAME", status_path.as_str()),
            ("REQUEST_METHOD", "GET"),
        ],
        b"",
        Duration::from_secs(30),
    )
    .unwrap();
    let status: Value = serde_json::from_slice(&r.body).unwrap();
    let shm = &status["shm"];
    eprintln!("zopt status after the rounds: {shm}");
    // The later rounds were served from shared memory.
    assert!(shm["stores"].as_u64().unwrap() >= min_stores, "{shm}");
    assert!(
        shm["hits"].as_u64().unwrap() >= 2 * shm["stores"].as_u64().unwrap(),
        "{shm}"
    );
    assert_eq!(shm["writer_deaths"], 0, "{shm}");
    assert!(!cached.log().contains("zopt:"), "{}", cached.log());
    reference
}

/// The first line where two pages differ, with its number.
fn first_difference(want: &str, got: &str) -> String {
    match want.lines().zip(got.lines()).position(|(a, b)| a != b) {
        Some(i) => format!(
            "line {}: want {:?}\n got {:?}",
            i + 1,
            want.lines().nth(i).unwrap_or(""),
            got.lines().nth(i).unwrap_or("")
        ),
        None => format!(
            "one ends first ({} and {} lines)",
            want.lines().count(),
            got.lines().count()
        ),
    }
}
