//! Type inference (`zend_infer_types`, `_zend_update_type_info`) and the function return
//! info (`zend_func_return_info`).

use crate::mb::{self, *};
use crate::{ClassInfo, Context, ReturnInfo, State};
use zend_cfg::bitset::Worklist;

/// A worklist over SSA variables in the inference's arena.
type Wl<'b> = Worklist<&'b mut [u64]>;
use zend_ir::opcode::*;
use zend_ir::{Literal, OpArray, Operand, IS_CONST, IS_CV, IS_TMP_VAR, IS_UNUSED, IS_VAR};
use zend_ssa::{Constraint, SsaVar};

const ZEND_ACC_TRAIT_CLONE: u32 = 1 << 20;
const ZEND_ACC_RETURN_REFERENCE: u32 = 1 << 12;
const ZEND_ACC_GENERATOR: u32 = 1 << 24;
const ZEND_ACC_HAS_RETURN_TYPE: u32 = 1 << 13;
const ZEND_ACC_STATIC: u32 = 1 << 4;
const ZEND_ACC_PUBLIC: u32 = 1 << 0;
const ZEND_ACC_PROTECTED: u32 = 1 << 1;
const ZEND_ACC_PRIVATE: u32 = 1 << 2;
/// Of a property: redeclared over an inaccessible (private) one of an ancestor.
const ZEND_ACC_CHANGED: u32 = 1 << 3;
const ZEND_ACC_LINKED: u32 = 1 << 3;

/// `get_ssa_alias_types`.
pub(crate) fn alias_types(alias: zend_ssa::Alias) -> u32 {
    if alias == zend_ssa::Alias::HttpResponseHeader {
        ARRAY | ARRAY_KEY_LONG | ARRAY_OF_STRING | RC1 | RCN
    } else {
        UNDEF | RC1 | RCN | REF | UNKNOWN
    }
}

/// `zend_mark_cv_references` is only needed for references to CVs taken by reference
/// sends and similar; PHP marks the CV's later values as possibly references.
pub(crate) fn mark_cv_references(st: &mut State) {
    let n = st.vars.len();
    let op_array = st.op_array;
    let last_var = op_array.last_var();
    let mut wl = Worklist::new_in(n, st.scratch);
    for (var, (v, info)) in st.ssa.vars.iter().zip(&st.vars).enumerate() {
        if let (Some(def), true) = (v.definition, v.var < last_var) {
            let def = def.index();
            let op = &op_array.opcodes[def];
            let so = &st.ssa.ops[def];
            let me = Some(SsaVar::new(var as u32));
            let ext = op.extended_value;
            let creates_ref = if so.result_def == me {
                match op.opcode {
                    ZEND_RECV | ZEND_RECV_INIT => match op.op1 {
                        Operand::Unused(num) => op_array
                            .arg_info
                            .get((num as usize).wrapping_sub(1))
                            .is_some_and(|ai| {
                                (ai.type_.type_mask >> zend_ir::_ZEND_SEND_MODE_SHIFT) & 3 != 0
                            }),
                        _ => false,
                    },
                    _ => false,
                }
            } else if so.op1_def == me {
                match op.opcode {
                    ZEND_ASSIGN_REF | ZEND_MAKE_REF | ZEND_FE_RESET_RW | ZEND_BIND_GLOBAL
                    | ZEND_SEND_REF | ZEND_SEND_VAR_EX | ZEND_SEND_FUNC_ARG => true,
                    ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT => ext & 1 != 0,
                    ZEND_BIND_STATIC => ext & 1 != 0,
                    ZEND_YIELD => op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0,
                    ZEND_OP_DATA => matches!(
                        op_array.opcodes[def - 1].opcode,
                        ZEND_ASSIGN_OBJ_REF | ZEND_ASSIGN_STATIC_PROP_REF
                    ),
                    _ => false,
                }
            } else if so.op2_def == me {
                match op.opcode {
                    ZEND_ASSIGN_REF | ZEND_FE_FETCH_RW => true,
                    ZEND_BIND_LEXICAL => ext & 1 != 0,
                    _ => false,
                }
            } else {
                false
            };
            if creates_ref {
                wl.insert(var);
            }
        } else if info.type_ & REF != 0 || v.alias == zend_ssa::Alias::Symtable {
            wl.insert(var);
        }
    }
    while let Some(var) = wl.pop_first() {
        st.vars[var].type_ |= RC1 | RCN | REF | UNKNOWN;
        let sv = SsaVar::new(var as u32);
        for p in &st.phi_uses[var] {
            let pv = st.ssa.phis[p.index()].ssa_var.index();
            if st.vars[pv].type_ & REF == 0 {
                wl.insert(pv);
            }
        }
        for u in st.ssa.uses(sv) {
            let so = &st.ssa.ops[u.index()];
            if so.op1_use == Some(sv) {
                if let Some(d) = so.op1_def {
                    if st.vars[d.index()].type_ & REF == 0
                        && !(op_array.opcodes[u.index()].opcode == ZEND_UNSET_CV
                            && op_array.function_name.is_some())
                    {
                        wl.insert(d.index());
                    }
                }
            }
            if so.op2_use == Some(sv) {
                if let Some(d) = so.op2_def {
                    if st.vars[d.index()].type_ & REF == 0 {
                        wl.insert(d.index());
                    }
                }
            }
            if so.result_use == Some(sv) {
                if let Some(d) = so.result_def {
                    if st.vars[d.index()].type_ & REF == 0 {
                        wl.insert(d.index());
                    }
                }
            }
        }
    }
}

/// `zend_infer_types`, then `zend_type_narrowing` when `ZEND_OPTIMIZER_NARROW_TO_DOUBLE` is set.
pub(crate) fn infer_types(st: &mut State) {
    let n = st.vars.len();
    // Every variable but the CVs' initial values: filling the set and taking those out
    // costs a word per 64 variables and one removal per CV, not an insertion per variable.
    let mut wl = Worklist::full_in(n, st.scratch);
    for j in 0..(st.op_array.last_var() as usize).min(n) {
        wl.remove(j);
    }
    infer_types_ex(st, wl);
    if st.ctx.optimization_level & (1 << 17) != 0 {
        type_narrowing(st);
    }
}

