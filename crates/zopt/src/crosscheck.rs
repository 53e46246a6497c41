//! `zopt crosscheck`: the textbook SSA constructions (pruned Cytron, Braun) against each
//! other and against PHP-style SSA, op_array by op_array (see `zend_ssa_textbook::compare`).
//!
//! Every op_array of a script is checked. Where the DFA pass builds SSA (no try/catch, no
//! indirect variable access, not too big) the check is three-way; elsewhere Cytron and
//! Braun are still compared with each other on the CFG PHP would build.

use crate::corpus::{load_recording, SourceFile};
use crate::dfa::{dfa_cfg, dfa_ssa};
use crate::php::{CompileError, Php};
use anyhow::Result;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use zend_cfg::{BuildFlags, Cfg};
use zend_dfg::Dfg;
use zend_ir::Script;
use zend_ssa_textbook::compare::{check, Disagreement};

/// Totals over a corpus.
#[derive(Debug, Default)]
pub struct Report {
    pub files: usize,
    /// Op_arrays compared three ways (PHP builds SSA for them).
    pub three_way: usize,
    pub three_way_agreeing: usize,
    /// Op_arrays PHP builds no SSA for, Cytron against Braun only.
    pub two_way: usize,
    pub two_way_agreeing: usize,
    /// Op_arrays without a CFG (malformed).
    pub no_cfg: usize,
    pub uses: usize,
    pub phis: usize,
    pub php_trivial_phis: usize,
    pub braun_redundant_phis: usize,
    /// Of those, in op_arrays with an irreducible loop (PHP's CFG flag), with try/catch
    /// (loops entered from the entry and from a catch block), and elsewhere.
    pub braun_redundant_split: [usize; 3],
    pub cytron_redundant_phis: usize,
    pub disagreements: Vec<(String, Disagreement)>,
    /// Files that PHP cannot compile or that could not be recorded/read.
    pub errors: Vec<(String, String)>,
}

impl Report {
    fn merge(&mut self, other: Report) {
        self.files += other.files;
        self.three_way += other.three_way;
        self.three_way_agreeing += other.three_way_agreeing;
        self.two_way += other.two_way;
        self.two_way_agreeing += other.two_way_agreeing;
        self.no_cfg += other.no_cfg;
        self.uses += other.uses;
        self.phis += other.phis;
        self.php_trivial_phis += other.php_trivial_phis;
        self.braun_redundant_phis += other.braun_redundant_phis;
        for i in 0..3 {
            self.braun_redundant_split[i] += other.braun_redundant_split[i];
        }
        self.cytron_redundant_phis += other.cytron_redundant_phis;
        self.disagreements.extend(other.disagreements);
        self.errors.extend(other.errors);
    }

    pub fn checked(&self) -> usize {
        self.three_way + self.two_way
    }

    pub fn agreeing(&self) -> usize {
        self.three_way_agreeing + self.two_way_agreeing
    }

    pub fn print(&self) {
        for (file, d) in &self.disagreements {
            println!("DISAGREE {file}: {d}");
        }
        for (file, e) in &self.errors {
            println!("ERROR {file}: {e}");
        }
        println!(
            "files: {}  op_arrays checked: {}  agreeing: {}",
            self.files,
            self.checked(),
            self.agreeing()
        );
        println!(
            "  three-way (Cytron, Braun, PHP): {} checked, {} agreeing",
            self.three_way, self.three_way_agreeing
        );
        println!(
            "  two-way (PHP builds no SSA: try/catch, indirect access, too big): {} checked, {} agreeing",
            self.two_way, self.two_way_agreeing
        );
        println!(
            "  uses compared: {}  phis (pruned Cytron): {}  PHP phis trivial once pis are copies: {}  op_arrays without CFG: {}",
            self.uses, self.phis, self.php_trivial_phis, self.no_cfg
        );
        println!(
            "  Braun phis in redundant SCCs: {} (irreducible loop: {}, try/catch: {}, other: {})  Cytron phis removed by the same normalisation: {}",
            self.braun_redundant_phis,
            self.braun_redundant_split[0],
            self.braun_redundant_split[1],
            self.braun_redundant_split[2],
            self.cytron_redundant_phis
        );
        println!("  disagreements: {}", self.disagreements.len());
    }
}

