//! Dead code elimination over SSA (PASS_14): mirrors Zend/Optimizer/dce.c's
//! `dce_optimize_op_array` as PHP 8.2 has it.
//!
//! The algorithm starts from "everything is dead": every reachable op without a side
//! effect (`may_have_side_effects`), that cannot throw (`zend_may_throw`) and that does not
//! break `func_get_args()` is presumed dead, every phi too, except phis of temporaries that
//! may hold refcounted values (their producers combine a value with control flow). Liveness
//! then flows backwards from the live ops and phis to the definitions of what they use
//! (two worklists, ops and phis). Uses that do not read the value (the CV an `ASSIGN`
//! overwrites, ...) keep only the phis that define them alive, in a third pass.
//!
//! What stays dead is removed through the SSA edit API (zend-ssa's `edit`): a dead op's
//! definitions are renamed to the values it used, it becomes a NOP, or a FREE when it was
//! the last user of a live refcounted temporary (or, when that temporary's only producer
//! can simply drop its result, `try_remove_var_def`, the producer's result goes unused);
//! dead phis go, and phis whose sources are all the same value are replaced by it.
//! Allocations whose value never escapes (escape state `NOESC`: `NEW` with its
//! constructor call, `INIT_ARRAY`/`ADD_ARRAY_ELEMENT`, and the `ASSIGN_DIM`/`ASSIGN_OBJ`
//! writes into them) die with their last use.
//!
//! The pass does no unreachable-code elimination (SCCP's job) and keeps every branch
//! (no control dependence). Guarantees: the SSA form stays consistent (checked by the
//! verifier in tests), ops only become NOPs or FREEs in place (the caller compacts them
//! with `zend_ssa_remove_nops`), and nothing changes for an op PHP would keep.

use zend_cfg::bitset::{BitSlice, Worklist};
use zend_cfg::{Cfg, FuncFlags};
use zend_inference::{mb, VarInfo};
use zend_ir::opcode::*;
use zend_ir::{
    Literal, Op, OpArray, OpNum, Operand, Script, VarNum, IS_CONST, IS_TMP_VAR, IS_UNUSED, IS_VAR,
};
use zend_ssa::{EscapeState, Phi, PhiId, Ssa, SsaOp, SsaVar, SsaVariable, VarTypes};

use crate::may_throw::{
    may_throw, TypeView, ZEND_BIND_EXPLICIT, ZEND_BIND_IMPLICIT, ZEND_BIND_REF,
};
use crate::php_bugs::PhpBugs;

/// `MAY_HAVE_DTOR`: values whose release may run a destructor.
const MAY_HAVE_DTOR: u32 = mb::OBJECT
    | mb::RESOURCE
    | mb::ARRAY_OF_ARRAY
    | (mb::OBJECT << mb::SHIFT)
    | (mb::RESOURCE << mb::SHIFT);

/// `may_be_refcounted`.
fn may_be_refcounted(t: u32) -> bool {
    t & (mb::STRING | mb::ARRAY | mb::OBJECT | mb::RESOURCE | mb::REF) != 0
}

/// The inferred types as [`Ssa::rename_var_uses`] widens them.
struct Types<'a>(&'a mut [VarInfo]);

impl VarTypes for Types<'_> {
    fn type_mask(&self, var: SsaVar) -> u32 {
        self.0.get(var.index()).map_or(0, |v| v.type_)
    }
    fn set_type_mask(&mut self, var: SsaVar, mask: u32) {
        if let Some(v) = self.0.get_mut(var.index()) {
            v.type_ = mask;
        }
    }
}

/// dce.c's `context`, while liveness is computed: the op_array and its analyses are only
/// read, so they are held as plain slices (kept in registers across the worklist updates,
/// where fields behind `&mut` were reloaded at every step).
struct Marking<'a, 'w> {
    ops: &'a [Op],
    ssa_ops: &'a [SsaOp],
    ssa_vars: &'a [SsaVariable],
    phis: &'a [Phi],
    types: &'a [VarInfo],
    work: Worklists<'w>,
}

/// dce.c's `phi_dead`, kept as its complement (the phis found live): it then starts
/// empty, as the worklists do, and is made with them instead of filled on its own.
struct PhiDead<'w>(BitSlice<'w>);

impl PhiDead<'_> {
    #[inline]
    fn contains(&self, v: usize) -> bool {
        !self.0.contains(v)
    }

    #[inline]
    fn remove(&mut self, v: usize) {
        self.0.insert(v);
    }
}

/// dce.c's bitsets of dead ops and phis and its three worklists.
struct Worklists<'w> {
    instr_dead: BitSlice<'w>,
    phi_dead: PhiDead<'w>,
    instr_worklist: Worklist<&'w mut [u64]>,
    phi_worklist: Worklist<&'w mut [u64]>,
    phi_worklist_no_val: Worklist<&'w mut [u64]>,
}

