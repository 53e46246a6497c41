//! Serving a script without PHP's compiler: builds the engine structures of a
//! [`zend_ir::Script`] (op_arrays, functions, classes) and binds them into the running
//! request the way OPcache's `zend_accel_load_script` binds a cached script.
//!
//! # What "the same as compiling" means here
//!
//! The cached script was compiled with OPcache's compiler options (`opcache_compile_file`'s
//! when a script is included: delayed early binding, no constant substitution, other files
//! ignored), so loading it must leave the request exactly as OPcache leaves it after loading
//! that script:
//!
//! - op_arrays are built in the form `pass_two()` leaves: their code (ops, literals, CV
//!   names) read in place from the cache entry through the write-back's
//!   [`writeback::install_arrays`] and [`writeback::check_code`], the rest from the decoded
//!   model; names and types are interned as the compiler interns them;
//! - classes are declared through the engine's own API, in the order the compiler declares
//!   their members (`zend_initialize_class_data`, `zend_declare_class_constant_ex`,
//!   `zend_declare_typed_property`, `zend_add_magic_method`), so offsets, flags and tables
//!   are the ones the compiler computes; a class the compiler linked (`ZEND_ACC_LINKED`) is
//!   linked the same way: a class without parent gets its `properties_info_table`, a class
//!   early-bound to a parent in the same file is declared unlinked with its own members
//!   and bound again with `zend_try_early_bind`, which redoes the inheritance;
//! - binding follows `zend_accel_load_script`: functions are added to the function table
//!   ("Cannot redeclare" when taken), classes to the class table (a taken runtime
//!   definition key is skipped, a taken name is "Cannot declare ..."), then the delayed
//!   early bindings of `ZEND_DECLARE_CLASS_DELAYED` are done (`zend_accel_do_delayed_early_binding`),
//!   the `__COMPILER_HALT_OFFSET__` constant is registered, and the auto globals the
//!   script names are armed (OPcache's `ping_auto_globals_mask`).
//!
//! Building cannot fail half-way through PHP's tables: everything is built first (any error
//! leaves the request untouched except for unreferenced request memory), then bound.
//! Fatal conditions while binding (a redeclaration) are returned as [`Fatal`] for the
//! caller to raise from a frame that owns nothing (PHP's errors longjmp).
//!
//! Memory: every structure comes from the request allocator or the compiler arena, as the
//! compiler's do, and is released by PHP's own destructors or at the end of the request.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::c_int;
use std::ptr;

use zend_cache::load::{ClassView, LiteralView, OpArrayView, ScriptView};

use zend_ir::model::{
    self as ir, Attribute, ClassEntry, Literal, OpArray, PhpStr, Script, TypeNames, ZendType,
};
use zend_ir::opcode::{ZEND_DECLARE_CLASS_DELAYED, ZEND_RETURN};

use crate::engine::Engine;
use crate::php::{
    self, zend_class_entry, zend_function, zend_op_array, zend_property_info, zend_script,
    zend_string, zval, HashTable,
};
use crate::writeback;

/// Why a script could not be built (nothing was bound): the write-back's error, as both
/// check the same things.
pub use crate::writeback::WriteError as BuildError;
use crate::writeback::{err as fail, Ctx, Result};

/// A fatal error while binding, raised by the caller with `zend_error(E_ERROR)` once its
/// frame owns nothing: `CG(compiled_filename)` and `CG(zend_lineno)` are set as OPcache sets
/// them for the message.
#[derive(Debug)]
pub struct Fatal {
    pub message: String,
    pub filename: PhpStr,
    pub lineno: u32,
}

// zend_compile.h / zend_types.h values bindgen does not export as constants.
const IS_PTR: u32 = 13;
/// `sizeof(zend_type_list)` minus its one inline `zend_type`: the `num_types` header.
const TYPE_LIST_HEADER: usize = 8;
const ZEND_TYPE_SIZE: usize = std::mem::size_of::<php::zend_type>();

/// How a class of the cached script becomes the class the compiler left.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Linking {
    /// Unlinked (runtime declaration key): linked later by DECLARE_CLASS*.
    None,
    /// Linked at compile time without a parent: only the properties_info table.
    Simple,
    /// Early-bound at compile time to a parent of the same file: bound again on load.
    EarlyBound,
}

fn linking(ce: &ClassEntry) -> Linking {
    if ce.ce_flags & php::ZEND_ACC_LINKED == 0 {
        Linking::None
    } else if ce.ce_flags & php::ZEND_ACC_RESOLVED_PARENT != 0 {
        Linking::EarlyBound
    } else {
        Linking::Simple
    }
}

/// A script built in engine memory, not yet bound: the `zend_script` OPcache would hold.
pub struct Built {
    /// `script.main_op_array` is the main op_array; the tables hold the functions and
    /// classes under their keys (no destructors: binding moves the values out).
    pub(crate) script: Box<zend_script>,
    /// Classes to early-bind again while binding, by class-table position: the lowercased
    /// parent name.
    pub(crate) early_bound: Vec<Option<Vec<u8>>>,
    /// The just-in-time auto globals ([`JIT_GLOBALS`]) the script names anywhere.
    pub(crate) auto_globals: [bool; JIT_GLOBAL_COUNT],
    /// The main op_array's delayed early bindings, as compiled (see [`finalize_early_bindings`]).
    pub(crate) early_bindings: Vec<EarlyBinding>,
}

