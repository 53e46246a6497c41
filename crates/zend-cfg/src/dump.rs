//! CFG dumps, byte for byte as zend_dump.c prints them: the op_array by blocks
//! (`ZEND_DUMP_CFG`, "dfa cfg") and the dominator tree (`zend_dump_dominators`).

use crate::cfg::{BlockFlags, Cfg};
use crate::BlockId;
use std::io::Write;
use zend_ir::dump::{self as ir_dump, FuncInfoHeader, OpContext};
use zend_ir::{OpArray, OpNum};

/// How much of the CFG has been computed at the point PHP dumps it: the `dfa cfg` dump is
/// printed before dominators and loops, so their lines and flags do not appear.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Blocks, edges and reachability only.
    Blocks,
    /// Also idom, level, children, loop headers.
    Dominators,
}

/// `zend_dump_block_info`.
pub fn dump_block_info(out: &mut Vec<u8>, cfg: &Cfg, n: BlockId, dump_flags: u32, detail: Detail) {
    let b = cfg.block(n);
    if n.as_u32() > 0 {
        out.push(b'\n');
    }
    let _ = write!(out, "BB{}:\n     ;", n.as_u32());
    let f = b.flags;
    let mut flag = |bit: BlockFlags, name: &str| {
        if f.intersects(bit) {
            out.extend_from_slice(name.as_bytes());
        }
    };
    flag(BlockFlags::START, " start");
    flag(BlockFlags::RECV_ENTRY, " recv");
    flag(BlockFlags::FOLLOW, " follow");
    flag(BlockFlags::TARGET, " target");
    flag(BlockFlags::EXIT, " exit");
    flag(BlockFlags::ENTRY | BlockFlags::RECV_ENTRY, " entry");
    flag(BlockFlags::TRY, " try");
    flag(BlockFlags::CATCH, " catch");
    flag(BlockFlags::FINALLY, " finally");
    flag(BlockFlags::FINALLY_END, " finally_end");
    if dump_flags & ir_dump::ZEND_DUMP_HIDE_UNREACHABLE == 0 && !b.is_reachable() {
        out.extend_from_slice(b" unreachable");
    }
    if f.contains(BlockFlags::UNREACHABLE_FREE) {
        out.extend_from_slice(b" unreachable_free");
    }
    if detail == Detail::Dominators {
        if f.contains(BlockFlags::LOOP_HEADER) {
            out.extend_from_slice(b" loop_header");
        }
        if f.contains(BlockFlags::IRREDUCIBLE_LOOP) {
            out.extend_from_slice(b" irreducible");
        }
    }
    if b.len != 0 {
        let _ = writeln!(out, " lines=[{}-{}]", b.start, b.start + b.len - 1);
    } else {
        out.extend_from_slice(b" empty\n");
    }
    list(out, "from", cfg.predecessors(n));
    list(out, "to", cfg.successors(n));
    if detail == Detail::Dominators {
        if let Some(idom) = b.idom {
            let _ = writeln!(out, "     ; idom=BB{}", idom.as_u32());
        }
        if let Some(level) = b.level {
            let _ = writeln!(out, "     ; level={level}");
        }
        if let Some(header) = b.loop_header {
            let _ = writeln!(out, "     ; loop_header={}", header.as_u32());
        }
        if let Some(first) = b.children {
            let _ = write!(out, "     ; children=(BB{}", first.as_u32());
            let mut child = cfg.block(first).next_child;
            while let Some(c) = child {
                let _ = write!(out, ", BB{}", c.as_u32());
                child = cfg.block(c).next_child;
            }
            out.extend_from_slice(b")\n");
        }
    }
}

fn list(out: &mut Vec<u8>, name: &str, blocks: &[BlockId]) {
    if let Some((first, rest)) = blocks.split_first() {
        let _ = write!(out, "     ; {name}=(BB{}", first.as_u32());
        for b in rest {
            let _ = write!(out, ", BB{}", b.as_u32());
        }
        out.extend_from_slice(b")\n");
    }
}

/// The successors of a block as the op printer takes them (for jump operands, so those
/// of unreachable blocks too).
pub fn successor_numbers(cfg: &Cfg, b: BlockId) -> Vec<u32> {
    cfg.stored_successors(b)
        .iter()
        .map(|s| s.as_u32())
        .collect()
}

/// The ops of one block, each with the block's successors for its jump operands.
pub fn dump_block_ops(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    cfg: &Cfg,
    b: BlockId,
    dump_flags: u32,
) {
    let successors = successor_numbers(cfg, b);
    let ctx = OpContext {
        successors: Some(&successors),
        ..OpContext::default()
    };
    for op in cfg.block(b).ops() {
        ir_dump::dump_op_line(out, op_array, OpNum::new(op), dump_flags, &ctx);
    }
}

/// The tail of a CFG dump: live ranges (when asked for) and the exception table by block.
pub fn dump_cfg_tables(out: &mut Vec<u8>, op_array: &OpArray, cfg: &Cfg, dump_flags: u32) {
    if dump_flags & ir_dump::ZEND_DUMP_LIVE_RANGES != 0 {
        ir_dump::dump_live_ranges(out, op_array);
    }
    if !cfg.try_catch.is_empty() {
        out.extend_from_slice(b"EXCEPTION TABLE:\n");
        for tc in &cfg.try_catch {
            let _ = write!(out, "        BB{}", cfg.map[tc.try_op.index()].as_u32());
            for part in [tc.catch_op, tc.finally_op] {
                match part {
                    Some(op) => {
                        let _ = write!(out, ", BB{}", cfg.map[op.index()].as_u32());
                    }
                    None => out.extend_from_slice(b", -"),
                }
            }
            match tc.finally_end {
                Some(op) => {
                    let _ = writeln!(out, ", BB{}", cfg.map[op.index()].as_u32());
                }
                None => out.extend_from_slice(b", -\n"),
            }
        }
    }
}