/// Checks every op_array of a script.
pub fn check_script(name: &str, script: &Script) -> Report {
    let info = zend_call_graph::ScriptInfo::new(script);
    let mut report = Report {
        files: 1,
        ..Default::default()
    };
    for op_array in info.op_arrays.iter() {
        let (cfg, php) = match dfa_cfg(op_array) {
            Ok(cfg) => {
                let (dfg, ssa) = dfa_ssa(op_array, &cfg, &info);
                (cfg, ssa.ok().map(|s| (dfg, s)))
            }
            Err(_) => match Cfg::build(op_array, BuildFlags::NO_ENTRY_PREDECESSORS) {
                Ok(cfg) => (cfg, None),
                Err(_) => {
                    report.no_cfg += 1;
                    continue;
                }
            },
        };
        let outcome = match &php {
            Some((dfg, ssa)) => check(op_array, &cfg, dfg, Some(ssa)),
            None => {
                let dfg = Dfg::build(op_array, &cfg, BuildFlags::empty());
                check(op_array, &cfg, &dfg, None)
            }
        };
        let agree = outcome.disagreements.is_empty();
        if php.is_some() {
            report.three_way += 1;
            report.three_way_agreeing += agree as usize;
        } else {
            report.two_way += 1;
            report.two_way_agreeing += agree as usize;
        }
        report.uses += outcome.uses;
        report.phis += outcome.phis;
        report.php_trivial_phis += outcome.php_trivial_phis;
        report.braun_redundant_phis += outcome.braun_redundant_phis;
        let class = if cfg
            .blocks
            .iter()
            .any(|b| b.flags.contains(zend_cfg::BlockFlags::IRREDUCIBLE_LOOP))
        {
            0
        } else if !op_array.try_catch_array.is_empty() {
            1
        } else {
            2
        };
        report.braun_redundant_split[class] += outcome.braun_redundant_phis;
        report.cytron_redundant_phis += outcome.cytron_redundant_phis;
        report.disagreements.extend(
            outcome
                .disagreements
                .into_iter()
                .map(|d| (name.to_string(), d)),
        );
    }
    report
}

fn zop_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut found: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "zop"))
        .map(|e| e.into_path())
        .collect();
    found.sort();
    out.extend(found);
}

fn check_php(php: &Php, file: &SourceFile) -> Report {
    let name = file.relative.display().to_string();
    let fail = |e: String| Report {
        files: 1,
        errors: vec![(name.clone(), e)],
        ..Default::default()
    };
    let tmp = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot create a temporary directory: {e}")),
    };
    match php.compile(&file.path, 0, 0, Some(tmp.path())) {
        Ok(compiled) => match compiled.recording.map(|r| load_recording(&r)) {
            Some(Ok(script)) => check_script(&name, &script),
            Some(Err(e)) => fail(format!("{e:#}")),
            None => fail("no recording".to_string()),
        },
        Err(e) => match e.downcast::<CompileError>() {
            Ok(c) => fail(format!("PHP cannot compile it: {}", c.message)),
            Err(other) => fail(format!("{other:#}")),
        },
    }
}

/// Checks `.php` files (recorded by real PHP at optimization level 0) and `.zop`
/// recordings under `paths`.
pub fn run(php: Option<&Php>, paths: &[PathBuf]) -> Result<Report> {
    let mut zops = Vec::new();
    let mut php_paths = Vec::new();
    for p in paths {
        if p.is_file() && p.extension().is_some_and(|x| x == "zop") {
            zops.push(p.clone());
        } else if p.is_dir() {
            zop_files(p, &mut zops);
            php_paths.push(p.clone());
        } else {
            php_paths.push(p.clone());
        }
    }
    let php_files = crate::corpus::php_files(&php_paths)?;
    let mut report = Report::default();
    let zop_reports: Vec<Report> = zops
        .par_iter()
        .map(|path| match load_recording(path) {
            Ok(script) => check_script(&path.display().to_string(), &script),
            Err(e) => Report {
                files: 1,
                errors: vec![(path.display().to_string(), format!("{e:#}"))],
                ..Default::default()
            },
        })
        .collect();
    for r in zop_reports {
        report.merge(r);
    }
    if !php_files.is_empty() {
        let php = php.ok_or_else(|| anyhow::anyhow!("PHP is needed to record .php files"))?;
        let reports: Vec<Report> = php_files.par_iter().map(|f| check_php(php, f)).collect();
        for r in reports {
            report.merge(r);
        }
    }
    Ok(report)
}
