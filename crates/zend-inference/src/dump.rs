//! `zend_dump_ssa_variables`: the `SSA Variable for "name"` dump (opt_debug_level
//! 0x10000000), each variable with NOVAL, its types, class, range and SCC.

use crate::Inference;
use std::io::Write;
use zend_ir::dump::{c_str, dump_range, dump_type_info, dump_var};
use zend_ir::{OpArray, IS_CV};
use zend_ssa::Ssa;

/// Appends PHP's SSA variables dump of `op_array` to `out`.
pub fn dump_ssa_variables(out: &mut Vec<u8>, op_array: &OpArray, ssa: &Ssa, inf: &Inference) {
    out.extend_from_slice(b"\nSSA Variable for \"");
    // zend_dump_op_array_name prints with %s: names stop at their first NUL.
    match (&op_array.function_name, &op_array.scope) {
        (None, _) => out.extend_from_slice(b"$_main"),
        (Some(f), Some(s)) => {
            out.extend_from_slice(c_str(s.as_bytes()));
            out.extend_from_slice(b"::");
            out.extend_from_slice(c_str(f.as_bytes()));
        }
        (Some(f), None) => out.extend_from_slice(c_str(f.as_bytes())),
    }
    out.extend_from_slice(b"\"\n");
    for (j, var) in ssa.vars.iter().enumerate() {
        out.extend_from_slice(b"    ");
        dump_ssa_var(out, op_array, ssa, inf, j);
        if let Some(scc) = var.scc {
            out.extend_from_slice(if var.scc_entry { b" *" } else { b"  " });
            let _ = write!(out, "SCC={scc}");
        }
        out.push(b'\n');
    }
}

/// `zend_dump_ssa_var` with type information.
pub fn dump_ssa_var(out: &mut Vec<u8>, op_array: &OpArray, ssa: &Ssa, inf: &Inference, j: usize) {
    let var = &ssa.vars[j];
    let _ = write!(out, "#{j}.");
    dump_var(out, op_array, IS_CV, var.var);
    if var.no_val {
        out.extend_from_slice(b" NOVAL");
    }
    if var.escape_state == zend_ssa::EscapeState::NoEscape {
        out.extend_from_slice(b" NOESC");
    }
    let info = &inf.vars[j];
    dump_type_info(
        out,
        info.type_,
        info.ce
            .as_ref()
            .map(|c| (c.name.as_slice(), info.is_instanceof)),
        0,
    );
    if info.has_range {
        dump_range(out, &info.range);
    }
}
