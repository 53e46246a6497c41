//! Helpers shared by the integration tests: locating the extension and PHP, running a
//! record, and checking recordings against PHP's own op_array dumps.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use zend_ir::{Literal, OpArray, Operand, Script};

pub fn extension() -> &'static Path {
    static EXT: OnceLock<PathBuf> = OnceLock::new();
    EXT.get_or_init(|| {
        if let Some(path) = std::env::var_os("ZOPT_PHP_EXTENSION") {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "ZOPT_PHP_EXTENSION={} does not exist",
                path.display()
            );
            return path;
        }
        // This test binary lives in <target>/<profile>/deps/. `cargo test` does not build
        // a cdylib for integration tests, so build it here (a no-op when it is fresh):
        // testing a stale extension would be worse than a missing one.
        let exe = std::env::current_exe().expect("current_exe");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary in <target>/<profile>/deps");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = Command::new(cargo)
            .args(["build", "-p", "zopt-php", "--profile", profile])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("running cargo build -p zopt-php");
        assert!(status.success(), "cargo build -p zopt-php failed");
        let path = profile_dir.join("libzopt_php.so");
        assert!(
            path.is_file(),
            "the extension is missing at {} (set ZOPT_PHP_EXTENSION)",
            path.display()
        );
        path
    })
}

/// Installs the Debian `packages` with apt (as .ci/run does) unless every file of `files`
/// is there already; fails the test when they cannot be installed.
pub fn apt_install(packages: &[&str], files: &[&str]) {
    let present = || files.iter().all(|f| Path::new(f).is_file());
    if present() {
        return;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let mut cmd = Command::new(if root { "apt-get" } else { "sudo" });
    if !root {
        cmd.arg("apt-get");
    }
    cmd.args(["install", "-y", "-qq"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    let status = cmd.status().expect("running apt-get");
    assert!(
        status.success() && present(),
        "these tests need {} (apt-get install {})",
        packages.join(" and "),
        packages.join(" ")
    );
}

pub fn php() -> Command {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let out = Command::new("php").arg("-v").output().unwrap_or_else(|e| {
            panic!(
                "these tests need PHP 8.2 on PATH (apt-get install php8.2-cli php8.2-opcache): \
                 cannot run php: {e}"
            )
        });
        let version = String::from_utf8_lossy(&out.stdout);
        assert!(
            version.starts_with("PHP 8.2."),
            "these tests need PHP 8.2, found: {version}"
        );
    });
    Command::new("php")
}

/// One record run: `php -n` with OPcache (which `-n` does not load by itself) and the
/// extension, compiling `file` without running it.
pub struct Run<'a> {
    pub file: &'a Path,
    pub record_dir: &'a Path,
    pub format: &'a str,
    pub optimization_level: &'a str,
    pub debug_level: &'a str,
    pub code: &'a str,
}

