//! The optimization context (`zend_optimizer_ctx`): what a pass sees besides the op_array it
//! changes — the optimization and debug levels, the rest of the script, the constants pass 1
//! collected, and where dumps and the change log go.
//!
//! PHP's passes read the live script: a call to a function optimized earlier sees its
//! optimized op_array. The driver reproduces that by taking the op_array being optimized
//! out of the script for the duration of its passes; lookups that land on it answer with the
//! op_array the pass holds (see [`OptimizerCtx::function`]).

use hashbrown::HashMap;
use zend_call_graph::script_index::{class_position, ScriptIndex};
use zend_ir::{ClassEntry, Literal, OpArray, OpNum, PhpStr, Script};

use crate::php_bugs::PhpBugs;
use crate::provenance::{Change, ChangeKind};

/// A user function a lookup found: the op_array being optimized (taken out of the script,
/// so read where the pass holds it, as it is when read) or another of the script's.
#[derive(Clone, Copy, Debug)]
pub enum FuncRef<'s> {
    Current,
    Script(&'s OpArray),
}

impl<'s> FuncRef<'s> {
    /// The function, `current` being the op_array being optimized.
    #[inline]
    pub fn get<'a>(self, current: &'a OpArray) -> &'a OpArray
    where
        's: 'a,
    {
        match self {
            FuncRef::Current => current,
            FuncRef::Script(f) => f,
        }
    }
}

/// Where an op_array lives in a [`Script`]: its root and the path through nested
/// `dynamic_func_defs` (closures and run-time declared functions).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpArrayPath {
    pub root: Root,
    pub dynamic: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Root {
    Main,
    /// Index into `Script::function_table`.
    Function(u32),
    /// Indexes into `Script::class_table` and that class's `methods`.
    Method(u32, u32),
}

impl OpArrayPath {
    /// Every op_array of `script` in `zend_foreach_op_array` order: main, functions, then
    /// each class's own user methods (trait clones and abstract methods excluded; classes
    /// registered under an alias key skipped), each followed depth-first by its dynamic
    /// function definitions.
    pub fn all(script: &Script) -> Vec<OpArrayPath> {
        fn with_dynamic(root: Root, op_array: &OpArray, out: &mut Vec<OpArrayPath>) {
            out.push(OpArrayPath {
                root,
                dynamic: Vec::new(),
            });
            if op_array.dynamic_func_defs.is_empty() {
                return; // the common case: no stack to allocate
            }
            let mut stack: Vec<(Vec<u32>, &OpArray)> = op_array
                .dynamic_func_defs
                .iter()
                .enumerate()
                .rev()
                .map(|(i, def)| (vec![i as u32], &**def))
                .collect();
            while let Some((dynamic, op_array)) = stack.pop() {
                for (i, def) in op_array.dynamic_func_defs.iter().enumerate().rev() {
                    let mut path = dynamic.clone();
                    path.push(i as u32);
                    stack.push((path, def));
                }
                out.push(OpArrayPath { root, dynamic });
            }
        }
        // Room for every op_array without closures, the usual script.
        let room = 1 + script.function_table.len() + script.method_count();
        let mut out = Vec::with_capacity(room);
        with_dynamic(Root::Main, &script.main_op_array, &mut out);
        for (i, (_, func)) in script.function_table.iter().enumerate() {
            with_dynamic(Root::Function(i as u32), func, &mut out);
        }
        for (c, (key, ce)) in script.class_table.iter().enumerate() {
            if !is_primary_class_key(key, ce) {
                continue;
            }
            for (m, (_, method)) in ce.methods.iter().enumerate() {
                if is_own_user_method(ce, method) {
                    with_dynamic(Root::Method(c as u32, m as u32), method, &mut out);
                }
            }
        }
        out
    }