/// `add_to_phi_worklist_no_val`: a phi still presumed dead whose value is used without
/// being read must stay.
fn add_to_phi_worklist_no_val(
    vars: &[SsaVariable],
    phi_dead: &PhiDead<'_>,
    no_val: &mut Worklist<&mut [u64]>,
    v: SsaVar,
) {
    if vars[v.index()].definition_phi.is_some() && phi_dead.contains(v.index()) {
        no_val.insert(v.index());
    }
}

/// The inferred type mask of `v` (`UNKNOWN_INFO` past the inferred variables).
fn type_in(types: &[VarInfo], v: SsaVar) -> u32 {
    types
        .get(v.index())
        .map_or(crate::may_throw::UNKNOWN_INFO, |i| i.type_)
}

impl Marking<'_, '_> {
    /// `add_to_worklists`. Without `CHECK` (before the fixpoint: the phis kept and the
    /// backward walk), the worklists are changed uncounted, and recounted once before
    /// the fixpoint pops them.
    #[inline(always)]
    fn add_to_worklists<const CHECK: bool>(&mut self, v: SsaVar) {
        let var = &self.ssa_vars[v.index()];
        let work = &mut self.work;
        if let Some(def) = var.definition {
            if !CHECK {
                work.instr_worklist.insert_uncounted(def.index());
            } else if work.instr_dead.contains(def.index()) {
                work.instr_worklist.insert(def.index());
            }
        } else if var.definition_phi.is_some() {
            if !CHECK {
                work.phi_worklist.insert_uncounted(v.index());
            } else if work.phi_dead.contains(v.index()) {
                work.phi_worklist.insert(v.index());
            }
        }
    }

    fn add_to_phi_worklist_no_val(&mut self, v: SsaVar) {
        let work = &mut self.work;
        add_to_phi_worklist_no_val(
            self.ssa_vars,
            &work.phi_dead,
            &mut work.phi_worklist_no_val,
            v,
        );
    }

    /// `add_operands_to_worklists`. About half the ops it is called for use nothing: that
    /// test is inlined into the callers, the rest is not.
    #[inline(always)]
    fn add_operands_to_worklists<const CHECK: bool>(&mut self, n: usize) {
        self.add_operands_of::<CHECK>(&self.ssa_ops[n], n);
    }

    /// [`Marking::add_operands_to_worklists`] of op `n`, whose SSA record `s` the caller
    /// has at hand.
    #[inline(always)]
    fn add_operands_of<const CHECK: bool>(&mut self, s: &SsaOp, n: usize) {
        if s.result_use.is_some() || s.op1_use.is_some() || s.op2_use.is_some() {
            self.add_uses_to_worklists::<CHECK>(n);
        }
    }

    /// [`Marking::add_operands_to_worklists`] of an op that uses something. The op's SSA
    /// record and opcode are read once for its three operands.
    #[inline(never)]
    fn add_uses_to_worklists<const CHECK: bool>(&mut self, n: usize) {
        let s = &self.ssa_ops[n];
        let opcode = self.ops[n].opcode;
        if let Some(v) = s.result_use {
            self.add_to_worklists::<CHECK>(v);
        }
        if let Some(v) = s.op1_use {
            if !s.is_no_val_use(opcode, v)
                || (opcode == ZEND_ASSIGN && type_in(self.types, v) & mb::REF != 0)
            {
                self.add_to_worklists::<CHECK>(v);
            } else {
                self.add_to_phi_worklist_no_val(v);
            }
        }
        if let Some(v) = s.op2_use {
            if !s.is_no_val_use(opcode, v)
                || (opcode == ZEND_FE_FETCH_R && type_in(self.types, v) & mb::REF != 0)
            {
                self.add_to_worklists::<CHECK>(v);
            } else {
                self.add_to_phi_worklist_no_val(v);
            }
        }
    }

    /// `add_phi_sources_to_worklists`.
    #[inline(always)]
    fn add_phi_sources_to_worklists<const CHECK: bool>(&mut self, p: PhiId) {
        let phi = &self.phis[p.index()];
        for &s in phi.sources[..phi.num_sources()].iter().flatten() {
            self.add_to_worklists::<CHECK>(s);
        }
    }
}

/// dce.c's `context`, once liveness is known: removing ops and phis edits the SSA form.
struct Context<'a> {
    op_array: &'a mut OpArray,
    ssa: &'a mut Ssa,
    vars: &'a mut [VarInfo],
    instr_dead: BitSlice<'a>,
    phi_dead: PhiDead<'a>,
    phi_worklist_no_val: Worklist<&'a mut [u64]>,
}

