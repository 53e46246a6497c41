//! Our side of every dump stage: what zopt prints for a recorded script at a given
//! `opt_debug_level` bit and optimization level, or that the stage is not implemented yet.

use zend_ir::dump::{self, debug_level};
use zend_ir::Script;
use zend_optimizer::PhpBugs;

/// A stage we cannot produce yet. Conformance reports it as such, never as identical.
#[derive(Debug, thiserror::Error)]
#[error("stage {stage} at optimization level {optimization_level:#x} is not implemented")]
pub struct NotImplemented {
    pub stage: String,
    pub optimization_level: u32,
}

/// The debug bits `zend_optimize_script` itself prints: before/after the optimizer, after
/// each pass, the block pass's three dumps and the DFA pass's.
const OPTIMIZER_DUMPS: u32 = 0x3fff
    | debug_level::BEFORE_OPTIMIZER
    | debug_level::AFTER_OPTIMIZER
    | debug_level::BEFORE_BLOCK_PASS
    | debug_level::AFTER_BLOCK_PASS
    | debug_level::BLOCK_PASS_VARS
    | zend_optimizer::dfa_pass::DUMP_BEFORE_DFA_PASS
    | zend_optimizer::dfa_pass::DUMP_AFTER_DFA_PASS
    | debug_level::SCCP
    // The DFA pass's analysis dumps, of the op_arrays as the passes before it left them.
    | crate::dfa::DFA_DUMPS;

/// Our dump of `script` at one debug-level bit: what PHP would print, except where PHP
/// 8.2's optimizer is wrong and ours is not (see [`PhpBugs`]).
pub fn our_dump(
    script: &Script,
    debug_bits: u32,
    optimization_level: u32,
) -> Result<Vec<u8>, NotImplemented> {
    our_dump_with(script, debug_bits, optimization_level, PhpBugs::NONE)
}

/// [`our_dump`] with the optimizer reproducing `php_bugs`: with [`PhpBugs::PHP_8_2`], the
/// dump PHP 8.2 prints.
pub fn our_dump_with(
    script: &Script,
    debug_bits: u32,
    optimization_level: u32,
    php_bugs: PhpBugs,
) -> Result<Vec<u8>, NotImplemented> {
    // The PHP whose dumps these are runs with `-n` and OPcache: the optimizer's tables.
    zend_optimizer::environment::set_modules_are_tables(true);
    let not_implemented = || NotImplemented {
        stage: debug_level::name(debug_bits)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{debug_bits:#x}")),
        optimization_level,
    };
    match debug_bits {
        // "before optimizer" shows the op_array as compiled, whatever the level.
        // With the call graph (PASS_6 and PASS_7) every op_array already has a zeroed
        // zend_func_info when OPcache dumps it before optimizing.
        debug_level::BEFORE_OPTIMIZER if optimization_level & 0x60 == 0x60 => {
            let info = zend_call_graph::ScriptInfo::new(script);
            let header = dump::FuncInfoHeader::default();
            let mut out = Vec::new();
            for op_array in &info.op_arrays {
                if op_array.type_ == zend_ir::ZEND_EVAL_CODE {
                    continue;
                }
                dump::dump_op_array_ex(
                    &mut out,
                    op_array,
                    dump::ZEND_DUMP_LIVE_RANGES,
                    Some("before optimizer"),
                    Some(&header),
                );
            }
            Ok(out)
        }
        debug_level::BEFORE_OPTIMIZER => {
            dump::dump_script(script, debug_bits).ok_or_else(not_implemented)
        }
        // With no pass enabled the optimizer leaves every op_array as compiled.
        debug_level::AFTER_OPTIMIZER if optimization_level == 0 => {
            dump::dump_script(script, debug_bits).ok_or_else(not_implemented)
        }
        // The analysis dumps of the DFA pass, where it sees the op_arrays as compiled.
        bits if bits & crate::dfa::DFA_DUMPS == bits
            && bits != 0
            && crate::dfa::sees_compiled_op_arrays(optimization_level) =>
        {
            Ok(crate::dfa::dump_script(script, bits, optimization_level))
        }
        // The optimizer's own dumps, where every pass that runs before them is ours.
        bits if bits & OPTIMIZER_DUMPS == bits
            && zend_optimizer::implemented(optimization_level, bits) =>
        {
            let mut script = script.clone();
            let mut options = zend_optimizer::Options::new(optimization_level);
            options.debug_level = bits;
            options.php_bugs = php_bugs;
            Ok(zend_optimizer::optimize_script(&mut script, &options).dumps)
        }
        _ => Err(not_implemented()),
    }
}

/// Tells a deviation from PHP's dump that is PHP 8.2's bug from one that is ours: an
/// op_array whose dump differs from PHP's, and is PHP's once zopt reproduces PHP 8.2's bugs,
/// deviates for their cause alone. Our dumps with bugs reproduced are made on first use.
pub struct BugReproductions<'s> {
    script: &'s Script,
    debug_bits: u32,
    optimization_level: u32,
    /// Per candidate: each bug of [`PhpBugs::EACH`] alone, then all of them.
    dumps: [Option<Vec<u8>>; PhpBugs::EACH.len() + 1],
}

