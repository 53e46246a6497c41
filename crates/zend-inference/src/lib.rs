//! Type and range inference over the e-SSA form of a PHP 8.2 op_array, as
//! Zend/Optimizer/zend_inference.c computes them (`zend_ssa_inference`), with the internal
//! function return information of zend_func_info.c.
//!
//! # For tool authors
//!
//! ```ignore
//! // The SSA must have use-def chains, false dependencies and SCCs, as the DFA pass has
//! // them: Ssa::build, then ssa.find_false_dependencies(op_array), ssa.find_sccs(op_array).
//! let info = zend_call_graph::ScriptInfo::new(&script);
//! let ctx = zend_inference::Context::new(&info, 0x60); // OPcache's optimization_level
//! let mut returns = ctx.initial_return_infos();
//! for (index, op_array) in info.op_arrays.iter().enumerate() {
//!     let (cfg, ssa) = /* the DFA pass's CFG and SSA of op_array */;
//!     let inf = zend_inference::infer(op_array, Some(index), &cfg, &ssa, &ctx, &returns);
//!     for (n, v) in inf.vars.iter().enumerate() {
//!         // v.type_: MAY_BE_* mask (see `mb`); v.ce: the class an object is (an
//!         // instance of, with v.is_instanceof); v.range when v.has_range.
//!     }
//!     // Later callers see this function's inferred return type, as in PHP.
//!     returns[index] = inf.return_info.clone();
//! }
//! ```
//!
//! [`infer`] runs, like PHP: initial types of the CVs' entry values, range inference over
//! the SSA's strongly connected components in order (16 warm-up passes, widening, then
//! narrowing with symbolic pi constraints), then type inference with a worklist of SSA
//! variables until a fixpoint, and finally the function's return info
//! (`zend_func_return_info`). [`dump::dump_ssa_variables`] prints PHP's
//! `SSA Variable for "..."` dump (`opt_debug_level` 0x10000000) byte for byte.
//!
//! Iteration bound: range inference on an SCC runs at most 16 warm-up passes, then widening
//! (each variable's range can only grow to the unbounded range, so at most 2 changes per
//! bound) and narrowing (a bound only shrinks once from unbounded); type inference is
//! monotone over 32-bit masks (each variable changes at most 32 times). The total work is
//! O(vars × uses) per function. Measured (benches/inference.rs, release build): 1.85 M
//! ops/s over the recorded Debian corpus (8828 op_arrays, 195k ops); on synthetic loop
//! nests of 100 to 10k ops time grows as ops^1.27.
//!
//! The `NOESC` marks of the dump come from escape analysis (crate `zend-escape`), which
//! OPcache runs between inference and the dump.

// The transfer functions keep the case-then-condition shape of the C switch they mirror,
// and walk SSA variables by number as PHP does.
#![allow(
    clippy::collapsible_match,
    clippy::collapsible_if,
    clippy::needless_range_loop,
    clippy::if_same_then_else
)]

pub mod dump;
pub mod func_infos;
pub mod mb;
mod range;
mod types;

use bumpalo::Bump;
use zend_call_graph::ScriptInfo;
use zend_cfg::Cfg;
use zend_ir::dump::SsaRange;
use zend_ir::{Literal, OpArray, Operand};
use zend_ssa::Ssa;

/// A class an inferred object is (`is_instanceof`: or an instance of a subclass).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassInfo {
    /// The class name as declared.
    pub name: Vec<u8>,
}

/// `zend_ssa_var_info`: what inference knows about one SSA variable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VarInfo {
    /// `MAY_BE_*` mask.
    pub type_: u32,
    pub ce: Option<ClassInfo>,
    pub is_instanceof: bool,
    pub has_range: bool,
    pub range: SsaRange,
    /// The integer constant assigned here may be a double instead
    /// (`ZEND_OPTIMIZER_NARROW_TO_DOUBLE`).
    pub use_as_double: bool,
    /// The `MAY_BE_*` bits `zend_type_narrowing` took out of `type_`. Narrowing types an
    /// integer assignment and what it flows into as doubles, which holds only where the
    /// integer is really made a double; where it is not (SCCP propagated the integer
    /// first), the VM still sees these types, so handler selection must not ignore them.
    pub narrowed_away: u32,
}

