//! Write-back: rebuilds PHP's in-memory op_arrays from a [`zend_ir::Script`], inside the
//! optimizer pass, in the form `pass_two()` / `zend_redo_pass_two()` leave them — the form
//! OPcache then persists (zend_persist.c) and PHP executes.
//!
//! For every op_array `zend_foreach_op_array` visits (main, functions, each class's own
//! non-abstract methods, their dynamic_func_defs), the write-back owns the fields an
//! optimizer may change and rebuilds them from the model:
//!
//! - `opcodes` and `literals` in one `emalloc` block, literals at
//!   `ZEND_MM_ALIGNED_SIZE_EX(sizeof(zend_op) * last, 16)` (`ZEND_USE_ABS_CONST_ADDR=0`:
//!   persisting copies the literals out of the block and frees the block once);
//! - operands in run-time form: CONST operands and jump targets as byte offsets from their
//!   op, TMP/VAR/CV as frame offsets (`EX_NUM_TO_VAR`), jump tables of SWITCH/MATCH as byte
//!   offsets, smart-branch bits in `result_type`; handlers with `zend_vm_set_opcode_handler`
//!   (which may swap the operands of commutative opcodes, as `pass_two` does), or with
//!   `zend_vm_set_opcode_handler_ex` when the pipeline supplies operand types;
//! - literal zvals built as the compiler builds them ([`crate::engine`]), with their `u2`
//!   (`Z_EXTRA`: RECV_INIT's run-time cache slot, `ZEND_EXTRA_VALUE`) from
//!   `OpArray::literal_extra`;
//! - `vars` (interned CV names), `last_var`, `T`, `cache_size`, `live_range`,
//!   `try_catch_array`.
//!
//! Everything else (names, flags, arg_info, static variables, attributes, lines, classes)
//! must be unchanged from the captured script: [`check_compatible`] refuses anything else
//! before a single byte of PHP's memory is touched. The previous arrays are released as
//! `destroy_op_array` would release them. Inherited method copies (`op_array->scope != ce`),
//! which `zend_optimize_script` made by copying the parent's op_array struct, are copied
//! again afterwards so that they share the new arrays and never the freed ones.

use std::collections::{HashMap, HashSet};
use std::fmt;

use zend_ir::model::{self as ir, Literal, OpArray, Operand, Script};
use zend_ir::opcode::{ZEND_MATCH, ZEND_SWITCH_LONG, ZEND_SWITCH_STRING};

use crate::engine::{self, Engine};
use crate::php::{self, zend_class_entry, zend_op, zend_op_array, zend_script, zval, HashKey};

/// `(op1_info, op2_info, res_info)` for `zend_vm_set_opcode_handler_ex`: MAY_BE masks the
/// pipeline inferred for one op, as `zend_redo_pass_two_ex` passes them.
pub type OpTypes = (u32, u32, u32);

/// Per op_array (keyed by its position in `zend_foreach_op_array` order, the order of
/// `Script::op_arrays()`), per op: the operand types to pick type-specialised handlers with.
/// Empty: every handler is chosen as `pass_two` does.
#[derive(Clone, Debug, Default)]
pub struct HandlerTypes(pub HashMap<usize, Vec<Option<OpTypes>>>);

/// Why a script was not written back.
#[derive(Debug)]
pub struct WriteError(pub String);

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub type Result<T> = std::result::Result<T, WriteError>;

pub fn err<T>(what: impl Into<String>) -> Result<T> {
    Err(WriteError(what.into()))
}

