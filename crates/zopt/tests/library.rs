//! The README's "zopt as a library" example, unchanged, built as a new crate outside the
//! workspace (path dependencies on zend-ir and zend-optimizer, built with cargo): on the
//! README's PHP file, recorded by `zopt record`, it must print the README's output, and every
//! SSA variable's type must be the one PHP's own types dump (`opt_debug_level=0x10000000`
//! at `optimization_level=0x60`) prints.

mod common;

use common::{extension, workspace_root};

use std::path::Path;
use std::process::Command;

/// The fenced blocks of the README's "zopt as a library" section, in order, with their info
/// strings.
fn library_section_blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let start = readme
        .find("\n## zopt as a library\n")
        .expect("README has a \"zopt as a library\" section");
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut body = String::new();
            for l in lines.by_ref() {
                if l == "```" {
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            blocks.push((info.to_string(), body));
        }
    }
    blocks
}

fn block<'a>(blocks: &'a [(String, String)], info: &str) -> &'a str {
    &blocks
        .iter()
        .find(|(i, _)| i == info)
        .unwrap_or_else(|| panic!("no ```{info} block in the README's library section"))
        .1
}

/// PHP's "SSA Variable for" dump as `function -> ["#n.NAME [types]", ...]` lines.
fn php_types(file: &Path) -> Vec<(String, Vec<String>)> {
    let out = Command::new("php")
        .args([
            "-n",
            "-d",
            "zend_extension=opcache",
            "-d",
            "opcache.enable_cli=1",
        ])
        .args([
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.jit=0",
        ])
        .args(["-d", "opcache.optimization_level=0x60"])
        .args(["-d", "opcache.opt_debug_level=0x10000000"])
        .args(["-r", "opcache_compile_file($argv[1]);", "--"])
        .arg(file)
        .output()
        .expect("running php");
    assert!(out.status.success(), "php failed: {out:?}");
    let mut functions: Vec<(String, Vec<String>)> = Vec::new();
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        if let Some(name) = line.strip_prefix("SSA Variable for \"") {
            functions.push((name.trim_end_matches('"').to_string(), Vec::new()));
        } else if line.starts_with("    #") {
            // `#1.CV0($a) NOVAL [long] RANGE[..] *SCC=0` -> `#1.CV0($a) [long]`
            let line = line.trim().replace(" NOVAL", "");
            let end = line.find(']').expect("a type in brackets") + 1;
            functions
                .last_mut()
                .unwrap()
                .1
                .push(line[..end].to_string());
        }
    }
    functions
}

#[test]
fn readme_example_builds_outside_the_workspace_and_prints_phps_types() {
    let blocks = library_section_blocks();
    let main_rs = block(&blocks, "rust");
    let php_source = block(&blocks, "php");
    let expected_output = block(&blocks, "");
    let dependencies = block(&blocks, "toml");

    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("php-types");
    std::fs::create_dir_all(crate_dir.join("src")).unwrap();
    let root = workspace_root();
    let manifest = format!(
        "[package]\nname = \"php-types\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{}",
        dependencies.replace("/path/to/zopt", &root.display().to_string())
    );
    std::fs::write(crate_dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(crate_dir.join("src/main.rs"), main_rs).unwrap();
    // The workspace's lock file pins the same dependency versions (and lets cargo resolve
    // offline).
    std::fs::copy(root.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();

    let php_file = dir.path().join("example.php");
    std::fs::write(&php_file, php_source).unwrap();
    let record = Command::new(env!("CARGO_BIN_EXE_zopt"))
        .arg("record")
        .arg("--extension")
        .arg(extension())
        .arg("-o")
        .arg(dir.path().join("rec"))
        .arg(&php_file)
        .output()
        .unwrap();
    assert!(record.status.success(), "zopt record failed: {record:?}");

    // A target directory of its own beside this build's, kept between runs.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().join("library-example");
    let build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&crate_dir)
        .status()
        .unwrap();
    assert!(build.success(), "the README example does not build");
    let run = Command::new(target.join("debug/php-types"))
        .arg(dir.path().join("rec/example.php.zop"))
        .output()
        .unwrap();
    assert!(run.status.success(), "php-types failed: {run:?}");
    let output = String::from_utf8(run.stdout).unwrap();
    assert_eq!(
        output, expected_output,
        "the README's output is not what it prints"
    );

    // Every analysed function's variables as PHP types them; the skipped ones are those PHP
    // prints no types for.
    let php = php_types(&php_file);
    let mut ours: Vec<(String, Vec<String>)> = Vec::new();
    for line in output.lines() {
        if let Some(var) = line.strip_prefix("    ") {
            ours.last_mut().unwrap().1.push(var.to_string());
        } else if let Some((name, _)) = line.split_once(" returns ") {
            ours.push((name.to_string(), Vec::new()));
        } else {
            assert!(
                line.contains(": not analysed: "),
                "unexpected line {line:?}"
            );
        }
    }
    assert_eq!(ours, php, "types differ from PHP's");
    assert!(ours.len() >= 2);
}