impl Context<'_> {
    fn type_of(&self, v: SsaVar) -> u32 {
        type_in(self.vars, v)
    }

    fn add_to_phi_worklist_no_val(&mut self, v: SsaVar) {
        add_to_phi_worklist_no_val(
            &self.ssa.vars,
            &self.phi_dead,
            &mut self.phi_worklist_no_val,
            v,
        );
    }

    /// `is_var_dead`.
    fn is_var_dead(&self, v: SsaVar) -> bool {
        let var = &self.ssa.vars[v.index()];
        if var.definition_phi.is_some() {
            self.phi_dead.contains(v.index())
        } else if let Some(def) = var.definition {
            self.instr_dead.contains(def.index())
        } else {
            // No definition: either removed already (dead), or a CV's value on entry (live).
            v.as_u32() >= self.op_array.last_var()
        }
    }

    /// `try_remove_var_def`: when the dead op at `n` is the only user of `free_var` and
    /// `free_var` is the result of an op that has effects of its own, that op stops
    /// producing the result (so nothing needs freeing).
    fn try_remove_var_def(&mut self, free_var: SsaVar, use_chain: Option<OpNum>, n: usize) -> bool {
        if use_chain.is_some() {
            return false;
        }
        let var = &self.ssa.vars[free_var.index()];
        let Some(def) = var.definition else {
            return false;
        };
        if self.ssa.ops[def.index()].result_def != Some(free_var)
            || var.phi_use_chain.is_some()
            || var.use_chain != Some(OpNum::new(n as u32))
        {
            return false;
        }
        let def_op = &mut self.op_array.opcodes[def.index()];
        match def_op.opcode {
            ZEND_ASSIGN
            | ZEND_ASSIGN_REF
            | ZEND_ASSIGN_DIM
            | ZEND_ASSIGN_OBJ
            | ZEND_ASSIGN_OBJ_REF
            | ZEND_ASSIGN_STATIC_PROP
            | ZEND_ASSIGN_STATIC_PROP_REF
            | ZEND_ASSIGN_OP
            | ZEND_ASSIGN_DIM_OP
            | ZEND_ASSIGN_OBJ_OP
            | ZEND_ASSIGN_STATIC_PROP_OP
            | ZEND_PRE_INC
            | ZEND_PRE_DEC
            | ZEND_PRE_INC_OBJ
            | ZEND_PRE_DEC_OBJ
            | ZEND_DO_ICALL
            | ZEND_DO_UCALL
            | ZEND_DO_FCALL_BY_NAME
            | ZEND_DO_FCALL
            | ZEND_INCLUDE_OR_EVAL
            | ZEND_YIELD
            | ZEND_YIELD_FROM
            | ZEND_ASSERT_CHECK => {
                def_op.result = Operand::Unused(0);
                self.ssa.ops[def.index()].result_def = None;
                self.ssa.vars[free_var.index()].definition = None;
                true
            }
            _ => false,
        }
    }

    /// `is_free_of_live_var`: FREEs are presumed dead, but one is really dead only when
    /// the value it frees is.
    fn is_free_of_live_var(&self, n: usize) -> bool {
        let opcode = self.op_array.opcodes[n].opcode;
        let Some(used) = self.ssa.ops[n].op1_use else {
            return false;
        };
        match opcode {
            ZEND_FREE => {
                // A FREE of a value that cannot be refcounted can always go.
                if !may_be_refcounted(self.type_of(used)) {
                    return false;
                }
                !self.is_var_dead(used)
            }
            ZEND_FE_FREE => !self.is_var_dead(used),
            _ => false,
        }
    }

    /// `dce_instr`: removes the dead op at `n`; true when it became a NOP (not a FREE).
    fn dce_instr(&mut self, n: usize) -> bool {
        let opline = self.op_array.opcodes[n];
        if opline.opcode == ZEND_NOP {
            return false;
        }
        if self.is_free_of_live_var(n) {
            return false;
        }
        let mut free: Option<(SsaVar, Operand)> = None;
        let s = self.ssa.ops[n];
        if opline.op1.op_type() & (IS_VAR | IS_TMP_VAR) != 0 {
            if let Some(u) = s.op1_use.filter(|&u| !self.is_var_dead(u)) {
                if !self.try_remove_var_def(u, s.op1_use_chain, n)
                    && may_be_refcounted(self.type_of(u))
                    && opline.opcode != ZEND_CASE
                    && opline.opcode != ZEND_CASE_STRICT
                {
                    free = Some((u, opline.op1));
                }
            }
        }
        if opline.op2.op_type() & (IS_VAR | IS_TMP_VAR) != 0 {
            if let Some(u) = s.op2_use.filter(|&u| !self.is_var_dead(u)) {
                if !self.try_remove_var_def(u, s.op2_use_chain, n)
                    && may_be_refcounted(self.type_of(u))
                {
                    if free.is_some() {
                        // One op can free only one value: the op stays.
                        self.instr_dead.remove(n);
                        return false;
                    }
                    free = Some((u, opline.op2));
                }
            }
        }

        let op = OpNum::new(n as u32);
        self.ssa
            .rename_defs_of_instr(op, Some(&mut Types(self.vars)));
        self.ssa.remove_instr(self.op_array, op);

        if let Some((var, operand)) = free {
            let slot = VarNum::new(self.ssa.vars[var.index()].var);
            let o = &mut self.op_array.opcodes[n];
            o.opcode = ZEND_FREE;
            o.op1 = match operand {
                Operand::Var(_) => Operand::Var(slot),
                _ => Operand::TmpVar(slot),
            };
            let head = self.ssa.vars[var.index()].use_chain;
            let so = &mut self.ssa.ops[n];
            so.op1_use = Some(var);
            so.op1_use_chain = head;
            self.ssa.vars[var.index()].use_chain = Some(op);
            return false;
        }
        true
    }

    /// `try_remove_trivial_phi`: a phi whose sources are one value (besides itself) is
    /// that value. Pis are kept. True when the phi was removed.
    fn try_remove_trivial_phi(&mut self, p: PhiId) -> bool {
        let phi = &self.ssa.phis[p.index()];
        if phi.is_pi() {
            return false;
        }
        let mut common: Option<SsaVar> = None;
        for &source in phi.sources[..phi.num_sources()].iter().flatten() {
            if source == phi.ssa_var {
                continue;
            }
            match common {
                None => common = Some(source),
                Some(c) if c != source => return false,
                _ => {}
            }
        }
        // All sources the phi itself: an unreachable cycle, with nothing to replace it by.
        let Some(common) = common else { return false };
        let var = phi.ssa_var;
        self.ssa
            .rename_var_uses(var, common, Some(&mut Types(self.vars)));
        self.ssa.remove_phi(p);
        true
    }
}