impl Run<'_> {
    pub fn new<'a>(file: &'a Path, record_dir: &'a Path) -> Run<'a> {
        Run {
            file,
            record_dir,
            format: "both",
            optimization_level: "0",
            debug_level: "0x10000",
            code: "opcache_compile_file($argv[1]);",
        }
    }

    pub fn output(&self) -> Output {
        let out = php()
            .arg("-n")
            .args(["-d", "zend_extension=opcache"])
            .args(["-d", "opcache.enable_cli=1"])
            .args(["-d", "opcache.file_update_protection=0"])
            .arg("-d")
            .arg(format!(
                "opcache.optimization_level={}",
                self.optimization_level
            ))
            .arg("-d")
            .arg(format!("opcache.opt_debug_level={}", self.debug_level))
            .arg("-d")
            .arg(format!("extension={}", extension().display()))
            .args(["-d", "zopt.mode=record"])
            .arg("-d")
            .arg(format!("zopt.record_dir={}", self.record_dir.display()))
            .arg("-d")
            .arg(format!("zopt.record_format={}", self.format))
            .args(["-r", self.code, "--"])
            .arg(self.file)
            .output()
            .expect("running php");
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.signal().is_none(),
            "php crashed ({:?}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// `<record_dir>/<absolute path><ext>`.
pub fn recording(record_dir: &Path, file: &Path, ext: &str) -> PathBuf {
    let file = file.canonicalize().expect("canonical script path");
    let mut s = record_dir
        .join(file.strip_prefix("/").unwrap())
        .into_os_string();
    s.push(ext);
    PathBuf::from(s)
}

/// One op_array of PHP's dump.
#[derive(Debug)]
pub struct DumpBlock {
    pub name: String,
    pub lines: u32,
    pub args: u32,
    pub vars: u32,
    pub tmps: u32,
    pub ops: Vec<String>,
    pub live_ranges: Vec<String>,
    pub exceptions: Vec<String>,
}

fn header_field(header: &str, key: &str) -> u32 {
    let start = header.find(&format!("{key}=")).expect(key) + key.len() + 1;
    header[start..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Splits the dump (stderr) into op_arrays. Every block starts with its name line followed
/// by `     ; (lines=N, args=A, vars=V, tmps=T)`.
pub fn parse_dump(stderr: &str) -> Vec<DumpBlock> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut blocks: Vec<DumpBlock> = Vec::new();
    let mut section = "";
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.ends_with(':')
            && lines
                .get(i + 1)
                .is_some_and(|next| next.starts_with("     ; (lines="))
        {
            let header = lines[i + 1];
            blocks.push(DumpBlock {
                name: line.trim_end_matches(':').to_string(),
                lines: header_field(header, "lines"),
                args: header_field(header, "args"),
                vars: header_field(header, "vars"),
                tmps: header_field(header, "tmps"),
                ops: Vec::new(),
                live_ranges: Vec::new(),
                exceptions: Vec::new(),
            });
            section = "ops";
            i += 2;
            continue;
        }
        i += 1;
        let Some(block) = blocks.last_mut() else {
            continue;
        };
        match line {
            "LIVE RANGES:" => section = "live",
            "EXCEPTION TABLE:" => section = "exceptions",
            _ => match section {
                // `%04u ` and the next op number starts an op; other lines continue the
                // previous op (PHP prints string literals raw, newlines included).
                "ops" if op_number(line) == Some(block.ops.len()) => {
                    block.ops.push(line.to_string())
                }
                "ops" => {
                    if let Some(last) = block.ops.last_mut() {
                        last.push('\n');
                        last.push_str(line);
                    }
                }
                "live" if !line.is_empty() => block.live_ranges.push(line.trim().to_string()),
                // PHP omits the newline after an entry with a finally_end: entries can
                // share a line.
                "exceptions" => block.exceptions.extend(
                    line.split("     ")
                        .map(str::trim)
                        .filter(|e| !e.is_empty())
                        .map(str::to_string),
                ),
                _ => {}
            },
        }
    }
    // Each block ends with the blank line before the next header.
    for block in &mut blocks {
        if let Some(last) = block.ops.last_mut() {
            let trimmed = last.trim_end_matches('\n').len();
            last.truncate(trimmed);
        }
    }
    blocks
}

/// The op number a dump line starts with (`%04u `).
fn op_number(line: &str) -> Option<usize> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits < 4 || line.as_bytes().get(digits) != Some(&b' ') {
        return None;
    }
    line[..digits].parse().ok()
}

fn printable(s: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(s).ok()?;
    s.bytes().all(|b| (0x20..0x7f).contains(&b)).then_some(s)
}

/// What the dump must show for an operand.
fn operand_text(op_array: &OpArray, operand: Operand) -> Option<String> {
    match operand {
        Operand::Cv(v) => Some(format!("CV{}(${})", v.as_u32(), op_array.vars[v.index()])),
        Operand::TmpVar(v) => Some(format!("T{}", v.as_u32())),
        Operand::Var(v) => Some(format!("V{}", v.as_u32())),
        Operand::JmpAddr(n) => Some(format!(" {:04}", n.as_u32())),
        Operand::Const(lit) => match op_array.literal(lit) {
            Literal::String(s) => printable(s.as_bytes()).map(|s| format!("string(\"{s}\")")),
            Literal::Long(n) => Some(format!("int({n})")),
            Literal::Null => Some("null".to_string()),
            _ => None,
        },
        Operand::Unused(_) => None,
    }
}

/// `assert!` that returns the message as an error.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// `assert_eq!` that returns the message as an error.
macro_rules! ensure_eq {
    ($a:expr, $b:expr, $($fmt:tt)+) => {
        if $a != $b {
            return Err(format!("{}: {:?} != {:?}", format!($($fmt)+), $a, $b));
        }
    };
}

/// Checks every op_array of the recording against its block of the dump.
pub fn check_against_dump(script: &Script, dump: &[DumpBlock]) -> usize {
    let op_arrays = script.op_arrays();
    if let Err(e) = check_op_arrays(&op_arrays, dump) {
        panic!("{e}");
    }
    op_arrays.len()
}