/// Builds every structure of the cached script `view`. Nothing is bound to the request.
///
/// The code of each op_array (ops, literals, CV names) is read in place from the entry, each
/// distinct string interned once; the rest comes from
/// [`ScriptView::to_script_without_code`].
///
/// `checked` says that this very entry (immutable bytes) passed the write-back's code checks
/// ([`writeback::check_code`]) in an earlier build, which are then skipped.
///
/// `shared` gives, for each string id of the entry, an interned string that outlives the
/// request (the shared-memory cache's copies; null or missing: interned as usual). Those
/// are used as they are: nothing is allocated or hashed for them.
///
/// # Safety
/// Runs on PHP's thread during a request (`e`); every non-null pointer of `shared` is a
/// `zend_string` with `IS_STR_INTERNED` that lives longer than the request, holding the
/// bytes of the string of its id.
pub unsafe fn build(
    e: Engine,
    view: ScriptView<'_>,
    shared: impl Iterator<Item = *const u8>,
    checked: bool,
) -> Result<Built> {
    let script = view.to_script_without_code();
    let strings = Strings::new(view, shared);
    let mut built = Box::new(zend_script::default());
    built.filename = e.interned_string(script.filename.as_bytes());
    init_table(&mut built.function_table, script.function_table.len());
    init_table(&mut built.class_table, script.class_table.len());

    let cx = Cx {
        e,
        strings: &strings,
        checked,
    };
    cx.op_array_into(
        &script.main_op_array,
        view.main_op_array(),
        ptr::null_mut(),
        &mut built.main_op_array,
        0,
    )
    .ctx(|| "main script".into())?;
    for ((key, func), (_, code)) in script.function_table.iter().zip(view.functions()) {
        let oa = cx
            .new_op_array(func, code, ptr::null_mut(), 0)
            .ctx(|| format!("function {key}"))?;
        add_ptr(
            &mut built.function_table,
            e.interned_string(key.as_bytes()),
            oa.cast(),
        );
    }
    let mut early_bound = Vec::with_capacity(script.class_table.len());
    for ((key, ce), ce_view) in script.class_table.iter().zip(view.classes()) {
        if ce.refcount != 1 {
            return fail(format!(
                "class {key}: shared class entry (refcount {})",
                ce.refcount
            ));
        }
        let link = linking(ce);
        let built_ce = cx
            .class(ce, ce_view, link)
            .ctx(|| format!("class {}", ce.name))?;
        add_ptr(
            &mut built.class_table,
            e.interned_string(key.as_bytes()),
            built_ce.cast(),
        );
        early_bound.push(match link {
            Linking::EarlyBound => Some(
                ce.parent_name
                    .as_ref()
                    .map(|p| p.to_lowercase().0)
                    .ok_or_else(|| {
                        BuildError(format!("class {}: linked parent unknown", ce.name))
                    })?,
            ),
            _ => None,
        });
    }
    let mut early_bindings: Vec<EarlyBinding> = view
        .early_bindings()
        .map(|[lcname, rtd_key, lc_parent]| EarlyBinding {
            lcname: e.interned_string(lcname),
            rtd_key: e.interned_string(rtd_key),
            lc_parent: e.interned_string(lc_parent),
            cache_slot: NO_CACHE_SLOT,
            reserved: 0,
        })
        .collect();
    finalize_early_bindings(&mut early_bindings, &built.main_op_array);
    Ok(Built {
        script: built,
        early_bound,
        auto_globals: auto_globals(view),
        early_bindings,
    })
}

/// The interned string of each string-table entry of one cache entry, made on first use:
/// each distinct string of a script is interned once per load.
struct Strings<'a> {
    view: ScriptView<'a>,
    interned: RefCell<Vec<*mut zend_string>>,
}

impl<'a> Strings<'a> {
    fn new(view: ScriptView<'a>, shared: impl Iterator<Item = *const u8>) -> Self {
        let mut interned = vec![ptr::null_mut(); view.string_count() as usize];
        for (slot, s) in interned.iter_mut().zip(shared) {
            *slot = s.cast_mut().cast::<zend_string>();
        }
        Strings {
            view,
            interned: RefCell::new(interned),
        }
    }

    /// The interned string `id` (a new reference when interning was not possible).
    fn get(&self, e: Engine, id: u32) -> *mut zend_string {
        let mut interned = self.interned.borrow_mut();
        let slot = &mut interned[id as usize];
        if !slot.is_null() {
            return *slot;
        }
        let s = e.interned_string(self.view.string(id));
        // SAFETY: `s` is a live string.
        if unsafe { crate::engine::is_interned(s) } {
            *slot = s;
        }
        s
    }
}

/// An op_array's code read in place from a cache entry, for the write-back's
/// [`writeback::install_arrays`] and [`writeback::check_code`].
struct EntryCode<'s, 'a> {
    view: OpArrayView<'a>,
    strings: &'s Strings<'a>,
}

impl<'a> EntryCode<'_, 'a> {
    fn literal_view(&self, i: usize) -> LiteralView<'a> {
        self.view.literal(i).expect("literal index checked")
    }
}

impl writeback::Code for EntryCode<'_, '_> {
    fn op_count(&self) -> usize {
        self.view.ops().len()
    }

    fn ops(&self) -> impl Iterator<Item = ir::Op> + '_ {
        self.view.ops().map(|op| op.to_op())
    }

    fn literal_count(&self) -> usize {
        self.view.literals().len()
    }

    fn literal(&self, i: usize) -> Cow<'_, Literal> {
        Cow::Owned(self.literal_view(i).to_literal())
    }

    fn literal_is_flat(&self, i: usize) -> bool {
        use zend_ir::types::*;
        matches!(
            self.literal_view(i).type_code(),
            IS_NULL | IS_FALSE | IS_TRUE | IS_LONG | IS_DOUBLE | IS_STRING
        )
    }

    fn literal_zval(&self, e: Engine, i: usize) -> zval {
        let lit = self.literal_view(i);
        match lit.string_id() {
            Some(id) => e.string_zval(self.strings.get(e, id)),
            None => e.zval(&lit.to_literal()),
        }
    }

    fn literal_extra(&self) -> impl Iterator<Item = (ir::LiteralId, u32)> + '_ {
        self.view.literal_extra()
    }

    fn var_count(&self) -> usize {
        self.view.last_var() as usize
    }

    fn var(&self, e: Engine, i: usize) -> *mut zend_string {
        let id = self.view.var_id(i).expect("CV index in range");
        self.strings.get(e, id)
    }
}

/// What building needs throughout: the engine, the entry's strings, and whether its code
/// is known to pass the checks.
struct Cx<'s, 'a> {
    e: Engine,
    strings: &'s Strings<'a>,
    checked: bool,
}

/// Why binding stopped. What was bound before stays bound, as in OPcache.
#[derive(Debug)]
pub enum BindError {
    /// A fatal error to raise (a redeclaration); boxed, so that a binding's result fits in
    /// two registers.
    Fatal(Box<Fatal>),
    /// PHP bailed out (a fatal error inside the engine's linker): to propagate.
    Bailout,
}

/// Binds a built script into the request as `zend_accel_load_script` binds a cached one,
/// and returns the main op_array for the caller to execute (`emalloc`ed: the caller
/// destroys and frees it, as it does with a compiled one).
///
/// With `verify`, the bound script is captured again and compared with the model it was
/// built from; a difference is reported as a warning.
///
/// # Safety
/// Runs on PHP's thread during a request, from a `zend_compile_file` hook.
pub unsafe fn bind(
    e: Engine,
    built: Built,
    halt_offset: Option<u64>,
    verify: Option<&Script>,
) -> std::result::Result<*mut zend_op_array, BindError> {
    let Built {
        mut script,
        early_bound,
        auto_globals,
        early_bindings: early,
    } = built;
    let filename = php::Reader::new()
        .str(script.filename)
        .map(PhpStr::from)
        .unwrap_or_default();

    if let Some(offset) = halt_offset {
        register_halt_offset(script.filename, offset);
    }

    // Functions: "Cannot redeclare" as _zend_accel_function_hash_copy says it.
    for (key, value) in entries(&script.function_table, 0) {
        bind_function(key, (*value).value.ptr.cast(), script.filename)?;
    }

    // Classes: _zend_accel_class_hash_copy, with the compile-time early bindings redone.
    for ((key, value), parent) in entries(&script.class_table, 0)
        .into_iter()
        .zip(&early_bound)
    {
        let lc_parent = parent
            .as_ref()
            .map_or(ptr::null_mut(), |p| e.interned_string(p));
        let bound = bind_class(key, (*value).value.ptr.cast(), lc_parent, script.filename)?;
        // An early-bound immutable class is bound linked (a copy, or the inheritance
        // cache's): the script holds what was bound, as after an early binding in place.
        (*value).value.ptr = bound.cast();
    }

    // Checked before the delayed early bindings, which link classes at run time as the
    // DECLARE_CLASS_DELAYED would (OPcache's loaded script is the unlinked one too).
    if let Some(model) = verify {
        let r = php::Reader::new();
        let again = crate::convert::script(r, &script).map_err(|e| e.to_string());
        let problem = match again {
            Err(e) => Some(format!("cannot capture it again: {e}")),
            Ok(mut again) => {
                // The engine's structures do not hold what the compiler said: the hit
                // replayed it from the entry (`zopt.record_warnings`), or not.
                again.warnings.clone_from(&model.warnings);
                // Nor the early bindings as compiled: the main op_array is the optimized one.
                again.early_bindings.clone_from(&model.early_bindings);
                crate::transform::first_difference(model, &again)
            }
        };
        if let Some(problem) = problem {
            crate::warning(&format!(
                "zopt: {} was not loaded exactly from the cache: {problem}",
                filename
            ));
        }
    }

    let main = bind_main(e, &script.main_op_array, &early, auto_globals, false)?;
    release_table(&mut script.function_table);
    release_table(&mut script.class_table);
    Ok(main)
}

