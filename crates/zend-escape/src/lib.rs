//! Escape analysis (Zend/Optimizer/escape_analysis.c, after Kotzmann and Mössenböck):
//! which arrays and objects allocated in a function never escape it. Equi-escape sets are
//! built with union-find over assignments and phis; allocations start as not escaping;
//! uses that may leak a value (or references from escaping containers) make the whole set
//! escape. The result is PHP's `escape_state` per SSA variable (the `NOESC` mark of the
//! SSA variables dump).

// The transfer functions keep the case-then-condition shape of the C switch they mirror,
// and walk SSA variables by number as PHP does.
#![allow(clippy::collapsible_match, clippy::needless_range_loop)]

use zend_call_graph::{ClassRef, ScriptInfo};
use zend_cfg::Cfg;
use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, Operand, IS_CV, IS_UNUSED};
use zend_ssa::{Alias, EscapeState, Ssa, SsaVar};

const ARRAY: u32 = 1 << 7;
const OBJECT: u32 = 1 << 8;
const REF: u32 = 1 << 10;
const UNDEF: u32 = 1;
const NULL: u32 = 1 << 1;
const FALSE: u32 = 1 << 2;

fn root(parent: &mut [usize], mut i: usize) -> usize {
    let mut p = parent[i];
    while i != p {
        p = parent[p];
        parent[i] = p;
        i = p;
        p = parent[i];
    }
    i
}

// Inlined: called per use-def pair of the escape analysis, and its two finds are short.
#[inline(always)]
fn unite(parent: &mut [usize], size: &mut [usize], i: usize, j: usize) {
    let r1 = root(parent, i);
    let r2 = root(parent, j);
    if r1 != r2 {
        if size[r1] < size[r2] {
            parent[r1] = r2;
            size[r2] += size[r1];
        } else {
            parent[r2] = r1;
            size[r1] += size[r2];
        }
    }
}

struct Ctx<'a> {
    op_array: &'a OpArray,
    ssa: &'a Ssa,
    types: &'a [u32],
    info: &'a ScriptInfo<'a>,
}

