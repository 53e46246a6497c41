//! The three-way cross-check: pruned Cytron, Braun after trivial-phi removal, and PHP-style
//! SSA (`zend_ssa::Ssa`) must give every use the same reaching definition and have the
//! same phis, up to renaming.
//!
//! Every value is named canonically ([`Canon`]): a definition by (op, variable), a phi by
//! (block, variable), a CV's entry value by the variable. PHP's form is normalised first:
//! - a pi is a copy: its result stands for its source (recursively);
//! - phis that are trivial once pis are copies (all sources, other than the phi itself,
//!   one value) stand for that value: PHP places a phi where a pi and the unconstrained
//!   value merge, and at irreducible loop headers for every live variable. They are
//!   counted ([`Outcome::php_trivial_phis`]), not reported.
//!
//! The same [`normalize`] runs on the Cytron and Braun forms (counted too): on irreducible
//! control flow Braun's basic algorithm leaves redundant SCCs of phis (section 3.2 of the
//! paper), as PHP's explicit phis at irreducible loop headers are; pruned Cytron has none.
//!
//! Differences of PHP's builder, and how the check treats them (measured on fixtures/php
//! and the Debian corpus: 0 disagreements on 1,200 and 9,084 op_arrays):
//! - PHP builds no SSA for op_arrays with try/catch or indirect variable access (and
//!   above 4M blocks x variables): those are compared Cytron against Braun only. PHP's
//!   dominator tree leaves blocks reached from a catch block without a dominator, so
//!   [`crate::cytron`] computes its own dominator forest.
//! - Pis: copies. Phis merging a pi with its own source (placed explicitly by PHP) become
//!   trivial: 87 on fixtures, 128 on Debian.
//! - FE_FETCH into a CV does not assign on its exit edge in PHP's renaming: both textbook
//!   builders model it ([`crate::OpEffects::kept_on_exit`]).
//! - Braun leaves redundant phi SCCs only where loops are also entered from a catch
//!   block (irreducible once exception entries are roots): 107 phis on fixtures, 194 on
//!   Debian, none elsewhere.
//!
//! An OP_DATA's definition belongs to the op before it; a use is looked up in PHP's form
//! in the first slot (op1, op2, result, OP_DATA op1) holding the variable.

use crate::{braun, cytron, OpEffects, SsaForm, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use zend_cfg::{BlockId, Cfg};
use zend_dfg::Dfg;
use zend_ir::opcode::ZEND_OP_DATA;
use zend_ir::OpArray;
use zend_ssa::{Ssa, SsaVar};

/// A value named independently of any construction's numbering.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Canon {
    Undef,
    Entry(u32),
    Def { op: u32, var: u32 },
    Phi { block: u32, var: u32 },
}

impl fmt::Display for Canon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Canon::Undef => write!(f, "undef"),
            Canon::Entry(v) => write!(f, "entry(X{v})"),
            Canon::Def { op, var } => write!(f, "def(op {op}, X{var})"),
            Canon::Phi { block, var } => write!(f, "phi(BB{block}, X{var})"),
        }
    }
}

/// One disagreement between the forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub function: String,
    pub block: u32,
    pub var: String,
    /// `use by op N`, `phi`.
    pub what: String,
    pub cytron: String,
    pub braun: String,
    /// `None` when PHP builds no SSA form for the op_array.
    pub php: Option<String>,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: BB{} {} ({}): cytron {} / braun {}",
            self.function, self.block, self.var, self.what, self.cytron, self.braun
        )?;
        if let Some(php) = &self.php {
            write!(f, " / php {php}")?;
        }
        Ok(())
    }
}

/// The result of checking one op_array.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub disagreements: Vec<Disagreement>,
    /// PHP phis that are trivial once pis are copies, or in a redundant SCC.
    pub php_trivial_phis: usize,
    /// Braun phis in redundant SCCs (irreducible control flow).
    pub braun_redundant_phis: usize,
    /// Pruned Cytron phis the normalisation removed (none expected).
    pub cytron_redundant_phis: usize,
    pub uses: usize,
    pub phis: usize,
}