/// The opcodes `may_have_side_effects` says have no side effect, whatever the op (a
/// pattern).
macro_rules! effect_free_ops {
    () => {
        ZEND_NOP
            | ZEND_IS_IDENTICAL
            | ZEND_IS_NOT_IDENTICAL
            | ZEND_QM_ASSIGN
            | ZEND_FREE
            | ZEND_FE_FREE
            | ZEND_TYPE_CHECK
            | ZEND_DEFINED
            | ZEND_ADD
            | ZEND_SUB
            | ZEND_MUL
            | ZEND_POW
            | ZEND_BW_OR
            | ZEND_BW_AND
            | ZEND_BW_XOR
            | ZEND_CONCAT
            | ZEND_FAST_CONCAT
            | ZEND_DIV
            | ZEND_MOD
            | ZEND_BOOL_XOR
            | ZEND_BOOL
            | ZEND_BOOL_NOT
            | ZEND_BW_NOT
            | ZEND_SL
            | ZEND_SR
            | ZEND_IS_EQUAL
            | ZEND_IS_NOT_EQUAL
            | ZEND_IS_SMALLER
            | ZEND_IS_SMALLER_OR_EQUAL
            | ZEND_CASE
            | ZEND_CASE_STRICT
            | ZEND_CAST
            | ZEND_ROPE_INIT
            | ZEND_ROPE_ADD
            | ZEND_INIT_ARRAY
            | ZEND_SPACESHIP
            | ZEND_STRLEN
            | ZEND_COUNT
            | ZEND_GET_TYPE
            | ZEND_ISSET_ISEMPTY_THIS
            | ZEND_ISSET_ISEMPTY_DIM_OBJ
            | ZEND_FETCH_DIM_IS
            | ZEND_ISSET_ISEMPTY_CV
            | ZEND_ISSET_ISEMPTY_VAR
            | ZEND_FETCH_IS
            | ZEND_IN_ARRAY
            | ZEND_FUNC_NUM_ARGS
            | ZEND_FUNC_GET_ARGS
            | ZEND_ARRAY_KEY_EXISTS
    };
}

/// The opcodes of which `may_have_side_effects` can say false: the effect-free ones and
/// those whose arm decides from the op. Keep this list and those arms in step: an arm
/// whose opcode is missing here is never reached (the op is kept).
const fn may_be_effect_free(opcode: Opcode) -> bool {
    matches!(
        opcode,
        effect_free_ops!()
            | ZEND_ADD_ARRAY_ELEMENT
            | ZEND_ASSIGN
            | ZEND_UNSET_CV
            | ZEND_PRE_INC
            | ZEND_POST_INC
            | ZEND_PRE_DEC
            | ZEND_POST_DEC
            | ZEND_ASSIGN_OP
            | ZEND_ASSIGN_DIM
            | ZEND_ASSIGN_OBJ
            | ZEND_PRE_INC_OBJ
            | ZEND_PRE_DEC_OBJ
            | ZEND_POST_INC_OBJ
            | ZEND_POST_DEC_OBJ
            | ZEND_BIND_STATIC
            | ZEND_CHECK_VAR
            | ZEND_FE_RESET_R
            | ZEND_FE_RESET_RW
    )
}