/// Adds the function `oa` under `key` to the function table, or says "Cannot redeclare"
/// as `_zend_accel_function_hash_copy` does.
pub(crate) unsafe fn bind_function(
    key: *mut zend_string,
    oa: *mut zend_op_array,
    filename: *mut zend_string,
) -> std::result::Result<(), BindError> {
    let cg = ptr::addr_of_mut!(php::compiler_globals);
    // One probe: the add fails, changing nothing, when the name is taken.
    if add_ptr((*cg).function_table, key, oa.cast()) {
        return Ok(());
    }
    let existing = php::zend_hash_find((*cg).function_table, key);
    Err(BindError::Fatal(Box::new(cannot_redeclare(
        oa, existing, filename,
    ))))
}

/// "Cannot redeclare" for the function `oa` whose name `existing` holds already.
#[cold]
#[inline(never)]
unsafe fn cannot_redeclare(
    oa: *mut zend_op_array,
    existing: *mut zval,
    filename: *mut zend_string,
) -> Fatal {
    let r = php::Reader::new();
    let name = String::from_utf8_lossy(r.str((*oa).function_name).unwrap_or_default());
    let previous = (*existing).value.ptr.cast::<zend_op_array>();
    let message = if (*previous).type_ == ir::ZEND_USER_FUNCTION && (*previous).last > 0 {
        format!(
            "Cannot redeclare {name}() (previously declared in {}:{})",
            String::from_utf8_lossy(r.str((*previous).filename).unwrap_or_default()),
            (*previous).line_start
        )
    } else {
        format!("Cannot redeclare {name}()")
    };
    Fatal {
        message,
        filename: php_str(filename),
        lineno: (*oa).line_start,
    }
}

/// Adds the class `ce` under `key` to the class table as `_zend_accel_class_hash_copy`
/// does (a taken runtime definition key is skipped, a taken name is "Cannot declare ...");
/// a class the compiler early-bound to its parent (lowercased name `lc_parent`, NULL for
/// none) is bound again with `zend_try_early_bind`. Returns the class as bound (`ce`, or
/// the class early binding made of it).
///
/// The common case, a class without a parent whose name is free and that can be appended,
/// is inlined into the caller's loop; everything else is [`bind_class_slow`].
#[inline(always)]
pub(crate) unsafe fn bind_class(
    key: *mut zend_string,
    ce: *mut zend_class_entry,
    lc_parent: *mut zend_string,
    filename: *mut zend_string,
) -> std::result::Result<*mut zend_class_entry, BindError> {
    let ht = (*ptr::addr_of!(php::compiler_globals)).class_table;
    if lc_parent.is_null() && can_append(ht, key) && zend_hash_find_known_hash(ht, key).is_null() {
        append_ptr(ht, key, ce.cast());
        return Ok(ce);
    }
    bind_class_slow(key, ce, lc_parent, filename)
}

/// [`bind_class`] but for its inlined common case.
#[link_section = ".text.hot.zopt"]
#[inline(never)]
unsafe fn bind_class_slow(
    key: *mut zend_string,
    ce: *mut zend_class_entry,
    lc_parent: *mut zend_string,
    filename: *mut zend_string,
) -> std::result::Result<*mut zend_class_entry, BindError> {
    let cg = ptr::addr_of_mut!(php::compiler_globals);
    let eg = ptr::addr_of_mut!(php::executor_globals);
    if lc_parent.is_null() {
        let ht = (*cg).class_table;
        if can_append(ht, key) {
            // As `_zend_accel_class_hash_copy`: a probe with the key's own hash, then an
            // append.
            if !zend_hash_find_known_hash(ht, key).is_null() {
                return class_taken(key, ce, filename);
            }
            append_ptr(ht, key, ce.cast());
            return Ok(ce);
        }
        // One probe: the add fails, changing nothing, when the name is taken.
        if add_ptr(ht, key, ce.cast()) {
            return Ok(ce);
        }
        return class_taken(key, ce, filename);
    }
    if !php::zend_hash_find((*cg).class_table, key).is_null() {
        return class_taken(key, ce, filename);
    }
    let parent_ce = php::zend_hash_find((*eg).class_table, lc_parent);
    let mut bound = ptr::null_mut();
    if !parent_ce.is_null() {
        // As the compiler bound it: while compiling, inheritance finds the class being
        // linked by its own name (`lookup_class_ex`), which is not in the class table yet
        // (a method returning `self` overriding its parent's), and its errors name the file.
        let (in_compilation, compiled_filename) = ((*cg).in_compilation, (*cg).compiled_filename);
        (*cg).in_compilation = true;
        (*cg).compiled_filename = filename;
        let mut bailed_out = false;
        let r = zopt_guarded_try_early_bind(
            ce,
            (*parent_ce).value.ptr.cast(),
            key,
            ptr::null_mut(),
            &mut bailed_out,
        );
        (*cg).in_compilation = in_compilation;
        (*cg).compiled_filename = compiled_filename;
        if bailed_out {
            return Err(BindError::Bailout);
        }
        bound = r;
    }
    if bound.is_null() {
        return Err(BindError::Fatal(Box::new(cannot_link_again(ce, filename))));
    }
    Ok(bound)
}

/// [`bind_class`] when the class table has `key` already: a taken runtime definition key
/// or an anonymous class is skipped, anything else cannot be declared twice.
#[cold]
#[inline(never)]
unsafe fn class_taken(
    key: *mut zend_string,
    ce: *mut zend_class_entry,
    filename: *mut zend_string,
) -> std::result::Result<*mut zend_class_entry, BindError> {
    let key_bytes = php::Reader::new().str(key).unwrap_or_default();
    if key_bytes.first() == Some(&0) || (*ce).ce_flags & php::ZEND_ACC_ANON_CLASS != 0 {
        return Ok(ce);
    }
    Err(BindError::Fatal(Box::new(cannot_declare(
        ce,
        &php_str(filename),
    ))))
}

