//! A [`Workspace`] kept from one script to the next changes nothing: every fixture recording,
//! optimized with one workspace shared by all of them (in both orders, so that each script
//! meets memory left by larger and by smaller ones), gives the script, the dumps and the
//! handler types that a fresh workspace gives.

use std::path::{Path, PathBuf};

use zend_ir::{corpus, Script};
use zend_optimizer::{optimize_script, optimize_script_in, Options, Workspace};

fn recordings() -> Vec<PathBuf> {
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/expected");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&expected)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("recording.zop"))
        .filter(|p| p.exists())
        .collect();
    out.sort();
    out
}

type Result = (Script, Vec<u8>, Vec<Option<Vec<(u32, u32, u32)>>>);

fn optimized(script: &Script, options: &Options, work: Option<&mut Workspace>) -> Result {
    let mut script = script.clone();
    let outcome = match work {
        Some(work) => optimize_script_in(&mut script, options, work),
        None => optimize_script(&mut script, options),
    };
    (script, outcome.dumps, outcome.handler_types)
}

#[test]
fn a_shared_workspace_gives_what_a_fresh_one_gives() {
    let scripts: Vec<(PathBuf, Script)> = recordings()
        .into_iter()
        .map(|p| {
            let s = corpus::read(&p).unwrap_or_else(|e| panic!("{e}"));
            (p, s)
        })
        .collect();
    assert!(scripts.len() > 100, "only {} recordings", scripts.len());
    zend_optimizer::environment::set_modules_are_tables(true);
    let mut compared = 0;
    for level in [0x7FFEBFFF, 0x7FFE9F1F, 0x60, 0x20] {
        let mut options = Options::new(level);
        // Every dump of the schedule, so that differences in what the passes saw show.
        options.debug_level = 0x7FFF_FFFF;
        options.verify = true;
        let fresh: Vec<Result> = scripts
            .iter()
            .map(|(_, s)| optimized(s, &options, None))
            .collect();
        let mut work = Workspace::default();
        let order: Vec<usize> = (0..scripts.len()).chain((0..scripts.len()).rev()).collect();
        for k in order {
            let (path, script) = &scripts[k];
            let shared = optimized(script, &options, Some(&mut work));
            assert!(
                shared == fresh[k],
                "{} at {level:#x}: a shared workspace changed the result",
                path.display()
            );
            compared += 1;
        }
    }
    assert!(compared > 800, "only {compared} comparisons");
}