/// [`may_be_effect_free`] by opcode: most ops the backward walk asks about are calls,
/// jumps and the like, answered by one load.
static MAY_BE_EFFECT_FREE: zend_ir::OpcodeSet = zend_ir::opcode_set_where!(may_be_effect_free);

/// `may_have_side_effects`: whether op `n` does something beyond computing its result
/// (jumps count), judged with its operands' inferred types and escape states.
fn may_have_side_effects(
    op_array: &OpArray,
    ssa: &Ssa,
    vars: &[VarInfo],
    n: usize,
    reorder_dtor_effects: bool,
) -> bool {
    let opline = &op_array.opcodes[n];
    if !MAY_BE_EFFECT_FREE.contains(opline.opcode) {
        return true;
    }
    let s = &ssa.ops[n];
    let view = TypeView {
        op_array,
        ssa,
        vars,
    };
    let type_of = |v: Option<SsaVar>| view.var_type(v);
    // `is_bad_mod`: a modification SSA does not track, or of a reference.
    let is_bad_mod =
        |used: Option<SsaVar>, def: Option<SsaVar>| def.is_none() || type_of(used) & mb::REF != 0;
    let escapes = |v: Option<SsaVar>| {
        v.and_then(|v| ssa.vars.get(v.index()))
            .map_or(true, |v| v.escape_state != EscapeState::NoEscape)
    };
    match opline.opcode {
        effect_free_ops!() => false,
        // Removing it would have to free two values: kept.
        ZEND_ADD_ARRAY_ELEMENT => {
            opline.op1.op_type() & (IS_VAR | IS_TMP_VAR) != 0
                && opline.op2.op_type() & (IS_VAR | IS_TMP_VAR) != 0
        }
        // Ropes are not eliminated (PHP bug #76446).
        ZEND_ROPE_END => true,
        // Jumps and branches.
        ZEND_JMP | ZEND_JMPZ | ZEND_JMPNZ | ZEND_JMPZ_EX | ZEND_JMPNZ_EX | ZEND_JMP_SET
        | ZEND_COALESCE | ZEND_ASSERT_CHECK | ZEND_JMP_NULL => true,
        // Intrinsic side effects.
        ZEND_BEGIN_SILENCE
        | ZEND_END_SILENCE
        | ZEND_ECHO
        | ZEND_INCLUDE_OR_EVAL
        | ZEND_THROW
        | ZEND_MATCH_ERROR
        | ZEND_EXT_STMT
        | ZEND_EXT_FCALL_BEGIN
        | ZEND_EXT_FCALL_END
        | ZEND_TICKS
        | ZEND_YIELD
        | ZEND_YIELD_FROM
        | ZEND_VERIFY_NEVER_TYPE => true,
        // Every call is presumed to have effects.
        ZEND_DO_FCALL | ZEND_DO_FCALL_BY_NAME | ZEND_DO_ICALL | ZEND_DO_UCALL => true,
        // The prologue skipping code relies on them.
        ZEND_RECV | ZEND_RECV_INIT => true,
        ZEND_ASSIGN_REF => true,
        ZEND_ASSIGN => {
            if is_bad_mod(s.op1_use, s.op1_def) {
                return true;
            }
            // Without reordering, dropping the assignment could destroy the value earlier.
            !reorder_dtor_effects
                && opline.op2.op_type() != IS_CONST
                && view.op2_info(n) & MAY_HAVE_DTOR != 0
                && escapes(s.op2_use)
        }
        ZEND_UNSET_VAR => true,
        // unset() breaks references; a later assignment does not count as a use here.
        ZEND_UNSET_CV => view.op1_info(n) & mb::REF != 0,
        ZEND_PRE_INC | ZEND_POST_INC | ZEND_PRE_DEC | ZEND_POST_DEC => {
            is_bad_mod(s.op1_use, s.op1_def)
        }
        ZEND_ASSIGN_OP => is_bad_mod(s.op1_use, s.op1_def) || escapes(s.op1_def),
        ZEND_ASSIGN_DIM | ZEND_ASSIGN_OBJ => {
            if is_bad_mod(s.op1_use, s.op1_def) || escapes(s.op1_def) {
                return true;
            }
            if !reorder_dtor_effects {
                // The value written (OP_DATA) could be destroyed earlier.
                let data = n + 1;
                if op_array
                    .opcodes
                    .get(data)
                    .is_some_and(|o| o.op1.op_type() != IS_CONST)
                    && view.op1_info(data) & MAY_HAVE_DTOR != 0
                {
                    return true;
                }
                // So could the element the write replaces. Not in dce.c's source, but what
                // the PHP 8.2 binary does (its dumps keep `$a = [$p]; $a['k'] = 5;` and
                // `$a = [(array) $p]; $a['k'] = f();`, remove `$a = [(string) $p]; ...`):
                // fuzz seed 10404.
                if opline.opcode == ZEND_ASSIGN_DIM
                    && view.op1_info(n) & MAY_HAVE_DTOR & !(mb::OBJECT | mb::RESOURCE) != 0
                {
                    return true;
                }
            }
            false
        }
        ZEND_PRE_INC_OBJ | ZEND_PRE_DEC_OBJ | ZEND_POST_INC_OBJ | ZEND_POST_DEC_OBJ => {
            is_bad_mod(s.op1_use, s.op1_def) || escapes(s.op1_def)
        }
        ZEND_BIND_STATIC => {
            if op_array.static_variables.is_some() {
                // A closure's bound variables: its prologue, visible through reflection.
                if opline.extended_value & (ZEND_BIND_IMPLICIT | ZEND_BIND_EXPLICIT) != 0 {
                    return true;
                }
                // Changes a static variable, visible through reflection.
                if opline.extended_value & ZEND_BIND_REF != 0 && opline.op2.op_type() != IS_UNUSED {
                    return true;
                }
            }
            false
        }
        ZEND_CHECK_VAR => view.op1_info(n) & mb::UNDEF != 0,
        // The effect of an empty iteration belongs to FE_FETCH.
        ZEND_FE_RESET_R | ZEND_FE_RESET_RW => view.op1_info(n) & mb::ANY != mb::ARRAY,
        _ => true,
    }
}