/// The error of a class early-bound when compiled whose parent no longer takes it.
#[cold]
#[inline(never)]
unsafe fn cannot_link_again(ce: *mut zend_class_entry, filename: *mut zend_string) -> Fatal {
    let name = php::Reader::new().str((*ce).name).unwrap_or_default();
    Fatal {
        message: format!(
            "zopt: class {} was linked to its parent when compiled but cannot be now",
            String::from_utf8_lossy(name)
        ),
        filename: php_str(filename),
        lineno: (*ce).info.user.line_start,
    }
}

/// The main op_array to execute: a request copy (`emalloc`ed, the caller destroys and
/// frees it) of `main`, after its delayed early bindings (`early`, see
/// [`early_bindings`]); the auto globals the script names are armed. Inlined into the
/// hit's binding (a call of its own cost a fifth of it).
///
/// `persisted`: `main` is immutable and has no refcount (a run-time form), so the copy may
/// begin at one of its ops (`destroy_op_array` frees none of its arrays). Then a script
/// whose main op_array only declares classes early-bound here (its
/// `ZEND_DECLARE_CLASS_DELAYED` ops, then `RETURN` of a constant) gets a copy holding only
/// its `RETURN`: each of those ops would find its class bound and do nothing, and
/// `ZEND_INCLUDE_OR_EVAL` hands the constant of a lone `RETURN` over without executing the
/// op_array at all (no call frame, no symbol table of the includer rebuilt, no run-time
/// cache), as for a script whose classes the compiler bound (PHP without an opcode cache
/// compiles such a file, its parent declared, to that `RETURN` alone). When the include
/// discards that constant too ([`include_discards_result`]), no copy is made:
/// `ZEND_FAKE_OP_ARRAY` is what the include gets, as for a file it included already.
#[inline(always)]
pub(crate) unsafe fn bind_main(
    e: Engine,
    main: *const zend_op_array,
    early: &[EarlyBinding],
    auto_globals: [bool; JIT_GLOBAL_COUNT],
    persisted: bool,
) -> std::result::Result<*mut zend_op_array, BindError> {
    let declares = persisted && declares_only(main, early.len());
    // A class declared already, or whose parent is missing, is left to its op, which then
    // runs (its slot empty, it looks the class up).
    let lone_return = declares
        && (early.is_empty()
            || do_delayed_early_binding((*main).filename, early, ptr::null_mut())
                .map_err(|()| BindError::Bailout)?
                == early.len());
    // Most scripts name none.
    if auto_globals != [false; JIT_GLOBAL_COUNT] {
        ping_auto_globals(auto_globals);
    }
    if lone_return && include_discards_result() {
        return Ok(ZEND_FAKE_OP_ARRAY);
    }
    let copy = e.emalloc_op_array();
    ptr::copy_nonoverlapping(main, copy, 1);
    if lone_return {
        let last = (*copy).last as usize;
        (*copy).opcodes = (*copy).opcodes.add(last - 1);
        (*copy).last = 1;
    } else if !early.is_empty() && !declares {
        let run_time_cache = early_run_time_cache(copy);
        do_delayed_early_binding((*copy).filename, early, run_time_cache)
            .map_err(|()| BindError::Bailout)?;
    }
    Ok(copy)
}

/// `zend_compile.h`'s `ZEND_FAKE_OP_ARRAY`: what `zend_include_or_eval` returns for a file
/// `include_once` included already, which `ZEND_INCLUDE_OR_EVAL` skips.
const ZEND_FAKE_OP_ARRAY: *mut zend_op_array = usize::MAX as *mut zend_op_array;

/// Whether the script being compiled is for an `include` / `require` (`_once` or not) of
/// user code whose result is unused, executed by PHP's own executor, through zopt's own
/// compile hook (no extension wraps it, which could read the op_array): its
/// `ZEND_INCLUDE_OR_EVAL` then does nothing with `ZEND_FAKE_OP_ARRAY` but skip it, where
/// a lone `RETURN` would be copied, handed over unexecuted and freed. The include's op is
/// [`crate::cache::current_include_op`].
#[inline(always)]
unsafe fn include_discards_result() -> bool {
    crate::cache::current_include_op().is_some_and(|opline| {
        opline.extended_value != ZEND_EVAL && u32::from(opline.result_type) == php::IS_UNUSED
    }) && ptr::addr_of!(php::zend_compile_file)
        .read()
        .is_some_and(|f| f as *const std::ffi::c_void == crate::cache::compile_hook())
        && ptr::addr_of!(php::zend_execute_ex).read().is_some_and(|f| {
            // Both are the executable's (the library takes addresses through its GOT).
            f as *const std::ffi::c_void == php::execute_ex as *const std::ffi::c_void
        })
}

/// `zend_compile.h`: the include kind of an `eval()`.
const ZEND_EVAL: u32 = 1 << 0;

/// Whether the main op_array `main`, with `n_early` delayed early bindings, is
/// `ZEND_DECLARE_CLASS_DELAYED` ops and then a `RETURN` of a constant, nothing else (no
/// statement, no `EXT_STMT` of a debugger).
#[inline(always)]
unsafe fn declares_only(main: *const zend_op_array, n_early: usize) -> bool {
    let last = (*main).last as usize;
    // The optimizer may have removed some of the bindings' ops, never added one.
    if last == 0 || last > n_early + 1 {
        return false;
    }
    let ret = &*(*main).opcodes.add(last - 1);
    ret.opcode == ZEND_RETURN.0
        && u32::from(ret.op1_type) == php::IS_CONST
        && (0..last - 1).all(|n| (*(*main).opcodes.add(n)).opcode == ZEND_DECLARE_CLASS_DELAYED.0)
}

/// The run-time cache of the request's copy `main` of a main op_array with delayed early
/// bindings, allocated as `zend_accel_do_delayed_early_binding` allocates it (the executor
/// would allocate it when the script starts, and `destroy_op_array` frees it), so that
/// the classes bound early go into their ops' cache slots (which [`early_bindings`] found
/// inside the cache); NULL (the ops look the classes up) when `main` has a cache already or
/// keeps it elsewhere.
#[inline(always)]
unsafe fn early_run_time_cache(main: *mut zend_op_array) -> *mut std::ffi::c_void {
    let size = (*main).cache_size as usize;
    if !(*main).run_time_cache__ptr.is_null()
        || (*main).fn_flags & php::ZEND_ACC_HEAP_RT_CACHE == 0
        || size == 0
    {
        return ptr::null_mut();
    }
    let cache = php::_emalloc(size);
    ptr::write_bytes(cache.cast::<u8>(), 0, size);
    (*main).run_time_cache__ptr = cache.cast();
    cache
}

/// The bytes of the engine string `s` (empty for NULL), for a message.
///
/// # Safety
/// `s` is NULL or a live engine string.
unsafe fn php_str(s: *mut zend_string) -> PhpStr {
    php::Reader::new()
        .str(s)
        .map(PhpStr::from)
        .unwrap_or_default()
}