/// Adds a "where" to an error on its way out.
pub trait Ctx<T> {
    fn ctx(self, f: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Ctx<T> for Result<T> {
    fn ctx(self, f: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| WriteError(format!("{}: {}", f(), e.0)))
    }
}

/// Deepest literal / AST nesting written (PHP's native stack is ours while we recurse).
const MAX_DEPTH: usize = zend_ir::zop::MAX_DEPTH;

// ---------------------------------------------------------------------------------------
// Checks on the models alone.
// ---------------------------------------------------------------------------------------

/// An op_array without the fields the write-back owns: what must not change.
fn fixed_part(oa: &OpArray) -> OpArray {
    OpArray {
        T: 0,
        cache_size: 0,
        vars: Vec::new(),
        opcodes: Vec::new(),
        literals: Vec::new(),
        literal_extra: Vec::new(),
        live_range: Vec::new(),
        try_catch_array: Vec::new(),
        dynamic_func_defs: Vec::new(),
        ..oa.clone()
    }
}

/// Whether two classes are the same apart from their methods, compared in place: a copy
/// without the methods (`ClassEntry { methods: Vec::new(), ..ce.clone() }`) cloned the
/// whole class first, default property values included, which for a generated parser's
/// tables made up a large part of the peak memory of compiling it. Every field is named,
/// so that a field added to the class is compared here too.
fn same_but_methods(a: &ir::ClassEntry, b: &ir::ClassEntry) -> bool {
    let ir::ClassEntry {
        name,
        parent_name,
        ce_flags,
        refcount,
        interface_names,
        trait_names,
        trait_aliases,
        trait_precedences,
        constants,
        properties,
        methods: _,
        method_stubs,
        attributes,
        filename,
        line_start,
        line_end,
        doc_comment,
        enum_backing_type,
    } = a;
    *name == b.name
        && *parent_name == b.parent_name
        && *ce_flags == b.ce_flags
        && *refcount == b.refcount
        && *interface_names == b.interface_names
        && *trait_names == b.trait_names
        && *trait_aliases == b.trait_aliases
        && *trait_precedences == b.trait_precedences
        && *constants == b.constants
        && *properties == b.properties
        && *method_stubs == b.method_stubs
        && *attributes == b.attributes
        && *filename == b.filename
        && *line_start == b.line_start
        && *line_end == b.line_end
        && *doc_comment == b.doc_comment
        && *enum_backing_type == b.enum_backing_type
}

/// Checks that `output` differs from `captured` only in fields the write-back owns, in
/// op_arrays it writes.
pub fn check_compatible(captured: &Script, output: &Script) -> Result<()> {
    if captured.filename != output.filename {
        return err("the script's filename changed");
    }
    op_array_compatible(&captured.main_op_array, &output.main_op_array, true)
        .ctx(|| "main script".into())?;
    if captured.function_table.len() != output.function_table.len() {
        return err("functions were added or removed");
    }
    for ((ck, cf), (ok, of)) in captured.function_table.iter().zip(&output.function_table) {
        if ck != ok {
            return err(format!("function table key {ck:?} became {ok:?}"));
        }
        op_array_compatible(cf, of, true).ctx(|| format!("function {ck}"))?;
    }
    if captured.class_table.len() != output.class_table.len() {
        return err("classes were added or removed");
    }
    for ((ck, cc), (ok, oc)) in captured.class_table.iter().zip(&output.class_table) {
        if ck != ok {
            return err(format!("class table key {ck:?} became {ok:?}"));
        }
        if !same_but_methods(cc, oc) {
            return err(format!("class {}: only method bodies may change", cc.name));
        }
        if cc.methods.len() != oc.methods.len() {
            return err(format!("class {}: methods were added or removed", cc.name));
        }
        let alias = cc.refcount > 1 && !ck.0.eq_ignore_ascii_case(&cc.name.0);
        for ((cm, cmf), (om, omf)) in cc.methods.iter().zip(&oc.methods) {
            if cm != om {
                return err(format!(
                    "class {}: method key {cm:?} became {om:?}",
                    cc.name
                ));
            }
            let written = !alias
                && cmf.scope.as_ref() == Some(&cc.name)
                && cmf.type_ == ir::ZEND_USER_FUNCTION
                && cmf.fn_flags & (ir::ZEND_ACC_ABSTRACT | ir::ZEND_ACC_TRAIT_CLONE) == 0;
            op_array_compatible(cmf, omf, written).ctx(|| format!("method {}::{cm}", cc.name))?;
        }
    }
    Ok(())
}

fn op_array_compatible(captured: &OpArray, output: &OpArray, written: bool) -> Result<()> {
    if !written {
        if captured != output {
            return err("an op_array the optimizer does not visit (inherited, abstract or trait copy) changed");
        }
        return Ok(());
    }
    if fixed_part(captured) != fixed_part(output) {
        return err(
            "only opcodes, literals (and their u2 extras), vars, T, cache_size, live ranges and the try/catch table may change",
        );
    }
    if captured.dynamic_func_defs.len() != output.dynamic_func_defs.len() {
        return err("dynamic_func_defs were added or removed");
    }
    for (i, (c, o)) in captured
        .dynamic_func_defs
        .iter()
        .zip(&output.dynamic_func_defs)
        .enumerate()
    {
        op_array_compatible(c, o, true).ctx(|| format!("dynamic_func_defs[{i}]"))?;
    }
    Ok(())
}

/// The code of one op_array — ops, literals, CV names — wherever the write-back reads it
/// from: the model ([`OpArray`]), or a cache entry read in place (`crate::load`), so that
/// checking and installing are one piece of code for both.
pub trait Code {
    fn op_count(&self) -> usize;
    fn ops(&self) -> impl Iterator<Item = ir::Op> + '_;
    fn literal_count(&self) -> usize;
    /// Literal `i` as a model value (for jump tables and nested values).
    fn literal(&self, i: usize) -> std::borrow::Cow<'_, Literal>;
    /// Whether literal `i` is a scalar or a string (nothing nested to check).
    fn literal_is_flat(&self, i: usize) -> bool;
    /// Literal `i` as the compiler builds it (`u2` zero); the caller owns the reference.
    fn literal_zval(&self, e: Engine, i: usize) -> zval;
    /// The non-zero literal `u2` values, in increasing literal order.
    fn literal_extra(&self) -> impl Iterator<Item = (ir::LiteralId, u32)> + '_;
    fn var_count(&self) -> usize;
    /// CV name `i`, interned.
    fn var(&self, e: Engine, i: usize) -> *mut php::zend_string;
}

impl Code for OpArray {
    fn op_count(&self) -> usize {
        self.opcodes.len()
    }