/// A function's return info (`zend_func_info.return_info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReturnInfo {
    pub type_: u32,
    pub ce: Option<ClassInfo>,
    pub is_instanceof: bool,
    pub has_range: bool,
    pub range: SsaRange,
}

/// The result of [`infer`]: one [`VarInfo`] per SSA variable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inference {
    pub vars: Vec<VarInfo>,
    /// The return info computed from the function's RETURN ops.
    pub return_info: Option<ReturnInfo>,
    /// PHP's type inference would fail here ("Narrowing warning"): a type shrank during
    /// the fixpoint iteration. OPcache then drops the function's analysis: no SSA
    /// variables dump and no function info for its callers.
    pub failed: bool,
}

impl Inference {
    /// The type (`MAY_BE_*` mask) and range (when known) of SSA variable `var`.
    pub fn var(&self, var: zend_ssa::SsaVar) -> (u32, Option<SsaRange>) {
        let v = &self.vars[var.index()];
        (v.type_, v.has_range.then_some(v.range))
    }
}

/// What the inference of one op_array may know about the rest of the script.
pub struct Context<'a> {
    pub info: &'a ScriptInfo<'a>,
    /// Whether OPcache built the call graph (PASS_7): only then are calls resolved and
    /// functions have `zend_func_info`.
    pub call_graph: bool,
    /// `ZEND_OPTIMIZER_IGNORE_OVERLOADING` and the other optimization-level bits.
    pub optimization_level: u32,
}

impl<'a> Context<'a> {
    pub fn new(info: &'a ScriptInfo<'a>, optimization_level: u32) -> Self {
        Context {
            info,
            call_graph: optimization_level & (1 << 6) != 0 && optimization_level & (1 << 5) != 0,
            optimization_level,
        }
    }

    /// The first class of the script's class table named `name` (in any case): inference
    /// looks classes up by the names it carries for every property fetch and object
    /// operand, through the call graph's map.
    pub(crate) fn script_class(&self, name: &[u8]) -> Option<&'a zend_ir::ClassEntry> {
        self.info.script_class(name)
    }

    /// The declared name of `zend_optimizer_get_class_entry(script, op_array, lcname)`.
    pub(crate) fn class_name(&self, op_array: Option<&OpArray>, lcname: &[u8]) -> Option<&'a [u8]> {
        self.info.class_entry(op_array, lcname).map(|c| c.name())
    }

    /// Return infos of every op_array as the call graph initialises them
    /// (`zend_init_func_return_info`: from the signature, or nothing).
    pub fn initial_return_infos(&self) -> Vec<Option<ReturnInfo>> {
        (0..self.info.op_arrays.len())
            .map(|i| {
                let h = self.info.header(i);
                (h.return_type != 0).then(|| ReturnInfo {
                    type_: h.return_type,
                    is_instanceof: h.return_ce.as_ref().is_some_and(|c| c.1),
                    ce: h.return_ce.map(|(name, _)| ClassInfo { name }),
                    has_range: false,
                    range: SsaRange::default(),
                })
            })
            .collect()
    }
}

/// The state shared by range and type inference of one op_array.
pub(crate) struct State<'s> {
    pub op_array: &'s OpArray,
    pub cfg: &'s Cfg,
    pub ssa: &'s Ssa,
    pub ctx: &'s Context<'s>,
    pub func_index: Option<usize>,
    pub returns: &'s [Option<ReturnInfo>],
    pub vars: Vec<VarInfo>,
    /// The phis using each SSA variable (walking a phi's use chains one source at a time
    /// is quadratic in its number of sources).
    pub phi_uses: &'s zend_ssa::PhiUses<'s>,
    /// `FOR_EACH_VAR_USAGE` of each SSA variable, as the SCC search found them.
    pub usages: &'s zend_ssa::VarUsages<'s>,
    /// The op_array's calls whose function is known, when the call graph resolves calls
    /// (`ctx.call_graph`).
    pub calls: std::borrow::Cow<'s, [zend_call_graph::CallSite]>,
    /// Per op: the resolved call site whose DO_* it is (index into `calls`).
    pub call_at_do: &'s [Option<u32>],
    /// Working arrays that do not outlive the inference.
    pub scratch: &'s Bump,
    /// The class the op_array's scope names (`op_array->scope`), looked up once.
    pub scope_ce: Option<&'s zend_ir::ClassEntry>,
    /// A type shrank during the worklist iteration: PHP warns and gives up.
    pub failed: bool,
}