/// `zend_type_narrowing`: integer constants assigned to CVs that are only used in
/// arithmetic producing doubles are treated as doubles from the start.
fn type_narrowing(st: &mut State) {
    let n = st.vars.len();
    let mut worklist = Worklist::new_in(n, st.scratch);
    // The types before any narrowing, taken when the first assignment narrows.
    let mut before: Option<Vec<u32>> = None;
    for v in st.op_array.last_var() as usize..n {
        if st.vars[v].type_ & (REF | ANY | UNDEF) != LONG {
            continue;
        }
        let Some(def) = st.ssa.vars[v].definition else {
            continue;
        };
        if st.ssa.vars[v].no_val {
            continue;
        }
        let op = &st.op_array.opcodes[def.index()];
        if op.opcode == ZEND_ASSIGN
            && op.result.op_type() == IS_UNUSED
            && op.op1.op_type() == IS_CV
            && op.op2.op_type() == IS_CONST
        {
            let value = match st.literal(op.op2) {
                Some(Literal::Long(l)) => Num::Long(*l),
                _ => continue,
            };
            let mut visited = vec![false; n];
            if can_convert_to_double(st, v, Some(value), &mut visited) {
                before.get_or_insert_with(|| st.vars.iter().map(|i| i.type_).collect());
                st.vars[v].use_as_double = true;
                for (i, &seen) in visited.iter().enumerate() {
                    if seen {
                        st.vars[i].type_ &= !ANY;
                        worklist.insert(i);
                    }
                }
            }
        }
    }
    if let Some(before) = before {
        infer_types_ex(st, worklist);
        for (info, old) in st.vars.iter_mut().zip(before) {
            info.narrowed_away = old & !info.type_;
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Num {
    Long(i64),
    Double(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Long(l) => l as f64,
            Num::Double(d) => d,
        }
    }
}

/// PHP's `add/sub/mul/div_function` on longs and doubles.
fn binary_num(opcode: Opcode, a: Num, b: Num) -> Num {
    if let (Num::Long(x), Num::Long(y)) = (a, b) {
        let r = match opcode {
            ZEND_ADD => x.checked_add(y),
            ZEND_SUB => x.checked_sub(y),
            ZEND_MUL => x.checked_mul(y),
            _ => {
                if y != 0 && x % y == 0 && !(x == i64::MIN && y == -1) {
                    Some(x / y)
                } else {
                    None
                }
            }
        };
        if let Some(r) = r {
            return Num::Long(r);
        }
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    Num::Double(match opcode {
        ZEND_ADD => x + y,
        ZEND_SUB => x - y,
        ZEND_MUL => x * y,
        _ => x / y,
    })
}

/// `can_convert_to_double` (`value` None: the previous result was an effective cast).
fn can_convert_to_double(st: &State, var: usize, value: Option<Num>, visited: &mut [bool]) -> bool {
    if visited[var] {
        return true;
    }
    visited[var] = true;
    let sv = SsaVar::new(var as u32);
    let uses: Vec<usize> = st.ssa.uses(sv).map(|u| u.index()).collect();
    for u in uses {
        if st
            .ssa
            .is_no_val_use(st.op_array, zend_ir::OpNum::new(u as u32), sv)
        {
            continue;
        }
        let op = &st.op_array.opcodes[u];
        let so = &st.ssa.ops[u];
        if !matches!(op.opcode, ZEND_ADD | ZEND_SUB | ZEND_MUL | ZEND_DIV) {
            return false;
        }
        let Some(rd) = so.result_def else {
            return false;
        };
        let t = st.vars[rd.index()].type_;
        if t & ANY == DOUBLE {
            continue;
        }
        let Some(value) = value else {
            return false;
        };
        if t & ANY & !(LONG | DOUBLE) != 0 {
            return false;
        }
        let konst = |o: Operand| match st.literal(o) {
            Some(Literal::Long(l)) => Some(Num::Long(*l)),
            Some(Literal::Double(d)) => Some(Num::Double(f64::from_bits(d.0))),
            _ => None,
        };
        let dval = Num::Double(value.as_f64());
        let (o1, d1) = if so.op1_use == Some(sv) {
            (Some(value), Some(dval))
        } else {
            (konst(op.op1), konst(op.op1))
        };
        let (o2, d2) = if so.op2_use == Some(sv) {
            (Some(value), Some(dval))
        } else {
            (konst(op.op2), konst(op.op2))
        };
        let lval = |n: Option<Num>| match n {
            Some(Num::Long(l)) => Some(l),
            _ => None,
        };
        let result = match (o1, o2) {
            (None, Some(c)) => {
                if op.opcode == ZEND_MUL && lval(Some(c)) == Some(0) {
                    Some(Num::Long(0))
                } else if effective_cast(op.opcode, c, true) {
                    None
                } else {
                    return false;
                }
            }
            (Some(c), None) => {
                if op.opcode == ZEND_MUL && lval(Some(c)) == Some(0) {
                    Some(Num::Long(0))
                } else if effective_cast(op.opcode, c, false) {
                    None
                } else {
                    return false;
                }
            }
            (Some(a), Some(b)) => {
                if op.opcode == ZEND_DIV && b.as_f64() == 0.0 {
                    return false;
                }
                let r = binary_num(op.opcode, a, b);
                let d = binary_num(op.opcode, d1.unwrap(), d2.unwrap());
                if r.as_f64() != d.as_f64() {
                    return false;
                }
                Some(r)
            }
            (None, None) => return false,
        };
        if !can_convert_to_double(st, rd.index(), result, visited) {
            return false;
        }
    }
    let phis: Vec<usize> = st.phi_uses[var]
        .iter()
        .map(|p| st.ssa.phis[p.index()].ssa_var.index())
        .collect();
    for pv in phis {
        if st.vars[pv].type_ & ANY & !(LONG | DOUBLE) != 0 {
            return false;
        }
        if !can_convert_to_double(st, pv, value, visited) {
            return false;
        }
    }
    true
}

/// `is_effective_op1_double_cast` (`op1_unknown`) / `is_effective_op2_double_cast`.
fn effective_cast(opcode: Opcode, c: Num, op1_unknown: bool) -> bool {
    let Num::Long(l) = c else {
        return false;
    };
    match opcode {
        ZEND_ADD | ZEND_SUB => l == 0,
        ZEND_MUL => l == 1,
        ZEND_DIV => op1_unknown && l == 1,
        _ => false,
    }
}

/// `zend_infer_types_ex`: the worklist over SSA variables until a fixpoint.
fn infer_types_ex(st: &mut State, mut wl: Wl<'_>) {
    let n = st.vars.len();
    let mut guard = 0usize;
    let bound = 64 * (n + 1) * 64;
    while let Some(j) = wl.pop_first() {
        guard += 1;
        if guard > bound {
            break;
        }
        let var = &st.ssa.vars[j];
        if let Some(p) = var.definition_phi {
            let phi = &st.ssa.phis[p.index()];
            if phi.is_pi() {
                let src = phi.sources[0].unwrap().index();
                let src_ce = st.vars[src].ce.as_ref().map(|c| c.name.as_slice());
                let mut ce = Ce::Of(src);
                let mut is_instanceof = st.vars[src].is_instanceof;
                let mut tmp = st.vars[src].type_;
                if let Some(Constraint::Type(c)) = &phi.constraint {
                    tmp &= c.type_mask;
                    if tmp & (STRING | ARRAY | OBJECT | RESOURCE) == 0 {
                        tmp &= !(RC1 | RCN);
                    }
                    if tmp & OBJECT != 0 {
                        if let Some(cname) = &c.ce {
                            match src_ce {
                                Some(s) if s == cname.as_slice() => {}
                                None => {
                                    ce = Ce::Name(Some(cname));
                                    is_instanceof = true;
                                }
                                Some(s) => {
                                    if is_instanceof && safe_instanceof(st, cname, s) {
                                        ce = Ce::Name(Some(cname));
                                    }
                                }
                            }
                        }
                    }
                }
                let mut u = Upd { st, wl: &mut wl };
                u.update_type(tmp, Some(j));
                if tmp & REF != 0 {
                    u.update_obj(Ce::Name(None), false, Some(j));
                } else {
                    u.update_obj(ce, is_instanceof, Some(j));
                }
            } else {
                let npred = st.cfg.blocks[phi.block.index()].predecessors_count();
                let mut tmp = 0;
                for s in phi.sources.iter().take(npred) {
                    tmp |= st.var_type(*s);
                }
                // PHP updates the phi's type before joining the classes of the sources
                // that may be objects, so a phi that is its own source sees its new type.
                Upd { st, wl: &mut wl }.update_type(tmp, Some(j));
                // The joined class stays the first object source's (no copy) until a
                // source with another class makes join_class_entries compute one.
                let mut first = true;
                let mut ce = Ce::Name(None);
                let mut is_instanceof = false;
                for s in phi.sources.iter().take(npred).flatten() {
                    let info = &st.vars[s.index()];
                    if info.type_ & OBJECT != 0 {
                        if first {
                            ce = Ce::Of(s.index());
                            is_instanceof = info.is_instanceof;
                            first = false;
                        } else {
                            is_instanceof |= info.is_instanceof;
                            let current = match &ce {
                                Ce::Of(f) => st.vars[*f].ce.as_ref(),
                                Ce::Owned(c) => c.as_ref(),
                                Ce::Name(_) => unreachable!("phi classes come from sources"),
                            };
                            if current != info.ce.as_ref() {
                                let (c1, c2) = (current.cloned(), info.ce.clone());
                                ce = Ce::Owned(join_class_entries(st, c1, c2, &mut is_instanceof));
                            }
                        }
                    }
                }
                let has_ce = match &ce {
                    Ce::Of(f) => st.vars[*f].ce.is_some(),
                    Ce::Owned(c) => c.is_some(),
                    Ce::Name(n) => n.is_some(),
                };
                let mut u = Upd { st, wl: &mut wl };
                let inst = has_ce && is_instanceof;
                u.update_obj(ce, inst, Some(j));
            }
        } else if let Some(def) = var.definition {
            let mut u = Upd { st, wl: &mut wl };
            u.update_type_info(def.index());
        }
    }
}

/// The SSA operands of a missing OP_DATA.
const NO_SSA_OP: zend_ssa::SsaOp = zend_ssa::SsaOp {
    op1_use: None,
    op2_use: None,
    result_use: None,
    op1_def: None,
    op2_def: None,
    result_def: None,
    op1_use_chain: None,
    op2_use_chain: None,
    res_use_chain: None,
};

/// The class an update sets: a name (`None`: no class), the class another variable has
/// (which cannot be borrowed while the updated one is written), or a computed one.
enum Ce<'n> {
    Name(Option<&'n [u8]>),
    Of(usize),
    Owned(Option<ClassInfo>),
}

struct Upd<'a, 's, 'w> {
    st: &'a mut State<'s>,
    wl: &'a mut Wl<'w>,
}

fn sv(v: Option<SsaVar>) -> Option<usize> {
    v.map(|v| v.index())
}

impl Upd<'_, '_, '_> {
    #[inline(always)]
    fn add_usages(&mut self, var: usize) {
        // The worklist is a set: the order of insertion does not matter.
        for u in &self.st.usages[var] {
            self.wl.insert(u.index());
        }
    }

    /// `UPDATE_SSA_TYPE`. Always inlined (the hint alone was not taken in
    /// `update_type_info`): the call cost about as much as computing the type.
    #[inline(always)]
    fn update_type(&mut self, t: u32, var: Option<usize>) {
        let Some(var) = var else { return };
        let mut t = t & !GUARD;
        if t & REF != 0 {
            t |= RC1 | RCN | UNKNOWN;
        }
        let v = &self.st.ssa.vars[var];
        let orig_var = v.var;
        let op_array = self.st.op_array;
        if orig_var < op_array.num_args && t & RC1 != 0 {
            t |= RCN;
        }
        if orig_var < op_array.last_var() {
            if t & (REF | RCN) != 0 {
                t |= RC1 | RCN;
            }
            if t & RC1 != 0 && t & STRING != 0 {
                t |= RCN;
            }
            if v.alias != zend_ssa::Alias::NoAlias {
                t |= alias_types(v.alias);
            }
        }
        if self.st.vars[var].type_ != t {
            self.type_changed(t, var);
        }
    }

    /// The rest of `UPDATE_SSA_TYPE` when the type differs, out of line: it walks the
    /// usages, and inlined at every call site it made `update_type_info` spill more.
    #[inline(never)]
    fn type_changed(&mut self, t: u32, var: usize) {
        let old = self.st.vars[var].type_;
        // PHP fails the whole inference on narrowing; keep the union to stay monotone
        // (after zend_type_narrowing reset the visited types, the union is the new type).
        if old & !t != 0 {
            self.st.failed = true;
        }
        let t = t | old;
        if old != t {
            self.st.vars[var].type_ = t;
            self.add_usages(var);
        }
    }

    /// `UPDATE_SSA_OBJ_TYPE`. The name is only copied when the class changes (once per
    /// variable, mostly), not on every evaluation. Always inlined: each call site passes
    /// one kind of class, mostly none, and the check is then a couple of loads.
    #[inline(always)]
    fn update_obj(&mut self, ce: Ce<'_>, is_instanceof: bool, var: Option<usize>) {
        let Some(var) = var else { return };
        let vars = &self.st.vars;
        let same = match &ce {
            Ce::Name(n) => vars[var].ce.as_ref().map(|c| c.name.as_slice()) == *n,
            Ce::Of(f) => *f == var || vars[*f].ce == vars[var].ce,
            Ce::Owned(c) => vars[var].ce == *c,
        };
        if !same || vars[var].is_instanceof != is_instanceof {
            self.set_obj(ce, is_instanceof, var);
        }
    }

    /// The change `update_obj` found.
    #[inline(never)]
    fn set_obj(&mut self, ce: Ce<'_>, is_instanceof: bool, var: usize) {
        let vars = &mut self.st.vars;
        vars[var].ce = match ce {
            Ce::Name(n) => n.map(|n| ClassInfo { name: n.to_vec() }),
            Ce::Of(f) => vars[f].ce.clone(),
            Ce::Owned(c) => c,
        };
        vars[var].is_instanceof = is_instanceof;
        self.add_usages(var);
    }

    /// `COPY_SSA_OBJ_TYPE`. Inlined like `update_obj`: mostly there is no class to copy.
    #[inline(always)]
    fn copy_obj(&mut self, from: Option<usize>, to: Option<usize>) {
        let Some(to) = to else { return };
        if let Some(f) = from {
            let fi = &self.st.vars[f];
            if fi.type_ & OBJECT != 0 && fi.ce.is_some() && self.st.vars[to].type_ & REF == 0 {
                let inst = fi.is_instanceof;
                self.update_obj(Ce::Of(f), inst, Some(to));
                return;
            }
        }
        self.update_obj(Ce::Name(None), false, Some(to));
    }

    fn update_type_info(&mut self, mut line: usize) {
        let st = &*self.st;
        let op_array = st.op_array;
        if op_array.opcodes[line].opcode == ZEND_OP_DATA {
            line -= 1;
        }
        let opline = &op_array.opcodes[line];
        let ssa = st.ssa;
        let ssa_op = &ssa.ops[line];
        let data = || op_array.opcodes.get(line + 1);
        let data_ssa = || ssa.ops.get(line + 1).unwrap_or(&NO_SSA_OP);
        let op1_info = |st: &State| st.operand_info(opline.op1, ssa_op.op1_use);
        let mut t1 = op1_info(st);
        let mut t2 = st.operand_info(opline.op2, ssa_op.op2_use);
        let op1_data_info = |st: &State| match data() {
            Some(d) => st.operand_info(d.op1, data_ssa().op1_use),
            None => st.var_type(None),
        };
        let res_use_info = |st: &State| st.var_type(ssa_op.result_use);
        // Read where used rather than all up front: most opcodes need one or two of them,
        // and holding all of them across the match spilled them on every call.
        let op1_def = || sv(ssa_op.op1_def);
        let op2_def = || sv(ssa_op.op2_def);
        let result_def = || sv(ssa_op.result_def);
        let op1_use = || sv(ssa_op.op1_use);
        let op2_use = || sv(ssa_op.op2_use);
        let op1_type = || opline.op1.op_type();
        let op2_type = || opline.op2.op_type();
        let result_type = || opline.result.op_type();
        let opcode = opline.opcode;
        let ext = opline.extended_value;
        let is_assign_data = matches!(
            opcode,
            ZEND_ASSIGN_DIM_OP
                | ZEND_ASSIGN_OBJ_OP
                | ZEND_ASSIGN_STATIC_PROP_OP
                | ZEND_ASSIGN_DIM
                | ZEND_ASSIGN_OBJ
        );
        let live = ANY | UNDEF | CLASS;
        if t1 & live == 0
            || t2 & live == 0
            || (ssa_op.result_use.is_some() && res_use_info(st) & live == 0)
            || (is_assign_data && op1_data_info(st) & live == 0)
        {
            let empty_ok =
                |st: &State, v: Option<usize>| v.is_some_and(|v| st.vars[v].type_ & REF == 0);
            for v in [result_def(), op1_def(), op2_def()] {
                if empty_ok(self.st, v) {
                    self.update_type(0, v);
                }
            }
            if is_assign_data {
                let d = sv(data_ssa().op1_def);
                if empty_ok(self.st, d) {
                    self.update_type(0, d);
                }
            }
            return;
        }
        let opt = st.ctx.optimization_level;
        let ignore_overloading = opt & (1 << 16) != 0;
        let result_use_chain_next =
            |st: &State, rd: usize| st.ssa.vars[rd].use_chain.map(|u| u.index()) == Some(line + 1);
        match opcode {
            ZEND_ADD | ZEND_SUB | ZEND_MUL | ZEND_DIV | ZEND_POW | ZEND_MOD | ZEND_BW_OR
            | ZEND_BW_AND | ZEND_BW_XOR | ZEND_SL | ZEND_SR | ZEND_CONCAT => {
                let tmp = binary_op_result_type(st, opcode, t1, t2, result_def(), opt);
                self.update_type(tmp, result_def());
            }
            ZEND_BW_NOT => {
                let mut tmp = 0;
                if t1 & STRING != 0 {
                    tmp |= STRING | RC1 | RCN;
                }
                if t1 & (ANY - STRING) != 0 {
                    tmp |= LONG;
                }
                if !ignore_overloading && t1 & OBJECT != 0 {
                    tmp |= OBJECT | RC1;
                }
                self.update_type(tmp, result_def());
            }
            ZEND_BEGIN_SILENCE => self.update_type(LONG, result_def()),
            ZEND_BOOL_NOT
            | ZEND_BOOL_XOR
            | ZEND_IS_IDENTICAL
            | ZEND_IS_NOT_IDENTICAL
            | ZEND_IS_EQUAL
            | ZEND_IS_NOT_EQUAL
            | ZEND_IS_SMALLER
            | ZEND_IS_SMALLER_OR_EQUAL
            | ZEND_INSTANCEOF
            | ZEND_JMPZ_EX
            | ZEND_JMPNZ_EX
            | ZEND_CASE
            | ZEND_CASE_STRICT
            | ZEND_BOOL
            | ZEND_ISSET_ISEMPTY_CV
            | ZEND_ISSET_ISEMPTY_VAR
            | ZEND_ISSET_ISEMPTY_DIM_OBJ
            | ZEND_ISSET_ISEMPTY_PROP_OBJ
            | ZEND_ISSET_ISEMPTY_STATIC_PROP
            | ZEND_ASSERT_CHECK
            | ZEND_IN_ARRAY
            | ZEND_ARRAY_KEY_EXISTS => self.update_type(FALSE | TRUE, result_def()),
            ZEND_CAST => {
                if op1_def().is_some() {
                    let mut tmp = t1;
                    if t1 & (ARRAY | OBJECT) != 0 && (ext == 7 || ext == 8) {
                        tmp |= RCN;
                    } else if t1 & STRING != 0 && ext == 6 {
                        tmp |= RCN;
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                let mut tmp = 1u32 << ext;
                if tmp & (STRING | ARRAY | OBJECT | RESOURCE) != 0 {
                    if tmp & ANY == t1 & ANY {
                        tmp |= (t1 & RC1) | RCN;
                    } else if (ext == 7 || ext == 8) && t1 & (ARRAY | OBJECT) != 0 {
                        tmp |= RC1 | RCN;
                    } else if ext == 6 && t1 & (STRING | OBJECT) != 0 {
                        tmp |= RC1 | RCN;
                    } else {
                        tmp |= RC1;
                        if ext == 7 && t1 & (UNDEF | NULL) != 0 {
                            tmp |= RCN;
                        }
                    }
                }
                if ext == 7 {
                    if t1 & (UNDEF | NULL) != 0 {
                        tmp |= ARRAY_EMPTY;
                    }
                    if t1 & ARRAY != 0 {
                        tmp |= t1 & (ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF);
                    }
                    if t1 & OBJECT != 0 {
                        tmp |= ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF;
                    } else if t1 & (ANY - NULL) != 0 {
                        tmp |= ((t1 & (ANY - NULL)) << SHIFT)
                            | if t1 & NULL != 0 {
                                ARRAY_KEY_LONG
                            } else {
                                ARRAY_PACKED
                            };
                    }
                }
                self.update_type(tmp, result_def());
            }
            ZEND_QM_ASSIGN | ZEND_JMP_SET | ZEND_COALESCE | ZEND_COPY_TMP => {
                if op1_def().is_some() {
                    let mut tmp = t1;
                    if t1 & (RC1 | REF) != 0 {
                        tmp |= RCN;
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                let mut tmp = t1 & !(UNDEF | REF);
                if t1 & UNDEF != 0 {
                    tmp |= NULL;
                }
                if t1 & (RC1 | RCN) != 0 {
                    tmp |= t1 & (RC1 | RCN);
                    if opcode == ZEND_COPY_TMP || op1_type() == IS_CV {
                        tmp |= RCN;
                    }
                }
                if opcode == ZEND_COALESCE || opcode == ZEND_JMP_SET {
                    tmp &= !NULL;
                    if opcode == ZEND_JMP_SET {
                        tmp &= !FALSE;
                    }
                }
                self.update_type(tmp, result_def());
                self.copy_obj(op1_use(), result_def());
            }
            ZEND_JMP_NULL => {
                let tmp = match ext & 3 {
                    0 => NULL,
                    1 => FALSE,
                    _ => TRUE,
                };
                self.update_type(tmp, result_def());
            }
            ZEND_ASSIGN_OP
            | ZEND_ASSIGN_DIM_OP
            | ZEND_ASSIGN_OBJ_OP
            | ZEND_ASSIGN_STATIC_PROP_OP => {
                let mut prop: Option<PropType> = None;
                let mut orig = 0;
                let mut tmp = 0;
                if opcode == ZEND_ASSIGN_OBJ_OP {
                    prop = fetch_prop_info(st, line);
                    orig = t1;
                    t1 = prop_type(st, prop.as_ref()).0;
                    t2 = op1_data_info(st);
                } else if opcode == ZEND_ASSIGN_DIM_OP {
                    if t1 & ARRAY_OF_REF != 0 {
                        tmp |= REF;
                    }
                    orig = t1;
                    t1 = array_element_type(t1, op1_type(), true, false);
                    t2 = op1_data_info(st);
                } else if opcode == ZEND_ASSIGN_STATIC_PROP_OP {
                    prop = fetch_static_prop_info(st, line);
                    t1 = prop_type(st, prop.as_ref()).0;
                    t2 = op1_data_info(st);
                } else if t1 & REF != 0 {
                    tmp |= REF;
                }
                let rv = if opcode == ZEND_ASSIGN_OP {
                    op1_def()
                } else {
                    None
                };
                tmp |= binary_op_result_type(st, Opcode(ext as u8), t1, t2, rv, opt);
                if tmp & (STRING | ARRAY) != 0 {
                    tmp |= RC1 | RCN;
                }
                if tmp & (OBJECT | RESOURCE) != 0 {
                    tmp |= RC1 | RCN;
                }
                if opcode == ZEND_ASSIGN_DIM_OP {
                    if op1_type() == IS_CV {
                        let o2 = st.operand_info(opline.op2, ssa_op.op2_use);
                        let o = assign_dim_result_type(orig, o2, tmp, op2_type());
                        self.update_type(o, op1_def());
                        self.copy_obj(op1_use(), op1_def());
                    }
                } else if opcode == ZEND_ASSIGN_OBJ_OP {
                    if op1_type() == IS_CV {
                        let o = (orig & (REF | OBJECT)) | RC1 | RCN;
                        self.update_type(o, op1_def());
                        self.copy_obj(op1_use(), op1_def());
                    }
                } else if opcode == ZEND_ASSIGN_STATIC_PROP_OP {
                } else {
                    if opcode == ZEND_ASSIGN_OP && result_def().is_some() && tmp & RC1 != 0 {
                        tmp |= RCN;
                    }
                    self.update_type(tmp, op1_def());
                }
                if result_def().is_some() {
                    let mut ce = None;
                    if opcode == ZEND_ASSIGN_DIM_OP {
                        if op2_type() == IS_UNUSED {
                            tmp |= NULL;
                        }
                        if t2 & (ARRAY | OBJECT) != 0 {
                            tmp |= NULL;
                        }
                        if t1 & (ANY - (NULL | FALSE | STRING | ARRAY)) != 0 {
                            tmp |= NULL;
                        }
                        if tmp & REF != 0 {
                            tmp |= ANY;
                        }
                    } else if opcode == ZEND_ASSIGN_OBJ_OP || opcode == ZEND_ASSIGN_STATIC_PROP_OP {
                        if let Some(p) = &prop {
                            let (pt, pce) = prop_type(self.st, Some(p));
                            ce = pce;
                            if pt & (LONG | DOUBLE) == LONG && tmp & (LONG | DOUBLE) == DOUBLE {
                                tmp |= LONG;
                                tmp &= !DOUBLE;
                            } else if pt & (LONG | DOUBLE | STRING) == STRING
                                && tmp & (LONG | DOUBLE) != 0
                            {
                                tmp |= STRING;
                                tmp &= !(LONG | DOUBLE);
                            }
                            tmp &= pt;
                        } else {
                            tmp |= LONG | STRING;
                        }
                    } else if tmp & REF != 0 {
                        tmp |= ANY;
                    }
                    tmp &= !REF;
                    self.update_type(tmp, result_def());
                    if ce.is_some() {
                        self.update_obj(Ce::Name(ce), true, result_def());
                    }
                }
            }
            ZEND_PRE_INC | ZEND_PRE_DEC => {
                let mut tmp = 0;
                if t1 & (RC1 | RCN) != 0 {
                    tmp |= RC1;
                    if result_def().is_some() {
                        tmp |= RCN;
                    }
                }
                tmp |= inc_dec_type(st, t1, op1_use(), opcode == ZEND_PRE_INC, false);
                if result_def().is_some() {
                    self.update_type(tmp, result_def());
                }
                if op1_def().is_some() {
                    if t1 & REF != 0 {
                        tmp |= REF;
                    }
                    self.update_type(tmp, op1_def());
                }
            }
            ZEND_POST_INC | ZEND_POST_DEC => {
                if result_def().is_some() {
                    let mut tmp = 0;
                    if t1 & (RC1 | RCN) != 0 {
                        tmp |= RC1 | RCN;
                    }
                    tmp |= t1 & !(UNDEF | REF | RCN);
                    if t1 & UNDEF != 0 {
                        tmp |= NULL;
                    }
                    self.update_type(tmp, result_def());
                }
                let mut tmp = 0;
                if t1 & REF != 0 {
                    tmp |= REF;
                }
                if t1 & (RC1 | RCN) != 0 {
                    tmp |= RC1;
                }
                tmp |= inc_dec_type(self.st, t1, op1_use(), opcode == ZEND_POST_INC, true);
                if op1_def().is_some() {
                    self.update_type(tmp, op1_def());
                }
            }
            ZEND_ASSIGN_DIM => {
                let d = op1_data_info(st);
                if op1_type() == IS_CV {
                    let mut tmp = assign_dim_result_type(t1, t2, d, op2_type());
                    if let Some(o) = op1_def() {
                        tmp |= st.vars[o].type_
                            & (ARRAY_PACKED | ARRAY_NUMERIC_HASH | ARRAY_STRING_HASH);
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                if result_def().is_some() {
                    let mut tmp = 0;
                    if t1 & STRING != 0 {
                        tmp |= STRING | NULL;
                    }
                    if t1 & OBJECT != 0 {
                        tmp |= UNKNOWN;
                    }
                    if t1 & (ARRAY | FALSE | NULL | UNDEF) != 0 {
                        tmp |= d & UNKNOWN;
                        if d & UNDEF != 0 {
                            tmp |= NULL;
                        }
                        if t1 & ARRAY_OF_REF != 0 {
                            tmp |= NULL | FALSE | TRUE | LONG | DOUBLE | STRING;
                        }
                    }
                    if t1 & (TRUE | LONG | DOUBLE | RESOURCE) != 0 {
                        tmp |= NULL;
                    }
                    tmp |= RC1 | RCN;
                    self.update_type(tmp, result_def());
                }
                self.op_data_def(line, false);
            }
            ZEND_ASSIGN_OBJ => {
                if op1_type() == IS_CV {
                    let tmp = (t1 & (REF | OBJECT)) | RC1 | RCN;
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                if result_def().is_some() {
                    let p = fetch_prop_info(self.st, line);
                    let (tmp, ce) = prop_type(self.st, p.as_ref());
                    self.update_type(tmp, result_def());
                    if ce.is_some() {
                        self.update_obj(Ce::Name(ce), true, result_def());
                    }
                }
                self.op_data_def(line, true);
            }
            ZEND_ASSIGN_STATIC_PROP => {
                if result_def().is_some() {
                    self.update_type(UNKNOWN | RC1 | RCN, result_def());
                }
                self.op_data_def(line, true);
            }
            ZEND_PRE_INC_OBJ | ZEND_PRE_DEC_OBJ | ZEND_POST_INC_OBJ | ZEND_POST_DEC_OBJ => {
                if op1_type() == IS_CV {
                    let tmp = (t1 & (REF | OBJECT)) | RC1 | RCN;
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                if result_def().is_some() {
                    self.update_type(RC1 | RCN | UNKNOWN, result_def());
                }
            }
            ZEND_ASSIGN => {
                if op2_def().is_some() {
                    let mut tmp = t2;
                    if tmp & RC1 != 0 {
                        tmp |= RCN;
                    }
                    self.update_type(tmp, op2_def());
                }
                let mut tmp = t2 & !(UNDEF | REF | RC1 | RCN);
                if t2 & UNDEF != 0 {
                    tmp |= NULL;
                }
                if t1 & REF != 0 {
                    tmp |= REF;
                }
                if t2 & REF != 0 {
                    tmp |= RC1 | RCN;
                } else if op2_type() & (IS_TMP_VAR | IS_VAR) != 0 {
                    tmp |= t2 & (RC1 | RCN);
                } else if t2 & (RC1 | RCN) != 0 {
                    tmp |= RCN;
                }
                if result_type() != IS_UNUSED && tmp & RC1 != 0 {
                    tmp |= RCN;
                }
                if let Some(d) = op1_def() {
                    if self.st.vars[d].use_as_double {
                        tmp &= !LONG;
                        tmp |= DOUBLE;
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op2_use(), op1_def());
                }
                if let Some(rd) = result_def() {
                    if tmp & REF != 0 {
                        tmp &= !REF;
                        tmp |= NULL | FALSE | TRUE | LONG | DOUBLE | STRING | RC1 | RCN;
                    }
                    if tmp & (RC1 | RCN) == RCN && !result_use_chain_next(self.st, rd) {
                        tmp |= RC1;
                    }
                    self.update_type(tmp, result_def());
                    self.copy_obj(op2_use(), result_def());
                }
            }
            ZEND_ASSIGN_REF => {
                if op2_type() == IS_CV {
                    let mut tmp = (REF | t2) & !(UNDEF | RC1 | RCN);
                    if t2 & UNDEF != 0 {
                        tmp |= NULL;
                    }
                    self.update_type(tmp, op2_def());
                }
                let mut tmp = if op2_type() == IS_VAR && ext == 1 {
                    (REF | RCN | RC1 | t2) & !UNDEF
                } else {
                    (REF | t2) & !(UNDEF | RC1 | RCN)
                };
                if t2 & UNDEF != 0 {
                    tmp |= NULL;
                }
                self.update_type(tmp, op1_def());
                if result_def().is_some() {
                    self.update_type(tmp, result_def());
                }
            }
            ZEND_ASSIGN_OBJ_REF => {
                if op1_type() == IS_CV {
                    let mut tmp = t1;
                    if tmp & OBJECT != 0 {
                        tmp |= RC1 | RCN;
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                let t2 = op1_data_info(self.st);
                let dtype = data().map_or(0, |d| d.op1.op_type());
                let mut tmp = if dtype == IS_VAR && ext & 1 != 0 {
                    (REF | RCN | RC1 | t2) & !UNDEF
                } else {
                    (REF | t2) & !(UNDEF | RC1 | RCN)
                };
                if t2 & UNDEF != 0 {
                    tmp |= NULL;
                }
                if result_def().is_some() {
                    self.update_type(tmp, result_def());
                }
                if dtype == IS_CV {
                    let mut tmp = (REF | t2) & !(UNDEF | RC1 | RCN);
                    if t2 & UNDEF != 0 {
                        tmp |= NULL;
                    }
                    self.update_type(tmp, sv(data_ssa().op1_def));
                }
            }
            ZEND_ASSIGN_STATIC_PROP_REF => {
                if result_def().is_some() {
                    self.update_type(REF, result_def());
                }
                if data().is_some_and(|d| d.op1.op_type() == IS_CV) {
                    self.update_type(REF, sv(data_ssa().op1_def));
                }
            }
            ZEND_BIND_GLOBAL => self.update_type(REF | UNKNOWN, op1_def()),
            ZEND_BIND_STATIC => {
                let mut tmp = UNKNOWN | if ext & 1 != 0 { REF } else { RC1 | RCN };
                if ext & 2 != 0 {
                    tmp |= UNDEF;
                }
                self.update_type(tmp, op1_def());
            }
            ZEND_SEND_VAR => {
                if op1_def().is_some() {
                    let mut tmp = t1;
                    if t1 & (RC1 | REF) != 0 {
                        tmp |= RCN;
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
            }
            ZEND_BIND_LEXICAL => {
                if op2_def().is_some() {
                    let tmp = if ext & 1 != 0 {
                        t2 | REF
                    } else {
                        let mut tmp = t2 & !(RC1 | RCN);
                        if t2 & (RC1 | RCN) != 0 {
                            tmp |= RCN;
                        }
                        tmp
                    };
                    self.update_type(tmp, op2_def());
                    self.copy_obj(op2_use(), op2_def());
                }
            }
            ZEND_YIELD => {
                if op1_def().is_some() {
                    let tmp = if op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0 {
                        t1 | REF
                    } else {
                        let mut tmp = t1 & !(RC1 | RCN);
                        if t1 & (RC1 | RCN) != 0 {
                            tmp |= RCN;
                        }
                        tmp
                    };
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                if result_def().is_some() {
                    self.update_type(UNKNOWN | RC1 | RCN, result_def());
                }
            }
            ZEND_SEND_VAR_EX | ZEND_SEND_FUNC_ARG => {
                if op1_def().is_some() {
                    let tmp = (t1 & UNDEF) | REF | RC1 | RCN | UNKNOWN;
                    self.update_type(tmp, op1_def());
                }
            }
            ZEND_SEND_REF => {
                if op1_def().is_some() {
                    self.update_type(REF | RC1 | RCN | UNKNOWN, op1_def());
                }
            }
            ZEND_SEND_UNPACK => {
                if op1_def().is_some() {
                    let mut tmp = t1;
                    if t1 & ARRAY != 0 {
                        tmp |= RC1 | RCN;
                        if t1 & ARRAY_OF_ANY != 0 {
                            tmp |= ARRAY_OF_ANY | ARRAY_OF_REF;
                        }
                    }
                    if t1 & OBJECT != 0 {
                        tmp |= RC1 | RCN;
                    }
                    self.update_type(tmp, op1_def());
                }
            }
            ZEND_FAST_CONCAT | ZEND_ROPE_INIT | ZEND_ROPE_ADD | ZEND_ROPE_END => {
                self.update_type(STRING | RC1 | RCN, result_def())
            }
            ZEND_RECV | ZEND_RECV_INIT | ZEND_RECV_VARIADIC => {
                let num = match opline.op1 {
                    Operand::Unused(n) => n as usize,
                    _ => 1,
                };
                let (mut tmp, mut ce) = match op_array.arg_info.get(num.wrapping_sub(1)) {
                    Some(ai) => {
                        let (t, c) = st.ctx.info.convert_type(&ai.type_);
                        let mut ce = c.map(|c| c.name());
                        let mut t = t;
                        if (ai.type_.type_mask >> zend_ir::_ZEND_SEND_MODE_SHIFT) & 3 != 0 {
                            t |= REF;
                            ce = None;
                        }
                        (t, ce)
                    }
                    None => (UNKNOWN | RC1 | RCN, None),
                };
                if opcode == ZEND_RECV_VARIADIC {
                    let elem = if tmp & REF != 0 {
                        ARRAY_OF_ANY | ARRAY_OF_REF
                    } else {
                        (tmp & ANY) << SHIFT
                    };
                    tmp = RC1 | RCN | ARRAY | ARRAY_KEY_ANY | elem;
                    ce = None;
                }
                self.update_type(tmp, result_def());
                let inst = ce.is_some();
                self.update_obj(Ce::Name(ce), inst, result_def());
            }
            ZEND_DECLARE_ANON_CLASS => {
                let ce = st.literal(opline.op1).and_then(|l| match l {
                    Literal::String(s) => st
                        .ctx
                        .info
                        .script
                        .class_table
                        .iter()
                        .find(|(k, _)| k.as_bytes() == s.as_bytes())
                        .map(|(_, c)| c.name.as_bytes()),
                    _ => None,
                });
                self.update_type(CLASS, result_def());
                if ce.is_some() {
                    self.update_obj(Ce::Name(ce), false, result_def());
                }
            }
            ZEND_FETCH_CLASS => {
                let ce = match opline.op2 {
                    Operand::Unused(_) => {
                        let num = match opline.op1 {
                            Operand::Unused(n) => n,
                            _ => 0,
                        };
                        Some(match num & 0xf {
                            1 => scope_class(st),
                            _ => None,
                        })
                    }
                    Operand::Const(l) => Some(match op_array.literals.get(l.index()) {
                        Some(Literal::String(_)) => match op_array.literals.get(l.index() + 1) {
                            Some(Literal::String(lc)) => {
                                st.ctx.class_name(Some(op_array), lc.as_bytes())
                            }
                            _ => None,
                        },
                        _ => None,
                    }),
                    _ => None,
                };
                self.update_type(CLASS, result_def());
                match ce {
                    Some(ce) => self.update_obj(Ce::Name(ce), false, result_def()),
                    None => self.copy_obj(op2_use(), result_def()),
                }
            }
            ZEND_NEW => {
                let tmp = RC1 | RCN | OBJECT;
                let ce = class_from_op1(st, opline);
                if ce.is_some() {
                    self.update_obj(Ce::Name(ce), false, result_def());
                } else if t1 & CLASS != 0 && op1_use().is_some_and(|u| st.vars[u].ce.is_some()) {
                    let u = op1_use().unwrap();
                    let i = st.vars[u].is_instanceof;
                    self.update_obj(Ce::Of(u), i, result_def());
                } else {
                    self.update_obj(Ce::Name(None), false, result_def());
                }
                self.update_type(tmp, result_def());
            }
            ZEND_CLONE => {
                self.update_type(RC1 | RCN | OBJECT, result_def());
                self.copy_obj(op1_use(), result_def());
            }
            ZEND_INIT_ARRAY | ZEND_ADD_ARRAY_ELEMENT => {
                if op1_def().is_some() {
                    let tmp = if ext & 1 != 0 || t1 & (REF | RC1 | RCN) == REF {
                        let mut tmp = (REF | t1) & !(UNDEF | RC1 | RCN);
                        if t1 & UNDEF != 0 {
                            tmp |= NULL;
                        }
                        tmp
                    } else if t1 & REF != 0 {
                        RC1 | RCN | REF | t1
                    } else {
                        let mut tmp = t1;
                        if t1 & RC1 != 0 {
                            tmp |= RCN;
                        }
                        tmp
                    };
                    self.update_type(tmp, op1_def());
                }
                if result_def().is_some() {
                    let arr_type = if opcode == ZEND_INIT_ARRAY {
                        0
                    } else {
                        res_use_info(self.st)
                    };
                    let mut tmp = RC1 | ARRAY | arr_type;
                    if opcode == ZEND_INIT_ARRAY && op1_type() == IS_UNUSED {
                        tmp |= ARRAY_EMPTY;
                    }
                    if op1_type() != IS_UNUSED
                        && (op2_type() == IS_UNUSED
                            || t2
                                & (UNDEF | NULL | FALSE | TRUE | LONG | DOUBLE | RESOURCE | STRING)
                                != 0)
                    {
                        tmp |= assign_dim_array_result_type(arr_type, t2, t1, op2_type());
                        if ext & 1 != 0 {
                            tmp |= ARRAY_OF_ANY | ARRAY_OF_REF;
                        }
                    }
                    self.update_type(tmp, result_def());
                }
            }
            ZEND_ADD_ARRAY_UNPACK => {
                let mut tmp = res_use_info(st);
                tmp |= t1 & (ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF);
                if t1 & OBJECT != 0 {
                    tmp |= ARRAY_KEY_ANY | ARRAY_OF_ANY;
                }
                self.update_type(tmp, result_def());
            }
            ZEND_UNSET_CV => {
                let mut tmp = UNDEF;
                if op_array.function_name.is_none() {
                    tmp |= REF;
                }
                self.update_type(tmp, op1_def());
            }
            ZEND_UNSET_DIM | ZEND_UNSET_OBJ => {
                if op1_def().is_some() {
                    self.update_type(t1, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
            }
            ZEND_FE_RESET_R | ZEND_FE_RESET_RW => {
                if op1_def().is_some() {
                    let mut tmp = t1;
                    if opcode == ZEND_FE_RESET_RW {
                        tmp |= REF;
                    } else if t1 & RC1 != 0 {
                        tmp |= RCN;
                    }
                    self.update_type(tmp, op1_def());
                    self.copy_obj(op1_use(), op1_def());
                }
                let mut tmp = if opcode == ZEND_FE_RESET_RW {
                    REF | (t1 & (ARRAY | OBJECT))
                } else {
                    RC1 | RCN
                        | (t1 & (ARRAY | OBJECT | ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF))
                };
                if (t1 & (ANY | UNDEF)) & !(ARRAY | OBJECT) != 0 {
                    tmp |= UNDEF;
                }
                self.update_type(tmp, result_def());
                self.copy_obj(op1_use(), result_def());
            }
            ZEND_FE_FETCH_R | ZEND_FE_FETCH_RW => {
                let rw = opcode == ZEND_FE_FETCH_RW;
                let mut tmp = 0;
                if op2_type() == IS_CV {
                    tmp = t2 & REF;
                }
                if t1 & OBJECT != 0 {
                    if rw {
                        tmp |= REF | UNKNOWN;
                    } else {
                        tmp |= RCN | UNKNOWN;
                        if op2_type() != IS_CV {
                            tmp |= REF;
                        }
                    }
                }
                if t1 & ARRAY != 0 {
                    if rw {
                        tmp |= REF | RCN | UNKNOWN;
                    } else {
                        tmp |= (t1 & ARRAY_OF_ANY) >> SHIFT;
                        if tmp & ARRAY != 0 {
                            tmp |= ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF;
                        }
                        if t1 & ARRAY_OF_REF != 0 {
                            tmp |= RC1 | RCN;
                            if op2_type() != IS_CV {
                                tmp |= REF;
                            }
                        } else if tmp & (STRING | ARRAY | OBJECT | RESOURCE) != 0 {
                            tmp |= RC1 | RCN;
                        }
                    }
                }
                self.update_type(tmp, op2_def());
                if result_def().is_some() {
                    let mut tmp = if ssa_op.result_use.is_some() {
                        res_use_info(self.st)
                    } else {
                        0
                    };
                    if t1 & OBJECT != 0 {
                        tmp |= RC1 | RCN | UNKNOWN;
                    }
                    if t1 & ARRAY != 0 {
                        if t1 & ARRAY_KEY_LONG != 0 {
                            tmp |= LONG;
                        }
                        if t1 & ARRAY_KEY_STRING != 0 {
                            tmp |= STRING | RCN;
                        }
                    }
                    self.update_type(tmp, result_def());
                }
            }
            ZEND_FETCH_DIM_R
            | ZEND_FETCH_DIM_IS
            | ZEND_FETCH_DIM_RW
            | ZEND_FETCH_DIM_W
            | ZEND_FETCH_DIM_UNSET
            | ZEND_FETCH_DIM_FUNC_ARG
            | ZEND_FETCH_LIST_R
            | ZEND_FETCH_LIST_W => {
                if op1_def().is_some() {
                    let mut key_type = 0;
                    let mut tmp = t1 & !(RC1 | RCN);
                    let w = matches!(
                        opcode,
                        ZEND_FETCH_DIM_W
                            | ZEND_FETCH_DIM_RW
                            | ZEND_FETCH_DIM_FUNC_ARG
                            | ZEND_FETCH_LIST_W
                    );
                    let long_key = |t1: u32| -> u32 {
                        let mut k = 0;
                        if t1 & (UNDEF | NULL | FALSE) != 0 {
                            k |= ARRAY_PACKED;
                        }
                        if t1 & ARRAY != 0 {
                            k |= if mb::hash_only(t1) {
                                ARRAY_NUMERIC_HASH
                            } else {
                                ARRAY_KEY_LONG
                            };
                        }
                        k
                    };
                    if w {
                        if t1 & (UNDEF | NULL | FALSE) != 0 {
                            if opcode != ZEND_FETCH_DIM_FUNC_ARG {
                                tmp &= !(UNDEF | NULL | FALSE);
                            }
                            tmp |= ARRAY | RC1;
                        }
                        if t1 & (STRING | ARRAY) != 0 {
                            tmp |= RC1;
                            if opcode == ZEND_FETCH_DIM_FUNC_ARG {
                                tmp |= t1 & RCN;
                            }
                        }
                        if t1 & (OBJECT | RESOURCE) != 0 {
                            tmp |= t1 & (RC1 | RCN);
                        }
                        if op2_type() == IS_UNUSED {
                            key_type |= long_key(t1);
                        } else {
                            if t2 & (LONG | FALSE | TRUE | RESOURCE | DOUBLE) != 0 {
                                key_type |= long_key(t1);
                            }
                            if t2 & STRING != 0 {
                                key_type |= ARRAY_KEY_STRING;
                                if op2_type() != IS_CONST {
                                    key_type |= long_key(t1);
                                }
                            }
                            if t2 & (UNDEF | NULL) != 0 {
                                key_type |= ARRAY_KEY_STRING;
                            }
                        }
                    } else if opcode == ZEND_FETCH_DIM_UNSET {
                        if t1 & ARRAY != 0 {
                            tmp |= RC1;
                        }
                        if t1 & (OBJECT | RESOURCE) != 0 {
                            tmp |= t1 & (RC1 | RCN);
                        }
                    }
                    if key_type & (ARRAY_KEY_LONG | ARRAY_KEY_STRING) != 0 && w {
                        let rd = result_def().unwrap();
                        // Only the first use and whether there is a second one matter: walk
                        // the chain that far, without collecting it.
                        let mut uses = self.st.ssa.uses(SsaVar::new(rd as u32));
                        match uses.next().map(|u| u.index()) {
                            None => tmp |= key_type | ARRAY | ARRAY_OF_NULL,
                            Some(j) if j != line + 1 => {
                                tmp |= key_type | ARRAY_OF_ANY | ARRAY_OF_REF;
                            }
                            Some(j) => {
                                match op_array.opcodes[j].opcode {
                                    ZEND_FETCH_DIM_W
                                    | ZEND_FETCH_DIM_RW
                                    | ZEND_FETCH_DIM_FUNC_ARG
                                    | ZEND_FETCH_LIST_W
                                    | ZEND_ASSIGN_DIM
                                    | ZEND_ASSIGN_DIM_OP => {
                                        tmp |= key_type | ARRAY | ARRAY_OF_ARRAY
                                    }
                                    ZEND_SEND_VAR_EX
                                    | ZEND_SEND_FUNC_ARG
                                    | ZEND_SEND_VAR_NO_REF
                                    | ZEND_SEND_VAR_NO_REF_EX
                                    | ZEND_SEND_REF
                                    | ZEND_ASSIGN_REF
                                    | ZEND_YIELD
                                    | ZEND_INIT_ARRAY
                                    | ZEND_ADD_ARRAY_ELEMENT
                                    | ZEND_RETURN_BY_REF
                                    | ZEND_VERIFY_RETURN_TYPE
                                    | ZEND_MAKE_REF
                                    | ZEND_FE_RESET_RW => {
                                        tmp |= key_type | ARRAY_OF_ANY | ARRAY_OF_REF
                                    }
                                    ZEND_PRE_INC | ZEND_PRE_DEC | ZEND_POST_INC | ZEND_POST_DEC => {
                                        if tmp & ARRAY_OF_LONG != 0 {
                                            tmp |= key_type | ARRAY_OF_DOUBLE;
                                        } else if tmp & (ARRAY_OF_LONG | ARRAY_OF_DOUBLE) == 0 {
                                            tmp |= key_type | ARRAY_OF_LONG | ARRAY_OF_DOUBLE;
                                        }
                                    }
                                    _ => {}
                                }
                                if uses.next().is_some() {
                                    tmp |= key_type | ARRAY_OF_ANY | ARRAY_OF_REF;
                                }
                            }
                        }
                        if opcode != ZEND_FETCH_DIM_FUNC_ARG {
                            tmp &= !ARRAY_EMPTY;
                        }
                    }
                    if tmp & ARRAY == 0
                        || tmp & ARRAY_KEY_ANY != 0
                        || matches!(
                            opcode,
                            ZEND_FETCH_DIM_FUNC_ARG
                                | ZEND_FETCH_DIM_R
                                | ZEND_FETCH_DIM_IS
                                | ZEND_FETCH_DIM_UNSET
                                | ZEND_FETCH_LIST_R
                        )
                    {
                        self.update_type(tmp, op1_def());
                    } else {
                        return;
                    }
                    self.copy_obj(op1_use(), op1_def());
                }
                let t = if opcode != ZEND_FETCH_LIST_R {
                    t1
                } else {
                    (t1 & !STRING) | NULL
                };
                let write = !matches!(
                    opcode,
                    ZEND_FETCH_DIM_R | ZEND_FETCH_DIM_IS | ZEND_FETCH_LIST_R
                );
                let mut tmp = array_element_type(t, op1_type(), write, op2_type() == IS_UNUSED);
                if opcode == ZEND_FETCH_DIM_FUNC_ARG && t1 & (TRUE | LONG | DOUBLE | RESOURCE) != 0
                {
                    tmp |= NULL;
                }
                if opcode == ZEND_FETCH_DIM_IS && t1 & STRING != 0 {
                    tmp |= NULL;
                }
                if tmp & (RC1 | RCN) == RCN && result_type() == IS_TMP_VAR {
                    if let Some(rd) = result_def() {
                        if !result_use_chain_next(self.st, rd) {
                            tmp |= RC1;
                        }
                    }
                }
                self.update_type(tmp, result_def());
            }
            ZEND_FETCH_THIS => {
                if op_array.fn_flags & ZEND_ACC_TRAIT_CLONE == 0 {
                    let ce = scope_class(st);
                    let inst = true;
                    self.update_obj(Ce::Name(ce), inst, result_def());
                }
                self.update_type(RCN | OBJECT, result_def());
            }
            ZEND_FETCH_OBJ_R
            | ZEND_FETCH_OBJ_IS
            | ZEND_FETCH_OBJ_RW
            | ZEND_FETCH_OBJ_W
            | ZEND_FETCH_OBJ_UNSET
            | ZEND_FETCH_OBJ_FUNC_ARG => {
                if result_def().is_some() {
                    let mut tmp = 0;
                    let mut ce = None;
                    if op1_type() != IS_UNUSED && t1 & (ANY | UNDEF) & !OBJECT != 0 {
                        tmp |= NULL;
                    }
                    if op1_type() == IS_UNUSED || t1 & OBJECT != 0 {
                        let p = fetch_prop_info(st, line);
                        let (pt, pce) = prop_type(st, p.as_ref());
                        tmp |= pt;
                        ce = pce;
                        if opcode != ZEND_FETCH_OBJ_R && opcode != ZEND_FETCH_OBJ_IS {
                            tmp |= REF | INDIRECT;
                            if ext & 3 == 2 {
                                tmp |= UNDEF;
                            }
                            ce = None;
                        } else if op1_type() & (IS_VAR | IS_TMP_VAR) == 0 || t1 & RC1 == 0 {
                            // The cheap use test first: the class test looks the class up
                            // and scans its methods. The scope's entry directly: looking its
                            // name up again finds the same one.
                            if !result_may_be_separated(st, line) {
                                let obj_ce = if op1_type() == IS_UNUSED {
                                    st.scope_ce
                                } else if let Some(u) =
                                    op1_use().filter(|&u| !st.vars[u].is_instanceof)
                                {
                                    let c = st.vars[u].ce.as_ref();
                                    c.and_then(|c| script_class(st, &c.name))
                                } else {
                                    None
                                };
                                if obj_ce.is_some_and(plain_user_class) {
                                    tmp &= !RC1;
                                }
                            }
                            if opcode == ZEND_FETCH_OBJ_IS {
                                tmp |= NULL;
                            }
                        }
                    }
                    self.update_type(tmp, result_def());
                    if ce.is_some() {
                        self.update_obj(Ce::Name(ce), true, result_def());
                    }
                }
            }
            ZEND_FETCH_STATIC_PROP_R
            | ZEND_FETCH_STATIC_PROP_IS
            | ZEND_FETCH_STATIC_PROP_RW
            | ZEND_FETCH_STATIC_PROP_W
            | ZEND_FETCH_STATIC_PROP_UNSET
            | ZEND_FETCH_STATIC_PROP_FUNC_ARG => {
                let p = fetch_static_prop_info(st, line);
                let (mut tmp, mut ce) = prop_type(st, p.as_ref());
                if opcode != ZEND_FETCH_STATIC_PROP_R && opcode != ZEND_FETCH_STATIC_PROP_IS {
                    tmp |= REF | INDIRECT;
                    if ext & 3 == 2 {
                        tmp |= UNDEF;
                    }
                    ce = None;
                } else {
                    if !result_may_be_separated(st, line) {
                        tmp &= !RC1;
                    }
                    if opcode == ZEND_FETCH_STATIC_PROP_IS {
                        tmp |= UNDEF;
                    }
                }
                self.update_type(tmp, result_def());
                if ce.is_some() {
                    self.update_obj(Ce::Name(ce), true, result_def());
                }
            }
            ZEND_DO_FCALL | ZEND_DO_ICALL | ZEND_DO_UCALL | ZEND_DO_FCALL_BY_NAME => {
                if result_def().is_some() {
                    match func_info(st, line) {
                        Some((tmp, ce, inst)) => {
                            self.update_type(tmp, result_def());
                            if ce.is_some() {
                                self.update_obj(Ce::Name(ce), inst, result_def());
                            }
                        }
                        None => self.unknown(line),
                    }
                }
            }
            ZEND_CALLABLE_CONVERT => {
                self.update_type(OBJECT | RC1 | RCN, result_def());
                self.update_obj(Ce::Name(Some(b"Closure")), false, result_def());
            }
            ZEND_FETCH_CONSTANT | ZEND_FETCH_CLASS_CONSTANT => {
                self.update_type(RC1 | RCN | ANY | ARRAY_KEY_ANY | ARRAY_OF_ANY, result_def())
            }
            ZEND_STRLEN => {
                let mut tmp = LONG;
                if t1 & (ANY - (NULL | FALSE | TRUE | LONG | DOUBLE | STRING)) != 0 {
                    tmp |= NULL;
                }
                self.update_type(tmp, result_def());
            }
            ZEND_COUNT | ZEND_FUNC_NUM_ARGS => self.update_type(LONG, result_def()),
            ZEND_FUNC_GET_ARGS => self.update_type(
                RC1 | RCN | ARRAY | ARRAY_EMPTY | ARRAY_PACKED | ARRAY_OF_ANY,
                result_def(),
            ),
            ZEND_GET_CLASS | ZEND_GET_CALLED_CLASS => {
                self.update_type(FALSE | STRING | RCN, result_def())
            }
            ZEND_GET_TYPE => self.update_type(STRING | RC1 | RCN, result_def()),
            ZEND_TYPE_CHECK => {
                let expected = ext;
                if t1 & UNDEF != 0 {
                    t1 |= NULL;
                }
                let mut tmp = 0;
                if t1 & expected != 0 {
                    tmp |= TRUE;
                    if t1 & expected & RESOURCE != 0 {
                        tmp |= FALSE;
                    }
                }
                if t1 & (ANY - expected) != 0 {
                    tmp |= FALSE;
                }
                self.update_type(tmp, result_def());
            }
            ZEND_DEFINED => self.update_type(FALSE | TRUE, result_def()),
            ZEND_VERIFY_RETURN_TYPE => {
                let (tmp, ce) = if t1 & REF != 0 {
                    (t1, None)
                } else {
                    let (mut tmp, ce) = match &op_array.return_info {
                        Some(ri) => {
                            let (t, c) = st.ctx.info.convert_type(&ri.type_);
                            (t, c.map(|c| c.name()))
                        }
                        None => (UNKNOWN | RC1 | RCN, None),
                    };
                    if tmp & NULL != 0 && op1_type() == IS_CV {
                        tmp |= UNDEF;
                    }
                    tmp |= t1 & INDIRECT;
                    if t1 & !tmp == 0 {
                        tmp &= t1;
                    }
                    (tmp, ce)
                };
                let target = if op1_type() & (IS_TMP_VAR | IS_VAR | IS_CV) != 0 {
                    op1_def()
                } else {
                    result_def()
                };
                self.update_type(tmp, target);
                let inst = ce.is_some();
                self.update_obj(Ce::Name(ce), inst, target);
            }
            ZEND_MAKE_REF => {
                let tmp = REF | RC1 | RCN | UNKNOWN;
                self.update_type(tmp, result_def());
                if op1_def().is_some() {
                    self.update_type(tmp, op1_def());
                }
            }
            _ => self.unknown(line),
        }
    }

    /// The `unknown_opcode` case.
    fn unknown(&mut self, line: usize) {
        let st = &*self.st;
        let opline = &st.op_array.opcodes[line];
        let ssa_op = st.ssa.ops[line];
        if ssa_op.op1_def.is_some() {
            self.update_type(UNKNOWN | REF | RC1 | RCN, sv(ssa_op.op1_def));
        }
        if ssa_op.result_def.is_some() {
            let mut tmp = UNKNOWN;
            let rt = opline.result.op_type();
            if rt == IS_TMP_VAR || rt == IS_CV {
                tmp |= RC1 | RCN;
            } else {
                tmp |= REF | RC1 | RCN;
                if matches!(
                    opline.opcode,
                    ZEND_FETCH_W
                        | ZEND_FETCH_RW
                        | ZEND_FETCH_FUNC_ARG
                        | ZEND_FETCH_UNSET
                        | ZEND_FETCH_DIM_W
                        | ZEND_FETCH_DIM_RW
                        | ZEND_FETCH_DIM_FUNC_ARG
                        | ZEND_FETCH_DIM_UNSET
                        | ZEND_FETCH_OBJ_W
                        | ZEND_FETCH_OBJ_RW
                        | ZEND_FETCH_OBJ_FUNC_ARG
                        | ZEND_FETCH_OBJ_UNSET
                        | ZEND_FETCH_STATIC_PROP_W
                        | ZEND_FETCH_STATIC_PROP_RW
                        | ZEND_FETCH_STATIC_PROP_FUNC_ARG
                        | ZEND_FETCH_STATIC_PROP_UNSET
                ) {
                    tmp |= INDIRECT;
                }
            }
            self.update_type(tmp, sv(ssa_op.result_def));
        }
    }

    /// The OP_DATA value of ASSIGN_DIM/OBJ/STATIC_PROP.
    fn op_data_def(&mut self, line: usize, obj: bool) {
        let Some(d) = self.st.ssa.ops.get(line + 1).copied() else {
            return;
        };
        if d.op1_def.is_none() {
            return;
        }
        let data = &self.st.op_array.opcodes[line + 1];
        let mut tmp = self.st.operand_info(data.op1, d.op1_use);
        if obj {
            if tmp & RC1 != 0 {
                tmp |= RCN;
            }
        } else if tmp & (ANY | REF) != 0 && tmp & RC1 != 0 {
            tmp |= RCN;
        }
        self.update_type(tmp, sv(d.op1_def));
    }
}

fn inc_dec_type(st: &State, t1: u32, op1_use: Option<usize>, inc: bool, post: bool) -> u32 {
    let mut tmp = 0;
    if t1 & (ANY | UNDEF) == LONG {
        let r = op1_use.map(|u| &st.vars[u]);
        let overflow = match r {
            Some(v) if v.has_range => {
                if inc {
                    v.range.overflow || v.range.max == i64::MAX
                } else {
                    v.range.underflow || v.range.min == i64::MIN
                }
            }
            _ => true,
        };
        tmp |= if overflow { LONG | DOUBLE } else { LONG };
    } else {
        if t1 & (UNDEF | NULL) != 0 {
            tmp |= if inc { LONG } else { NULL };
        }
        if t1 & LONG != 0 {
            tmp |= LONG | DOUBLE;
        }
        if t1 & DOUBLE != 0 {
            tmp |= DOUBLE;
        }
        if t1 & STRING != 0 {
            tmp |= STRING | LONG | DOUBLE;
        }
        if post {
            tmp |= t1
                & (FALSE
                    | TRUE
                    | RESOURCE
                    | ARRAY
                    | OBJECT
                    | ARRAY_OF_ANY
                    | ARRAY_OF_REF
                    | ARRAY_KEY_ANY);
        } else {
            tmp |= t1 & (FALSE | TRUE | OBJECT);
        }
    }
    tmp
}

/// The parent of a linked class (`None` for unlinked classes and roots), and whether the
/// class is linked.
fn linked_parent(st: &State, name: &[u8]) -> (bool, Option<Vec<u8>>) {
    if let Some(c) = script_class(st, name) {
        if c.ce_flags & ZEND_ACC_LINKED == 0 {
            return (false, None);
        }
        let parent = c.parent_name.as_ref().map(|p| {
            let lc = p.as_bytes().to_ascii_lowercase();
            match script_class(st, &lc) {
                Some(pc) => pc.name.as_bytes().to_vec(),
                None => st
                    .ctx
                    .class_name(None, &lc)
                    .map(<[u8]>::to_vec)
                    .unwrap_or_else(|| p.as_bytes().to_vec()),
            }
        });
        return (true, parent);
    }
    let lc = name.to_ascii_lowercase();
    (
        true,
        crate::func_infos::internal_parent(&lc).map(|p| p.as_bytes().to_vec()),
    )
}

/// `join_class_entries`: the nearest common ancestor on the class (parent) chain.
fn join_class_entries(
    st: &State,
    ce1: Option<ClassInfo>,
    ce2: Option<ClassInfo>,
    is_instanceof: &mut bool,
) -> Option<ClassInfo> {
    if ce1 == ce2 {
        return ce1;
    }
    let (mut c1, mut c2) = (ce1?.name, ce2?.name);
    let rank = |n: &[u8]| -> usize {
        let mut r = 0;
        let mut cur = n.to_vec();
        while let (true, Some(p)) = linked_parent(st, &cur) {
            r += 1;
            cur = p;
            if r > 64 {
                break;
            }
        }
        r
    };
    let up = |n: &[u8]| -> Option<Vec<u8>> {
        match linked_parent(st, n) {
            (true, p) => p,
            (false, _) => None,
        }
    };
    let (mut r1, mut r2) = (rank(&c1), rank(&c2));
    while r1 != r2 {
        if r1 > r2 {
            c1 = up(&c1)?;
            r1 -= 1;
        } else {
            c2 = up(&c2)?;
            r2 -= 1;
        }
    }
    while !c1.eq_ignore_ascii_case(&c2) {
        c1 = up(&c1)?;
        c2 = up(&c2)?;
    }
    *is_instanceof = true;
    Some(ClassInfo { name: c1 })
}

/// `safe_instanceof(ce1, ce2)`: `ce1` is linked and an instance of `ce2`.
fn safe_instanceof(st: &State, ce1: &[u8], ce2: &[u8]) -> bool {
    if ce1.eq_ignore_ascii_case(ce2) {
        return true;
    }
    let target = ce2.to_ascii_lowercase();
    let mut stack = vec![ce1.to_ascii_lowercase()];
    let mut first = true;
    let mut seen = 0;
    while let Some(name) = stack.pop() {
        seen += 1;
        if seen > 256 {
            return false;
        }
        if name == target {
            return true;
        }
        if let Some(c) = script_class(st, &name) {
            if c.ce_flags & ZEND_ACC_LINKED == 0 {
                if first {
                    return false;
                }
                continue;
            }
            if let Some(p) = &c.parent_name {
                stack.push(p.as_bytes().to_ascii_lowercase());
            }
            for i in &c.interface_names {
                stack.push(i.lc_name.as_bytes().to_vec());
            }
        } else if let Some(has) = crate::func_infos::internal_has_ancestor(&name, &target) {
            if has {
                return true;
            }
        } else if first {
            return false;
        }
        first = false;
    }
    false
}

/// `binary_op_result_type`.
fn binary_op_result_type(
    st: &State,
    opcode: Opcode,
    t1: u32,
    t2: u32,
    result_var: Option<usize>,
    opt: u32,
) -> u32 {
    let mut tmp = 0;
    let t1t = (t1 & ANY) | if t1 & UNDEF != 0 { NULL } else { 0 };
    let t2t = (t2 & ANY) | if t2 & UNDEF != 0 { NULL } else { 0 };
    if opt & (1 << 16) == 0 && (t1t & OBJECT != 0 || t2t & OBJECT != 0) {
        tmp |= OBJECT | FALSE | RC1;
    }
    let may_overflow = |st: &State| match result_var {
        Some(v) => {
            let i = &st.vars[v];
            !i.has_range || i.range.underflow || i.range.overflow
        }
        None => true,
    };
    match opcode {
        ZEND_ADD => {
            if t1t == LONG && t2t == LONG {
                tmp |= if may_overflow(st) {
                    LONG | DOUBLE
                } else {
                    LONG
                };
            } else if t1t == DOUBLE || t2t == DOUBLE {
                tmp |= DOUBLE;
            } else if t1t == ARRAY && t2t == ARRAY {
                tmp |= ARRAY | RC1;
                tmp |= t1 & (ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF);
                tmp |= t2 & (ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF);
            } else {
                tmp |= LONG | DOUBLE;
                if t1t & ARRAY != 0 && t2t & ARRAY != 0 {
                    tmp |= ARRAY | RC1;
                    tmp |= t1 & (ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF);
                    tmp |= t2 & (ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF);
                }
            }
        }
        ZEND_SUB | ZEND_MUL => {
            if t1t == LONG && t2t == LONG {
                tmp |= if may_overflow(st) {
                    LONG | DOUBLE
                } else {
                    LONG
                };
            } else if t1t == DOUBLE || t2t == DOUBLE {
                tmp |= DOUBLE;
            } else {
                tmp |= LONG | DOUBLE;
            }
        }
        ZEND_DIV | ZEND_POW => {
            if t1t == DOUBLE || t2t == DOUBLE {
                tmp |= DOUBLE;
            } else {
                tmp |= LONG | DOUBLE;
            }
        }
        ZEND_MOD => tmp |= LONG,
        ZEND_BW_OR | ZEND_BW_AND | ZEND_BW_XOR => {
            if t1t & STRING != 0 && t2t & STRING != 0 {
                tmp |= STRING | RC1 | RCN;
            }
            if t1t & !STRING != 0 || t2t & !STRING != 0 {
                tmp |= LONG;
            }
        }
        ZEND_SL | ZEND_SR => tmp |= LONG,
        ZEND_CONCAT | ZEND_FAST_CONCAT => tmp = STRING | RC1 | RCN,
        _ => {}
    }
    tmp
}

/// `zend_array_element_type`.
pub fn array_element_type(t1: u32, op_type: u8, write: bool, insert: bool) -> u32 {
    let mut tmp = 0;
    if t1 & OBJECT != 0 {
        if !write {
            tmp |= ANY | RC1 | RCN | ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF;
        } else {
            tmp |= ANY | REF | RC1 | RCN | ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF | INDIRECT;
        }
    }
    if t1 & ARRAY != 0 {
        if insert {
            tmp |= NULL;
        } else {
            tmp |= NULL | ((t1 & ARRAY_OF_ANY) >> SHIFT);
            if tmp & ARRAY != 0 {
                tmp |= ARRAY_KEY_ANY | ARRAY_OF_ANY | ARRAY_OF_REF;
            }
            if tmp & (STRING | ARRAY | OBJECT | RESOURCE) != 0 {
                if !write {
                    tmp |= RCN;
                    if op_type & (IS_VAR | IS_TMP_VAR) != 0 && t1 & RC1 != 0 {
                        tmp |= RC1;
                    }
                } else if t1 & ARRAY_OF_REF != 0 {
                    tmp |= REF | RC1 | RCN;
                } else {
                    tmp |= RC1 | RCN;
                }
            }
        }
        if write {
            tmp |= INDIRECT;
        }
    }
    if t1 & STRING != 0 {
        tmp |= STRING | RC1;
        if write {
            tmp |= NULL;
        }
    }
    if t1 & (UNDEF | NULL | FALSE) != 0 {
        tmp |= NULL;
        if write {
            tmp |= INDIRECT;
        }
    }
    if t1 & (TRUE | LONG | DOUBLE | RESOURCE) != 0 && !write {
        tmp |= NULL;
    }
    tmp
}

fn assign_dim_array_result_type(
    arr_type: u32,
    dim_type: u32,
    mut value_type: u32,
    dim_op_type: u8,
) -> u32 {
    let mut tmp = 0;
    let long_key = |tmp: &mut u32| {
        if arr_type & (UNDEF | NULL | FALSE) != 0 {
            *tmp |= ARRAY_PACKED;
        }
        *tmp |= if mb::hash_only(arr_type) {
            ARRAY_NUMERIC_HASH
        } else {
            ARRAY_KEY_LONG
        };
    };
    if value_type & (ANY | UNDEF) != 0 {
        if value_type & UNDEF != 0 {
            value_type |= NULL;
        }
        if dim_op_type == IS_UNUSED {
            long_key(&mut tmp);
        } else {
            if dim_type & (LONG | FALSE | TRUE | RESOURCE | DOUBLE) != 0 {
                long_key(&mut tmp);
            }
            if dim_type & STRING != 0 {
                tmp |= ARRAY_KEY_STRING;
                if dim_op_type != IS_CONST {
                    long_key(&mut tmp);
                }
            }
            if dim_type & (UNDEF | NULL) != 0 {
                tmp |= ARRAY_KEY_STRING;
            }
        }
    }
    if tmp & ARRAY_KEY_ANY != 0 {
        tmp |= (value_type & ANY) << SHIFT;
    }
    tmp & !ARRAY_EMPTY
}

fn assign_dim_result_type(arr_type: u32, dim_type: u32, value_type: u32, dim_op_type: u8) -> u32 {
    let mut tmp = arr_type & !(RC1 | RCN);
    if arr_type & (UNDEF | NULL | FALSE) != 0 {
        tmp &= !(UNDEF | NULL | FALSE);
        tmp |= ARRAY | RC1;
    }
    if tmp & (ARRAY | STRING) != 0 {
        tmp |= RC1;
    }
    if tmp & (OBJECT | RESOURCE) != 0 {
        tmp |= RC1 | RCN;
    }
    if tmp & ARRAY != 0 {
        tmp |= assign_dim_array_result_type(arr_type, dim_type, value_type, dim_op_type);
    }
    tmp
}

/// The name of the class the op_array's scope names.
fn scope_class<'s>(st: &State<'s>) -> Option<&'s [u8]> {
    st.scope_ce.map(|c| c.name.as_bytes())
}

fn script_class<'a>(st: &State<'a>, name: &[u8]) -> Option<&'a zend_ir::ClassEntry> {
    st.ctx.script_class(name)
}

/// A user class without `create_object` or `__get`.
fn plain_user_class(ce: &zend_ir::ClassEntry) -> bool {
    ce.parent_name.is_none() && !ce.methods.iter().any(|(k, _)| k.as_bytes() == b"__get")
}

fn result_may_be_separated(st: &State, line: usize) -> bool {
    let Some(rd) = st.ssa.ops[line].result_def else {
        return true;
    };
    let v = &st.ssa.vars[rd.index()];
    if let (Some(u), None) = (v.use_chain, v.phi_use_chain) {
        if u.index() == line + 1 {
            let uo = &st.ssa.ops[u.index()];
            if (uo.op1_use == Some(rd) && uo.op1_use_chain.is_none())
                || (uo.op2_use == Some(rd) && uo.op2_use_chain.is_none())
            {
                return false;
            }
        }
    }
    true
}

/// A property's declared type, as found by `zend_fetch_prop_info`.
struct PropType<'s> {
    type_: &'s zend_ir::ZendType,
    is_static: bool,
}

/// `lookup_prop_info`, for the script's classes.
fn lookup_prop<'a>(
    st: &State<'a>,
    class: &'a zend_ir::ClassEntry,
    name: &[u8],
) -> Option<PropType<'a>> {
    let unmangled = |n: &'a [u8]| -> &'a [u8] {
        match n.iter().rposition(|&b| b == 0) {
            Some(i) if n.first() == Some(&0) => &n[i + 1..],
            _ => n,
        }
    };
    // A mangled name ("\0Class\0name") ends with the name too: the cheap suffix test
    // rejects most properties before the name is unmangled.
    let find = |class: &'a zend_ir::ClassEntry| {
        class.properties.iter().find(|p| {
            let n = p.name.as_bytes();
            // Only the name itself or a mangled name with a NUL just before `name` can
            // unmangle to it: the lengths and that byte reject most properties without a
            // comparison of the bytes.
            let fits =
                n.len() == name.len() || (n.len() > name.len() && n[n.len() - name.len() - 1] == 0);
            fits && n.ends_with(name) && unmangled(n) == name
        })
    };
    let prop = find(class)?;
    let scope = st.op_array.scope.as_ref();
    let same_scope = scope.is_some_and(|s| s.as_bytes().eq_ignore_ascii_case(prop.ce.as_bytes()));
    let prop = if class.ce_flags & ZEND_ACC_LINKED != 0 && scope_is_linked(st) {
        linked_prop(st, class, prop, find)?
    } else {
        (same_scope || (scope.is_none() && prop.flags & ZEND_ACC_PUBLIC != 0)).then_some(prop)?
    };
    Some(PropType {
        type_: &prop.type_,
        is_static: prop.flags & ZEND_ACC_STATIC != 0,
    })
}

/// `zend_get_property_info` with the op_array's scope (`lookup_prop_info` on a linked
/// class: only OPcache's preloading links the script's classes): which property `prop`, as
/// found in `class`, a method of the scope reaches; `find` finds a property in a class.
fn linked_prop<'a>(
    st: &State<'a>,
    class: &'a zend_ir::ClassEntry,
    prop: &'a zend_ir::PropertyInfo,
    find: impl Fn(&'a zend_ir::ClassEntry) -> Option<&'a zend_ir::PropertyInfo>,
) -> Option<&'a zend_ir::PropertyInfo> {
    let flags = prop.flags;
    if flags & (ZEND_ACC_CHANGED | ZEND_ACC_PRIVATE | ZEND_ACC_PROTECTED) == 0 {
        return Some(prop);
    }
    let Some(scope) = st.op_array.scope.as_ref().map(|s| s.as_bytes()) else {
        // No class scope: only a public property redeclared over a private one.
        return (flags & ZEND_ACC_PUBLIC != 0).then_some(prop);
    };
    if prop.ce.as_bytes().eq_ignore_ascii_case(scope) {
        return Some(prop);
    }
    if flags & ZEND_ACC_CHANGED != 0 {
        // `zend_get_parent_private_property`: the scope's own private property, when the
        // class derives from the scope.
        let parent_private = script_class(st, scope)
            .filter(|s| !std::ptr::eq(*s, class) && derives_from(st, class, scope))
            .and_then(find)
            .filter(|p| {
                p.flags & ZEND_ACC_PRIVATE != 0 && p.ce.as_bytes().eq_ignore_ascii_case(scope)
            });
        if let Some(p) = parent_private {
            return Some(p);
        }
        if flags & ZEND_ACC_PUBLIC != 0 {
            return Some(prop);
        }
    }
    if flags & ZEND_ACC_PRIVATE != 0 {
        return None;
    }
    // `is_protected_compatible_scope`: the scope and the declaring class are related.
    let related = script_class(st, scope).is_some_and(|s| derives_from(st, s, prop.ce.as_bytes()))
        || script_class(st, prop.ce.as_bytes()).is_some_and(|c| derives_from(st, c, scope));
    related.then_some(prop)
}

/// Whether linked class `class` is `ancestor` or derives from it (a preloaded class's
/// ancestors are preloaded or internal).
fn derives_from(st: &State, class: &zend_ir::ClassEntry, ancestor: &[u8]) -> bool {
    let mut ce = class;
    // PHP's classes cannot inherit in a circle; a damaged recording's could.
    for _ in 0..=st.ctx.info.script.class_table.len() {
        if ce.name.as_bytes().eq_ignore_ascii_case(ancestor) {
            return true;
        }
        let Some(parent) = ce.parent_name.as_ref() else {
            return false;
        };
        match script_class(st, parent.as_bytes()) {
            Some(p) => ce = p,
            None => {
                let parent = parent.as_bytes().to_ascii_lowercase();
                let ancestor = ancestor.to_ascii_lowercase();
                return parent == ancestor
                    || crate::func_infos::internal_has_ancestor(&parent, &ancestor) == Some(true);
            }
        }
    }
    false
}

fn is_static_prop(p: &PropType) -> bool {
    p.is_static
}

fn fetch_prop_info<'s>(st: &State<'s>, line: usize) -> Option<PropType<'s>> {
    let opline = &st.op_array.opcodes[line];
    let name = match st.literal(opline.op2)? {
        Literal::String(s) => s.as_bytes(),
        _ => return None,
    };
    // The scope's class entry directly: looking its name up again finds the same one.
    let class = if matches!(opline.op1, Operand::Unused(_))
        && st.op_array.fn_flags & ZEND_ACC_TRAIT_CLONE == 0
    {
        st.scope_ce
    } else if let Some(u) = st.ssa.ops[line].op1_use {
        let class_name = &st.vars[u.index()].ce.as_ref()?.name;
        match script_class(st, class_name) {
            Some(class) => Some(class),
            None => return internal_prop(st, class_name, name),
        }
    } else {
        None
    }?;
    let p = lookup_prop(st, class, name)?;
    (!is_static_prop(&p)).then_some(p)
}

/// Whether `lookup_prop_info` may take PHP's run-time lookup: the op_array has no scope,
/// or its scope class is linked. Otherwise it only answers for the scope's own properties.
fn scope_is_linked(st: &State) -> bool {
    st.op_array.scope.is_none()
        || st
            .scope_ce
            .is_some_and(|s| s.ce_flags & ZEND_ACC_LINKED != 0)
}

/// `lookup_prop_info` on an internal class (an object of a class the script does not
/// declare), which is always linked: its public instance properties as PHP declares them,
/// where the scope lets PHP's run-time lookup answer (an internal class's property is
/// never the scope's own).
fn internal_prop<'s>(st: &State<'s>, class_name: &[u8], name: &[u8]) -> Option<PropType<'s>> {
    if !scope_is_linked(st) {
        return None;
    }
    let p = zend_ir::with_ascii_lowercase(class_name, |lc| zend_ir::internal_property(lc, name))?;
    (p.flags & ZEND_ACC_STATIC == 0).then_some(PropType {
        type_: &p.type_,
        is_static: false,
    })
}

fn fetch_static_prop_info<'s>(st: &State<'s>, line: usize) -> Option<PropType<'s>> {
    let opline = &st.op_array.opcodes[line];
    let Operand::Const(l1) = opline.op1 else {
        return None;
    };
    let class = match opline.op2 {
        Operand::Unused(n) => match n & 0xf {
            1 | 3 => st.scope_ce,
            _ => None,
        },
        Operand::Const(l) => match st.op_array.literals.get(l.index() + 1) {
            Some(Literal::String(lc)) => st
                .ctx
                .class_name(Some(st.op_array), lc.as_bytes())
                .and_then(|c| script_class(st, c)),
            _ => None,
        },
        _ => None,
    }?;
    let name = match st.op_array.literals.get(l1.index())? {
        Literal::String(s) => s.as_bytes(),
        _ => return None,
    };
    let p = lookup_prop(st, class, name)?;
    is_static_prop(&p).then_some(p)
}

fn prop_type<'s>(st: &State<'s>, p: Option<&PropType<'s>>) -> (u32, Option<&'s [u8]>) {
    match p {
        None => (UNKNOWN | RC1 | RCN, None),
        Some(p) => {
            let (m, c) = st.ctx.info.convert_type(p.type_);
            (m, c.map(|c| c.name()))
        }
    }
}