impl Ctx<'_> {
    /// Whether some temporary is defined by an allocation of an array or object: without
    /// one, nothing can be NOESC and PHP's analysis stops at once.
    fn has_allocations(&self) -> bool {
        let n = self.ssa.vars.len();
        (self.op_array.last_var() as usize..n).any(|i| {
            self.ssa.vars[i].definition.is_some_and(|d| {
                self.types[i] & (ARRAY | OBJECT) != 0 && self.is_allocation_def(d.index(), i)
            })
        })
    }

    fn info(&self, o: Operand, use_: Option<SsaVar>) -> u32 {
        match o {
            Operand::Const(l) => match self.op_array.literals.get(l.index()) {
                Some(Literal::Array(_)) => ARRAY,
                Some(Literal::Ast(_)) => 0x3fe,
                Some(lit) => 1 << lit.type_code(),
                None => 0,
            },
            _ => match use_ {
                Some(v) => self.types[v.index()],
                None => 0xffff_ffff,
            },
        }
    }

    fn is_const_array(&self, o: Operand) -> bool {
        matches!(o, Operand::Const(l) if matches!(self.op_array.literals.get(l.index()), Some(Literal::Array(_))))
    }

    /// A class whose instances are plain: no parent, handlers, constructor, destructor
    /// or magic accessors. `strict` adds the flags `is_allocation_def` checks.
    fn plain_class(&self, line: usize, strict: bool) -> bool {
        let op = &self.op_array.opcodes[line];
        let ce = match op.op1 {
            Operand::Const(l) => match self.op_array.literals.get(l.index() + 1) {
                Some(Literal::String(lc)) => {
                    self.info.class_entry(Some(self.op_array), lc.as_bytes())
                }
                _ => None,
            },
            Operand::Unused(n) if n & 0xf == 1 => self.op_array.scope.as_ref().and_then(|s| {
                self.info
                    .class_entry(Some(self.op_array), &s.0.to_ascii_lowercase())
            }),
            _ => None,
        };
        match ce {
            Some(ClassRef::Internal(name)) => name == "stdClass",
            Some(ClassRef::Script(ce)) => {
                let has = |m: &[u8]| ce.methods.iter().any(|(k, _)| k.as_bytes() == m);
                let forbidden = 1 | 2 | (1 << 4) | (1 << 6);
                ce.parent_name.is_none()
                    && !has(b"__construct")
                    && !has(b"__destruct")
                    && !has(b"__get")
                    && !has(b"__set")
                    && (!strict || (ce.ce_flags & forbidden == 0 && ce.ce_flags & (1 << 12) != 0))
            }
            None => false,
        }
    }

    // Inlined: asked for every array or object temporary (some 50k times over the
    // corpus), and it is mostly a test or two.
    #[inline(always)]
    fn is_allocation_def(&self, def: usize, var: usize) -> bool {
        let so = &self.ssa.ops[def];
        let op = &self.op_array.opcodes[def];
        let me = Some(SsaVar::new(var as u32));
        if so.result_def == me {
            match op.opcode {
                ZEND_INIT_ARRAY => return true,
                ZEND_NEW => return self.plain_class(def, true),
                ZEND_QM_ASSIGN => {
                    if self.is_const_array(op.op1) {
                        return true;
                    }
                    if op.op1.op_type() == IS_CV && self.info(op.op1, so.op1_use) & ARRAY != 0 {
                        return true;
                    }
                }
                ZEND_ASSIGN => {
                    if op.op1.op_type() == IS_CV && self.info(op.op1, so.op1_use) & ARRAY != 0 {
                        return true;
                    }
                }
                _ => {}
            }
        } else if so.op1_def == me {
            match op.opcode {
                ZEND_ASSIGN => {
                    if self.is_const_array(op.op2) {
                        return true;
                    }
                    if op.op2.op_type() == IS_CV && self.info(op.op2, so.op2_use) & ARRAY != 0 {
                        return true;
                    }
                }
                ZEND_ASSIGN_DIM => {
                    if self.info(op.op1, so.op1_use) & (UNDEF | NULL | FALSE) != 0 {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    fn is_local_def(&self, def: usize, var: usize) -> bool {
        let so = &self.ssa.ops[def];
        let op = &self.op_array.opcodes[def];
        let me = Some(SsaVar::new(var as u32));
        if so.result_def == me {
            match op.opcode {
                ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT | ZEND_QM_ASSIGN | ZEND_ASSIGN => true,
                ZEND_NEW => self.plain_class(def, false),
                _ => false,
            }
        } else if so.op1_def == me {
            matches!(
                op.opcode,
                ZEND_ASSIGN
                    | ZEND_ASSIGN_DIM
                    | ZEND_ASSIGN_OBJ
                    | ZEND_ASSIGN_OBJ_REF
                    | ZEND_ASSIGN_DIM_OP
                    | ZEND_ASSIGN_OBJ_OP
                    | ZEND_PRE_INC_OBJ
                    | ZEND_PRE_DEC_OBJ
                    | ZEND_POST_INC_OBJ
                    | ZEND_POST_DEC_OBJ
            )
        } else {
            false
        }
    }

    fn is_escape_use(&self, use_: usize, var: usize) -> bool {
        let so = &self.ssa.ops[use_];
        let op = &self.op_array.opcodes[use_];
        let me = Some(SsaVar::new(var as u32));
        if so.op1_use == me {
            match op.opcode {
                ZEND_ASSIGN => {}
                ZEND_QM_ASSIGN => {
                    if op.op1.op_type() == IS_CV && self.info(op.op1, so.op1_use) & OBJECT != 0 {
                        return true;
                    }
                }
                ZEND_ISSET_ISEMPTY_DIM_OBJ
                | ZEND_ISSET_ISEMPTY_PROP_OBJ
                | ZEND_FETCH_DIM_R
                | ZEND_FETCH_OBJ_R
                | ZEND_FETCH_DIM_IS
                | ZEND_FETCH_OBJ_IS => {}
                ZEND_ASSIGN_OP => return true,
                ZEND_ASSIGN_DIM_OP
                | ZEND_ASSIGN_OBJ_OP
                | ZEND_ASSIGN_STATIC_PROP_OP
                | ZEND_ASSIGN_DIM
                | ZEND_ASSIGN_OBJ
                | ZEND_ASSIGN_OBJ_REF => {}
                ZEND_PRE_INC_OBJ | ZEND_PRE_DEC_OBJ | ZEND_POST_INC_OBJ | ZEND_POST_DEC_OBJ => {}
                ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT => {
                    if op.extended_value & 1 != 0 {
                        return true;
                    }
                    if self.info(op.op1, so.op1_use) & OBJECT != 0 {
                        return true;
                    }
                }
                ZEND_OP_DATA => {
                    let prev = &self.op_array.opcodes[use_ - 1];
                    if prev.opcode != ZEND_ASSIGN_DIM && prev.opcode != ZEND_ASSIGN_OBJ {
                        return true;
                    }
                    if self.info(op.op1, so.op1_use) & OBJECT != 0 {
                        return true;
                    }
                    let pso = &self.ssa.ops[use_ - 1];
                    if prev.op1.op_type() != IS_CV
                        || self.info(prev.op1, pso.op1_use) & REF != 0
                        || pso
                            .op1_def
                            .is_some_and(|d| self.ssa.vars[d.index()].alias != Alias::NoAlias)
                    {
                        return true;
                    }
                }
                _ => return true,
            }
        }
        if so.op2_use == me {
            match op.opcode {
                ZEND_ASSIGN => {
                    if op.op1.op_type() != IS_CV
                        || self.info(op.op1, so.op1_use) & REF != 0
                        || so
                            .op1_def
                            .is_some_and(|d| self.ssa.vars[d.index()].alias != Alias::NoAlias)
                    {
                        return true;
                    }
                    if (op.op2.op_type() == IS_CV || op.result.op_type() != IS_UNUSED)
                        && self.info(op.op2, so.op2_use) & OBJECT != 0
                    {
                        return true;
                    }
                }
                _ => return true,
            }
        }
        if so.result_use == me
            && !matches!(
                op.opcode,
                ZEND_ASSIGN | ZEND_QM_ASSIGN | ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT
            )
        {
            return true;
        }
        false
    }
}

/// `zend_ssa_escape_analysis` as PHP runs it: the escape state of every SSA variable,
/// written into `ssa.vars`. A function that allocates no array or object (most of them)
/// keeps every state as it is, at the cost of one scan and no allocation.
pub fn set_escape_states(
    op_array: &OpArray,
    cfg: &Cfg,
    ssa: &mut Ssa,
    types: &[u32],
    info: &ScriptInfo,
) {
    let cx = Ctx {
        op_array,
        ssa,
        types,
        info,
    };
    if !cx.has_allocations() {
        return;
    }
    let states = analyse(&cx, cfg);
    for (v, e) in ssa.vars.iter_mut().zip(states) {
        v.escape_state = e;
    }
}

/// `zend_ssa_escape_analysis`: the escape state of every SSA variable, given the inferred
/// types (`MAY_BE_*` per SSA variable).
pub fn escape_analysis(
    op_array: &OpArray,
    cfg: &Cfg,
    ssa: &Ssa,
    types: &[u32],
    info: &ScriptInfo,
) -> Vec<EscapeState> {
    let cx = Ctx {
        op_array,
        ssa,
        types,
        info,
    };
    if !cx.has_allocations() {
        return ssa.vars.iter().map(|v| v.escape_state).collect();
    }
    analyse(&cx, cfg)
}

/// The analysis proper, for a function that allocates at least one array or object.
fn analyse(cx: &Ctx<'_>, cfg: &Cfg) -> Vec<EscapeState> {
    let Ctx {
        op_array,
        ssa,
        types,
        ..
    } = *cx;
    let n = ssa.vars.len();
    let mut state: Vec<EscapeState> = ssa.vars.iter().map(|v| v.escape_state).collect();
    // 1. Equi-escape sets.
    let mut parent: Vec<usize> = (0..n).collect();
    let mut size = vec![1usize; n];
    for i in 0..n {
        let v = &ssa.vars[i];
        if let Some(p) = v.definition_phi {
            let p = &ssa.phis[p.index()];
            let k = if p.is_pi() {
                1
            } else {
                cfg.blocks[p.block.index()].predecessors_count()
            };
            for s in p.sources.iter().take(k).flatten() {
                unite(&mut parent, &mut size, i, s.index());
            }
        } else if let Some(def) = v.definition {
            let so = &ssa.ops[def.index()];
            let opc = op_array.opcodes[def.index()].opcode;
            let ix = |v: Option<SsaVar>| v.map(|v| v.index());
            if let Some(d1) = ix(so.op1_def) {
                if let Some(u1) = ix(so.op1_use) {
                    if opc != ZEND_ASSIGN {
                        unite(&mut parent, &mut size, d1, u1);
                    }
                }
                if opc == ZEND_ASSIGN {
                    if let Some(u2) = ix(so.op2_use) {
                        unite(&mut parent, &mut size, d1, u2);
                    }
                }
            }
            if let (Some(d2), Some(u2)) = (ix(so.op2_def), ix(so.op2_use)) {
                unite(&mut parent, &mut size, d2, u2);
            }
            if let Some(rd) = ix(so.result_def) {
                if let Some(ru) = ix(so.result_use) {
                    if opc != ZEND_QM_ASSIGN {
                        unite(&mut parent, &mut size, rd, ru);
                    }
                }
                if opc == ZEND_QM_ASSIGN {
                    if let Some(u1) = ix(so.op1_use) {
                        unite(&mut parent, &mut size, rd, u1);
                    }
                }
                if opc == ZEND_ASSIGN {
                    if let Some(u2) = ix(so.op2_use) {
                        unite(&mut parent, &mut size, rd, u2);
                    }
                    if let Some(d1) = ix(so.op1_def) {
                        unite(&mut parent, &mut size, rd, d1);
                    }
                }
            }
        }
    }
    let ees: Vec<usize> = (0..n).map(|i| root(&mut parent, i)).collect();
    let rank = |s: EscapeState| match s {
        EscapeState::Unknown => 0,
        EscapeState::NoEscape => 1,
        EscapeState::FunctionEscape => 2,
        EscapeState::GlobalEscape => 3,
    };
    // 2. Allocations.
    let mut num_non_escaped: i64 = 0;
    for i in op_array.last_var() as usize..n {
        let r = ees[i];
        if rank(state[r]) > rank(EscapeState::NoEscape) {
        } else if ssa.vars[i].alias != Alias::NoAlias && types[i] & REF != 0 {
            if state[r] == EscapeState::NoEscape {
                num_non_escaped -= 1;
            }
            state[r] = EscapeState::GlobalEscape;
        } else if let Some(def) = ssa.vars[i]
            .definition
            .filter(|_| types[i] & (ARRAY | OBJECT) != 0)
        {
            if !cx.is_local_def(def.index(), i) {
                if state[r] == EscapeState::NoEscape {
                    num_non_escaped -= 1;
                }
                state[r] = EscapeState::GlobalEscape;
            } else if state[r] == EscapeState::Unknown && cx.is_allocation_def(def.index(), i) {
                state[r] = EscapeState::NoEscape;
                num_non_escaped += 1;
            }
        }
    }
    // 3. Escaping uses.
    if num_non_escaped != 0 {
        'outer: for i in 0..n {
            if ssa.vars[i].use_chain.is_none() {
                continue;
            }
            let r = ees[i];
            if state[r] == EscapeState::NoEscape {
                for u in ssa.uses(SsaVar::new(i as u32)) {
                    if cx.is_escape_use(u.index(), i) {
                        state[r] = EscapeState::GlobalEscape;
                        num_non_escaped -= 1;
                        if num_non_escaped == 0 {
                            break 'outer;
                        }
                        break;
                    }
                }
            }
        }
    }
    // 4. Referential dependencies.
    if num_non_escaped != 0 {
        loop {
            let mut changed = false;
            for i in 0..n {
                if ssa.vars[i].use_chain.is_none() {
                    continue;
                }
                let r = ees[i];
                if state[r] != EscapeState::NoEscape {
                    continue;
                }
                for u in ssa.uses(SsaVar::new(i as u32)) {
                    let u = u.index();
                    let op = &op_array.opcodes[u];
                    let so = &ssa.ops[u];
                    let me = Some(SsaVar::new(i as u32));
                    let enclosing = if op.opcode == ZEND_OP_DATA
                        && matches!(
                            op_array.opcodes[u - 1].opcode,
                            ZEND_ASSIGN_DIM | ZEND_ASSIGN_OBJ | ZEND_ASSIGN_OBJ_REF
                        )
                        && so.op1_use == me
                        && ssa.ops[u - 1].op1_use.is_some()
                    {
                        ees[ssa.ops[u - 1].op1_use.unwrap().index()]
                    } else if matches!(op.opcode, ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT)
                        && so.op1_use == me
                        && so.result_def.is_some()
                    {
                        ees[so.result_def.unwrap().index()]
                    } else {
                        continue;
                    };
                    if state[enclosing] == EscapeState::Unknown
                        || rank(state[enclosing]) > rank(state[r])
                    {
                        state[r] = if state[enclosing] == EscapeState::Unknown {
                            EscapeState::GlobalEscape
                        } else {
                            state[enclosing]
                        };
                        if state[r] == EscapeState::GlobalEscape {
                            num_non_escaped -= 1;
                            changed = num_non_escaped != 0;
                            break;
                        } else {
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    // 5. Propagate.
    for i in 0..n {
        let r = ees[i];
        if i != r {
            state[i] = state[r];
        }
    }
    state
}