/// `may_break_varargs`: the op redefines an argument `func_get_args()` could read.
fn may_break_varargs(op_array: &OpArray, ssa: &Ssa, n: usize) -> bool {
    let s = &ssa.ops[n];
    [s.op1_def, s.op2_def, s.result_def]
        .into_iter()
        .flatten()
        .any(|d| ssa.vars[d.index()].var < op_array.num_args)
}

/// `dce_optimize_op_array`: removes the dead ops and phis of `op_array`, whose CFG, SSA
/// (with escape states) and inferred types are given; the types of phis that lose a
/// source are widened. Returns the number of ops that became NOPs. `script` resolves the
/// classes `zend_may_throw` looks into; `reorder_dtor_effects` allows removing
/// assignments whose removal could make a destructor run earlier (the DFA pass passes
/// false).
pub fn dce_optimize_op_array(
    op_array: &mut OpArray,
    script: &Script,
    cfg: &Cfg,
    ssa: &mut Ssa,
    vars: &mut [VarInfo],
    reorder_dtor_effects: bool,
    php_bugs: PhpBugs,
) -> usize {
    let scratch = bumpalo::Bump::new();
    dce_optimize_op_array_in(
        op_array,
        script,
        cfg,
        ssa,
        vars,
        reorder_dtor_effects,
        php_bugs,
        &scratch,
    )
}