fn class_from_op1<'s>(st: &State<'s>, opline: &zend_ir::Op) -> Option<&'s [u8]> {
    match opline.op1 {
        Operand::Const(l) => match st.op_array.literals.get(l.index() + 1) {
            Some(Literal::String(lc)) => st.ctx.class_name(Some(st.op_array), lc.as_bytes()),
            _ => None,
        },
        Operand::Unused(n) => {
            let ce = st.scope_ce?;
            (ce.ce_flags & 2 == 0 && n & 0xf == 1).then_some(ce.name.as_bytes())
        }
        _ => None,
    }
}

/// `zend_get_func_info` for the call the DO_* op at `line` performs (`None`: no call
/// info, the unknown-opcode rule applies).
fn func_info<'s>(st: &State<'s>, line: usize) -> Option<(u32, Option<&'s [u8]>, bool)> {
    let site = st.call_at_do(line)?;
    let init = &st.op_array.opcodes[site.init.index()];
    if let Some(callee) = site.callee {
        let mut ret = 0;
        let mut ce = None;
        let mut inst = false;
        if !site.is_prototype {
            if let Some(Some(ri)) = st.returns.get(callee.index()) {
                ret = ri.type_;
                ce = ri.ce.as_ref().map(|c| c.name.as_slice());
                inst = ri.is_instanceof;
            }
        }
        if ret == 0 {
            let f = st.ctx.info.op_arrays[callee.index()];
            let (t, c, i) = signature_return(st.ctx, f);
            ret = t;
            ce = c;
            inst = i;
            if site.is_prototype && ret & !REF != 0 {
                ret |= REF;
                ce = None;
            }
        }
        return Some((ret, ce, inst));
    }
    match st.ctx.info.called_target(st.op_array, init) {
        Some(zend_call_graph::CalledTarget::User(f)) => {
            let (mut ret, mut ce, inst) = signature_return(st.ctx, f);
            if site.is_prototype && ret & !REF != 0 {
                ret |= REF;
                ce = None;
            }
            return Some((ret, ce, inst));
        }
        Some(zend_call_graph::CalledTarget::InternalMethod(class, method)) => {
            let mut key = class.to_ascii_lowercase().into_bytes();
            key.extend_from_slice(b"::");
            key.extend_from_slice(&method);
            if let Some(info) = crate::func_infos::lookup(&key) {
                // `use_tentative_return_info`: not for a call that may reach an override.
                let signature = info
                    .signature
                    .filter(|_| !(site.is_prototype && info.tentative));
                if let Some(t) = signature {
                    let ce = info.signature_class.map(str::as_bytes);
                    let inst = ce.is_some();
                    return Some((t, ce, inst));
                }
            }
        }
        None => {}
    }
    // Internal function.
    if init.opcode == ZEND_INIT_FCALL {
        if let Some(Literal::String(name)) = st.literal(init.op2) {
            let name = name.as_bytes();
            if name == b"range" {
                return Some((range_info(st, site), None, false));
            }
            if let Some(info) = crate::func_infos::lookup(name) {
                let mut ret = info.info;
                if ret != 0 {
                    if ret & ARRAY != 0 {
                        ret |= ARRAY_EMPTY;
                    }
                    return Some((ret, None, false));
                }
                if let Some(t) = info.signature {
                    let ce = info.signature_class.map(str::as_bytes);
                    let inst = ce.is_some();
                    return Some((t, ce, inst));
                }
            }
        }
    }
    Some((UNKNOWN | RC1 | RCN, None, false))
}

