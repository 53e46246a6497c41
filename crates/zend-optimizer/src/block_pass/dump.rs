//! The block pass's dumps: `zend_dump_op_array(op_array, ZEND_DUMP_CFG[|HIDE_UNREACHABLE],
//! msg, &cfg)` over the pass's own CFG ("before block pass", "after block pass"), and the
//! `NON-LOCAL-VARS` line of `zend_t_usage`.

use std::io::Write;

use zend_cfg::{BlockFlags, BlockId};
use zend_ir::dump::{self as ir_dump, FuncInfoHeader, OpContext};
use zend_ir::{OpArray, OpNum};

use super::cfg::BlockCfg;

/// `zend_dump_op_array` with a CFG, byte for byte. `func_info` is the op_array's
/// `zend_func_info` when the call graph was built (its flags and return line are printed).
pub(crate) fn dump_cfg(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    cfg: &BlockCfg,
    hide: bool,
    msg: &str,
    func_info: Option<&FuncInfoHeader>,
) {
    let dump_flags = ir_dump::ZEND_DUMP_CFG
        | if hide {
            ir_dump::ZEND_DUMP_HIDE_UNREACHABLE
        } else {
            0
        };
    ir_dump::dump_op_array_header_ex(out, op_array, None, func_info, Some(msg));
    for (n, b) in cfg.blocks.iter().enumerate() {
        if hide && !b.reachable() {
            continue;
        }
        if n > 0 {
            out.push(b'\n');
        }
        let _ = write!(out, "BB{n}:\n     ;");
        let f = b.flags;
        let names = [
            (BlockFlags::START, " start"),
            (BlockFlags::RECV_ENTRY, " recv"),
            (BlockFlags::FOLLOW, " follow"),
            (BlockFlags::TARGET, " target"),
            (BlockFlags::EXIT, " exit"),
            (BlockFlags::ENTRY | BlockFlags::RECV_ENTRY, " entry"),
            (BlockFlags::TRY, " try"),
            (BlockFlags::CATCH, " catch"),
            (BlockFlags::FINALLY, " finally"),
            (BlockFlags::FINALLY_END, " finally_end"),
        ];
        for (bit, name) in names {
            if f.intersects(bit) {
                out.extend_from_slice(name.as_bytes());
            }
        }
        if !hide && !b.reachable() {
            out.extend_from_slice(b" unreachable");
        }
        if f.contains(BlockFlags::UNREACHABLE_FREE) {
            out.extend_from_slice(b" unreachable_free");
        }
        if f.contains(BlockFlags::LOOP_HEADER) {
            out.extend_from_slice(b" loop_header");
        }
        if f.contains(BlockFlags::IRREDUCIBLE_LOOP) {
            out.extend_from_slice(b" irreducible");
        }
        if b.len != 0 {
            let _ = writeln!(out, " lines=[{}-{}]", b.start, b.start + b.len - 1);
        } else {
            out.extend_from_slice(b" empty\n");
        }
        if b.successors_count > 0 {
            let _ = write!(out, "     ; to=(BB{}", b.successors[0].as_u32());
            for s in &b.successors[1..b.successors_count] {
                let _ = write!(out, ", BB{}", s.as_u32());
            }
            out.extend_from_slice(b")\n");
        }
        let successors: Vec<u32> = b.successors.iter().map(|s| s.as_u32()).collect();
        let ctx = OpContext {
            successors: Some(&successors),
            ..OpContext::default()
        };
        for op in b.start..b.start + b.len {
            if (op as usize) < op_array.opcodes.len() {
                ir_dump::dump_op_line(out, op_array, OpNum::new(op), dump_flags, &ctx);
            }
        }
    }
    if !op_array.try_catch_array.is_empty() {
        let block = |op: OpNum| -> String {
            // After assembly PHP's cfg->map maps each kept block's new start (the last
            // such block where several start at one op) and nothing else.
            let b = if hide {
                let kept = BlockFlags::REACHABLE | BlockFlags::UNREACHABLE_FREE;
                let at = cfg.blocks.iter().rposition(|b| {
                    b.flags.intersects(kept)
                        && b.start == op.as_u32()
                        && op.index() < op_array.opcodes.len()
                });
                at.map(|b| BlockId::new(b as u32))
            } else {
                cfg.map.get(op.index()).copied()
            };
            match b {
                Some(b) => b.as_u32().to_string(),
                // cfg->map holds -1 there, printed with %u.
                None => u32::MAX.to_string(),
            }
        };
        out.extend_from_slice(b"EXCEPTION TABLE:\n");
        for tc in &op_array.try_catch_array {
            let _ = write!(out, "        BB{}", block(tc.try_op));
            for part in [tc.catch_op, tc.finally_op] {
                match part {
                    Some(op) => {
                        let _ = write!(out, ", BB{}", block(op));
                    }
                    None => out.extend_from_slice(b", -"),
                }
            }
            match tc.finally_end {
                Some(op) => {
                    let _ = writeln!(out, ", BB{}", block(op));
                }
                None => out.extend_from_slice(b", -\n"),
            }
        }
    }
}

/// The `NON-LOCAL-VARS: a, b` line (nothing when no TMP/VAR is used outside its block).
/// PHP loops from `last_var` to `T` (not `last_var + T`), so only slots below `T` appear.
pub(crate) fn dump_non_local_vars(out: &mut Vec<u8>, op_array: &OpArray, used_ext: &[bool]) {
    let mut printed = false;
    for i in op_array.last_var()..op_array.T {
        if used_ext.get(i as usize).copied().unwrap_or(false) {
            if printed {
                let _ = write!(out, ", {i}");
            } else {
                let _ = write!(out, "NON-LOCAL-VARS: {i}");
                printed = true;
            }
        }
    }
    if printed {
        out.push(b'\n');
    }
}