/// Checks op_arrays against their blocks of the dump, in order.
pub fn check_op_arrays(op_arrays: &[&OpArray], dump: &[DumpBlock]) -> Result<(), String> {
    // PHP prints names with %s: an anonymous class name stops at its NUL.
    let names: Vec<String> = op_arrays
        .iter()
        .map(|o| {
            let name = o.display_name();
            match name.split_once('\0') {
                Some((head, tail)) => {
                    format!("{head}{}", &tail[tail.find("::").unwrap_or(tail.len())..])
                }
                None => name,
            }
        })
        .collect();
    let dumped: Vec<&str> = dump.iter().map(|b| b.name.as_str()).collect();
    ensure_eq!(names, dumped, "op_arrays recorded vs dumped");
    for (op_array, block) in op_arrays.iter().zip(dump) {
        let name = &block.name;
        ensure_eq!(op_array.opcodes.len() as u32, block.lines, "{name}: lines");
        ensure_eq!(
            block.ops.len() as u32,
            block.lines,
            "{name}: op lines dumped"
        );
        ensure_eq!(op_array.num_args, block.args, "{name}: args");
        ensure_eq!(op_array.last_var(), block.vars, "{name}: vars");
        ensure_eq!(op_array.T, block.tmps, "{name}: tmps");
        for (n, (op, line)) in op_array.opcodes.iter().zip(&block.ops).enumerate() {
            ensure!(line.starts_with(&format!("{n:04} ")), "{name}: {line}");
            let opname = op.opcode.short_name().unwrap();
            ensure!(
                line.split_whitespace().any(|w| w == opname),
                "{name}: op {n} is {opname}, dump says {line}"
            );
            for (what, operand) in [("op1", op.op1), ("op2", op.op2), ("result", op.result)] {
                let is_table =
                    what == "op2" && matches!(opname, "SWITCH_LONG" | "SWITCH_STRING" | "MATCH");
                if is_table {
                    continue;
                }
                if let Some(text) = operand_text(op_array, operand) {
                    ensure!(
                        line.contains(&text),
                        "{name}: op {n} {what} {operand:?} should show {text:?}: {line}"
                    );
                }
            }
            if op.opcode.ext_is_jmp_addr() {
                let target = format!(" {:04}", op.extended_value);
                ensure!(
                    line.ends_with(&target),
                    "{name}: op {n} target {target}: {line}"
                );
            }
            if let (Operand::Const(lit), "SWITCH_LONG" | "SWITCH_STRING" | "MATCH") =
                (op.op2, opname)
            {
                let Literal::Array(table) = op_array.literal(lit) else {
                    return Err(format!("{name}: op {n}: jump table is not an array"));
                };
                let mut text = String::new();
                for (key, target) in table {
                    let Literal::Long(target) = target else {
                        return Err(format!("{name}: op {n}: jump table target {target:?}"));
                    };
                    match key {
                        zend_ir::ArrayKey::Long(k) => text += &format!(" {k}: {target:04},"),
                        zend_ir::ArrayKey::Str(k) => text += &format!(" \"{}\": {target:04},", k),
                    }
                }
                text += &format!(" default: {:04}", op.extended_value);
                ensure!(
                    line.contains(&text),
                    "{name}: op {n}: expected {text} in {line}"
                );
            }
        }
        let ranges: Vec<String> = op_array
            .live_range
            .iter()
            .map(|r| {
                let kind = ["(tmp/var)", "(loop)", "(silence)", "(rope)", "(new)"][r.kind as usize];
                format!(
                    "{}: {:04} - {:04} {kind}",
                    r.var.as_u32(),
                    r.start.as_u32(),
                    r.end.as_u32()
                )
            })
            .collect();
        if !block.live_ranges.is_empty() {
            ensure_eq!(ranges, block.live_ranges, "{name}: live ranges");
        }
        let exceptions: Vec<String> = op_array
            .try_catch_array
            .iter()
            .map(|t| {
                let opt = |o: Option<zend_ir::OpNum>| {
                    o.map_or("-".to_string(), |o| format!("{:04}", o.as_u32()))
                };
                format!(
                    "{:04}, {}, {}, {}",
                    t.try_op.as_u32(),
                    opt(t.catch_op),
                    opt(t.finally_op),
                    opt(t.finally_end)
                )
            })
            .collect();
        ensure_eq!(exceptions, block.exceptions, "{name}: exception table");
    }
    Ok(())
}