fn range_info(st: &State, site: &zend_call_graph::CallSite) -> u32 {
    let n = site.args.len();
    let unpack = site
        .args
        .iter()
        .any(|a| st.op_array.opcodes[a.index()].opcode == ZEND_SEND_UNPACK);
    if !unpack && (n == 2 || n == 3) {
        let arg = |k: usize| {
            let a = site.args[k].index();
            st.operand_info(st.op_array.opcodes[a].op1, st.ssa.ops[a].op1_use)
        };
        let t1 = arg(0);
        let t2 = arg(1);
        let t3 = if n == 3 { arg(2) } else { 0 };
        let mut tmp = RC1 | ARRAY | ARRAY_EMPTY;
        if t1 & STRING != 0 && t2 & STRING != 0 {
            tmp |= ARRAY_OF_LONG | ARRAY_OF_DOUBLE | ARRAY_OF_STRING;
        }
        if t1 & (DOUBLE | STRING) != 0 || t2 & (DOUBLE | STRING) != 0 || t3 & (DOUBLE | STRING) != 0
        {
            tmp |= ARRAY_OF_DOUBLE;
        }
        if t1 & ((ANY | UNDEF) - DOUBLE) != 0
            && t2 & ((ANY | UNDEF) - DOUBLE) != 0
            && t3 & ANY != DOUBLE
        {
            tmp |= ARRAY_OF_LONG;
        }
        if tmp & ARRAY_OF_ANY != 0 {
            tmp |= ARRAY_PACKED;
        }
        tmp
    } else {
        RC1 | ARRAY | ARRAY_EMPTY | ARRAY_PACKED | ARRAY_OF_LONG | ARRAY_OF_DOUBLE | ARRAY_OF_STRING
    }
}