    fn ops(&self) -> impl Iterator<Item = ir::Op> + '_ {
        self.opcodes.iter().cloned()
    }

    fn literal_count(&self) -> usize {
        self.literals.len()
    }

    fn literal(&self, i: usize) -> std::borrow::Cow<'_, Literal> {
        std::borrow::Cow::Borrowed(&self.literals[i])
    }

    fn literal_is_flat(&self, i: usize) -> bool {
        !matches!(self.literals[i], Literal::Array(_) | Literal::Ast(_))
    }

    fn literal_zval(&self, e: Engine, i: usize) -> zval {
        e.zval(&self.literals[i])
    }

    fn literal_extra(&self) -> impl Iterator<Item = (ir::LiteralId, u32)> + '_ {
        self.literal_extra.iter().copied()
    }

    fn var_count(&self) -> usize {
        self.vars.len()
    }

    fn var(&self, e: Engine, i: usize) -> *mut php::zend_string {
        e.interned_string(self.vars[i].as_bytes())
    }
}

/// Checks everything the engine relies on in an op_array about to be written.
pub fn check_op_array(oa: &OpArray) -> Result<()> {
    check_code(oa, oa)
}

/// [`check_op_array`] of `code` with the rest of the op_array (`T`, live ranges, try/catch)
/// from `frame`.
pub fn check_code(code: &impl Code, frame: &OpArray) -> Result<()> {
    let last = code.op_count();
    if last == 0 {
        return err("no opcodes");
    }
    let n_literals = code.literal_count();
    if last > (i32::MAX / php::ZEND_OP_SIZE as i32) as usize / 2
        || n_literals > (i32::MAX / php::ZVAL_SIZE as i32) as usize / 2
    {
        return err("too many opcodes or literals for 32-bit offsets");
    }
    let last_var = code.var_count() as u32;
    let t = frame.T;
    let mut next = 0;
    for (lit, _) in code.literal_extra() {
        if lit.index() < next || lit.index() >= n_literals {
            return err(format!(
                "literal_extra names literal {} out of order or outside 0..{n_literals}",
                lit.as_u32()
            ));
        }
        next = lit.index() + 1;
    }
    let mut tables: HashMap<u32, usize> = HashMap::new();
    for (n, op) in code.ops().enumerate() {
        let here = || format!("op #{n} ({})", op.opcode);
        if !op.opcode.is_defined() {
            return err(format!("op #{n}: undefined opcode {}", op.opcode.0));
        }
        for (what, operand) in [("op1", op.op1), ("op2", op.op2), ("result", op.result)] {
            let is_result = what == "result";
            if !operand_fits(operand, last, last_var, t, n_literals, is_result) {
                let why = misfit(operand, last, last_var, t, n_literals, is_result);
                return err(format!("{}: {what}: {why}", here()));
            }
        }
        if op.opcode.ext_is_jmp_addr() && op.extended_value as usize >= last {
            return err(format!(
                "{}: extended_value jumps to {} outside ops 0..{last}",
                here(),
                op.extended_value
            ));
        }
        if [ZEND_SWITCH_LONG, ZEND_SWITCH_STRING, ZEND_MATCH].contains(&op.opcode) {
            let Operand::Const(lit) = op.op2 else {
                return err(format!("{}: jump table (op2) is not a CONST", here()));
            };
            if let Some(other) = tables.insert(lit.as_u32(), n) {
                return err(format!(
                    "{}: jump table literal {} is shared with op #{other}",
                    here(),
                    lit.as_u32()
                ));
            }
            let table = code.literal(lit.index());
            let Literal::Array(entries) = &*table else {
                return err(format!("{}: jump table literal is not an array", here()));
            };
            for (key, target) in entries {
                match target {
                    Literal::Long(t) if (0..last as i64).contains(t) => {}
                    _ => {
                        return err(format!(
                            "{}: jump table entry {key:?} => {target:?} is not an op number",
                            here()
                        ))
                    }
                }
            }
        }
    }
    for i in 0..n_literals {
        if !code.literal_is_flat(i) {
            check_literal(&code.literal(i), 0).ctx(|| format!("literal {i}"))?;
        }
    }
    for (i, lr) in frame.live_range.iter().enumerate() {
        if lr.var.as_u32() < last_var || lr.var.as_u32() >= last_var + t {
            return err(format!(
                "live_range[{i}]: var {} is not a TMP/VAR",
                lr.var.as_u32()
            ));
        }
        if lr.kind > ir::ZEND_LIVE_NEW || lr.start > lr.end || lr.end.index() > last {
            return err(format!("live_range[{i}]: invalid range"));
        }
    }
    for (i, tc) in frame.try_catch_array.iter().enumerate() {
        let ops = [Some(tc.try_op), tc.catch_op, tc.finally_op, tc.finally_end];
        if ops.iter().flatten().any(|o| o.index() >= last) {
            return err(format!("try_catch_array[{i}]: op outside ops 0..{last}"));
        }
    }
    Ok(())
}

