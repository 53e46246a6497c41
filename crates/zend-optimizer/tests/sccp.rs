//! SCCP against PHP: the `sccp` dump ("SCCP Values for ...", opt_debug_level 0x20000000) of
//! every fixture recording at optimization level 0xE0 (DFA with the call graph, SCCP)
//! against PHP's own dump of the same fixture (fixtures/expected/*/opt-0xE0/sccp.txt,
//! written by tools/gen-fixtures.sh from PHP 8.2), and, when present, the recorded Debian
//! corpus against PHP run live.
//!
//! At 0xE0 no pass runs before the DFA pass, so SCCP sees each op_array as PHP compiled it
//! (the recording) with the analyses of `zend_dfa_analyze_op_array`.

use std::path::{Path, PathBuf};

use zend_call_graph::{CallGraph, FuncId};
use zend_ir::{corpus, Script};
use zend_optimizer::analysis::analyze_script;
use zend_optimizer::ctx::{OpArrayPath, OptimizerCtx, State};
use zend_optimizer::sccp::{self, CallMap};

/// Our `sccp` dump of every op_array of `script` at `level`, in PHP's order, and the names
/// of the op_arrays whose values differ from `expected` when given.
fn sccp_dump(script: &Script, level: u32) -> Vec<u8> {
    let analysis = analyze_script(script, level);
    let call_graph = (level & 0x40 != 0).then(|| CallGraph::build(&analysis.info));
    let paths = OpArrayPath::all(script);
    let mut state = State::default();
    let mut out = Vec::new();
    for (index, fa) in analysis.functions.iter().enumerate() {
        let Ok(fa) = fa else {
            continue;
        };
        let op_array = analysis.info.op_arrays[index];
        let map = call_graph
            .as_ref()
            .map(|cg| CallMap::new(op_array, &cg.calls[FuncId(index as u32).index()]));
        let path = paths.get(index).cloned().unwrap_or_else(|| paths[0].clone());
        let ctx = OptimizerCtx {
            optimization_level: level,
            debug_level: sccp::ZEND_DUMP_SCCP,
            script,
            current: &path,
            state: &mut state,
            pass: "sccp",
        };
        let result = sccp::analyze(
            &ctx,
            op_array,
            &fa.ssa,
            &fa.cfg,
            &fa.inference.vars,
            map.as_ref(),
        );
        sccp::dump_values(&mut out, op_array, &fa.ssa, &result.values);
    }
    out
}

fn fixture_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("opt-0xE0/sccp.txt").exists() && p.join("recording.zop").exists())
        .collect();
    dirs.sort();
    dirs
}

/// The blocks of a dump, one per op_array, so a failure names the function.
fn split(dump: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(dump)
        .split("\nSCCP Values for ")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn fixtures_sccp_values_are_php_s() {
    let dirs = fixture_dirs();
    assert!(dirs.len() > 50, "fixture goldens missing");
    let (mut same, mut failures) = (0, Vec::new());
    let (mut funcs_same, mut funcs_total) = (0usize, 0usize);
    for dir in &dirs {
        let script = corpus::read(&dir.join("recording.zop")).unwrap_or_else(|e| panic!("{e}"));
        let ours = sccp_dump(&script, 0xE0);
        let php = std::fs::read(dir.join("opt-0xE0/sccp.txt")).unwrap();
        let (a, b) = (split(&ours), split(&php));
        funcs_total += b.len().max(a.len());
        funcs_same += b.iter().filter(|x| a.contains(x)).count();
        if ours == php {
            same += 1;
        } else {
            let diff: Vec<String> = b
                .iter()
                .filter(|x| !a.contains(x))
                .map(|x| format!("  php:  {x}"))
                .chain(a.iter().filter(|x| !b.contains(x)).map(|x| format!("  ours: {x}")))
                .collect();
            failures.push(format!("{}:\n{}", dir.display(), diff.join("")));
        }
    }
    eprintln!(
        "sccp dumps: {same}/{} fixtures identical, {funcs_same}/{funcs_total} op_arrays",
        dirs.len()
    );
    assert!(
        failures.is_empty(),
        "{} fixtures differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