fn cannot_declare(ce: *mut zend_class_entry, filename: &PhpStr) -> Fatal {
    // SAFETY: `ce` is a class entry this module built.
    let (flags, name, line) = unsafe {
        (
            (*ce).ce_flags,
            php::Reader::new()
                .str((*ce).name)
                .unwrap_or_default()
                .to_vec(),
            (*ce).info.user.line_start,
        )
    };
    let kind = if flags & php::ZEND_ACC_INTERFACE != 0 {
        "interface"
    } else if flags & php::ZEND_ACC_TRAIT != 0 {
        "trait"
    } else if flags & php::ZEND_ACC_ENUM != 0 {
        "enum"
    } else {
        "class"
    };
    Fatal {
        message: format!(
            "Cannot declare {kind} {}, because the name is already in use",
            String::from_utf8_lossy(&name)
        ),
        filename: filename.clone(),
        lineno: line,
    }
}

extern "C" {
    /// shim.c: the loop of [`do_delayed_early_binding`]; false when PHP bailed out,
    /// `n_bound` the classes it bound.
    fn zopt_do_delayed_early_binding(
        filename: *mut zend_string,
        bindings: *const EarlyBinding,
        n: usize,
        run_time_cache: *mut std::ffi::c_void,
        n_bound: *mut usize,
    ) -> bool;
    /// shim.c: `zend_try_early_bind` inside `zend_try`.
    fn zopt_guarded_try_early_bind(
        ce: *mut zend_class_entry,
        parent_ce: *mut zend_class_entry,
        lcname: *mut zend_string,
        delayed: *mut zval,
        bailed_out: *mut bool,
    ) -> *mut zend_class_entry;
}

/// A `ZEND_DECLARE_CLASS_DELAYED` of a main op_array, as OPcache's `zend_early_binding`
/// keeps it: the op's literals, interned strings of the script.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct EarlyBinding {
    /// The class's lowercased name.
    pub(crate) lcname: *mut zend_string,
    /// Its runtime definition key (the class table holds the unlinked class under it).
    pub(crate) rtd_key: *mut zend_string,
    /// Its parent's lowercased name.
    pub(crate) lc_parent: *mut zend_string,
    /// The op's run-time cache slot (`extended_value`, a byte offset), where the class
    /// bound early is cached so that the op does not look it up ([`NO_CACHE_SLOT`]: none).
    pub(crate) cache_slot: u32,
    /// Zero: the struct has no padding, whose undefined bytes would make two persists of a
    /// script differ (see `file_image`).
    reserved: u32,
}

/// [`EarlyBinding::cache_slot`] of an op without one.
const NO_CACHE_SLOT: u32 = u32::MAX;

/// The delayed early bindings of `main`, in op order (none unless the compiler flagged
/// it `ZEND_ACC_EARLY_BINDING`), as `zend_accel_build_delayed_early_binding_list` finds
/// them in a script just compiled, before the optimizer runs; each with its op's cache slot.
///
/// # Safety
/// `main` is a live main op_array in pass-two form.
pub(crate) unsafe fn early_bindings(main: *const zend_op_array) -> Vec<EarlyBinding> {
    if (*main).fn_flags & php::ZEND_ACC_EARLY_BINDING == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for n in 0..(*main).last as usize {
        let op = (*main).opcodes.add(n);
        if (*op).opcode != ZEND_DECLARE_CLASS_DELAYED.0 {
            continue;
        }
        // RT_CONSTANT: op1 is the lowercased name, followed by the runtime definition key;
        // op2 the lowercased parent name.
        let lcname_zv = op
            .cast::<u8>()
            .offset((*op).op1.constant as i32 as isize)
            .cast::<zval>();
        let parent_zv = op
            .cast::<u8>()
            .offset((*op).op2.constant as i32 as isize)
            .cast::<zval>();
        out.push(EarlyBinding {
            lcname: (*lcname_zv).value.str_,
            rtd_key: (*lcname_zv.add(1)).value.str_,
            lc_parent: (*parent_zv).value.str_,
            // A slot outside the cache (none is) is not used.
            cache_slot: if (*op).extended_value as usize + 8 <= (*main).cache_size as usize {
                (*op).extended_value
            } else {
                NO_CACHE_SLOT
            },
            reserved: 0,
        });
    }
    out
}

/// `zend_accel_finalize_delayed_early_binding_list`: gives each of `bindings` (the
/// delayed early bindings of a script as compiled, in op order) the run-time cache slot of
/// its `ZEND_DECLARE_CLASS_DELAYED` in `main`, the same script's main op_array as
/// optimized (which may have renumbered the slots). A binding whose op the optimizer
/// removed (unreachable code) keeps no slot, and is still bound when the script is loaded,
/// as PHP's compiler binds it whether or not the declaration is reached.
///
/// # Safety
/// `main` is a live main op_array in pass-two form; the strings of `bindings` are live.
pub(crate) unsafe fn finalize_early_bindings(
    bindings: &mut [EarlyBinding],
    main: *const zend_op_array,
) {
    if bindings.is_empty() {
        return;
    }
    for b in bindings.iter_mut() {
        b.cache_slot = NO_CACHE_SLOT;
    }
    let r = php::Reader::new();
    let mut left = bindings.iter_mut();
    for found in early_bindings(main) {
        let key = r.str(found.rtd_key);
        // Skipped: the bindings whose op was removed.
        let Some(b) = left.by_ref().find(|b| r.str(b.rtd_key) == key) else {
            return;
        };
        b.cache_slot = found.cache_slot;
    }
}

/// `zend_accel_do_delayed_early_binding`: binds each class of `bindings` (the delayed
/// early bindings of the main op_array of `filename`) whose parent is already known, so it
/// exists before the script runs (the opcode finds it bound and does nothing). With
/// `run_time_cache` (the main op_array's, NULL for none), each class bound is also put in
/// its op's cache slot, as OPcache does, so that the op does not look it up again. The
/// number of classes bound; `Err`: PHP bailed out (to propagate).
///
/// # Safety
/// The strings of `bindings` are live; `run_time_cache` is NULL or the run-time cache of
/// the main op_array `bindings` were found in; runs on PHP's thread in a request.
pub(crate) unsafe fn do_delayed_early_binding(
    filename: *mut zend_string,
    bindings: &[EarlyBinding],
    run_time_cache: *mut std::ffi::c_void,
) -> std::result::Result<usize, ()> {
    let mut bound = 0;
    if zopt_do_delayed_early_binding(
        filename,
        bindings.as_ptr(),
        bindings.len(),
        run_time_cache,
        &mut bound,
    ) {
        Ok(bound)
    } else {
        Err(())
    }
}