/// Whether an operand names something the op_array has: an op, a literal, a CV or a
/// TMP/VAR slot (a result is never a jump target or a constant).
#[inline]
fn operand_fits(
    operand: Operand,
    last: usize,
    last_var: u32,
    t: u32,
    n_literals: usize,
    is_result: bool,
) -> bool {
    match operand {
        Operand::Unused(_) => true,
        Operand::JmpAddr(_) | Operand::Const(_) if is_result => false,
        Operand::JmpAddr(target) => target.index() < last,
        Operand::Const(lit) => lit.index() < n_literals,
        Operand::Cv(v) => v.as_u32() < last_var,
        Operand::TmpVar(v) | Operand::Var(v) => v.as_u32() >= last_var && v.as_u32() - last_var < t,
    }
}

/// What is wrong with an operand [`operand_fits`] refused.
fn misfit(
    operand: Operand,
    last: usize,
    last_var: u32,
    t: u32,
    n_literals: usize,
    is_result: bool,
) -> String {
    match operand {
        Operand::JmpAddr(_) | Operand::Const(_) if is_result => {
            "a result cannot be a jump target or a constant".into()
        }
        Operand::Unused(_) => "unused".into(),
        Operand::JmpAddr(target) => format!("jump to {} outside ops 0..{last}", target.as_u32()),
        Operand::Const(lit) => format!("literal {} outside 0..{n_literals}", lit.as_u32()),
        Operand::Cv(v) => format!("CV {} outside 0..{last_var}", v.as_u32()),
        Operand::TmpVar(v) | Operand::Var(v) => {
            format!(
                "TMP/VAR {} outside {last_var}..{}",
                v.as_u32(),
                last_var + t
            )
        }
    }
}

fn check_literal(lit: &Literal, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return err("nested too deeply");
    }
    match lit {
        Literal::Array(entries) => entries
            .iter()
            .try_for_each(|(_, v)| check_literal(v, depth + 1)),
        Literal::Ast(ast) => check_ast_deep(ast, depth + 1),
        _ => Ok(()),
    }
}