    pub fn get<'s>(&self, script: &'s Script) -> Option<&'s OpArray> {
        let mut op_array = match self.root {
            Root::Main => &script.main_op_array,
            Root::Function(f) => &script.function_table.get(f as usize)?.1,
            Root::Method(c, m) => {
                &script
                    .class_table
                    .get(c as usize)?
                    .1
                    .methods
                    .get(m as usize)?
                    .1
            }
        };
        for &d in &self.dynamic {
            op_array = op_array.dynamic_func_defs.get(d as usize)?;
        }
        Some(op_array)
    }

    pub fn get_mut<'s>(&self, script: &'s mut Script) -> Option<&'s mut OpArray> {
        self.slot_mut(script).map(|slot| &mut **slot)
    }

    /// The box holding the op_array in the script, which the driver swaps out and back.
    pub(crate) fn slot_mut<'s>(&self, script: &'s mut Script) -> Option<&'s mut Box<OpArray>> {
        let mut op_array = match self.root {
            Root::Main => &mut script.main_op_array,
            Root::Function(f) => &mut script.function_table.get_mut(f as usize)?.1,
            Root::Method(c, m) => {
                &mut script
                    .class_table
                    .get_mut(c as usize)?
                    .1
                    .methods
                    .get_mut(m as usize)?
                    .1
            }
        };
        for &d in &self.dynamic {
            op_array = op_array.dynamic_func_defs.get_mut(d as usize)?;
        }
        Some(op_array)
    }
}

/// A class registered under an alias key (`class_alias` at compile time) is visited once,
/// under its own name (`ce->refcount > 1 && !zend_string_equals_ci(key, ce->name)`).
pub(crate) fn is_primary_class_key(key: &PhpStr, ce: &ClassEntry) -> bool {
    ce.refcount <= 1 || key.0.eq_ignore_ascii_case(&ce.name.0)
}

/// A method `zend_foreach_op_array` visits: declared by this class, user code, not a trait
/// clone, not abstract.
pub(crate) fn is_own_user_method(ce: &ClassEntry, method: &OpArray) -> bool {
    method.scope.as_ref() == Some(&ce.name)
        && method.type_ == zend_ir::ZEND_USER_FUNCTION
        && method.fn_flags & (zend_ir::ZEND_ACC_ABSTRACT | zend_ir::ZEND_ACC_TRAIT_CLONE) == 0
}

/// Memory the passes reuse from one op_array to the next, and from one script to the next
/// when the caller keeps it ([`crate::optimize_script_in`]): once it has grown to the
/// largest op_array seen, optimizing allocates nothing for these passes. Dropping it frees
/// that memory.
#[derive(Default)]
pub struct Workspace {
    pub(crate) compact_literals: crate::compact_literals::Scratch,
    pub(crate) block_pass: crate::block_pass::Scratch,
    pub(crate) temp_vars: crate::optimize_temp_vars_5::Scratch,
    /// Working arrays of the pass running now (the block pass's CFG build, the worklists
    /// of SCCP and DCE), emptied as each starts.
    pub(crate) pass_arena: bumpalo::Bump,
    /// SCCP's lattice values, empty between op_arrays.
    pub(crate) sccp_values: Vec<crate::sccp::Value>,
    /// The call-graph DFA pass's working arrays while it analyses an op_array, emptied
    /// for each.
    pub(crate) analysis_arena: bumpalo::Bump,
    /// The vectors of the analyses the last scripts no longer need, for the next ones.
    pub(crate) analysis_pool: crate::analysis::AnalysisPool,
}

/// What outlives one op_array: the constants pass 1 collects from `define()` in the main
/// script, the debug dumps, the change log.
#[derive(Default)]
pub struct State {
    /// `ctx->constants`: persistent constants of this script, by name.
    pub constants: HashMap<PhpStr, Literal>,
    /// The debug dumps PHP would print to stderr, in order.
    pub dumps: Vec<u8>,
    /// The change log, when asked for.
    pub changes: Option<Vec<Change>>,
    /// Memory the passes reuse from one op_array to the next.
    pub(crate) work: Workspace,
    /// The script's function, class and method tables by name, for the lookups every call
    /// and class reference makes.
    pub(crate) index: ScriptIndex,
    /// Whether every op_array of the script passed `zend_cfg::check_operands` when
    /// optimizing began: their CFG builds then skip that check (the passes keep operands
    /// in range), where each build would repeat it.
    pub(crate) operands_checked: bool,
}

/// `zend_optimizer_ctx` for one op_array's passes.
pub struct OptimizerCtx<'s> {
    pub optimization_level: u32,
    pub debug_level: u32,
    /// The PHP 8.2 bugs to reproduce.
    pub php_bugs: PhpBugs,
    /// [`crate::Options::with_file_cache`].
    pub with_file_cache: bool,
    /// The script, with the op_array being optimized taken out of it.
    pub script: &'s Script,
    /// Where the op_array being optimized belongs in `script`.
    pub current: &'s OpArrayPath,
    pub state: &'s mut State,
    /// The pass running now, for the change log.
    pub pass: &'static str,
}

