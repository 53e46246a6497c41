//! Def/use sets and variable liveness of a PHP 8.2 op_array, as Zend/Optimizer/zend_dfg.c
//! computes them, and the `Variable Liveness` dump.
//!
//! Mirrors `zend_build_dfg` and `zend_dfg_add_use_def_op`: which operand of which opcode
//! defines a variable and which uses it (an ASSIGN's target is used before it is defined,
//! FE_FETCH defines its op2, the value operand of ASSIGN_DIM lives in the OP_DATA that
//! follows...), then the backward liveness fixpoint over the CFG.
//!
//! Guarantees: the sets are PHP's, bit for bit, for every reachable block (unreachable
//! blocks have empty sets), so the dump is byte-identical; the fixpoint propagates only
//! what is newly live (see [`Dfg::build_in`]) over dense bit sets, without recursion, in
//! time linear in the sets' size.

use bumpalo::Bump;
use std::io::Write;
use zend_cfg::bitset::{self, BitMatrix};
use zend_cfg::reuse::refilled;
use zend_cfg::{BlockId, BuildFlags, Cfg};
use zend_ir::opcode::*;
use zend_ir::{OpArray, Operand};

/// `ZEND_BIND_REF`: BIND_LEXICAL by reference.
const ZEND_BIND_REF: u32 = 1;
/// `ZEND_ARRAY_ELEMENT_REF`: INIT_ARRAY / ADD_ARRAY_ELEMENT of a reference.
const ZEND_ARRAY_ELEMENT_REF: u32 = 1;
const ZEND_ACC_RETURN_REFERENCE: u32 = 1 << 12;

/// A `zend_dfg`: per block, the variables (CVs then TMP/VARs, `EX_VAR_TO_NUM`) it defines,
/// uses before defining, and that are live on entry and exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dfg {
    /// `last_var + T`.
    pub vars: u32,
    /// Words per set (`dfg->size`).
    row_words: usize,
    /// The def, use, in and out sets of every block, in one allocation as PHP's
    /// `dfg->tmp`: four matrices of `blocks` rows each, in that order.
    words: Vec<u64>,
}

impl Dfg {
    /// Gives up the DFG for its sets' memory (see [`Dfg::build_reusing`]).
    pub fn into_words(mut self) -> Vec<u64> {
        self.take_words()
    }

    /// [`Dfg::into_words`] of a DFG not owned: it is left without sets.
    pub fn take_words(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.words)
    }

    /// One of the four matrices.
    fn matrix(&self, k: usize) -> BitMatrix<&[u64]> {
        let len = self.words.len() / 4;
        BitMatrix::view(&self.words[k * len..(k + 1) * len], self.row_words)
    }

    /// Variables defined in each block before any use there.
    pub fn def(&self) -> BitMatrix<&[u64]> {
        self.matrix(0)
    }

    /// Variables used in each block before any definition there.
    pub fn use_(&self) -> BitMatrix<&[u64]> {
        self.matrix(1)
    }

    /// Variables live on entry to each block.
    pub fn in_(&self) -> BitMatrix<&[u64]> {
        self.matrix(2)
    }

    /// Variables live on exit from each block.
    pub fn out(&self) -> BitMatrix<&[u64]> {
        self.matrix(3)
    }
}

fn var_of(operand: Operand) -> Option<usize> {
    operand.var().map(|v| v.index())
}