/// `zend_get_return_info_from_signature_only` for a user function.
fn signature_return<'s>(ctx: &Context<'s>, f: &OpArray) -> (u32, Option<&'s [u8]>, bool) {
    let (mut t, mut ce) = if f.fn_flags & ZEND_ACC_HAS_RETURN_TYPE != 0 {
        match &f.return_info {
            Some(ri) => {
                let (t, c) = ctx.info.convert_type(&ri.type_);
                (t, c.map(|c| c.name()))
            }
            None => (UNKNOWN | RC1 | RCN, None),
        }
    } else {
        (UNKNOWN | RC1 | RCN, None)
    };
    if f.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0 && f.fn_flags & ZEND_ACC_GENERATOR == 0 {
        t |= REF;
        ce = None;
    }
    let inst = ce.is_some();
    (t, ce, inst)
}

/// `zend_func_return_info` (recursive = 1, widening = 0).
pub(crate) fn func_return_info(st: &State) -> ReturnInfo {
    let op_array = st.op_array;
    let mut ret = st
        .func_index
        .and_then(|i| st.returns.get(i).cloned().flatten())
        .unwrap_or_default();
    if op_array.fn_flags & ZEND_ACC_GENERATOR != 0 {
        return ReturnInfo {
            type_: OBJECT | RC1 | RCN,
            ce: Some(ClassInfo {
                name: b"Generator".to_vec(),
            }),
            is_instanceof: false,
            has_range: false,
            range: Default::default(),
        };
    }
    if ret.type_ == 0 {
        ret.type_ = UNKNOWN | RC1 | RCN | REF;
    }
    let mut tmp = 0u32;
    let mut tmp_ce: Option<ClassInfo> = None;
    let mut tmp_inst: i32 = -1;
    let mut range = zend_ir::dump::SsaRange::default();
    let mut has_range: i32 = -1;
    for b in &st.cfg.blocks {
        if !b.is_reachable() || b.len == 0 {
            continue;
        }
        let line = (b.start + b.len - 1) as usize;
        let opline = &op_array.opcodes[line];
        if opline.opcode != ZEND_RETURN && opline.opcode != ZEND_RETURN_BY_REF {
            continue;
        }
        let ssa_op = st.ssa.ops[line];
        // is_recursive_tail_call
        if let Some(u) = ssa_op.op1_use {
            if let Some(d) = st.ssa.vars[u.index()].definition {
                if op_array.opcodes[d.index()].opcode == ZEND_DO_UCALL {
                    if let Some(site) = st.call_at_do(d.index()) {
                        if site.callee.is_some() && site.callee.map(|c| c.index()) == st.func_index
                        {
                            continue;
                        }
                    }
                }
            }
        }
        let mut t1 = st.operand_info(opline.op1, ssa_op.op1_use);
        if t1 & UNDEF != 0 {
            t1 |= NULL;
        }
        if opline.opcode == ZEND_RETURN {
            if t1 & RC1 != 0 {
                t1 |= RCN;
            }
            t1 &= !(UNDEF | REF);
        } else {
            t1 |= REF;
            t1 &= !(UNDEF | RC1 | RCN);
        }
        tmp |= t1;
        let (arg_ce, arg_inst) = match ssa_op.op1_use {
            Some(u) if t1 & REF == 0 && st.vars[u.index()].ce.is_some() => (
                st.vars[u.index()].ce.clone(),
                st.vars[u.index()].is_instanceof as i32,
            ),
            _ => (None, 0),
        };
        if tmp_inst < 0 {
            tmp_ce = arg_ce;
            tmp_inst = arg_inst;
        } else if arg_ce.is_some() && arg_ce == tmp_ce {
            if tmp_inst != arg_inst {
                tmp_inst = 1;
            }
        } else {
            tmp_ce = None;
            tmp_inst = 0;
        }
        if let Operand::Const(_) = opline.op1 {
            match st.literal(opline.op1) {
                Some(Literal::Long(v)) => {
                    if has_range < 0 {
                        has_range = 1;
                        range = zend_ir::dump::SsaRange {
                            min: *v,
                            max: *v,
                            underflow: false,
                            overflow: false,
                        };
                    } else if has_range > 0 {
                        if !range.underflow {
                            range.min = range.min.min(*v);
                        }
                        if !range.overflow {
                            range.max = range.max.max(*v);
                        }
                    }
                }
                _ => has_range = 0,
            }
        } else if let Some(u) = ssa_op.op1_use {
            let vi = &st.vars[u.index()];
            if vi.has_range {
                if has_range < 0 {
                    has_range = 1;
                    range = vi.range;
                } else if has_range > 0 {
                    if vi.range.underflow {
                        range.underflow = true;
                        range.min = i64::MIN;
                    } else {
                        range.min = range.min.min(vi.range.min);
                    }
                    if vi.range.overflow {
                        range.overflow = true;
                        range.max = i64::MAX;
                    } else {
                        range.max = range.max.max(vi.range.max);
                    }
                }
            } else {
                has_range = 1;
                range = zend_ir::dump::SsaRange {
                    min: i64::MIN,
                    max: i64::MAX,
                    underflow: true,
                    overflow: true,
                };
            }
        } else {
            has_range = 0;
        }
    }
    if op_array.fn_flags & ZEND_ACC_HAS_RETURN_TYPE == 0 {
        if tmp_inst < 0 {
            tmp_inst = 0;
            tmp_ce = None;
        }
        if has_range < 0 {
            has_range = 0;
        }
        ret.ce = tmp_ce;
        ret.is_instanceof = tmp_inst > 0;
    }
    ret.type_ &= tmp;
    ret.range = range;
    // With a declared return type and no RETURN reached, PHP stores -1: "has a range".
    ret.has_range = has_range != 0;
    ret
}