impl State<'_> {
    /// The resolved call whose `DO_*` is op `line`.
    pub fn call_at_do(&self, line: usize) -> Option<&zend_call_graph::CallSite> {
        self.call_at_do[line].map(|k| &self.calls[k as usize])
    }

    pub fn literal(&self, o: Operand) -> Option<&Literal> {
        match o {
            Operand::Const(l) => self.op_array.literals.get(l.index()),
            _ => None,
        }
    }

    /// `get_ssa_var_info`.
    pub fn var_type(&self, v: Option<zend_ssa::SsaVar>) -> u32 {
        match v {
            Some(v) => self.vars[v.index()].type_,
            None => mb::UNDEF | mb::RC1 | mb::RCN | mb::REF | mb::UNKNOWN,
        }
    }

    /// `_ssa_op1_info` and friends: a constant's type, or the used SSA variable's.
    pub fn operand_info(&self, o: Operand, use_: Option<zend_ssa::SsaVar>) -> u32 {
        match self.literal(o) {
            Some(lit) => const_type(lit),
            None => self.var_type(use_),
        }
    }

    /// `OPn_HAS_RANGE`, `OPn_MIN_RANGE`... as one range (`None`: no range).
    pub fn operand_range(&self, o: Operand, use_: Option<zend_ssa::SsaVar>) -> Option<SsaRange> {
        match o {
            Operand::Const(_) => match self.literal(o) {
                Some(Literal::Long(v)) => Some(SsaRange {
                    min: *v,
                    max: *v,
                    underflow: false,
                    overflow: false,
                }),
                _ => None,
            },
            Operand::Unused(_) | Operand::JmpAddr(_) => None,
            _ => {
                let v = use_?;
                let info = &self.vars[v.index()];
                info.has_range.then_some(info.range)
            }
        }
    }

    /// `FOR_EACH_VAR_USAGE`: variables defined by the ops and phis using `var`.
    pub fn usages(&self, var: usize, mut f: impl FnMut(usize)) {
        for u in &self.usages[var] {
            f(u.index());
        }
    }
}

/// `_const_op_type`: the type of a literal operand.
#[inline]
pub fn const_type(lit: &Literal) -> u32 {
    match lit {
        Literal::Ast(_) => mb::RC1 | mb::RCN | mb::ANY | mb::ARRAY_KEY_ANY | mb::ARRAY_OF_ANY,
        Literal::Array(items) => array_const_type(items),
        Literal::String(_) => mb::STRING | mb::RCN,
        other => 1 << other.type_code(),
    }
}

/// [`const_type`] of a literal array, out of line: the scalars are a load and a shift
/// where the operands are read, and a call there spilled the caller's registers.
#[inline(never)]
fn array_const_type(items: &[(zend_ir::ArrayKey, Literal)]) -> u32 {
    // Literal arrays are immutable: not refcounted.
    let mut tmp = mb::ARRAY | mb::RCN;
    if items.is_empty() {
        tmp |= mb::ARRAY_EMPTY;
    } else {
        let packed = literal_array_is_packed(items);
        for (k, v) in items {
            if !packed {
                tmp |= match k {
                    zend_ir::ArrayKey::Str(_) => mb::ARRAY_STRING_HASH,
                    zend_ir::ArrayKey::Long(_) => mb::ARRAY_NUMERIC_HASH,
                };
            }
            tmp |= 1 << (v.type_code() as u32 + mb::SHIFT);
        }
        if packed {
            tmp |= mb::ARRAY_PACKED;
        }
    }
    tmp
}

/// Whether a compile-time array ends up packed: `HT_IS_PACKED` after the compiler
/// inserted its elements in order into a table sized for them (zend_hash.c rules).
fn literal_array_is_packed(items: &[(zend_ir::ArrayKey, Literal)]) -> bool {
    let mut size: u64 = (items.len() as u64).next_power_of_two().max(8);
    let mut used: u64 = 0;
    for (n, (k, _)) in items.iter().enumerate() {
        let zend_ir::ArrayKey::Long(h) = k else {
            return false;
        };
        if *h < 0 {
            return false;
        }
        let h = *h as u64;
        if n == 0 {
            if h >= size {
                return false;
            }
        } else if h < used {
            return false;
        } else if h >= size {
            if (h >> 1) < size && (size >> 1) < n as u64 {
                size += size;
            } else {
                return false;
            }
        }
        used = h + 1;
    }
    true
}