/// `zend_dfg_add_use_def_op`: adds what op `k` uses (unless already defined in the block)
/// and defines. OP_DATA ops are handled with the op they belong to.
pub fn add_use_def_op(
    op_array: &OpArray,
    k: usize,
    build_flags: BuildFlags,
    use_: &mut [u64],
    def: &mut [u64],
) {
    let opline = &op_array.opcodes[k];
    let add_use = |use_: &mut [u64], def: &[u64], var: usize| {
        if !bitset::contains(def, var) {
            bitset::insert(use_, var);
        }
    };
    if let Some(v) = var_of(opline.op1) {
        add_use(use_, def, v);
    }
    match opline.op2 {
        Operand::TmpVar(v) | Operand::Var(v)
            if !matches!(opline.opcode, ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW) =>
        {
            add_use(use_, def, v.index())
        }
        Operand::Cv(v) => add_use(use_, def, v.index()),
        _ => {}
    }
    if build_flags.contains(BuildFlags::SSA_USE_CV_RESULTS) && opline.opcode != ZEND_RECV {
        if let Operand::Cv(v) = opline.result {
            add_use(use_, def, v.index());
        }
    }
    let rc = build_flags.contains(BuildFlags::SSA_RC_INFERENCE);
    // Read where an arm needs them, not up front: most opcodes need neither.
    let op1_cv = || match opline.op1 {
        Operand::Cv(v) => Some(v.index()),
        _ => None,
    };
    let op2_cv = || match opline.op2 {
        Operand::Cv(v) => Some(v.index()),
        _ => None,
    };
    let next = || op_array.opcodes.get(k + 1);
    // The OP_DATA operand: used, and (for references, or with RC inference) defined.
    let op_data = |use_: &mut [u64], def: &mut [u64], defines: bool| {
        if let Some(next) = next() {
            if let Some(v) = var_of(next.op1) {
                add_use(use_, def, v);
                if defines && matches!(next.op1, Operand::Cv(_)) {
                    bitset::insert(def, v);
                }
            }
        }
    };
    let mut op1_def = None;
    match opline.opcode {
        ZEND_ASSIGN => {
            if rc {
                if let Some(v) = op2_cv() {
                    bitset::insert(def, v);
                }
            }
            op1_def = op1_cv();
        }
        ZEND_ASSIGN_REF => {
            if let Some(v) = op2_cv() {
                bitset::insert(def, v);
            }
            op1_def = op1_cv();
        }
        ZEND_ASSIGN_DIM | ZEND_ASSIGN_OBJ => {
            op_data(use_, def, rc);
            op1_def = op1_cv();
        }
        ZEND_ASSIGN_OBJ_REF => {
            op_data(use_, def, true);
            op1_def = op1_cv();
        }
        ZEND_ASSIGN_STATIC_PROP => op_data(use_, def, rc),
        ZEND_ASSIGN_STATIC_PROP_REF => op_data(use_, def, true),
        ZEND_ASSIGN_STATIC_PROP_OP => op_data(use_, def, false),
        ZEND_ASSIGN_DIM_OP | ZEND_ASSIGN_OBJ_OP => {
            op_data(use_, def, false);
            op1_def = op1_cv();
        }
        ZEND_ASSIGN_OP
        | ZEND_PRE_INC
        | ZEND_PRE_DEC
        | ZEND_POST_INC
        | ZEND_POST_DEC
        | ZEND_BIND_GLOBAL
        | ZEND_BIND_STATIC
        | ZEND_SEND_VAR_NO_REF
        | ZEND_SEND_VAR_NO_REF_EX
        | ZEND_SEND_VAR_EX
        | ZEND_SEND_FUNC_ARG
        | ZEND_SEND_REF
        | ZEND_SEND_UNPACK
        | ZEND_FE_RESET_RW
        | ZEND_MAKE_REF
        | ZEND_PRE_INC_OBJ
        | ZEND_PRE_DEC_OBJ
        | ZEND_POST_INC_OBJ
        | ZEND_POST_DEC_OBJ
        | ZEND_UNSET_DIM
        | ZEND_UNSET_OBJ
        | ZEND_FETCH_DIM_W
        | ZEND_FETCH_DIM_RW
        | ZEND_FETCH_DIM_FUNC_ARG
        | ZEND_FETCH_DIM_UNSET
        | ZEND_FETCH_LIST_W => op1_def = op1_cv(),
        ZEND_SEND_VAR | ZEND_CAST | ZEND_QM_ASSIGN | ZEND_JMP_SET | ZEND_COALESCE
        | ZEND_FE_RESET_R
            if rc =>
        {
            op1_def = op1_cv();
        }
        ZEND_ADD_ARRAY_UNPACK | ZEND_ADD_ARRAY_ELEMENT | ZEND_INIT_ARRAY => {
            if opline.opcode != ZEND_INIT_ARRAY {
                if let Some(v) = var_of(opline.result) {
                    add_use(use_, def, v);
                }
            }
            if opline.opcode != ZEND_ADD_ARRAY_UNPACK
                && (rc || opline.extended_value & ZEND_ARRAY_ELEMENT_REF != 0)
            {
                op1_def = op1_cv();
            }
        }
        ZEND_YIELD if op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0 || rc => {
            op1_def = op1_cv()
        }
        ZEND_UNSET_CV => op1_def = op1_cv(),
        ZEND_VERIFY_RETURN_TYPE => op1_def = var_of(opline.op1),
        ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
            if let Some(v) = var_of(opline.op2) {
                bitset::insert(def, v);
            }
        }
        ZEND_BIND_LEXICAL if opline.extended_value & ZEND_BIND_REF != 0 || rc => {
            if let Some(v) = var_of(opline.op2) {
                bitset::insert(def, v);
            }
        }
        _ => {}
    }
    if let Some(v) = op1_def {
        bitset::insert(def, v);
    }
    if let Some(v) = var_of(opline.result) {
        bitset::insert(def, v);
    }
}

impl Dfg {
    /// `zend_build_dfg`: def/use of every reachable block, then in/out to the fixpoint.
    pub fn build(op_array: &OpArray, cfg: &Cfg, build_flags: BuildFlags) -> Dfg {
        Dfg::build_in(op_array, cfg, build_flags, &Bump::new())
    }

    /// [`Dfg::build`], with its worklist in `scratch` (an analysis reuses one arena for
    /// every op_array).
    pub fn build_in(op_array: &OpArray, cfg: &Cfg, build_flags: BuildFlags, scratch: &Bump) -> Dfg {
        Dfg::build_reusing(op_array, cfg, build_flags, scratch, Vec::new())
    }