impl<'s> BugReproductions<'s> {
    pub fn new(script: &'s Script, debug_bits: u32, optimization_level: u32) -> Self {
        BugReproductions {
            script,
            debug_bits,
            optimization_level,
            dumps: Default::default(),
        }
    }

    /// Our dump with the `k`th candidate's bugs reproduced: each bug of [`PhpBugs::EACH`]
    /// alone, then (past the end) all of them.
    fn dump(&mut self, k: usize) -> (PhpBugs, &[u8]) {
        let bugs = PhpBugs::EACH
            .get(k)
            .map_or(PhpBugs::PHP_8_2, |&(bug, _)| bug);
        let (script, bits, level) = (self.script, self.debug_bits, self.optimization_level);
        let dump = self.dumps[k]
            .get_or_insert_with(|| our_dump_with(script, bits, level, bugs).unwrap_or_default());
        (bugs, dump)
    }

    /// The bugs whose reproduction makes our dump of the `index`th op_array (in
    /// [`split_dump`] order) `php`, PHP's dump of it: each bug alone first, to name the
    /// one, then all of them, for an op_array that meets several.
    pub fn explain(&mut self, index: usize, php: &[u8]) -> Option<PhpBugs> {
        (0..self.dumps.len()).find_map(|k| {
            let (bugs, dump) = self.dump(k);
            split_dump(dump)
                .get(index)
                .is_some_and(|c| c.text == php)
                .then_some(bugs)
        })
    }

    /// Whether our dump with every bug reproduced has `php_op_arrays` op_arrays, as PHP's
    /// has: a dump that has fewer or more than PHP's only because of PHP's bugs (an SCCP
    /// dump that is empty where PHP 8.2 folds what it should not).
    pub fn explains_count(&mut self, php_op_arrays: usize) -> bool {
        let (_, dump) = self.dump(PhpBugs::EACH.len());
        split_dump(dump).len() == php_op_arrays
    }
}

/// One op_array's part of a dump.
#[derive(Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The name line without its colon (`$_main`, `foo`, `A::m`).
    pub name: &'a [u8],
    pub text: &'a [u8],
}

/// The headers of the per-op_array dumps that are not op listings, with the debug-level
/// bit that prints each.
const SECTION_HEADERS: &[(&[u8], u32)] = &[
    (b"DOMINATORS-TREE for \"", debug_level::DFA_DOMINATORS),
    (b"Variable Liveness for \"", debug_level::DFA_LIVENESS),
    (b"SSA Phi() Placement for \"", debug_level::DFA_PHI),
    (b"SSA Variable for \"", debug_level::DFA_SSA_VARS),
    (b"SCCP Values for \"", debug_level::SCCP),
];

/// Splits a dump into its op_arrays. Each starts with an empty line and `NAME:` followed by
/// the `     ; (lines=` header line, or with an empty line and a section header such as
/// `DOMINATORS-TREE for "NAME"`; whatever precedes the first one belongs to no op_array.
pub fn split_dump(dump: &[u8]) -> Vec<Chunk<'_>> {
    let mut line_starts = vec![0usize];
    line_starts.extend(
        dump.iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    let line = |i: usize| -> &[u8] {
        let start = line_starts[i];
        let end = line_starts.get(i + 1).map_or(dump.len(), |&next| next - 1);
        &dump[start..end.max(start)]
    };
    let mut heads = Vec::new();
    for i in 0..line_starts.len().saturating_sub(1) {
        let name = line(i);
        let start = if i > 0 && line(i - 1).is_empty() {
            line_starts[i - 1]
        } else {
            line_starts[i]
        };
        if name.ends_with(b":") && line(i + 1).starts_with(b"     ; (lines=") {
            heads.push((start, &name[..name.len() - 1]));
        } else if let Some((header, _)) = SECTION_HEADERS.iter().find(|(h, _)| name.starts_with(h))
        {
            // `SCCP Values for "NAME":` ends with a colon after the quote.
            let quoted = name.strip_suffix(b":").unwrap_or(name);
            if i > 0
                && line(i - 1).is_empty()
                && quoted.ends_with(b"\"")
                && quoted.len() > header.len()
            {
                heads.push((start, &quoted[header.len()..quoted.len() - 1]));
            }
        }
    }
    // A dump without op_array headers (the block pass's NON-LOCAL-VARS lines) is one chunk.
    if heads.is_empty() && !dump.is_empty() {
        return vec![Chunk {
            name: b"(whole dump)",
            text: dump,
        }];
    }
    heads
        .iter()
        .enumerate()
        .map(|(k, &(start, name))| {
            let end = heads.get(k + 1).map_or(dump.len(), |&(next, _)| next);
            Chunk {
                name,
                text: &dump[start..end],
            }
        })
        .collect()
}