fn check_ast_deep(ast: &ir::Ast, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return err("constant expression nested too deeply");
    }
    engine::check_ast(ast).map_err(WriteError)?;
    match &ast.body {
        ir::AstBody::Zval(lit) => check_literal(lit, depth + 1),
        ir::AstBody::Children(children) => children
            .iter()
            .flatten()
            .try_for_each(|c| check_ast_deep(c, depth + 1)),
    }
}

// ---------------------------------------------------------------------------------------
// Pairing the models with PHP's live op_arrays.
// ---------------------------------------------------------------------------------------

/// One op_array to rebuild.
struct Job<'m> {
    target: *mut zend_op_array,
    model: &'m OpArray,
}

/// An inherited method copy and the op_array it copies.
struct Fixup {
    copy: *mut zend_op_array,
    orig: *mut zend_op_array,
}

/// The key of a table element as bytes (`None` for integer keys).
fn key_bytes(key: HashKey<'_>) -> Option<&[u8]> {
    match key {
        HashKey::Str(s) => Some(s),
        HashKey::Long(_) => None,
    }
}

/// Pairs every op_array `zend_foreach_op_array` visits with its model, and finds the
/// inherited method copies. Reads PHP's structures only.
fn plan<'m>(
    r: php::Reader<'_>,
    live: &zend_script,
    output: &'m Script,
) -> Result<(Vec<Job<'m>>, Vec<Fixup>)> {
    let mut jobs = Vec::new();
    let mut fixups = Vec::new();
    with_dynamic(
        r,
        std::ptr::addr_of!(live.main_op_array).cast_mut(),
        &output.main_op_array,
        "{main}".into(),
        &mut jobs,
    )?;

    let functions = r.hash(&live.function_table);
    if functions.len() != output.function_table.len() {
        return err("PHP's function table and the script differ in size");
    }
    for ((key, zv), (name, model)) in functions.into_iter().zip(&output.function_table) {
        if key_bytes(key) != Some(name.as_bytes()) {
            return err(format!("function table key {name} does not match PHP's"));
        }
        let f = r
            .z_ptr_as::<php::zend_function>(zv)
            .ok_or_else(|| WriteError(format!("function {name} is NULL")))?;
        let (_, Some(oa)) = r.function(f) else {
            return err(format!("function {name} is not a user function"));
        };
        with_dynamic(
            r,
            (oa as *const zend_op_array).cast_mut(),
            model,
            name.to_string(),
            &mut jobs,
        )?;
    }

    let classes = r.hash(&live.class_table);
    if classes.len() != output.class_table.len() {
        return err("PHP's class table and the script differ in size");
    }
    for ((key, zv), (ckey, model_ce)) in classes.into_iter().zip(&output.class_table) {
        let Some(key) = key_bytes(key).filter(|k| *k == ckey.as_bytes()) else {
            return err(format!("class table key {ckey} does not match PHP's"));
        };
        let ce = r
            .z_ptr_as::<zend_class_entry>(zv)
            .ok_or_else(|| WriteError(format!("class {ckey} is NULL")))?;
        let ce_name = r.str(ce.name).unwrap_or_default();
        if ce.refcount > 1 && !key.eq_ignore_ascii_case(ce_name) {
            continue; // a class alias: its methods are visited under the class's own key
        }
        let methods = r.hash(&ce.function_table);
        if methods.len() != model_ce.methods.len() + model_ce.method_stubs.len() {
            return err(format!("class {ckey}: method tables differ in size"));
        }
        for ((mkey, mzv), entry) in methods.into_iter().zip(model_ce.method_table()) {
            let (mname, model) = match entry {
                ir::MethodEntry::User(mname, model) => (mname, Some(model)),
                ir::MethodEntry::Stub(m) => (&m.key, None),
            };
            let Some(mkey) = key_bytes(mkey).filter(|k| *k == mname.as_bytes()) else {
                return err(format!(
                    "class {ckey}: method key {mname} does not match PHP's"
                ));
            };
            let f = r
                .z_ptr_as::<php::zend_function>(mzv)
                .ok_or_else(|| WriteError(format!("method {ckey}::{mname} is NULL")))?;
            let (oa, model) = match (r.function(f), model) {
                ((_, Some(oa)), Some(model)) => (oa, model),
                // A linked class's internal method: never rewritten.
                ((ir::ZEND_INTERNAL_FUNCTION, None), None) => continue,
                // A preloaded class's copy of a trait method: OPcache overwrites it with the
                // trait's (`preload_fix_trait_methods`).
                ((_, Some(oa)), None) if oa.fn_flags & ir::ZEND_ACC_TRAIT_CLONE != 0 => continue,
                ((ty, _), _) => {
                    return err(format!(
                        "class {ckey}: method {mname} is of type {ty} in PHP's table"
                    ))
                }
            };
            let ptr = (oa as *const zend_op_array).cast_mut();
            if !std::ptr::eq(oa.scope, ce) {
                // zend_optimize_script's copy of an inherited method: copy it again later.
                if let Some(orig) = inherited_original(r, oa, mkey) {
                    fixups.push(Fixup { copy: ptr, orig });
                }
                continue;
            }
            if oa.fn_flags & (php::ZEND_ACC_ABSTRACT | php::ZEND_ACC_TRAIT_CLONE) != 0 {
                continue;
            }
            with_dynamic(
                r,
                ptr,
                model,
                format!("{}::{mname}", model_ce.name),
                &mut jobs,
            )?;
        }
    }
    Ok((jobs, fixups))
}