    /// [`Dfg::build_in`] into the sets' memory of a DFG built before (see
    /// [`Dfg::into_words`]).
    pub fn build_reusing(
        op_array: &OpArray,
        cfg: &Cfg,
        build_flags: BuildFlags,
        scratch: &Bump,
        words: Vec<u64>,
    ) -> Dfg {
        let vars = op_array.last_var() + op_array.T;
        let blocks = cfg.blocks_count();
        let row_words = bitset::words_for(vars as usize);
        let mut words = refilled(words, 4 * blocks * row_words, 0);
        let (def, rest) = words.split_at_mut(blocks * row_words);
        let (use_, rest) = rest.split_at_mut(blocks * row_words);
        let (in_, out) = rest.split_at_mut(blocks * row_words);
        let mut def = BitMatrix::view_mut(def, row_words);
        let mut use_ = BitMatrix::view_mut(use_, row_words);
        let mut in_ = BitMatrix::view_mut(in_, row_words);
        let mut out = BitMatrix::view_mut(out, row_words);
        for j in 0..blocks {
            let block = &cfg.blocks[j];
            if !block.is_reachable() {
                continue;
            }
            for k in block.ops() {
                if op_array.opcodes[k as usize].opcode != ZEND_OP_DATA {
                    add_use_def_op(
                        op_array,
                        k as usize,
                        build_flags,
                        use_.row_mut(j),
                        def.row_mut(j),
                    );
                }
            }
        }

        // The fixpoint, as deltas: PHP re-evaluates a whole block (out from its successors'
        // in sets, then in) whenever a successor's in set changed, and a deep loop nest then
        // re-evaluates every block once per level of the nest: quadratic. The sets are the
        // least fixpoint of out = ∪ in(successors), in = use ∪ (out − def), which any
        // order of evaluation reaches; here each block passes to its predecessors only the
        // variables newly live on its entry, so every (block, variable) is added at most
        // once to each set. Unreachable blocks are left out, as PHP's loop skips them
        // (their sets stay empty).
        let mut delta = BitMatrix::view_mut(
            scratch.alloc_slice_fill_copy(blocks * row_words, 0u64),
            row_words,
        );
        let queued = scratch.alloc_slice_fill_copy(bitset::words_for(blocks), 0u64);
        let mut stack = bumpalo::collections::Vec::with_capacity_in(blocks, scratch);
        for j in 0..blocks {
            // With out empty, in = use.
            if cfg.blocks[j].is_reachable() && use_.row(j).iter().any(|&w| w != 0) {
                in_.row_mut(j).copy_from_slice(use_.row(j));
                delta.row_mut(j).copy_from_slice(use_.row(j));
                bitset::insert(queued, j);
                stack.push(j);
            }
        }
        let fresh = scratch.alloc_slice_fill_copy(row_words, 0u64);
        while let Some(j) = stack.pop() {
            bitset::remove(queued, j);
            // Taken out first: a block that is its own predecessor adds to it again.
            fresh.copy_from_slice(delta.row(j));
            delta.row_mut(j).fill(0);
            for &p in cfg.predecessors(BlockId::new(j as u32)) {
                let p = p.index();
                if !cfg.blocks[p].is_reachable() {
                    continue;
                }
                let (out_p, in_p, delta_p) = (out.row_mut(p), in_.row_mut(p), delta.row_mut(p));
                let mut grew = false;
                for ((((&f, o), i), dl), &d) in fresh
                    .iter()
                    .zip(out_p)
                    .zip(in_p)
                    .zip(delta_p)
                    .zip(def.row(p))
                {
                    let new_out = f & !*o;
                    *o |= new_out;
                    let new_in = new_out & !d & !*i;
                    *i |= new_in;
                    *dl |= new_in;
                    grew |= new_in != 0;
                }
                if grew && bitset::insert(queued, p) {
                    stack.push(p);
                }
            }
        }
        Dfg {
            vars,
            row_words,
            words,
        }
    }
}

/// `zend_dump_var_set`: `    ; name = {CV0($a), X3}`.
fn dump_var_set(out: &mut Vec<u8>, op_array: &OpArray, name: &str, set: &[u64]) {
    let _ = write!(out, "    ; {name} = {{");
    let total = op_array.last_var() + op_array.T;
    let mut first = true;
    for i in bitset::iter(set).take_while(|&i| i < total as usize) {
        if !std::mem::take(&mut first) {
            out.extend_from_slice(b", ");
        }
        zend_ir::dump::dump_var(out, op_array, zend_ir::IS_CV, i as u32);
    }
    out.extend_from_slice(b"}\n");
}

/// `zend_dump_dfg`: the `Variable Liveness for "name"` dump.
pub fn dump_dfg(out: &mut Vec<u8>, op_array: &OpArray, cfg: &Cfg, dfg: &Dfg) {
    out.extend_from_slice(b"\nVariable Liveness for \"");
    zend_cfg::dump::op_array_name(out, op_array);
    out.extend_from_slice(b"\"\n");
    for j in 0..cfg.blocks_count() {
        let _ = writeln!(out, "  BB{j}:");
        dump_var_set(out, op_array, "def", dfg.def().row(j));
        dump_var_set(out, op_array, "use", dfg.use_().row(j));
        dump_var_set(out, op_array, "in ", dfg.in_().row(j));
        dump_var_set(out, op_array, "out", dfg.out().row(j));
    }
}