type Phis = BTreeMap<(u32, u32), Vec<Canon>>;
type Replaced = HashMap<(u32, u32), Canon>;

/// What `c` stands for once the phis in `replaced` are gone.
fn resolve(replaced: &Replaced, mut c: Canon) -> Canon {
    let mut steps = 0;
    while let Canon::Phi { block, var } = c {
        match replaced.get(&(block, var)) {
            Some(&next) if steps <= replaced.len() => {
                c = next;
                steps += 1;
            }
            _ => break,
        }
    }
    c
}

/// Removes trivial phis (every source other than the phi itself one value) to a fixpoint,
/// then redundant SCCs of phis (Braun et al. 2013, section 3.2, Algorithm 5: an SCC of
/// phis with one value from outside stands for that value; else its inner phis are
/// examined again). Returns the remaining phis, sources resolved, and what each removed
/// phi stands for.
pub fn normalize(phis: Phis) -> (Phis, Replaced) {
    let mut replaced: Replaced = HashMap::new();
    loop {
        let mut changed = false;
        for (&(block, var), sources) in &phis {
            if replaced.contains_key(&(block, var)) {
                continue;
            }
            let me = Canon::Phi { block, var };
            let mut same = None;
            let mut trivial = true;
            for &s in sources {
                let s = resolve(&replaced, s);
                if s == me || Some(s) == same {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(s);
            }
            if trivial {
                replaced.insert((block, var), same.unwrap_or(Canon::Undef));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Redundant SCCs.
    let mut work: Vec<Vec<(u32, u32)>> = vec![phis
        .keys()
        .copied()
        .filter(|k| !replaced.contains_key(k))
        .collect()];
    while let Some(set) = work.pop() {
        for scc in phi_sccs(&phis, &replaced, &set) {
            let members: BTreeSet<(u32, u32)> = scc.iter().copied().collect();
            let mut outer: BTreeSet<Canon> = BTreeSet::new();
            let mut inner = Vec::new();
            for &k in &scc {
                let mut is_inner = true;
                for &s in &phis[&k] {
                    let s = resolve(&replaced, s);
                    match s {
                        Canon::Phi { block, var } if members.contains(&(block, var)) => {}
                        other => {
                            outer.insert(other);
                            is_inner = false;
                        }
                    }
                }
                if is_inner {
                    inner.push(k);
                }
            }
            if outer.len() == 1 {
                let v = *outer.iter().next().expect("one");
                for k in scc {
                    replaced.insert(k, v);
                }
            } else if outer.len() > 1 && !inner.is_empty() && inner.len() < scc.len() {
                work.push(inner);
            }
        }
    }
    let phis = phis
        .into_iter()
        .filter(|(k, _)| !replaced.contains_key(k))
        .map(|(k, sources)| {
            (
                k,
                sources.into_iter().map(|s| resolve(&replaced, s)).collect(),
            )
        })
        .collect();
    (phis, replaced)
}

/// Tarjan's SCCs of the phis in `set` (edges: phi to the phis among its resolved
/// sources), iterative, in emission order (an SCC after the SCCs it uses).
fn phi_sccs(phis: &Phis, replaced: &Replaced, set: &[(u32, u32)]) -> Vec<Vec<(u32, u32)>> {
    let index_of: HashMap<(u32, u32), usize> =
        set.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let succ: Vec<Vec<usize>> = set
        .iter()
        .map(|k| {
            phis[k]
                .iter()
                .filter_map(|&s| match resolve(replaced, s) {
                    Canon::Phi { block, var } => index_of.get(&(block, var)).copied(),
                    _ => None,
                })
                .collect()
        })
        .collect();
    zend_cfg::scc::strongly_connected_components(&succ)
        .into_iter()
        .map(|scc| scc.into_iter().map(|w| set[w]).collect())
        .collect()
}

/// A form's uses and phis, canonical and [`normalize`]d; and how many phis that removed.
fn canon_form(form: &SsaForm) -> (Vec<(u32, u32, Canon)>, Phis, usize) {
    let c = |v: Value| match v {
        Value::Undef => Canon::Undef,
        Value::Entry(v) => Canon::Entry(v),
        Value::Def { op, var } => Canon::Def { op, var },
        Value::Phi(p) => {
            let phi = &form.phis[p.0 as usize];
            Canon::Phi {
                block: phi.block.as_u32(),
                var: phi.var,
            }
        }
    };
    let phis = form
        .phis
        .iter()
        .map(|p| {
            (
                (p.block.as_u32(), p.var),
                p.sources.iter().map(|&s| c(s)).collect(),
            )
        })
        .collect();
    let (phis, replaced) = normalize(phis);
    let mut uses: Vec<(u32, u32, Canon)> = form
        .uses
        .iter()
        .map(|u| (u.op, u.var, resolve(&replaced, c(u.value))))
        .collect();
    uses.sort();
    (uses, phis, replaced.len())
}

/// PHP's form, normalised: canonical value of each SSA variable, phis, trivial count.
struct PhpForm {
    canon: Vec<Canon>,
    phis: Phis,
    trivial: usize,
}

fn php_form(op_array: &OpArray, ssa: &Ssa) -> PhpForm {
    let raw = |mut s: Option<SsaVar>| -> Canon {
        let mut steps = 0;
        loop {
            let Some(v) = s else { return Canon::Undef };
            let var = &ssa.vars[v.index()];
            if let Some(p) = var.definition_phi {
                let phi = ssa.phi(p);
                if phi.is_pi() && steps <= ssa.phis.len() {
                    s = phi.sources.first().copied().flatten();
                    steps += 1;
                    continue;
                }
                return Canon::Phi {
                    block: phi.block.as_u32(),
                    var: phi.var,
                };
            }
            if let Some(op) = var.definition {
                let mut op = op.as_u32();
                if op > 0 && op_array.opcodes[op as usize].opcode == ZEND_OP_DATA {
                    op -= 1;
                }
                return Canon::Def { op, var: var.var };
            }
            return if v.as_u32() < op_array.last_var() {
                Canon::Entry(var.var)
            } else {
                Canon::Undef
            };
        }
    };
    let mut phis: Phis = BTreeMap::new();
    for phi in ssa.phis.iter().filter(|p| !p.is_pi()) {
        phis.insert(
            (phi.block.as_u32(), phi.var),
            phi.sources.iter().map(|&s| raw(s)).collect(),
        );
    }
    let (phis, replaced) = normalize(phis);
    let trivial = replaced.len();
    let canon = (0..ssa.vars.len())
        .map(|i| resolve(&replaced, raw(Some(SsaVar::new(i as u32)))))
        .collect();
    PhpForm {
        canon,
        phis,
        trivial,
    }
}

/// PHP's SSA variable for the use of `var` by op `k`.
fn php_use(op_array: &OpArray, ssa: &Ssa, k: usize, var: u32) -> Option<SsaVar> {
    let op = &op_array.opcodes[k];
    let sop = &ssa.ops[k];
    let is = |o: zend_ir::Operand| o.var().map(|v| v.as_u32()) == Some(var);
    if is(op.op1) {
        sop.op1_use
    } else if is(op.op2) {
        sop.op2_use
    } else if is(op.result) {
        sop.result_use
    } else {
        match op_array.opcodes.get(k + 1) {
            Some(next) if next.opcode == ZEND_OP_DATA && is(next.op1) => ssa.ops[k + 1].op1_use,
            _ => None,
        }
    }
}

/// Builds pruned Cytron and Braun for `op_array` and compares them with each other and,
/// when given, with PHP's SSA form (built on the same `cfg`, `dfg` from [`Dfg::build`]).
pub fn check(op_array: &OpArray, cfg: &Cfg, dfg: &Dfg, php: Option<&Ssa>) -> Outcome {
    let cytron = cytron::build(op_array, cfg, dfg, cytron::Pruning::Pruned);
    let braun = braun::build(op_array, cfg);
    compare_forms(op_array, cfg, &cytron, &braun, php)
}

/// [`check`] on already built forms.
pub fn compare_forms(
    op_array: &OpArray,
    cfg: &Cfg,
    cytron: &SsaForm,
    braun: &SsaForm,
    php: Option<&Ssa>,
) -> Outcome {
    let function = op_array.display_name();
    let name = |v: u32| crate::var_name(op_array, v);
    let (c_uses, c_phis, c_removed) = canon_form(cytron);
    let (b_uses, b_phis, b_removed) = canon_form(braun);
    let php = php.map(|ssa| (ssa, php_form(op_array, ssa)));
    let mut out = Outcome {
        uses: c_uses.len(),
        phis: c_phis.len(),
        php_trivial_phis: php.as_ref().map_or(0, |(_, f)| f.trivial),
        braun_redundant_phis: b_removed,
        cytron_redundant_phis: c_removed,
        ..Default::default()
    };
    let show = |c: Option<&Canon>| c.map_or("none".to_string(), |c| c.to_string());
    // Uses: the same (op, var) list by construction; compare value by value.
    let mut by_use: BTreeMap<(u32, u32), [Option<Canon>; 3]> = BTreeMap::new();
    for &(op, var, c) in &c_uses {
        by_use.entry((op, var)).or_default()[0] = Some(c);
    }
    for &(op, var, c) in &b_uses {
        by_use.entry((op, var)).or_default()[1] = Some(c);
    }
    for (&(op, var), vals) in &mut by_use {
        if let Some((ssa, form)) = &php {
            let p = php_use(op_array, ssa, op as usize, var)
                .map_or(Canon::Undef, |s| form.canon[s.index()]);
            vals[2] = Some(p);
        }
        let agree = vals[0] == vals[1] && (php.is_none() || vals[0] == vals[2]);
        if !agree {
            out.disagreements.push(Disagreement {
                function: function.clone(),
                block: cfg.map[op as usize].as_u32(),
                var: name(var),
                what: format!("use by op {op}"),
                cytron: show(vals[0].as_ref()),
                braun: show(vals[1].as_ref()),
                php: php.as_ref().map(|_| show(vals[2].as_ref())),
            });
        }
    }
    // Phis.
    let mut keys: BTreeSet<(u32, u32)> = c_phis.keys().copied().collect();
    keys.extend(b_phis.keys().copied());
    if let Some((_, form)) = &php {
        keys.extend(form.phis.keys().copied());
    }
    let show_phi = |p: Option<&Vec<Canon>>| match p {
        None => "no phi".to_string(),
        Some(s) => format!(
            "phi({})",
            s.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    for key in keys {
        let c = c_phis.get(&key);
        let b = b_phis.get(&key);
        let p = php.as_ref().map(|(_, f)| f.phis.get(&key));
        let agree = c == b && p.map_or(true, |p| p == c);
        if !agree {
            out.disagreements.push(Disagreement {
                function: function.clone(),
                block: key.0,
                var: name(key.1),
                what: "phi".to_string(),
                cytron: show_phi(c),
                braun: show_phi(b),
                php: p.map(show_phi),
            });
        }
    }
    out
}

/// Block of op `op` (for reports).
pub fn block_of(cfg: &Cfg, op: u32) -> BlockId {
    cfg.map[op as usize]
}

/// Effects of every reachable op, for callers that want the classification.
pub fn effects(op_array: &OpArray, cfg: &Cfg) -> Vec<OpEffects> {
    cytron::all_effects(op_array, cfg).0
}