/// Registers `__COMPILER_HALT_OFFSET__` for `filename`, as `zend_accel_load_script` does.
pub(crate) unsafe fn register_halt_offset(filename: *mut zend_string, offset: u64) {
    // zend_mangle_property_name copies each part with its terminating NUL.
    const NAME: &std::ffi::CStr = c"__COMPILER_HALT_OFFSET__";
    let r = php::Reader::new();
    let file = r.str(filename).unwrap_or_default();
    let mangled = php::zend_mangle_property_name(
        NAME.as_ptr(),
        NAME.count_bytes(),
        file.as_ptr().cast(),
        file.len(),
        false,
    );
    let eg = ptr::addr_of_mut!(php::executor_globals);
    if php::zend_hash_find((*eg).zend_constants, mangled).is_null() {
        let m = r.str(mangled).unwrap_or_default();
        php::zend_register_long_constant(
            m.as_ptr().cast(),
            m.len(),
            offset as i64,
            php::CONST_CS as c_int,
            0,
        );
    }
    Engine::new().release_string(mangled);
}

/// The just-in-time auto globals: compiling a script that names one of them arms it
/// (`zend_is_auto_global`), and OPcache keeps which ones a script armed
/// (`ping_auto_globals_mask`) to arm them when it serves the script.
const JIT_GLOBALS: [&[u8]; JIT_GLOBAL_COUNT] = [b"_SERVER", b"_ENV", b"_REQUEST"];
pub(crate) const JIT_GLOBAL_COUNT: usize = 3;

/// Which [`JIT_GLOBALS`] any op_array of the script (main, functions, methods, closures)
/// names: a string literal with the global's name.
fn auto_globals(view: ScriptView<'_>) -> [bool; JIT_GLOBALS.len()] {
    let mut named = [false; JIT_GLOBALS.len()];
    view.for_each_op_array(|oa| {
        for s in oa.literals().filter_map(|lit| lit.string()) {
            for (k, g) in JIT_GLOBALS.iter().enumerate() {
                named[k] |= s == *g;
            }
        }
    });
    named
}

/// Arms the auto globals a served script names, as compiling it would have.
#[cold]
#[inline(never)]
unsafe fn ping_auto_globals(named: [bool; JIT_GLOBALS.len()]) {
    let cg = ptr::addr_of_mut!(php::compiler_globals);
    if (*cg).auto_globals.is_null() {
        return;
    }
    for (g, _) in JIT_GLOBALS.iter().zip(named).filter(|(_, n)| *n) {
        php::zend_is_auto_global_str(g.as_ptr().cast(), g.len());
    }
}

// ---------------------------------------------------------------------------------------
// Hash tables.
// ---------------------------------------------------------------------------------------

/// `zend_hash_init(ht, size, NULL, NULL, 0)`: a table that lends its values (no destructor).
pub(crate) unsafe fn init_table(ht: *mut HashTable, size: usize) {
    php::_zend_hash_init(ht, size as u32, None, false);
}

extern "C" {
    /// Zend/zend_hash.c: `zend_hash_find` for a key whose hash is set.
    fn zend_hash_find_known_hash(ht: *const HashTable, key: *const zend_string) -> *mut zval;
}

/// Whether [`append_ptr`] may add `key` to `ht`: an initialized hash (not packed) with room
/// for one more bucket, and an interned key whose hash is set (a key of the segment, or one
/// of PHP's own).
#[inline(always)]
unsafe fn can_append(ht: *const HashTable, key: *const zend_string) -> bool {
    (*ht).u.flags & (php::HASH_FLAG_PACKED | php::HASH_FLAG_UNINITIALIZED) == 0
        && (*ht).nNumUsed < (*ht).nTableSize
        && (*key).h != 0
        && crate::engine::is_interned(key)
}

/// `_zend_hash_append_ptr(ht, key, p)`: `p` added under `key` in the next bucket, without
/// looking for `key` (the caller knows it is absent) or resizing (see [`can_append`]).
#[inline(always)]
unsafe fn append_ptr(ht: *mut HashTable, key: *mut zend_string, p: *mut std::ffi::c_void) {
    let idx = (*ht).nNumUsed;
    (*ht).nNumUsed = idx + 1;
    let data = (*ht).__bindgen_anon_1.arData;
    let b = data.add(idx as usize);
    (*b).val.value.ptr = p;
    (*b).val.u1.type_info = IS_PTR;
    (*b).key = key;
    (*b).h = (*key).h;
    // The hash part lies before the buckets: HT_HASH_EX(arData, h | nTableMask), a
    // negative index; on 64-bit PHP a bucket's place in a chain is its index.
    let n_index = ((*key).h as u32 | (*ht).nTableMask) as i32;
    let head = data.cast::<u32>().offset(n_index as isize);
    (*b).val.u2.next = *head;
    *head = idx;
    (*ht).nNumOfElements += 1;
}

/// `zend_hash_add_ptr`; false when the key is taken.
pub(crate) unsafe fn add_ptr(
    ht: *mut HashTable,
    key: *mut zend_string,
    p: *mut std::ffi::c_void,
) -> bool {
    let mut zv = zval::default();
    zv.value.ptr = p;
    zv.u1.type_info = IS_PTR;
    !php::zend_hash_add(ht, key, &mut zv).is_null()
}

/// The (key, value) pairs of a table, in order, from bucket `from` on (a NULL key for an
/// integer-keyed bucket).
pub(crate) unsafe fn entries(ht: &HashTable, from: u32) -> Vec<(*mut zend_string, *mut zval)> {
    let mut out = Vec::with_capacity(ht.nNumUsed.saturating_sub(from) as usize);
    for i in from as usize..ht.nNumUsed as usize {
        let b = ht.__bindgen_anon_1.arData.add(i);
        if php::z_type(&(*b).val) != php::IS_UNDEF as u8 {
            out.push(((*b).key, ptr::addr_of_mut!((*b).val)));
        }
    }
    out
}

/// Frees a table that only lent its values (see [`init_table`]): the buckets go, the values
/// stay where they were moved or still belong.
pub(crate) unsafe fn release_table(ht: &mut HashTable) {
    ht.nNumUsed = 0;
    php::zend_hash_destroy(ht);
}

// ---------------------------------------------------------------------------------------
// Op arrays.
// ---------------------------------------------------------------------------------------

/// The deepest closure nesting built (the .zop parser's limit).
const MAX_FUNC_NESTING: u32 = zend_ir::zop::MAX_FUNC_NESTING as u32;

fn opt_interned(e: Engine, s: &Option<PhpStr>) -> *mut zend_string {
    s.as_ref()
        .map_or(ptr::null_mut(), |s| e.interned_string(s.as_bytes()))
}

fn opt_string(e: Engine, s: &Option<PhpStr>) -> *mut zend_string {
    s.as_ref()
        .map_or(ptr::null_mut(), |s| e.new_string(s.as_bytes()))
}