impl<'s> OptimizerCtx<'s> {
    /// Whether the level enables a `PASS_*` bit.
    pub fn enabled(&self, pass_bit: u32) -> bool {
        self.optimization_level & pass_bit != 0
    }

    /// Whether changes are being logged (so a pass can skip building explanations).
    pub fn logging(&self) -> bool {
        self.state.changes.is_some()
    }

    /// Logs a change to `op` of `op_array` (numbered as before the change). `why` is called
    /// only when the log is on.
    pub fn note(
        &mut self,
        op_array: &OpArray,
        op: OpNum,
        kind: ChangeKind,
        why: impl FnOnce() -> String,
    ) {
        if let Some(log) = &mut self.state.changes {
            log.push(Change {
                op_array: op_array.display_name(),
                pass: self.pass,
                op,
                kind,
                why: why(),
            });
        }
    }

    /// A function of the script by lowercased name (`zend_hash_find_ptr(&script->
    /// function_table, lcname)`). When it is the op_array being optimized, `current` is
    /// returned: PHP sees it as it is at this moment.
    pub fn function<'a>(&'a self, current: &'a OpArray, lcname: &[u8]) -> Option<&'a OpArray>
    where
        's: 'a,
    {
        self.function_ref(lcname).map(|f| f.get(current))
    }

    /// [`OptimizerCtx::function`], found but not yet read: it borrows neither the context
    /// nor the op_array being optimized, so a pass may keep it while it edits them.
    pub fn function_ref(&self, lcname: &[u8]) -> Option<FuncRef<'s>> {
        let index = self.state.index.function(self.script, lcname)?;
        if self.current.dynamic.is_empty() && self.current.root == Root::Function(index as u32) {
            return Some(FuncRef::Current);
        }
        Some(FuncRef::Script(&self.script.function_table[index].1))
    }

    /// A class of the script by lowercased name (the script's class table only).
    pub fn script_class(&self, lcname: &[u8]) -> Option<&'s ClassEntry> {
        self.state.index.class(self.script, lcname)
    }

    /// `zend_optimizer_get_class_entry`: a class of the script, an internal class, or the
    /// op_array's own scope.
    pub fn class_entry(&self, op_array: &OpArray, lcname: &[u8]) -> Option<ClassLookup<'s>> {
        if let Some(ce) = self.script_class(lcname) {
            return Some(ClassLookup::Script(ce));
        }
        if let Some(name) = zend_ir::internal_class(lcname) {
            return Some(ClassLookup::Internal(name));
        }
        let scope = op_array.scope.as_ref()?;
        if scope.as_bytes().eq_ignore_ascii_case(lcname) {
            return self.scope_class(scope).map(ClassLookup::Script);
        }
        None
    }

    /// The class entry the op_array being optimized belongs to, whose scope is `scope`
    /// (PHP's `op_array->scope`): its own class when it is a method (or a closure in one)
    /// of a class so named, which matters when several classes share the name; else the
    /// first class so named.
    pub fn scope_class(&self, scope: &PhpStr) -> Option<&'s ClassEntry> {
        if let Root::Method(c, _) = self.current.root {
            let ce = &self.script.class_table.get(c as usize)?.1;
            if ce.name.as_bytes().eq_ignore_ascii_case(scope.as_bytes()) {
                return Some(ce);
            }
        }
        self.state.index.scope(self.script, scope.as_bytes())
    }

    /// A method of `ce` by lowercased name; the op_array being optimized answers for itself
    /// (see [`OptimizerCtx::function_ref`]).
    pub fn method_ref(&self, ce: &'s ClassEntry, lcname: &[u8]) -> Option<FuncRef<'s>> {
        let class = class_position(self.script, ce);
        let m = match class {
            Some(c) => self.state.index.method(self.script, c, lcname)?,
            None => ce
                .methods
                .iter()
                .position(|(key, _)| key.as_bytes() == lcname)?,
        };
        if let (Root::Method(cc, cm), true) = (self.current.root, self.current.dynamic.is_empty()) {
            if class == Some(cc as usize) && cm as usize == m {
                return Some(FuncRef::Current);
            }
        }
        Some(FuncRef::Script(&ce.methods[m].1))
    }
}

/// A class the optimizer can see.
#[derive(Clone, Copy, Debug)]
pub enum ClassLookup<'s> {
    Script(&'s ClassEntry),
    /// An internal class, by its name.
    Internal(&'static str),
}