/// `zend_hash_find_ptr(&op_array->scope->function_table, name)`.
fn inherited_original(
    r: php::Reader<'_>,
    oa: &zend_op_array,
    name: &[u8],
) -> Option<*mut zend_op_array> {
    let scope = r.deref(oa.scope)?;
    r.hash(&scope.function_table)
        .into_iter()
        .find(|(k, _)| key_bytes(*k) == Some(name))
        .and_then(|(_, zv)| r.z_ptr_as::<php::zend_function>(zv))
        .and_then(|f| r.function(f).1)
        .map(|o| (o as *const zend_op_array).cast_mut())
}

fn with_dynamic<'m>(
    r: php::Reader<'_>,
    target: *mut zend_op_array,
    model: &'m OpArray,
    name: String,
    jobs: &mut Vec<Job<'m>>,
) -> Result<()> {
    // SAFETY: `target` came from the reader's walk of the live script.
    let live = r.deref(target.cast_const()).expect("non-NULL op_array");
    if live.type_ != ir::ZEND_USER_FUNCTION && live.type_ != ir::ZEND_EVAL_CODE {
        return err(format!("{name}: not a user op_array"));
    }
    check_op_array(model).ctx(|| name.clone())?;
    let defs = r
        .slice(live.dynamic_func_defs, live.num_dynamic_func_defs as usize)
        .unwrap_or_default();
    if defs.len() != model.dynamic_func_defs.len() {
        return err(format!("{name}: dynamic_func_defs differ in number"));
    }
    let defs: Vec<*mut zend_op_array> = defs.to_vec();
    jobs.push(Job { target, model });
    for (i, (def, m)) in defs.into_iter().zip(&model.dynamic_func_defs).enumerate() {
        if def.is_null() {
            return err(format!("{name}: dynamic_func_defs[{i}] is NULL"));
        }
        with_dynamic(r, def, m, format!("{name}/dynamic[{i}]"), jobs)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Writing.
// ---------------------------------------------------------------------------------------

/// Rebuilds every op_array of `live` that OPcache's optimizer visits from `output`.
///
/// `captured` is what the capture made of `live` (the shape `output` must keep), `types`
/// optional operand types for handler
/// selection. Nothing is changed unless every check passes.
///
/// # Safety
/// Called from the optimizer pass with the live script PHP handed to it, which nothing else
/// touches meanwhile; `captured` was converted from it during this call.
pub unsafe fn script(
    live: *mut zend_script,
    captured: &Script,
    output: &Script,
    types: &HandlerTypes,
) -> Result<usize> {
    check_compatible(captured, output)?;
    let (jobs, fixups) = {
        let r = php::Reader::new();
        let live = r
            .deref(live.cast_const())
            .ok_or_else(|| WriteError("NULL script".into()))?;
        plan(r, live, output)?
    };
    // Jobs follow zend_foreach_op_array, the order of Script::op_arrays(). The literals' u2
    // extras are the output's own: the optimizer keeps them with the literals it adds, moves
    // and merges (ZEND_EXTRA_VALUE beside a numeric-string offset, RECV_INIT cache slots),
    // and check_code validates their order and range.
    let before = captured.op_arrays();
    if before.len() != jobs.len() {
        return err(format!(
            "PHP visits {} op_arrays, the script has {}",
            jobs.len(),
            before.len()
        ));
    }
    let mut seen = HashSet::new();
    let engine = Engine::new();
    for (k, job) in jobs.iter().enumerate() {
        if !seen.insert(job.target as usize) {
            continue; // shared op_array (cannot happen in a compiled script, but never twice)
        }
        write_op_array(
            engine,
            job.target,
            job.model,
            types.0.get(&k).map(|v| v.as_slice()),
        );
    }
    for f in &fixups {
        if f.copy != f.orig {
            let fn_flags = (*f.copy).fn_flags;
            let prototype = (*f.copy).prototype;
            let statics = (*f.copy).static_variables;
            std::ptr::copy_nonoverlapping(f.orig.cast_const(), f.copy, 1);
            (*f.copy).fn_flags = fn_flags;
            (*f.copy).prototype = prototype;
            (*f.copy).static_variables = statics;
        }
    }
    Ok(seen.len())
}

/// `EX_NUM_TO_VAR(n)`.
fn frame_offset(v: ir::VarNum) -> u32 {
    (php::ZEND_CALL_FRAME_SLOT + v.as_u32()) * php::ZVAL_SIZE
}

/// Byte offset from op `from` to op `to` (`ZEND_OPLINE_NUM_TO_OFFSET`).
fn jump_offset(from: usize, to: usize) -> u32 {
    ((to as i64 - from as i64) * i64::from(php::ZEND_OP_SIZE)) as i32 as u32
}

/// # Safety
/// `oa` is a live user op_array in pass-two form that nothing else references the arrays of
/// except inherited copies fixed up afterwards; `m` passed [`check_op_array`].
unsafe fn write_op_array(
    e: Engine,
    oa: *mut zend_op_array,
    m: &OpArray,
    types: Option<&[Option<OpTypes>]>,
) {
    let old = std::ptr::read(oa);
    install_arrays(e, oa, m, m, types);
    release_arrays(e, &old);
}

/// Builds the arrays the write-back owns (opcodes and literals, vars, live ranges,
/// try/catch) from `code` and `frame` (its `T`, `cache_size`, live ranges and try/catch) and
/// stores them, with the `last*` counts, into `*oa`, overwriting the previous pointers
/// without releasing them.
///
/// # Safety
/// `oa` points to a `zend_op_array` whose other fields may be anything; `code` and `frame`
/// passed [`check_code`]; the engine allocator is live.
pub unsafe fn install_arrays(
    e: Engine,
    oa: *mut zend_op_array,
    code: &impl Code,
    frame: &OpArray,
    types: Option<&[Option<OpTypes>]>,
) {
    let last = code.op_count();
    let n_literals = code.literal_count();
    let ops_size = engine::aligned(php::ZEND_OP_SIZE as usize * last, 16);
    let block = e.emalloc(ops_size + php::ZVAL_SIZE as usize * n_literals);
    let ops = block.cast::<zend_op>();
    let lits = if n_literals == 0 {
        std::ptr::null_mut()
    } else {
        block.add(ops_size).cast::<zval>()
    };

    // Ops first (jump tables are found on the way), with operands in run-time form.
    let mut tables: Vec<(usize, usize)> = Vec::new();
    for (n, op) in code.ops().enumerate() {
        if [ZEND_SWITCH_LONG, ZEND_SWITCH_STRING, ZEND_MATCH].contains(&op.opcode) {
            if let Operand::Const(lit) = op.op2 {
                tables.push((lit.index(), n));
            }
        }
        let operand = |o: Operand| -> u32 {
            match o {
                Operand::Unused(raw) => raw,
                Operand::JmpAddr(t) => jump_offset(n, t.index()),
                Operand::Const(lit) => {
                    (ops_size as i64 + i64::from(php::ZVAL_SIZE) * lit.index() as i64
                        - i64::from(php::ZEND_OP_SIZE) * n as i64) as i32 as u32
                }
                Operand::TmpVar(v) | Operand::Var(v) | Operand::Cv(v) => frame_offset(v),
            }
        };
        let mut z = zend_op {
            handler: std::ptr::null(),
            extended_value: if op.opcode.ext_is_jmp_addr() {
                jump_offset(n, op.extended_value as usize)
            } else {
                op.extended_value
            },
            lineno: op.lineno,
            opcode: op.opcode.0,
            op1_type: op.op1.op_type(),
            op2_type: op.op2.op_type(),
            result_type: op.result_type(),
            ..zend_op::default()
        };
        z.op1.num = operand(op.op1);
        z.op2.num = operand(op.op2);
        z.result.num = operand(op.result);
        ops.add(n).write(z);
    }

    // Literals; jump tables hold byte offsets from the op that uses them.
    let mut extra = code.literal_extra().peekable();
    for i in 0..n_literals {
        let mut zv = match tables.iter().find(|&&(lit, _)| lit == i) {
            Some(&(_, n)) => {
                let Literal::Array(entries) = &*code.literal(i) else {
                    unreachable!("checked by check_code")
                };
                let relative = entries.map(|v| {
                    let Literal::Long(target) = v else {
                        unreachable!("checked by check_code")
                    };
                    let offset = jump_offset(n, *target as usize) as i32;
                    Literal::Long(i64::from(offset))
                });
                e.zval(&Literal::Array(relative))
            }
            None => code.literal_zval(e, i),
        };
        zv.u2.extra = match extra.peek() {
            Some(&(lit, value)) if lit.index() == i => {
                extra.next();
                value
            }
            _ => 0,
        };
        lits.add(i).write(zv);
    }

    for n in 0..last {
        match types.and_then(|t| t.get(n).copied().flatten()) {
            Some((op1, op2, res)) => php::zend_vm_set_opcode_handler_ex(ops.add(n), op1, op2, res),
            None => php::zend_vm_set_opcode_handler(ops.add(n)),
        }
    }

    let n_vars = code.var_count();
    let vars = e.array_uninit::<*mut php::zend_string>(n_vars);
    for i in 0..n_vars {
        vars.add(i).write(code.var(e, i));
    }
    let live_ranges = e.array_uninit::<php::zend_live_range>(frame.live_range.len());
    for (i, lr) in frame.live_range.iter().enumerate() {
        live_ranges.add(i).write(php::zend_live_range {
            var: frame_offset(lr.var) | lr.kind,
            start: lr.start.as_u32(),
            end: lr.end.as_u32(),
        });
    }
    let try_catch = e.array_uninit::<php::zend_try_catch_element>(frame.try_catch_array.len());
    for (i, tc) in frame.try_catch_array.iter().enumerate() {
        try_catch.add(i).write(php::zend_try_catch_element {
            try_op: tc.try_op.as_u32(),
            catch_op: tc.catch_op.map_or(0, |o| o.as_u32()),
            finally_op: tc.finally_op.map_or(0, |o| o.as_u32()),
            finally_end: tc.finally_end.map_or(0, |o| o.as_u32()),
        });
    }

    (*oa).opcodes = ops;
    (*oa).last = last as u32;
    (*oa).literals = lits;
    (*oa).last_literal = n_literals as i32;
    (*oa).vars = vars;
    (*oa).last_var = n_vars as i32;
    (*oa).T = frame.T;
    (*oa).cache_size = frame.cache_size as i32;
    (*oa).live_range = live_ranges;
    (*oa).last_live_range = frame.live_range.len() as i32;
    (*oa).try_catch_array = try_catch;
    (*oa).last_try_catch = frame.try_catch_array.len() as i32;
}

/// Releases the arrays [`install_arrays`] replaced, as `destroy_op_array` would.
unsafe fn release_arrays(e: Engine, old: &zend_op_array) {
    if !old.literals.is_null() {
        for i in 0..old.last_literal.max(0) as usize {
            e.zval_ptr_dtor_nogc(old.literals.add(i));
        }
        let inside = old.literals.cast::<u8>()
            == old.opcodes.cast::<u8>().add(engine::aligned(
                php::ZEND_OP_SIZE as usize * old.last as usize,
                16,
            ));
        if !inside {
            e.efree(old.literals);
        }
    }
    e.efree(old.opcodes);
    if !old.vars.is_null() {
        for i in 0..old.last_var.max(0) as usize {
            e.release_string(*old.vars.add(i));
        }
        e.efree(old.vars);
    }
    if !old.live_range.is_null() {
        e.efree(old.live_range);
    }
    if !old.try_catch_array.is_null() {
        e.efree(old.try_catch_array);
    }
}
