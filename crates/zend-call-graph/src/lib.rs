//! The call graph of a PHP 8.2 script, as Zend/Optimizer/zend_call_graph.c builds it.
//!
//! [`ScriptInfo`] lists the script's op_arrays in `zend_foreach_op_array` order (main, then
//! functions, then methods, each followed by its dynamic function definitions) and holds
//! the call-graph facts the DFA dumps print: recursion flags (`ZEND_FUNC_RECURSIVE*`) and
//! the return type from the signature. [`resolved_call_sites`] pairs every `INIT_*` of a
//! known function with its `DO_*` (`zend_analyze_calls`), [`CallGraph`] links callers and callees across the whole script
//! and [`CallGraph::call_map`] gives, per op, the call it belongs to (`zend_build_call_map`).

pub mod script_index;
mod script_info;

pub use script_info::*;

use smallvec::SmallVec;
use zend_ir::opcode::*;
use zend_ir::{OpArray, OpNum};

/// Index of an op_array in [`ScriptInfo::op_arrays`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

impl FuncId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A `zend_call_info`: one call in a caller, from its `INIT_*` to its `DO_*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The `INIT_*` (or `NEW`) op.
    pub init: OpNum,
    /// The `DO_*` op that performs the call (`None` if the op_array ends first).
    pub call: Option<OpNum>,
    /// The `SEND_*` ops, by argument position as they appear (inline up to four: most
    /// calls need no allocation).
    pub args: SmallVec<[OpNum; 4]>,
    /// The callee when it is one of the script's op_arrays.
    pub callee: Option<FuncId>,
    /// Whether the call resolves to a known function at all (user or internal).
    pub resolved: bool,
    /// The call may reach an overriding method instead (`is_prototype`).
    pub is_prototype: bool,
}

/// What an op does in a call sequence (`zend_analyze_calls`' switch), looked up in one
/// table: the call sites are found in a scan of every op of every op_array, and a byte
/// load per op is cheaper than three chains of opcode comparisons.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CallRole {
    Other,
    /// Starts a call whose function may be known: `INIT_FCALL`, `INIT_METHOD_CALL`,
    /// `INIT_STATIC_METHOD_CALL`.
    InitKnown,
    /// Starts a call whose function is never known: `INIT_FCALL_BY_NAME`, `NEW`, ...
    InitUnknown,
    /// Performs the innermost open call: `DO_*`, `CALLABLE_CONVERT`.
    Do,
    /// Passes an argument to the innermost open call: `SEND_*`.
    Send,
}

static CALL_ROLES: [CallRole; 256] = {
    let roles = [CallRole::Other; 256];
    let known = [
        ZEND_INIT_FCALL,
        ZEND_INIT_METHOD_CALL,
        ZEND_INIT_STATIC_METHOD_CALL,
    ];
    let unknown = [
        ZEND_INIT_FCALL_BY_NAME,
        ZEND_INIT_NS_FCALL_BY_NAME,
        ZEND_INIT_DYNAMIC_CALL,
        ZEND_NEW,
        ZEND_INIT_USER_CALL,
    ];
    let dos = [
        ZEND_DO_FCALL,
        ZEND_DO_ICALL,
        ZEND_DO_UCALL,
        ZEND_DO_FCALL_BY_NAME,
        ZEND_CALLABLE_CONVERT,
    ];
    let sends = [
        ZEND_SEND_VAL,
        ZEND_SEND_VAL_EX,
        ZEND_SEND_VAR,
        ZEND_SEND_VAR_EX,
        ZEND_SEND_REF,
        ZEND_SEND_VAR_NO_REF,
        ZEND_SEND_VAR_NO_REF_EX,
        ZEND_SEND_FUNC_ARG,
        ZEND_SEND_USER,
        ZEND_SEND_ARRAY,
        ZEND_SEND_UNPACK,
    ];
    let roles = with_role(roles, &known, CallRole::InitKnown);
    let roles = with_role(roles, &unknown, CallRole::InitUnknown);
    let roles = with_role(roles, &dos, CallRole::Do);
    with_role(roles, &sends, CallRole::Send)
};

/// `roles` with each of `ops` given `role` (for [`CALL_ROLES`], built at compile time).
const fn with_role(mut roles: [CallRole; 256], ops: &[Opcode], role: CallRole) -> [CallRole; 256] {
    let mut i = 0;
    while i < ops.len() {
        roles[ops[i].0 as usize] = role;
        i += 1;
    }
    roles
}

fn call_role(op: Opcode) -> CallRole {
    CALL_ROLES[op.0 as usize]
}

/// Every call of `op_array`, in the order of their `INIT_*` ops, those whose function is
/// not known included (`resolved: false`): what tools show of an op_array's calls. Calls
/// nest: a `DO_*` closes the innermost open `INIT_*`.
pub fn call_sites(info: &ScriptInfo, op_array: &OpArray) -> Vec<CallSite> {
    let mut buffers = CallSiteBuffers::default();
    find_calls(info, op_array, &mut buffers, true);
    std::mem::take(&mut buffers.sites)
}

/// The calls of `op_array` whose function is known (`zend_analyze_calls`: PHP keeps a
/// `zend_call_info` for those only), in the order of their `INIT_*` ops.
pub fn resolved_call_sites(info: &ScriptInfo, op_array: &OpArray) -> Vec<CallSite> {
    let mut buffers = CallSiteBuffers::default();
    find_calls(info, op_array, &mut buffers, false);
    std::mem::take(&mut buffers.sites)
}

/// The working vectors of [`resolved_call_sites_with`]: a caller finding the calls of many
/// op_arrays passes the same ones, which grow once.
#[derive(Default)]
pub struct CallSiteBuffers {
    sites: Vec<CallSite>,
    /// The calls opened and not yet closed, innermost last (positions in `sites`, or
    /// [`NO_SITE`] for a call not recorded).
    open: Vec<u32>,
}

/// An open call [`find_calls`] does not record.
const NO_SITE: u32 = u32::MAX;

/// [`resolved_call_sites`], found in `buffers` (emptied first) and moved out into a list
/// of the exact size, instead of counting each op_array's calls in a pass of its own.
#[allow(clippy::drain_collect)]
pub fn resolved_call_sites_with(
    info: &ScriptInfo,
    op_array: &OpArray,
    buffers: &mut CallSiteBuffers,
) -> Vec<CallSite> {
    find_calls(info, op_array, buffers, false);
    // Moved out, not taken (`mem::take`): the buffer keeps its room for the next op_array.
    buffers.sites.drain(..).collect()
}

/// The calls of `op_array` into `buffers.sites`: every call when `all`, else those whose
/// function is known.
#[inline(always)]
fn find_calls(info: &ScriptInfo, op_array: &OpArray, buffers: &mut CallSiteBuffers, all: bool) {
    let CallSiteBuffers { sites, open } = buffers;
    sites.clear();
    open.clear();
    for (n, op) in op_array.opcodes.iter().enumerate() {
        let role = call_role(op.opcode);
        // Most ops take no part in a call: one well-predicted test skips them, where the
        // dispatch below is an indirect jump.
        if role == CallRole::Other {
            continue;
        }
        let n = OpNum::new(n as u32);
        match role {
            CallRole::Other => {}
            CallRole::InitKnown | CallRole::InitUnknown => {
                let resolved = if role == CallRole::InitKnown {
                    info.called_func(op_array, op)
                } else {
                    None
                };
                if resolved.is_none() && !all {
                    open.push(NO_SITE);
                    continue;
                }
                open.push(sites.len() as u32);
                sites.push(CallSite {
                    init: n,
                    call: None,
                    args: SmallVec::new(),
                    callee: resolved.and_then(|(c, _)| c).map(|c| FuncId(c as u32)),
                    resolved: resolved.is_some(),
                    is_prototype: resolved.is_some_and(|(_, p)| p),
                });
            }
            CallRole::Do => {
                if let Some(s) = open.pop().filter(|&s| s != NO_SITE) {
                    sites[s as usize].call = Some(n);
                }
            }
            CallRole::Send => {
                if let Some(&s) = open.last().filter(|&&s| s != NO_SITE) {
                    sites[s as usize].args.push(n);
                }
            }
        }
    }
}

/// Callers and callees of every op_array of a script.
pub struct CallGraph {
    /// Per op_array, its calls whose function is known (the script info's, shared).
    pub calls: std::sync::Arc<Vec<Vec<CallSite>>>,
    /// Per op_array, the (caller, call site index) pairs calling it.
    pub callers: Vec<Vec<(FuncId, usize)>>,
    /// Per op_array, `ZEND_FUNC_RECURSIVE*` flags.
    pub recursion: Vec<u32>,
}

impl CallGraph {
    /// `zend_build_call_graph` + `zend_analyze_call_graph`.
    pub fn build(info: &ScriptInfo) -> CallGraph {
        let calls = std::sync::Arc::clone(&info.calls);
        let mut callers = vec![Vec::new(); calls.len()];
        for (caller, sites) in calls.iter().enumerate() {
            for (k, site) in sites.iter().enumerate() {
                if let Some(callee) = site.callee {
                    callers[callee.index()].push((FuncId(caller as u32), k));
                }
            }
        }
        CallGraph {
            calls,
            callers,
            recursion: info.recursion.clone(),
        }
    }

    /// The callees of op_array `f`, in call order.
    pub fn callees(&self, f: FuncId) -> impl Iterator<Item = FuncId> + '_ {
        self.calls[f.index()].iter().filter_map(|s| s.callee)
    }

    /// `zend_build_call_map`: for each op of op_array `f`, the index of the call site whose
    /// `INIT_*`..`DO_*` span (its init, sends and do) it belongs to.
    pub fn call_map(&self, f: FuncId, op_count: usize) -> Vec<Option<usize>> {
        call_map(&self.calls[f.index()], op_count)
    }
}

/// For each of `op_count` ops, the index in `sites` of the call whose `INIT_*`..`DO_*` span
/// (its init, sends and do) it belongs to.
pub fn call_map(sites: &[CallSite], op_count: usize) -> Vec<Option<usize>> {
    let mut map = vec![None; op_count];
    for (k, site) in sites.iter().enumerate() {
        map[site.init.index()] = Some(k);
        for a in &site.args {
            map[a.index()] = Some(k);
        }
        if let Some(c) = site.call {
            map[c.index()] = Some(k);
        }
    }
    map
}