impl<'a> Cx<'_, 'a> {
    unsafe fn new_op_array(
        &self,
        m: &OpArray,
        code: OpArrayView<'a>,
        scope: *mut zend_class_entry,
        depth: u32,
    ) -> Result<*mut zend_op_array> {
        // Functions, methods and closures live in the compiler's arena (zend_compile_func_decl).
        let oa = self
            .e
            .arena_alloc(std::mem::size_of::<zend_op_array>())
            .cast::<zend_op_array>();
        self.op_array_into(m, code, scope, oa, depth)?;
        Ok(oa)
    }

    /// Fills `*oa` (uninitialised memory) as `init_op_array` and the compiler would, from
    /// `m` (the op_array without its code) and `code` (its code in the entry).
    unsafe fn op_array_into(
        &self,
        m: &OpArray,
        code: OpArrayView<'a>,
        scope: *mut zend_class_entry,
        oa: *mut zend_op_array,
        depth: u32,
    ) -> Result<()> {
        let e = self.e;
        if depth > MAX_FUNC_NESTING {
            return fail("closures nested too deeply");
        }
        if m.scope.is_some() && scope.is_null() {
            return fail("method outside its class");
        }
        let code = EntryCode {
            view: code,
            strings: self.strings,
        };
        if !self.checked {
            writeback::check_code(&code, m)?;
        }
        ptr::write(oa, zend_op_array::default());
        let refcount = e.emalloc(4).cast::<u32>();
        *refcount = 1;
        (*oa).type_ = m.type_;
        (*oa).refcount = refcount;
        // The model keeps fn_flags as the optimizer sees them; the op_array is in pass-two
        // form.
        (*oa).fn_flags = m.fn_flags | php::ZEND_ACC_DONE_PASS_TWO;
        (*oa).function_name = opt_interned(e, &m.function_name);
        (*oa).scope = if m.scope.is_some() {
            scope
        } else {
            ptr::null_mut()
        };
        (*oa).num_args = m.num_args;
        (*oa).required_num_args = m.required_num_args;
        (*oa).arg_info = arg_infos(e, m)?;
        (*oa).attributes = attributes(e, &m.attributes);
        (*oa).static_variables = match &m.static_variables {
            None => ptr::null_mut(),
            Some(vars) => static_variables(e, vars),
        };
        (*oa).filename = e.interned_string(m.filename.as_bytes());
        (*oa).line_start = m.line_start;
        (*oa).line_end = m.line_end;
        (*oa).doc_comment = opt_string(e, &m.doc_comment);
        writeback::install_arrays(e, oa, &code, m, None);
        if !m.dynamic_func_defs.is_empty() {
            let mut defs = Vec::with_capacity(m.dynamic_func_defs.len());
            for (i, (def, def_code)) in m
                .dynamic_func_defs
                .iter()
                .zip(code.view.dynamic_func_defs())
                .enumerate()
            {
                defs.push(
                    self.new_op_array(def, def_code, scope, depth + 1)
                        .ctx(|| format!("dynamic[{i}]"))?,
                );
            }
            (*oa).dynamic_func_defs = e.array_of(&defs);
            (*oa).num_dynamic_func_defs = defs.len() as u32;
        }
        if !(*oa).arg_info.is_null() {
            php::zend_set_function_arg_flags(oa.cast::<zend_function>());
        }
        Ok(())
    }
}

fn static_variables(e: Engine, vars: &[(PhpStr, Literal)]) -> *mut HashTable {
    let entries: ir::PhpArray = vars
        .iter()
        .map(|(name, value)| (ir::ArrayKey::Str(name.clone()), value.clone()))
        .collect();
    e.new_array(&entries)
}

/// `arg_info[-1..num_args(+1)]` in one block; returns the pointer to `arg_info[0]`.
unsafe fn arg_infos(e: Engine, m: &OpArray) -> Result<*mut php::zend_arg_info> {
    let has_return = m.fn_flags & ir::ZEND_ACC_HAS_RETURN_TYPE != 0;
    if m.return_info.is_some() != has_return {
        return fail("return type flag and return info disagree");
    }
    let mut infos = Vec::with_capacity(m.arg_info.len() + 1);
    for info in m.return_info.iter().chain(&m.arg_info) {
        infos.push(php::zend_arg_info {
            name: opt_interned(e, &info.name),
            type_: zend_type(e, &info.type_, 0)?,
            default_value: opt_string(e, &info.default_value),
        });
    }
    let p = e.array_of(&infos);
    Ok(if p.is_null() || !has_return {
        p
    } else {
        p.add(1)
    })
}

unsafe fn zend_type(e: Engine, t: &ZendType, depth: usize) -> Result<php::zend_type> {
    if depth > 4 {
        return fail("type nested too deeply");
    }
    let ptr = match &t.names {
        TypeNames::None => ptr::null_mut(),
        TypeNames::Name(name) => e.interned_string(name.as_bytes()).cast(),
        TypeNames::List(types) => {
            // Compile-time type lists are arena-allocated (_ZEND_TYPE_ARENA_BIT).
            let list = e.arena_alloc(TYPE_LIST_HEADER + ZEND_TYPE_SIZE * types.len());
            list.cast::<u32>().write(types.len() as u32);
            for (i, sub) in types.iter().enumerate() {
                let sub = zend_type(e, sub, depth + 1)?;
                list.add(TYPE_LIST_HEADER + ZEND_TYPE_SIZE * i)
                    .cast::<php::zend_type>()
                    .write(sub);
            }
            list.cast()
        }
    };
    Ok(php::zend_type {
        ptr,
        type_mask: t.type_mask,
    })
}

/// A `HashTable *` of attributes (NULL when none), built with `zend_add_attribute`.
unsafe fn attributes(e: Engine, attrs: &[Attribute]) -> *mut HashTable {
    let mut table: *mut HashTable = ptr::null_mut();
    for a in attrs {
        let name = e.interned_string(a.name.as_bytes());
        let attr = php::zend_add_attribute(
            &mut table,
            name,
            a.args.len() as u32,
            a.flags,
            a.offset,
            a.lineno,
        );
        e.release_string(name);
        let args = ptr::addr_of_mut!((*attr).args).cast::<php::zend_attribute_arg>();
        for (i, arg) in a.args.iter().enumerate() {
            let slot = args.add(i);
            (*slot).name = opt_interned(e, &arg.name);
            (*slot).value = e.zval(&arg.value);
        }
    }
    table
}

// ---------------------------------------------------------------------------------------
// Classes.
// ---------------------------------------------------------------------------------------

/// The unmangled property name: what follows the last NUL of `\0Class\0name` /
/// `\0*\0name` (a declared property name has no NUL, an anonymous class name does).
fn unmangled(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&b| b == 0) {
        Some(p) => &name[p + 1..],
        None => name,
    }
}