/// `zend_ssa_inference` for one op_array: ranges, then types, then the return info.
/// `func_index` is the op_array's index in [`ScriptInfo::op_arrays`]; `returns` holds
/// the return infos of the functions analysed so far (PHP's "order of functions matters").
///
/// Inference iterates the SSA graph's strongly connected components: PHP computes them
/// (`find_false_dependencies`, then `find_sccs`) before it infers. When `ssa` has none yet
/// (`ssa.sccs == 0` with variables), they are computed here on a copy, so the result is
/// PHP's either way; call both on `ssa` first to avoid the copy.
pub fn infer(
    op_array: &OpArray,
    func_index: Option<usize>,
    cfg: &Cfg,
    ssa: &Ssa,
    ctx: &Context,
    returns: &[Option<ReturnInfo>],
) -> Inference {
    let with_sccs;
    let ssa = if ssa.sccs == 0 && !ssa.vars.is_empty() {
        let mut copy = ssa.clone();
        copy.find_false_dependencies(op_array);
        copy.find_sccs(op_array);
        with_sccs = copy;
        &with_sccs
    } else {
        ssa
    };
    let scratch = Bump::new();
    let phi_uses = ssa.all_phi_uses(&scratch);
    let usages = ssa.var_usages_in(op_array, &phi_uses, &scratch);
    infer_in(
        op_array, func_index, cfg, ssa, ctx, returns, &phi_uses, &usages, &scratch,
    )
}

/// [`infer`] on an SSA form whose SCCs are computed, given its phi uses and its variables'
/// usages ([`Ssa::all_phi_uses`], [`Ssa::var_usages_in`], which the SCC search needs too),
/// with the working arrays in `scratch` (an analysis reuses one arena for every op_array).
#[allow(clippy::too_many_arguments)]
pub fn infer_in(
    op_array: &OpArray,
    func_index: Option<usize>,
    cfg: &Cfg,
    ssa: &Ssa,
    ctx: &Context,
    returns: &[Option<ReturnInfo>],
    phi_uses: &zend_ssa::PhiUses<'_>,
    usages: &zend_ssa::VarUsages<'_>,
    scratch: &Bump,
) -> Inference {
    let nvars = ssa.vars.len();
    let last_var = op_array.last_var() as usize;
    let mut vars = vec![VarInfo::default(); nvars];
    for (i, v) in vars.iter_mut().enumerate().take(last_var.min(nvars)) {
        if op_array.function_name.is_none() {
            v.type_ = mb::UNDEF | mb::RC1 | mb::RCN | mb::REF | mb::UNKNOWN;
        } else {
            v.type_ = mb::UNDEF;
            if ssa.vars[i].alias != zend_ssa::Alias::NoAlias {
                v.type_ |= types::alias_types(ssa.vars[i].alias);
            }
        }
    }
    let call_at_do = scratch.alloc_slice_fill_copy(op_array.opcodes.len(), None);
    let calls = match func_index.and_then(|i| ctx.info.calls.get(i)) {
        _ if !ctx.call_graph => std::borrow::Cow::Borrowed(&[][..]),
        Some(sites) => std::borrow::Cow::Borrowed(sites.as_slice()),
        None => std::borrow::Cow::Owned(zend_call_graph::resolved_call_sites(ctx.info, op_array)),
    };
    for (k, site) in calls.iter().enumerate() {
        if let Some(c) = site.call {
            call_at_do[c.index()] = Some(k as u32);
        }
    }
    let mut st = State {
        op_array,
        cfg,
        ssa,
        ctx,
        func_index,
        returns,
        vars,
        phi_uses,
        usages,
        calls,
        call_at_do,
        scratch,
        scope_ce: op_array
            .scope
            .as_ref()
            .and_then(|s| ctx.script_class(s.as_bytes())),
        failed: false,
    };
    types::mark_cv_references(&mut st);
    range::infer_ranges(&mut st);
    types::infer_types(&mut st);
    let return_info = if ctx.call_graph && func_index.is_some() {
        Some(types::func_return_info(&st))
    } else {
        None
    };
    Inference {
        vars: st.vars,
        return_info,
        failed: st.failed,
    }
}