/// The message line (`     ; (MSG)`) under the header of each op listing the optimizer
/// prints, and the debug-level bit that prints it (PHP 8.2's `zend_dump_op_array` calls;
/// passes 8 and 14 print "after sccp pass" and "after dce pass", passes 2, 8, 12 and 14
/// never "after pass N").
const LISTING_MESSAGES: &[(&[u8], u32)] = &[
    (b"before optimizer", debug_level::BEFORE_OPTIMIZER),
    (b"after optimizer", debug_level::AFTER_OPTIMIZER),
    (b"before block pass", debug_level::BEFORE_BLOCK_PASS),
    (b"after block pass", debug_level::AFTER_BLOCK_PASS),
    (b"before dfa pass", debug_level::BEFORE_DFA_PASS),
    (b"after dfa pass", debug_level::AFTER_DFA_PASS),
    (b"dfa cfg", debug_level::DFA_CFG),
    (b"dfa ssa", debug_level::DFA_SSA),
    (b"after sccp pass", debug_level::after_pass(8)),
    (b"after dce pass", debug_level::after_pass(14)),
    (b"after pass 1", debug_level::after_pass(1)),
    (b"after pass 3", debug_level::after_pass(3)),
    (b"after pass 4", debug_level::after_pass(4)),
    (b"after pass 5", debug_level::after_pass(5)),
    (b"after pass 6", debug_level::after_pass(6)),
    (b"after pass 7", debug_level::after_pass(7)),
    (b"after pass 9", debug_level::after_pass(9)),
    (b"after pass 10", debug_level::after_pass(10)),
    (b"after pass 11", debug_level::after_pass(11)),
    (b"after pass 13", debug_level::after_pass(13)),
];

/// The block pass's `NON-LOCAL-VARS` line (`ZEND_DUMP_BLOCK_PASS_VARS`): printed without an
/// empty line or a name before it, so it ends the chunk of whatever came before it.
const BLOCK_PASS_VARS_LINE: &[u8] = b"NON-LOCAL-VARS:";