/// [`dce_optimize_op_array`], with its worklists in `scratch`.
// Never inlined: called once per op_array, and profiles then show DCE's cost as its own.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn dce_optimize_op_array_in(
    op_array: &mut OpArray,
    script: &Script,
    cfg: &Cfg,
    ssa: &mut Ssa,
    vars: &mut [VarInfo],
    reorder_dtor_effects: bool,
    php_bugs: PhpBugs,
    scratch: &bumpalo::Bump,
) -> usize {
    let keep_float_keys = !php_bugs.contains(PhpBugs::REMOVED_FLOAT_KEY_DEPRECATION);
    let last = op_array.opcodes.len();
    if ssa.ops.len() != last || vars.len() < ssa.vars.len() {
        return 0;
    }
    let has_varargs = cfg.func_flags.contains(FuncFlags::VARARG);
    let nvars = ssa.vars.len();
    // Every phi is presumed dead: `phi_dead` starts with no phi found live.
    let [instr_dead, instr_worklist, phi_worklist, phi_worklist_no_val, phi_live] =
        Worklist::many_new_in([last, last, nvars, nvars, nvars], scratch);
    let work = {
        let (op_array, ssa, vars): (&OpArray, &Ssa, &[VarInfo]) = (op_array, ssa, vars);
        let view = TypeView {
            op_array,
            ssa,
            vars,
        };
        let mut m = Marking {
            ops: &op_array.opcodes,
            ssa_ops: &ssa.ops,
            ssa_vars: &ssa.vars,
            phis: &ssa.phis,
            types: vars,
            // Made here rather than moved in: it is many words.
            work: Worklists {
                instr_dead: instr_dead.into_bits(),
                phi_dead: PhiDead(phi_live.into_bits()),
                instr_worklist,
                phi_worklist,
                phi_worklist_no_val,
            },
        };
        let last_var = op_array.last_var();

        // Phis of temporaries that may be refcounted stay: their producers combine the
        // value with control flow. (Many op_arrays have no phi: no walk over the blocks.)
        if !m.phis.is_empty() {
            for block in &ssa.blocks {
                for &p in &block.phis {
                    let phi = &m.phis[p.index()];
                    if phi.var >= last_var && may_be_refcounted(type_in(vars, phi.ssa_var)) {
                        m.work.phi_dead.remove(phi.ssa_var.index());
                        m.add_phi_sources_to_worklists::<false>(p);
                    }
                }
            }
        }

        // Reachable ops without effects are presumed dead, backwards.
        let has_effect = |i: usize| {
            may_have_side_effects(op_array, ssa, vars, i, reorder_dtor_effects)
                || (may_throw(&view, script, i) && !may_throw_dce_exception(op_array, i))
                || (has_varargs && may_break_varargs(op_array, ssa, i))
                || (keep_float_keys && may_deprecate_float_key(&view, i))
        };
        let (ops, ssa_ops) = (m.ops, m.ssa_ops);
        for block in cfg.blocks.iter().rev() {
            if !block.is_reachable() {
                continue;
            }
            let start = block.start as usize;
            let end = (start + block.len as usize).min(last);
            // The block's ops and their SSA records as slices walked in step: no bounds
            // check per op.
            let block_ops = ops[start..end].iter().zip(&ssa_ops[start..end]);
            // An OP_DATA goes with the op before it: it is read when that op is, and
            // nothing is carried from one op to the next.
            let op_data =
                |i: usize| (i + 1 < end && ops[i + 1].opcode == ZEND_OP_DATA).then_some(i + 1);
            for (i, (o, s)) in (start..end).zip(block_ops).rev() {
                if o.opcode == ZEND_OP_DATA {
                    continue;
                }
                if m.work.instr_worklist.contains(i) {
                    m.work.instr_worklist.remove_uncounted(i);
                    m.add_operands_of::<false>(s, i);
                    if let Some(d) = op_data(i) {
                        m.add_operands_to_worklists::<false>(d);
                    }
                } else if !MAY_BE_EFFECT_FREE.contains(o.opcode) || has_effect(i) {
                    // Most ops have effects by their opcode alone: tested here with the
                    // opcode at hand, before `may_have_side_effects` looks the op up.
                    let new_noesc = o.opcode == ZEND_NEW
                        && ops.get(i + 1).is_some_and(|o| o.opcode == ZEND_DO_FCALL)
                        && s.result_def.is_some_and(|d| {
                            m.ssa_vars[d.index()].escape_state == EscapeState::NoEscape
                        });
                    if new_noesc {
                        m.work.instr_dead.insert(i);
                        m.work.instr_dead.insert(i + 1);
                    } else {
                        m.add_operands_of::<false>(s, i);
                        if let Some(d) = op_data(i) {
                            m.add_operands_to_worklists::<false>(d);
                        }
                    }
                } else {
                    m.work.instr_dead.insert(i);
                    if let Some(d) = op_data(i) {
                        m.work.instr_dead.insert(d);
                    }
                }
            }
        }

        // Liveness flows back to the definitions of what live ops and phis use.
        m.work.instr_worklist.recount();
        m.work.phi_worklist.recount();
        while !m.work.instr_worklist.is_empty() || !m.work.phi_worklist.is_empty() {
            while let Some(i) = m.work.instr_worklist.pop_first() {
                m.work.instr_dead.remove(i);
                m.add_operands_to_worklists::<true>(i);
                if i + 1 < last
                    && (ops[i + 1].opcode == ZEND_OP_DATA
                        || (ops[i].opcode == ZEND_NEW && ops[i + 1].opcode == ZEND_DO_FCALL))
                {
                    m.work.instr_dead.remove(i + 1);
                    m.add_operands_to_worklists::<true>(i + 1);
                }
            }
            while let Some(i) = m.work.phi_worklist.pop_first() {
                m.work.phi_dead.remove(i);
                m.work.phi_worklist_no_val.remove(i);
                if let Some(p) = m.ssa_vars[i].definition_phi {
                    m.add_phi_sources_to_worklists::<true>(p);
                }
            }
        }
        m.work
    };
    let mut ctx = Context {
        op_array,
        ssa,
        vars,
        instr_dead: work.instr_dead,
        phi_dead: work.phi_dead,
        phi_worklist_no_val: work.phi_worklist_no_val,
    };

    // The dead ops go, in op order.
    let mut removed = 0;
    for k in 0..ctx.instr_dead.0.len() {
        // A removal takes nothing but its own op out of the set: the rest of the word
        // read before it stays as it was.
        let mut word = ctx.instr_dead.0[k];
        while word != 0 {
            let i = k * 64 + word.trailing_zeros() as usize;
            word &= word - 1;
            // An op kept alive by an earlier removal is no longer in the set.
            if ctx.instr_dead.contains(i) && ctx.dce_instr(i) {
                removed += 1;
            }
        }
    }

    // Phis defining values used without being read must stay, and so must the phis
    // feeding them.
    while let Some(i) = ctx.phi_worklist_no_val.pop_first() {
        ctx.phi_dead.remove(i);
        if let Some(p) = ctx.ssa.vars[i].definition_phi {
            for k in 0..ctx.ssa.phis[p.index()].num_sources() {
                if let Some(s) = ctx.ssa.phis[p.index()].sources[k] {
                    ctx.add_to_phi_worklist_no_val(s);
                }
            }
        }
    }

    // The dead phis go; trivial live ones are replaced by their one source.
    if ctx.ssa.phis.is_empty() {
        return removed;
    }
    for b in 0..ctx.ssa.blocks.len() {
        if ctx.ssa.blocks[b].phis.is_empty() {
            continue;
        }
        // Removing a phi takes it, and nothing else, out of the block's list, the others
        // keeping their order: the next one is then where it was.
        let mut k = 0;
        while let Some(&p) = ctx.ssa.blocks[b].phis.get(k) {
            debug_assert!(!ctx.ssa.is_phi_removed(p));
            let var = ctx.ssa.phis[p.index()].ssa_var;
            let removed = if ctx.phi_dead.contains(var.index()) {
                ctx.ssa.remove_uses_of_var(var);
                ctx.ssa.remove_phi(p);
                true
            } else {
                ctx.try_remove_trivial_phi(p)
            };
            if !removed {
                k += 1;
            }
        }
    }

    removed
}

