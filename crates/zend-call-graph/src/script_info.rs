//! What OPcache's call graph knows about each op_array when the DFA pass dumps it
//! (zend_call_graph.c, zend_func_info.c): the recursion flags and the return type from the
//! signature, printed in the header of every DFA dump made with the call graph
//! (`optimization_level` with both PASS_6 and PASS_7), and the class lookup the optimizer
//! does (`zend_optimizer_get_class_entry`).
//!
//! The op_arrays of a script in `zend_foreach_op_array` order and what the call graph knows
//! of each.

use zend_ir::dump::{FuncInfoHeader, SsaRange};
use zend_ir::opcode::*;
use zend_ir::{ClassEntry, Literal, OpArray, Operand, Script, TypeNames, ZendType};

use crate::script_index::{class_position, ScriptIndex};

const ZEND_ACC_PUBLIC: u32 = 1 << 0;
const ZEND_ACC_PRIVATE: u32 = 1 << 2;
const ZEND_ACC_FINAL: u32 = 1 << 5;
const ZEND_ACC_CE_TRAIT: u32 = 1 << 1;
const ZEND_ACC_TRAIT_CLONE: u32 = 1 << 20;
const ZEND_ACC_HAS_RETURN_TYPE: u32 = 1 << 13;
const ZEND_ACC_RETURN_REFERENCE: u32 = 1 << 12;
const ZEND_ACC_GENERATOR: u32 = 1 << 24;
const ZEND_FETCH_CLASS_SELF: u32 = 1;
const ZEND_FETCH_CLASS_MASK: u32 = 0x0f;

const FUNC_RECURSIVE: u32 = 1 << 7;
const FUNC_RECURSIVE_DIRECTLY: u32 = 1 << 8;
const FUNC_RECURSIVE_INDIRECTLY: u32 = 1 << 9;

mod may_be {
    pub const REF: u32 = 1 << 10;
}

/// A class the optimizer can see: one from the script, or an internal one.
#[derive(Clone, Copy, Debug)]
pub enum ClassRef<'a> {
    Script(&'a ClassEntry),
    Internal(&'static str),
}

impl<'a> ClassRef<'a> {
    /// The declared name, borrowed for as long as the class is.
    pub fn name(&self) -> &'a [u8] {
        match self {
            ClassRef::Script(ce) => ce.name.as_bytes(),
            ClassRef::Internal(name) => name.as_bytes(),
        }
    }
}

/// A resolved callee that is not one of the call graph's op_arrays.
#[derive(Clone, Debug)]
pub enum CalledTarget<'a> {
    User(&'a OpArray),
    /// Internal class name and lowercased method name.
    InternalMethod(&'static str, Vec<u8>),
}

/// The op_arrays of a script in `zend_foreach_op_array` order, with the call-graph facts
/// the DFA dumps print.
pub struct ScriptInfo<'a> {
    pub script: &'a Script,
    pub op_arrays: Vec<&'a OpArray>,
    /// `ZEND_FUNC_RECURSIVE*` flags per op_array.
    pub recursion: Vec<u32>,
    /// The calls of each op_array whose function is known (`zend_analyze_calls`), found
    /// once for the call graph, the recursion flags, type inference and the DFA pass; the
    /// call graph shares them.
    pub calls: std::sync::Arc<Vec<Vec<crate::CallSite>>>,
    /// The op_array index of each function of `function_table`, by position.
    function_index: Vec<u32>,
    /// Per class of `class_table`, in one array (one allocation per script).
    class_links: Vec<ClassLinks>,
    /// The op_array index of each method (`NONE`: not one of the op_arrays: inherited,
    /// abstract, a trait clone, or of a class alias entry).
    method_index: Vec<u32>,
    /// The script's classes by key and by name, and each class's methods.
    index: ScriptIndex,
}

/// No op_array, or no class.
const NONE: u32 = u32::MAX;

/// The position in `script.class_table` of the first class named `name` in any case, in
/// table order.
fn first_class_named(index: &ScriptIndex, script: &Script, name: &[u8]) -> Option<usize> {
    index
        .scope(script, name)
        .and_then(|f| class_position(script, f))
}

