//! Our side of every dump stage: what zopt prints for a recorded script at a given
//! `opt_debug_level` bit and optimization level, or that the stage is not implemented yet.

use zend_ir::dump::{self, debug_level};
use zend_ir::Script;

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

/// The dump PHP would print for `script` at one debug-level bit.
pub fn our_dump(
    script: &Script,
    debug_bits: u32,
    optimization_level: u32,
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
            Ok(zend_optimizer::optimize_script(&mut script, &options).dumps)
        }
        _ => Err(not_implemented()),
    }
}

/// One op_array's part of a dump.
#[derive(Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The name line without its colon (`$_main`, `foo`, `A::m`).
    pub name: &'a [u8],
    pub text: &'a [u8],
}

/// The headers of the per-op_array dumps that are not op listings.
const SECTION_HEADERS: &[&[u8]] = &[
    b"DOMINATORS-TREE for \"",
    b"Variable Liveness for \"",
    b"SSA Phi() Placement for \"",
    b"SSA Variable for \"",
    b"SCCP Values for \"",
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
        } else if let Some(header) = SECTION_HEADERS.iter().find(|h| name.starts_with(h)) {
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