impl<'a> Cx<'_, 'a> {
    /// Declares class `m` as the compiler does, its methods' code read from `view`.
    unsafe fn class(
        &self,
        m: &ClassEntry,
        view: ClassView<'a>,
        link: Linking,
    ) -> Result<*mut zend_class_entry> {
        let e = self.e;
        let ce = e
            .arena_alloc(std::mem::size_of::<zend_class_entry>())
            .cast::<zend_class_entry>();
        ptr::write(ce, zend_class_entry::default());
        (*ce).type_ = php::ZEND_USER_CLASS as std::ffi::c_char;
        (*ce).name = e.interned_string(m.name.as_bytes());
        php::zend_initialize_class_data(ce, true);
        // Linking adds LINKED and the RESOLVED_* flags itself.
        let flags = if link == Linking::EarlyBound {
            m.ce_flags
                & !(php::ZEND_ACC_LINKED
                    | php::ZEND_ACC_RESOLVED_PARENT
                    | php::ZEND_ACC_RESOLVED_INTERFACES)
        } else {
            m.ce_flags
        };
        (*ce).ce_flags = flags;
        (*ce).info.user.filename = e.interned_string(m.filename.as_bytes());
        (*ce).info.user.line_start = m.line_start;
        (*ce).info.user.line_end = m.line_end;
        (*ce).info.user.doc_comment = opt_string(e, &m.doc_comment);
        (*ce).__bindgen_anon_1.parent_name = opt_interned(e, &m.parent_name);
        (*ce).attributes = attributes(e, &m.attributes);
        (*ce).enum_backing_type = u32::from(m.enum_backing_type);

        let own = |declaring: &PhpStr| link != Linking::EarlyBound || *declaring == m.name;
        if link != Linking::EarlyBound {
            (*ce).num_interfaces = m.interface_names.len() as u32;
            (*ce).__bindgen_anon_3.interface_names = class_names(e, &m.interface_names);
        }
        traits(e, ce, m);

        for c in m.constants.iter().filter(|c| own(&c.ce)) {
            let name = e.interned_string(c.name.as_bytes());
            let mut value = e.zval(&c.value);
            let decl = php::zend_declare_class_constant_ex(
                ce,
                name,
                &mut value,
                c.flags as c_int,
                opt_string(e, &c.doc_comment),
            );
            if decl.is_null() {
                return fail(format!("constant {} was refused", c.name));
            }
            (*decl).value.u2.extra = c.flags;
            (*decl).attributes = attributes(e, &c.attributes);
        }

        let mut declared: Vec<*mut zend_property_info> = Vec::new();
        for p in m.properties.iter().filter(|p| own(&p.ce)) {
            let name = e.interned_string(unmangled(p.name.as_bytes()));
            let mut value = match &p.default {
                Some(v) => e.zval(v),
                None => zval::default(), // IS_UNDEF: a typed property without default
            };
            let info = php::zend_declare_typed_property(
                ce,
                name,
                &mut value,
                p.flags as c_int,
                opt_string(e, &p.doc_comment),
                zend_type(e, &p.type_, 0)?,
            );
            (*info).flags = p.flags;
            (*info).attributes = attributes(e, &p.attributes);
            if link != Linking::EarlyBound && (*info).offset != p.offset {
                return fail(format!(
                    "property ${} got offset {}, compiled at {}",
                    p.name,
                    (*info).offset,
                    p.offset
                ));
            }
            declared.push(info);
        }

        for ((key, method), (_, code)) in
            m.methods.iter().zip(view.methods()).filter(|((_, oa), _)| {
                link != Linking::EarlyBound || oa.scope.as_ref() == Some(&m.name)
            })
        {
            let oa = self
                .new_op_array(method, code, ce, 1)
                .ctx(|| format!("method {key}"))?;
            let lcname = e.interned_string(key.as_bytes());
            if !add_ptr(&mut (*ce).function_table, lcname, oa.cast()) {
                return fail(format!("method {key} declared twice"));
            }
            php::zend_add_magic_method(ce, oa.cast::<zend_function>(), lcname);
        }

        // Declaring adjusted the flags (type hints, AST defaults); the compiler's are the model's.
        (*ce).ce_flags = flags;
        if link == Linking::Simple {
            properties_info_table(e, ce, &declared);
        }
        Ok(ce)
    }
}

/// `zend_build_properties_info_table` for a class without parent: each declared instance
/// property at its slot.
unsafe fn properties_info_table(
    e: Engine,
    ce: *mut zend_class_entry,
    declared: &[*mut zend_property_info],
) {
    let count = (*ce).default_properties_count.max(0) as usize;
    if count == 0 {
        return;
    }
    let table = e
        .arena_alloc(std::mem::size_of::<*mut zend_property_info>() * count)
        .cast::<*mut zend_property_info>();
    ptr::write_bytes(table, 0, count);
    for &p in declared {
        if (*p).flags & php::ZEND_ACC_STATIC == 0 {
            let slot = (((*p).offset - php::OBJ_PROP_BASE) / php::ZVAL_SIZE) as usize;
            if slot < count {
                table.add(slot).write(p);
            }
        }
    }
    (*ce).properties_info_table = table;
}

/// An array of `zend_class_name` (interned names), NULL when empty.
fn class_names(e: Engine, names: &[ir::ClassName]) -> *mut php::zend_class_name {
    let names: Vec<php::zend_class_name> = names
        .iter()
        .map(|n| php::zend_class_name {
            name: e.interned_string(n.name.as_bytes()),
            lc_name: e.interned_string(n.lc_name.as_bytes()),
        })
        .collect();
    e.array_of(&names)
}

/// `num_traits`, `trait_names`, `trait_aliases` and `trait_precedences` (NULL-terminated
/// arrays of single allocations, as zend_compile_use_trait builds them).
unsafe fn traits(e: Engine, ce: *mut zend_class_entry, m: &ClassEntry) {
    (*ce).num_traits = m.trait_names.len() as u32;
    (*ce).trait_names = class_names(e, &m.trait_names);
    let method_ref = |r: &ir::TraitMethodRef| php::zend_trait_method_reference {
        method_name: e.interned_string(r.method_name.as_bytes()),
        class_name: opt_interned(e, &r.class_name),
    };
    if !m.trait_aliases.is_empty() {
        let mut list: Vec<*mut php::zend_trait_alias> = m
            .trait_aliases
            .iter()
            .map(|a| {
                let p = e
                    .emalloc(std::mem::size_of::<php::zend_trait_alias>())
                    .cast::<php::zend_trait_alias>();
                p.write(php::zend_trait_alias {
                    trait_method: method_ref(&a.method),
                    alias: opt_interned(e, &a.alias),
                    modifiers: a.modifiers,
                });
                p
            })
            .collect();
        list.push(ptr::null_mut());
        (*ce).trait_aliases = e.array_of(&list);
    }
    if !m.trait_precedences.is_empty() {
        let mut list: Vec<*mut php::zend_trait_precedence> = m
            .trait_precedences
            .iter()
            .map(|p| {
                let n = p.exclude_class_names.len();
                let size = std::mem::size_of::<php::zend_trait_precedence>()
                    + std::mem::size_of::<*mut zend_string>() * n.saturating_sub(1);
                let q = e.emalloc(size).cast::<php::zend_trait_precedence>();
                ptr::addr_of_mut!((*q).trait_method).write(method_ref(&p.method));
                (*q).num_excludes = n as u32;
                let names = ptr::addr_of_mut!((*q).exclude_class_names).cast::<*mut zend_string>();
                for (i, name) in p.exclude_class_names.iter().enumerate() {
                    names.add(i).write(e.interned_string(name.as_bytes()));
                }
                q
            })
            .collect();
        list.push(ptr::null_mut());
        (*ce).trait_precedences = e.array_of(&list);
    }
}