/// Where a class's methods are in [`ScriptInfo::method_index`], and the classes sharing its
/// name in any case (a script declaring one class in several places has several).
#[derive(Clone, Copy)]
struct ClassLinks {
    method_start: u32,
    /// The first class of `class_table` with this name,
    first_same_name: u32,
    /// and the next after this one (`NONE`: none).
    next_same_name: u32,
}

impl<'a> ScriptInfo<'a> {
    pub fn new(script: &'a Script) -> Self {
        // Sized up front: the tables are built once per script and never grow after.
        let method_count = script.method_count();
        let mut op_arrays = Vec::with_capacity(1 + script.function_table.len() + method_count);
        let mut function_index = Vec::with_capacity(script.function_table.len());
        let classes = &script.class_table;
        let mut class_links: Vec<ClassLinks> = Vec::with_capacity(classes.len());
        let mut method_index = Vec::with_capacity(method_count);
        let index = ScriptIndex::new(script);
        #[inline(always)]
        fn with_dynamic<'a>(op_array: &'a OpArray, out: &mut Vec<&'a OpArray>) {
            out.push(op_array);
            // The common case: no dynamic function, no call.
            if !op_array.dynamic_func_defs.is_empty() {
                dynamic(op_array, out);
            }
        }
        fn dynamic<'a>(op_array: &'a OpArray, out: &mut Vec<&'a OpArray>) {
            // Depth-first with an explicit stack: closures nest arbitrarily deep.
            let mut stack: Vec<&OpArray> = op_array
                .dynamic_func_defs
                .iter()
                .rev()
                .map(|d| &**d)
                .collect();
            while let Some(op_array) = stack.pop() {
                out.push(op_array);
                stack.extend(op_array.dynamic_func_defs.iter().rev().map(|d| &**d));
            }
        }
        with_dynamic(&script.main_op_array, &mut op_arrays);
        for (_, func) in &script.function_table {
            function_index.push(op_arrays.len() as u32);
            with_dynamic(func, &mut op_arrays);
        }
        for (c, (key, ce)) in classes.iter().enumerate() {
            let first = first_class_named(&index, script, ce.name.as_bytes())
                .map_or(c as u32, |f| f as u32);
            class_links.push(ClassLinks {
                method_start: method_index.len() as u32,
                first_same_name: first,
                next_same_name: NONE,
            });
            if first != c as u32 {
                // Appended to the chain (rarely longer than two).
                let mut last = first as usize;
                while class_links[last].next_same_name != NONE {
                    last = class_links[last].next_same_name as usize;
                }
                class_links[last].next_same_name = c as u32;
            }
            if ce.refcount > 1 && !key.0.eq_ignore_ascii_case(&ce.name.0) {
                method_index.resize(method_index.len() + ce.methods.len(), NONE);
                continue;
            }
            for (_, method) in &ce.methods {
                if method.scope.as_ref() == Some(&ce.name)
                    && method.type_ == zend_ir::ZEND_USER_FUNCTION
                    && method.fn_flags & (zend_ir::ZEND_ACC_ABSTRACT | ZEND_ACC_TRAIT_CLONE) == 0
                {
                    method_index.push(op_arrays.len() as u32);
                    with_dynamic(method, &mut op_arrays);
                } else {
                    method_index.push(NONE);
                }
            }
        }
        let mut info = ScriptInfo {
            script,
            recursion: vec![0; op_arrays.len()],
            op_arrays,
            calls: Default::default(),
            function_index,
            class_links,
            method_index,
            index,
        };
        let mut buffers = crate::CallSiteBuffers::default();
        info.calls = std::sync::Arc::new(
            info.op_arrays
                .iter()
                .map(|op_array| crate::resolved_call_sites_with(&info, op_array, &mut buffers))
                .collect(),
        );
        info.analyze_recursion();
        info
    }

    /// `zend_optimizer_get_class_entry(script, op_array, lcname)`.
    pub fn class_entry(&self, op_array: Option<&OpArray>, lcname: &[u8]) -> Option<ClassRef<'a>> {
        if let Some(ce) = self.index.class(self.script, lcname) {
            return Some(ClassRef::Script(ce));
        }
        if let Some(name) = zend_ir::internal_class(lcname) {
            return Some(ClassRef::Internal(name));
        }
        let op_array = op_array?;
        if op_array
            .scope
            .as_ref()?
            .as_bytes()
            .eq_ignore_ascii_case(lcname)
        {
            return self.scope_class(op_array).map(ClassRef::Script);
        }
        None
    }

    /// The class entry `op_array` belongs to (`op_array->scope`).
    fn scope_class(&self, op_array: &OpArray) -> Option<&'a ClassEntry> {
        self.index.scope_of(self.script, op_array)
    }

    /// The first class of the script's class table named `name` (in any case), as a scan
    /// in table order would find it.
    pub fn script_class(&self, name: &[u8]) -> Option<&'a ClassEntry> {
        self.index.scope(self.script, name)
    }

    fn index_of_function(&self, key: &[u8]) -> Option<usize> {
        let f = self.index.function(self.script, key)?;
        Some(self.function_index[f] as usize)
    }

    /// The call-graph op_array a method of `ce` resolves to (its own or an inherited one).
    fn method(&self, ce: &'a ClassEntry, key: &[u8]) -> Option<(&'a OpArray, Option<usize>)> {
        let c = class_position(self.script, ce);
        let m = match c {
            Some(c) => self.index.method(self.script, c, key)?,
            None => ce.methods.iter().position(|(k, _)| k.as_bytes() == key)?,
        };
        let fbc = &ce.methods[m].1;
        let Some(scope) = &fbc.scope else {
            return Some((fbc, None));
        };
        // The method's op_array is that of the first class named as its scope declaring it
        // (PHP finds the op_arrays by scope name). Mostly the method is `ce`'s own: its
        // position is known already.
        let first = match c {
            Some(c) if scope == &ce.name => self.class_links[c].first_same_name,
            _ => first_class_named(&self.index, self.script, scope.as_bytes())
                .map_or(NONE, |f| f as u32),
        };
        let mut d = first;
        let index = loop {
            if d == NONE {
                break None;
            }
            let md = if Some(d as usize) == c {
                Some(m)
            } else {
                self.index.method(self.script, d as usize, key)
            };
            if let Some(md) = md {
                let i = self.method_index[self.class_links[d as usize].method_start as usize + md];
                if i != NONE {
                    break Some(i as usize);
                }
            }
            d = self.class_links[d as usize].next_same_name;
        };
        Some((fbc, index))
    }

    fn literal(op_array: &OpArray, operand: Operand, offset: usize) -> Option<&[u8]> {
        match operand {
            Operand::Const(lit) => match op_array.literals.get(lit.index() + offset)? {
                Literal::String(s) => Some(s.as_bytes()),
                _ => None,
            },
            _ => None,
        }
    }

    /// `zend_optimizer_get_called_func` restricted to what the call graph links: the
    /// callee's index (when it is one of the script's op_arrays) and whether the call may
    /// reach an overriding method instead (`is_prototype`).
    pub fn called_func(&self, caller: &OpArray, op: &zend_ir::Op) -> Option<(Option<usize>, bool)> {
        let same_scope = |fbc: &OpArray| match (&fbc.scope, &caller.scope) {
            (Some(a), Some(b)) => a.as_bytes().eq_ignore_ascii_case(b.as_bytes()),
            _ => false,
        };
        match op.opcode {
            ZEND_INIT_FCALL => {
                let name = Self::literal(caller, op.op2, 0)?;
                // Internal functions resolve too, but are outside the call graph.
                Some((self.index_of_function(name), false))
            }
            ZEND_INIT_STATIC_METHOD_CALL => {
                Self::literal(caller, op.op2, 0)?;
                let ce = self.class_from_op1(caller, op)?;
                let ClassRef::Script(ce) = ce else {
                    return Some((None, false));
                };
                let key = Self::literal(caller, op.op2, 1)?;
                let Some((fbc, index)) = self.method(ce, key) else {
                    // A linked class's stub: outside the call graph.
                    let m = ce.method_stub(key)?;
                    let same_scope = caller
                        .scope
                        .as_ref()
                        .is_some_and(|s| s.as_bytes().eq_ignore_ascii_case(m.scope.as_bytes()));
                    return (m.fn_flags & ZEND_ACC_PUBLIC != 0 || same_scope)
                        .then_some((None, false));
                };
                let is_public = fbc.fn_flags & ZEND_ACC_PUBLIC != 0;
                (is_public || same_scope(fbc)).then_some((index, false))
            }
            ZEND_INIT_METHOD_CALL => {
                if !matches!(op.op1, Operand::Unused(_))
                    || caller.fn_flags & ZEND_ACC_TRAIT_CLONE != 0
                {
                    return None;
                }
                Self::literal(caller, op.op2, 0)?;
                let scope = self.scope_class(caller)?;
                if scope.ce_flags & ZEND_ACC_CE_TRAIT != 0 {
                    return None;
                }
                let key = Self::literal(caller, op.op2, 1)?;
                let Some((fbc, index)) = self.method(scope, key) else {
                    // A linked class's stub: outside the call graph.
                    let m = scope.method_stub(key)?;
                    if m.fn_flags & ZEND_ACC_PRIVATE != 0 {
                        let same_scope = m
                            .scope
                            .as_bytes()
                            .eq_ignore_ascii_case(scope.name.as_bytes());
                        return same_scope.then_some((None, false));
                    }
                    return Some((None, m.fn_flags & ZEND_ACC_FINAL == 0));
                };
                if fbc.fn_flags & ZEND_ACC_PRIVATE != 0 {
                    return same_scope(fbc).then_some((index, false));
                }
                Some((index, fbc.fn_flags & ZEND_ACC_FINAL == 0))
            }
            _ => None,
        }
    }

    /// What a call resolves to beyond [`ScriptInfo::called_func`]: the user op_array of a
    /// resolved method (also abstract ones, outside the call graph's op_arrays), or the
    /// internal class and lowercased method name of a static call to an internal class.
    pub fn called_target(&self, caller: &OpArray, op: &zend_ir::Op) -> Option<CalledTarget<'a>> {
        self.called_func(caller, op)?;
        match op.opcode {
            ZEND_INIT_STATIC_METHOD_CALL => {
                let key = Self::literal(caller, op.op2, 1)?;
                match self.class_from_op1(caller, op)? {
                    ClassRef::Internal(name) => {
                        Some(CalledTarget::InternalMethod(name, key.to_vec()))
                    }
                    ClassRef::Script(ce) => self.script_method_target(ce, key),
                }
            }
            ZEND_INIT_METHOD_CALL => {
                let scope = self.scope_class(caller)?;
                let key = Self::literal(caller, op.op2, 1)?;
                self.script_method_target(scope, key)
            }
            _ => None,
        }
    }

    /// Method `key` of script class `ce`: its op_array, or for a linked class's stub the
    /// trait method a copy was made from or the internal function, as the internal class
    /// declaring it knows it.
    fn script_method_target(&self, ce: &'a ClassEntry, key: &[u8]) -> Option<CalledTarget<'a>> {
        if let Some((f, _)) = self.method(ce, key) {
            return Some(CalledTarget::User(f));
        }
        let m = ce.method_stub(key)?;
        if m.is_trait_clone() {
            let (t, key) = self.script.trait_method_of(m)?;
            return self
                .method(t, key.as_bytes())
                .map(|(f, _)| CalledTarget::User(f));
        }
        Some(CalledTarget::InternalMethod(
            m.internal_class(ce)?,
            key.to_vec(),
        ))
    }

    /// `zend_optimizer_get_class_entry_from_op1`.
    fn class_from_op1(&self, op_array: &OpArray, op: &zend_ir::Op) -> Option<ClassRef<'a>> {
        match op.op1 {
            Operand::Const(_) => {
                let lcname = Self::literal(op_array, op.op1, 1)?;
                self.class_entry(Some(op_array), lcname)
            }
            Operand::Unused(num) => {
                let scope = self.scope_class(op_array)?;
                (scope.ce_flags & ZEND_ACC_CE_TRAIT == 0
                    && num & ZEND_FETCH_CLASS_MASK == ZEND_FETCH_CLASS_SELF)
                    .then_some(ClassRef::Script(scope))
            }
            _ => None,
        }
    }

    /// `zend_analyze_calls` + `zend_analyze_recursion`: a function is recursive directly
    /// when it calls itself, indirectly when something it calls (transitively) calls it;
    /// calls that may reach an overriding method do not make the callee recursive.
    fn analyze_recursion(&mut self) {
        // A call that may reach an override makes nothing recursive (it still links the
        // functions into one component below).
        let mut cross_calls = false;
        for (caller, sites) in self.calls.iter().enumerate() {
            for site in sites {
                match site.callee {
                    Some(callee) if !site.is_prototype => {
                        if callee.index() == caller {
                            self.recursion[caller] |= FUNC_RECURSIVE | FUNC_RECURSIVE_DIRECTLY;
                        } else {
                            cross_calls = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        // `i` is indirectly recursive when a caller other than itself is reachable from it,
        // i.e. lies in its strongly connected component of the call graph: one linear SCC
        // search instead of a walk of the whole graph from every function (quadratic on a
        // long chain of calls, as PHP's zend_is_indirectly_recursive is). Most scripts have
        // no call between two different functions, and need no search.
        if !cross_calls {
            return;
        }
        let mut callees: Vec<Vec<usize>> = vec![Vec::new(); self.op_arrays.len()];
        for (caller, sites) in self.calls.iter().enumerate() {
            callees[caller].extend(sites.iter().filter_map(|s| s.callee.map(|c| c.index())));
        }
        let component = zend_cfg::scc::component_of_each(&callees);
        for (caller, sites) in self.calls.iter().enumerate() {
            for site in sites {
                match site.callee {
                    Some(callee)
                        if !site.is_prototype
                            && callee.index() != caller
                            && component[caller] == component[callee.index()] =>
                    {
                        self.recursion[callee.index()] |=
                            FUNC_RECURSIVE | FUNC_RECURSIVE_INDIRECTLY;
                    }
                    _ => {}
                }
            }
        }
    }

    /// The `zend_func_info` header of op_array `index` at the time the DFA pass runs:
    /// recursion flags, and the return type from the signature (`zend_init_func_return_info`,
    /// zero when the function declares none).
    pub fn header(&self, index: usize) -> FuncInfoHeader {
        let op_array = self.op_arrays[index];
        let mut header = FuncInfoHeader {
            flags: self.recursion[index],
            ..Default::default()
        };
        if op_array.fn_flags & ZEND_ACC_HAS_RETURN_TYPE != 0 {
            let ret = op_array.return_info.as_ref().map(|r| &r.type_);
            let (mut type_mask, ce) = match ret {
                Some(t) => self.convert_type(t),
                None => (0, None),
            };
            // zend_get_return_info_from_signature_only sets is_instanceof from a pointer
            // that is never null: a class is always "instanceof".
            let mut ce = ce.map(|c| (c.name().to_vec(), true));
            if op_array.fn_flags & ZEND_ACC_RETURN_REFERENCE != 0
                && op_array.fn_flags & ZEND_ACC_GENERATOR == 0
            {
                type_mask |= may_be::REF;
                ce = None;
            }
            header.return_type = type_mask;
            header.return_ce = ce;
        }
        header.return_range = SsaRange::default();
        header
    }

    /// `zend_convert_type`: a declared type as MAY_BE bits, and its class when it names one.
    pub fn convert_type(&self, t: &ZendType) -> (u32, Option<ClassRef<'a>>) {
        let mut ce = None;
        if t.type_mask & zend_ir::_ZEND_TYPE_NAME_BIT != 0 {
            if let TypeNames::Name(name) = &t.names {
                ce =
                    zend_ir::with_ascii_lowercase(&name.0, |lcname| self.class_entry(None, lcname));
            }
        }
        (zend_ir::types::convert_type_mask(t.type_mask), ce)
    }
}