/// Splits what PHP printed with several debug-level bits at once into each bit's dump: for
/// every bit, the bytes PHP prints when that bit alone is set (the dumps of one run come in
/// pipeline order, op_array by op_array, so each stage's chunks keep their relative order).
/// Every chunk is assigned by its own header (the op listing's `     ; (MSG)` line or the
/// section header); a chunk with a header of no known stage, or bytes before the first
/// chunk, is an error, never dropped: the dumps of the returned stages add up to `dump`.
pub fn split_stages(dump: &[u8]) -> Result<std::collections::BTreeMap<u32, Vec<u8>>, String> {
    let mut stages: std::collections::BTreeMap<u32, Vec<u8>> = Default::default();
    // The NON-LOCAL-VARS lines first: they have no header to split on.
    let mut rest = Vec::with_capacity(dump.len());
    for line in dump.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(BLOCK_PASS_VARS_LINE) {
            stages
                .entry(debug_level::BLOCK_PASS_VARS)
                .or_default()
                .extend_from_slice(line);
        } else {
            rest.extend_from_slice(line);
        }
    }
    let chunks = split_dump(&rest);
    let mut starts: Vec<usize> = chunks
        .iter()
        .map(|c| c.text.as_ptr() as usize - rest.as_ptr() as usize)
        .collect();
    // Every dump starts with its own "\n". An exception table entry with a finally_end
    // ends without one, so the next dump's "\n" ends its line: split_dump leaves that
    // "\n" at the end of the chunk before, where it is not that stage's.
    for (k, start) in starts.iter_mut().enumerate() {
        if k > 0 && !chunks[k].text.starts_with(b"\n") {
            *start -= 1;
        }
    }
    let first = starts.first().copied().unwrap_or(rest.len());
    if first != 0 {
        return Err(format!(
            "{first} bytes before the first op_array: {:?}",
            String::from_utf8_lossy(&rest[..first.min(200)])
        ));
    }
    for (k, chunk) in chunks.iter().enumerate() {
        let text = &rest[starts[k]..starts.get(k + 1).copied().unwrap_or(rest.len())];
        // The name line or the section header, after an empty line unless the dump before
        // ended without one (an op_array with an exception table).
        let mut lines = chunk.text.split(|&b| b == b'\n').peekable();
        lines.next_if_eq(&&b""[..]);
        let head = lines.next().unwrap_or_default();
        let bit = if let Some(&(_, bit)) = SECTION_HEADERS.iter().find(|(h, _)| head.starts_with(h))
        {
            Some(bit)
        } else {
            // `NAME:`, `     ; (lines=...)`, `     ; (MSG)`.
            lines.next();
            lines
                .next()
                .and_then(|l| l.strip_prefix(b"     ; ("))
                .and_then(|l| l.strip_suffix(b")"))
                .and_then(|msg| LISTING_MESSAGES.iter().find(|(m, _)| *m == msg))
                .map(|&(_, bit)| bit)
        };
        let Some(bit) = bit else {
            let shown: Vec<&[u8]> = chunk.text.split(|&b| b == b'\n').take(4).collect();
            return Err(format!(
                "a dump of {} names no stage: {:?}",
                String::from_utf8_lossy(chunk.name),
                String::from_utf8_lossy(&shown.join(&b'\n'))
            ));
        };
        stages.entry(bit).or_default().extend_from_slice(text);
    }
    Ok(stages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_op_array_headers() {
        let dump = b"\n$_main:\n     ; (lines=1, args=0, vars=0, tmps=0)\n0000 RETURN int(1)\n\nfoo:\n     ; (lines=1, args=0, vars=0, tmps=0)\n0000 ECHO string(\"x:\n\")\n";
        let chunks = split_dump(dump);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].name, b"$_main");
        assert_eq!(chunks[1].name, b"foo");
        assert!(chunks[1].text.ends_with(b"\")\n"));
        assert_eq!(
            chunks.iter().map(|c| c.text.len()).sum::<usize>(),
            dump.len()
        );
    }

    #[test]
    fn splits_a_dump_of_several_stages_by_stage() {
        // An exception table entry with a finally_end ends without "\n": the next dump's
        // own "\n" ends the line.
        let before = b"\n$_main:\n     ; (lines=1, args=0, vars=0, tmps=0)\n     ; (before optimizer)\n     ; /t.php:1-2\n0000 RETURN int(1)\nEXCEPTION TABLE:\n     0000, -, 0001, 0002";
        let main_after = b"\n$_main:\n     ; (lines=1, args=0, vars=0, tmps=0)\n     ; (after optimizer)\n     ; /t.php:1-2\n0000 RETURN int(1)\n";
        let block = b"\nf:\n     ; (lines=1, args=0, vars=0, tmps=0)\n     ; (before block pass)\n     ; /t.php:1-2\nBB0:\n0000 RETURN int(1)\n";
        let vars = b"NON-LOCAL-VARS: 3, 4\n";
        let dom = b"\nDOMINATORS-TREE for \"f\"\n  BB0\n";
        let sccp = b"\nSCCP Values for \"f\":\n    #0.T1 = int(1)\n";
        let after = b"\nf:\n     ; (lines=1, args=0, vars=0, tmps=0)\n     ; (after dce pass)\n     ; /t.php:1-2\n0000 RETURN int(1)\n";
        let all = [&before[..], main_after, block, vars, dom, sccp, after].concat();
        let stages = split_stages(&all).unwrap();
        let expect = [
            (debug_level::BEFORE_OPTIMIZER, &before[..]),
            (debug_level::BEFORE_BLOCK_PASS, block),
            (debug_level::BLOCK_PASS_VARS, vars),
            (debug_level::AFTER_OPTIMIZER, main_after),
            (debug_level::DFA_DOMINATORS, dom),
            (debug_level::SCCP, sccp),
            (debug_level::after_pass(14), after),
        ];
        assert_eq!(stages.len(), expect.len());
        for (bit, text) in expect {
            assert_eq!(stages[&bit], text, "stage {bit:#x}");
        }
        // Nothing may be dropped: an unknown message or stray bytes are errors.
        let unknown = [
            &before[..],
            b"\nf:\n     ; (lines=1, args=0, vars=0, tmps=0)\n     ; (after pass 99)\n",
        ]
        .concat();
        assert!(split_stages(&unknown).is_err());
        assert!(split_stages(&[&b"stray\n"[..], before].concat()).is_err());
        assert!(split_stages(b"no dump at all\n").is_err());
        assert!(split_stages(b"").unwrap().is_empty());
    }

    #[test]
    fn splits_on_dfa_section_headers() {
        let dump = b"\nDOMINATORS-TREE for \"$_main\"\nBB0:\n     ; start exit lines=[0-0]\n     ; level=0\n\nVariable Liveness for \"A::f\"\n  BB0:\n\nSSA Phi() Placement for \"g\"\n";
        let chunks = split_dump(dump);
        let names: Vec<&[u8]> = chunks.iter().map(|c| c.name).collect();
        assert_eq!(names, vec![&b"$_main"[..], b"A::f", b"g"]);
        assert_eq!(
            chunks.iter().map(|c| c.text.len()).sum::<usize>(),
            dump.len()
        );
    }
}