/// `may_throw_dce_exception`: an append (`ADD_ARRAY_ELEMENT` without a key) fails only
/// when the next index is taken, which cannot matter for an array that is dead. PHP 8.2
/// removes dead appends (checked against its dumps: `[$v, $v]` unused goes), so the
/// exception applies whatever form the 8.2 source gives it.
fn may_throw_dce_exception(op_array: &OpArray, n: usize) -> bool {
    let o = &op_array.opcodes[n];
    o.opcode == ZEND_ADD_ARRAY_ELEMENT && o.op2.op_type() == IS_UNUSED
}

/// The DFA pass's call (`dce_optimize_op_array(op_array, ctx, ssa, 0)`) over the analyses
/// of [`crate::analysis::FuncAnalysis`]: true when ops were removed.
pub fn run_in_dfa(
    op_array: &mut OpArray,
    ctx: &mut crate::ctx::OptimizerCtx,
    fa: &mut crate::analysis::FuncAnalysis,
) -> bool {
    ctx.state.work.pass_arena.reset();
    dce_optimize_op_array_in(
        op_array,
        ctx.script,
        &fa.cfg,
        &mut fa.ssa,
        &mut fa.inference.vars,
        false,
        ctx.php_bugs,
        &ctx.state.work.pass_arena,
    ) > 0
}

/// Whether op `n` uses an array key that may be a float with a fractional part (or out of
/// the integer range), which PHP 8.1+ reports with "Implicit conversion from float ... to
/// int loses precision" (E_DEPRECATED, which an error handler sees, or turns into an
/// exception) when the op runs. PHP 8.2's `zend_may_throw` does not count it, so its DCE
/// removes such an op when its result is dead
/// ([`PhpBugs::REMOVED_FLOAT_KEY_DEPRECATION`]).
fn may_deprecate_float_key(view: &TypeView, n: usize) -> bool {
    let opline = &view.op_array.opcodes[n];
    let s = &view.ssa.ops[n];
    let (key, used) = match opline.opcode {
        ZEND_FETCH_DIM_R
        | ZEND_FETCH_DIM_IS
        | ZEND_FETCH_DIM_W
        | ZEND_FETCH_DIM_RW
        | ZEND_FETCH_DIM_UNSET
        | ZEND_FETCH_DIM_FUNC_ARG
        | ZEND_FETCH_LIST_R
        | ZEND_FETCH_LIST_W
        | ZEND_ISSET_ISEMPTY_DIM_OBJ
        | ZEND_ASSIGN_DIM
        | ZEND_ASSIGN_DIM_OP
        | ZEND_UNSET_DIM
        | ZEND_INIT_ARRAY
        | ZEND_ADD_ARRAY_ELEMENT => (opline.op2, s.op2_use),
        ZEND_ARRAY_KEY_EXISTS => (opline.op1, s.op1_use),
        _ => return false,
    };
    match key {
        Operand::Const(l) => match view.op_array.literals.get(l.index()) {
            Some(lit @ Literal::Double(_)) => !zend_operators::is_op_long_compatible(lit),
            _ => false,
        },
        Operand::Unused(_) => false,
        _ => view.operand_info(key, used) & mb::DOUBLE != 0,
    }
}