/// `zend_dump_op_array(op_array, ZEND_DUMP_CFG, msg, cfg)`.
pub fn dump_cfg(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    cfg: &Cfg,
    detail: Detail,
    func_info: Option<&FuncInfoHeader>,
    msg: Option<&str>,
) {
    let dump_flags = ir_dump::ZEND_DUMP_CFG;
    ir_dump::dump_op_array_header_ex(out, op_array, None, func_info, msg);
    for n in 0..cfg.blocks_count() {
        let b = BlockId::new(n as u32);
        dump_block_info(out, cfg, b, dump_flags, detail);
        dump_block_ops(out, op_array, cfg, b, dump_flags);
    }
    dump_cfg_tables(out, op_array, cfg, dump_flags);
}

/// `zend_dump_dominators`: the reachable blocks with their dominator-tree lines.
pub fn dump_dominators(out: &mut Vec<u8>, op_array: &OpArray, cfg: &Cfg) {
    out.extend_from_slice(b"\nDOMINATORS-TREE for \"");
    op_array_name(out, op_array);
    out.extend_from_slice(b"\"\n");
    for n in 0..cfg.blocks_count() {
        if cfg.blocks[n].is_reachable() {
            dump_block_info(out, cfg, BlockId::new(n as u32), 0, Detail::Dominators);
        }
    }
}

/// `zend_dump_op_array_name`.
pub fn op_array_name(out: &mut Vec<u8>, op_array: &OpArray) {
    match (&op_array.function_name, &op_array.scope) {
        (None, _) => out.extend_from_slice(b"$_main"),
        (Some(f), Some(s)) => {
            out.extend_from_slice(ir_dump::c_str(s.as_bytes()));
            out.extend_from_slice(b"::");
            out.extend_from_slice(ir_dump::c_str(f.as_bytes()));
        }
        (Some(f), None) => out.extend_from_slice(ir_dump::c_str(f.as_bytes())),
    }
}

/// Escapes text for a double-quoted Graphviz label (lines end with `\l`).
fn dot_escape(out: &mut String, bytes: &[u8]) {
    for ch in String::from_utf8_lossy(bytes).chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '{' | '}' | '<' | '>' | '|' => {
                out.push('\\');
                out.push(ch);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
}

/// The CFG of one op_array as a Graphviz digraph: a box per block with its flags and ops,
/// solid edges for control flow (the jump target first, as PHP orders successors), dashed
/// blue edges from each block's immediate dominator, loop headers drawn double and
/// irreducible ones red, unreachable blocks grey.
pub fn dot(op_array: &OpArray, cfg: &Cfg) -> String {
    let mut s = String::new();
    let mut name = Vec::new();
    op_array_name(&mut name, op_array);
    s.push_str("digraph \"");
    dot_escape(&mut s, &name);
    s.push_str("\" {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  label=\"");
    dot_escape(&mut s, &name);
    s.push_str("\";\n");
    for n in 0..cfg.blocks_count() {
        let b = BlockId::new(n as u32);
        let block = cfg.block(b);
        let mut info = Vec::new();
        dump_block_info(&mut info, cfg, b, 0, Detail::Dominators);
        let mut ops = Vec::new();
        dump_block_ops(&mut ops, op_array, cfg, b, 0);
        let mut label = String::new();
        for line in info
            .split(|&c| c == b'\n')
            .chain(ops.split(|&c| c == b'\n'))
        {
            if line.is_empty() {
                continue;
            }
            dot_escape(&mut label, line);
            label.push_str("\\l");
        }
        let mut attrs = Vec::new();
        if block.flags.contains(BlockFlags::LOOP_HEADER) {
            attrs.push("peripheries=2");
        }
        if block.flags.contains(BlockFlags::IRREDUCIBLE_LOOP) {
            attrs.push("color=red");
        }
        if !block.is_reachable() {
            attrs.push("style=filled, fillcolor=lightgrey");
        }
        let extra = if attrs.is_empty() {
            String::new()
        } else {
            format!(", {}", attrs.join(", "))
        };
        s.push_str(&format!("  bb{n} [label=\"{label}\"{extra}];\n"));
    }
    for n in 0..cfg.blocks_count() {
        let b = BlockId::new(n as u32);
        for (i, succ) in cfg.successors(b).iter().enumerate() {
            let back = cfg.block(*succ).flags.contains(BlockFlags::LOOP_HEADER)
                && crate::dom::dominates(cfg, *succ, b);
            let style = if back {
                ", color=darkgreen, penwidth=2"
            } else {
                ""
            };
            s.push_str(&format!(
                "  bb{n} -> bb{} [label=\"{i}\"{style}];\n",
                succ.as_u32()
            ));
        }
        if let Some(idom) = cfg.block(b).idom {
            s.push_str(&format!(
                "  bb{} -> bb{n} [style=dashed, color=blue, constraint=false, arrowhead=empty];\n",
                idom.as_u32()
            ));
        }
    }
    s.push_str("}\n");
    s
}
