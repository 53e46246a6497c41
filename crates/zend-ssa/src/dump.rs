//! SSA dumps, byte for byte as zend_dump.c prints them: the phi placement
//! (`zend_dump_phi_placement`) and the op_array in SSA form (`ZEND_DUMP_SSA`, "dfa ssa").

use crate::{Constraint, Phi, RangeConstraint, Ssa, SsaVar};
use std::io::Write;
use zend_cfg::dump::{dump_block_info, dump_cfg_tables, op_array_name, successor_numbers, Detail};
use zend_cfg::{BlockId, Cfg};
use zend_ir::dump::{self as ir_dump, dump_ssa_var, FuncInfoHeader, OpContext, SsaVarInfo};
use zend_ir::{OpArray, OpNum, IS_CV};

/// `zend_dump_phi_placement`: the variables each block has phis (or pis) for.
pub fn dump_phi_placement(out: &mut Vec<u8>, op_array: &OpArray, cfg: &Cfg, ssa: &Ssa) {
    out.extend_from_slice(b"\nSSA Phi() Placement for \"");
    op_array_name(out, op_array);
    out.extend_from_slice(b"\"\n");
    for j in 0..cfg.blocks_count() {
        let phis = &ssa.blocks[j].phis;
        let Some(&first) = phis.first() else { continue };
        let _ = writeln!(out, "  BB{j}:");
        out.extend_from_slice(if ssa.phi(first).is_pi() {
            b"    ; pi={"
        } else {
            b"    ; phi={"
        });
        for (k, &p) in phis.iter().enumerate() {
            if k > 0 {
                out.extend_from_slice(b", ");
            }
            ir_dump::dump_var(out, op_array, IS_CV, ssa.phi(p).var);
        }
        out.extend_from_slice(b"}\n");
    }
}

fn ssa_var(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    v: Option<SsaVar>,
    var_type: u8,
    var: u32,
    info: Option<SsaVarInfo<'_>>,
) {
    dump_ssa_var(out, op_array, v.map(|v| v.as_u32()), var_type, var, info);
}

/// `zend_dump_range_constraint`.
fn dump_range_constraint(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    r: &RangeConstraint,
    info: Option<SsaVarInfo<'_>>,
) {
    if r.range.underflow && r.range.overflow {
        return;
    }
    out.extend_from_slice(b" RANGE");
    if r.negative != crate::NegativeLat::None {
        out.push(b'~');
    }
    out.push(b'[');
    let bound_type = |var: u32| if var < op_array.last_var() { IS_CV } else { 0 };
    let offset = |out: &mut Vec<u8>, value: i64| {
        if value > 0 {
            let _ = write!(out, " + {value}");
        } else if value < 0 {
            let _ = write!(out, " - {}", value.wrapping_neg());
        }
    };
    if r.range.underflow {
        out.extend_from_slice(b"-- .. ");
    } else if let (Some(v), Some(var)) = (r.min_ssa_var, r.min_var) {
        ssa_var(out, op_array, Some(v), bound_type(var), var, info);
        offset(out, r.range.min);
        out.extend_from_slice(b" .. ");
    } else {
        let _ = write!(out, "{} .. ", r.range.min);
    }
    if r.range.overflow {
        out.extend_from_slice(b"++]");
    } else if let (Some(v), Some(var)) = (r.max_ssa_var, r.max_var) {
        ssa_var(out, op_array, Some(v), bound_type(var), var, info);
        offset(out, r.range.max);
        out.push(b']');
    } else {
        let _ = write!(out, "{}]", r.range.max);
    }
}

/// The phi and pi lines under a block header.
fn dump_phis(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    cfg: &Cfg,
    ssa: &Ssa,
    b: BlockId,
    info: Option<SsaVarInfo<'_>>,
) {
    for &p in &ssa.blocks[b.index()].phis {
        let phi: &Phi = ssa.phi(p);
        out.extend_from_slice(b"     ");
        ssa_var(out, op_array, Some(phi.ssa_var), 0, phi.var, info);
        match phi.pi {
            None => {
                out.extend_from_slice(b" = Phi(");
                for j in 0..cfg.block(b).predecessors_count() {
                    if j > 0 {
                        out.extend_from_slice(b", ");
                    }
                    ssa_var(
                        out,
                        op_array,
                        phi.sources.get(j).copied().flatten(),
                        0,
                        phi.var,
                        info,
                    );
                }
                out.extend_from_slice(b")\n");
            }
            Some(from) => {
                let _ = write!(out, " = Pi<BB{}>(", from.as_u32());
                ssa_var(
                    out,
                    op_array,
                    phi.sources.first().copied().flatten(),
                    0,
                    phi.var,
                    info,
                );
                out.extend_from_slice(b" &");
                match &phi.constraint {
                    Some(Constraint::Range(r)) => dump_range_constraint(out, op_array, r, info),
                    Some(Constraint::Type(t)) => {
                        out.extend_from_slice(b" TYPE");
                        ir_dump::dump_type_info(
                            out,
                            t.type_mask,
                            t.ce.as_deref().map(|n| (n, true)),
                            0,
                        );
                    }
                    None => {}
                }
                out.extend_from_slice(b")\n");
            }
        }
    }
}

/// `zend_dump_op_array(op_array, ZEND_DUMP_SSA, msg, ssa)` at the point the DFA pass
/// dumps it: SSA numbering, no variable information yet.
pub fn dump_ssa(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    cfg: &Cfg,
    ssa: &Ssa,
    func_info: Option<&FuncInfoHeader>,
    msg: Option<&str>,
) {
    dump_ssa_ex(out, op_array, cfg, ssa, func_info, msg, None);
}

/// `zend_dump_op_array(op_array, ZEND_DUMP_SSA, msg, ssa)` once the SSA has variable
/// information (`ssa->var_info`, the DFA pass's "before dfa pass" and later dumps): every
/// SSA variable is followed by what `info` prints (NOVAL, NOESC, types, range), and the
/// header lists the CVs' entry values.
pub fn dump_ssa_ex(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    cfg: &Cfg,
    ssa: &Ssa,
    func_info: Option<&FuncInfoHeader>,
    msg: Option<&str>,
    info: Option<SsaVarInfo<'_>>,
) {
    let dump_flags = ir_dump::ZEND_DUMP_SSA;
    ir_dump::dump_op_array_header_ex(out, op_array, Some(ssa.vars_count() as u32), func_info, msg);
    if info.is_some() {
        for i in 0..op_array.last_var() {
            out.extend_from_slice(b"     ; ");
            ssa_var(out, op_array, Some(SsaVar::new(i)), IS_CV, i, info);
            out.push(b'\n');
        }
    }
    for n in 0..cfg.blocks_count() {
        let b = BlockId::new(n as u32);
        dump_block_info(out, cfg, b, dump_flags, Detail::Dominators);
        dump_phis(out, op_array, cfg, ssa, b, info);
        let successors = successor_numbers(cfg, b);
        for op in cfg.block(b).ops() {
            let ctx = OpContext {
                successors: Some(&successors),
                ssa: Some(ssa.ops[op as usize].operands()),
                ssa_var_info: info,
            };
            ir_dump::dump_op_line(out, op_array, OpNum::new(op), dump_flags, &ctx);
        }
    }
    dump_cfg_tables(out, op_array, cfg, dump_flags);
}
