//! Converts a compiled `zend_script` in its "pass two" form (what OPcache hands to registered
//! optimizer passes) into the lossless [`zend_ir::Script`] model in "pass one" form.
//!
//! Pass two (`pass_two()` in zend_opcode.c) turned operands into run-time form; this module
//! undoes it the way `zend_revert_pass_two()` (Zend/Optimizer/zend_optimizer.c) and the
//! optimizer's own readers see it:
//!
//! - CONST operands are byte offsets from the opline to their literal
//!   (`ZEND_PASS_TWO_UPDATE_CONSTANT`, relative with `ZEND_USE_ABS_CONST_ADDR=0`) and become
//!   literal indices;
//! - TMP/VAR/CV operands are byte offsets into the call frame (`EX_NUM_TO_VAR`) and become
//!   variable numbers (`EX_VAR_TO_NUM`);
//! - jump targets (operands the VM flags mark `JMP_ADDR`, `extended_value` of
//!   `ZEND_VM_EXT_JMP_ADDR` opcodes, SWITCH/MATCH jump tables) are byte offsets from the
//!   opline (`ZEND_USE_ABS_JMP_ADDR=0`) and become op numbers;
//! - the smart-branch bits of `result_type` move to [`zend_ir::Op::smart_branch`], and
//!   `ZEND_ACC_DONE_PASS_TWO` is cleared from `fn_flags`.
//!
//! Anything that does not fit (unknown opcode, unknown zval type, an offset that does not
//! land on an op, literal or variable of the op_array) is an error naming where it is.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;

use zend_ir::model as ir;
use zend_ir::opcode::{
    ZEND_CATCH, ZEND_EXIT, ZEND_MATCH, ZEND_RECV_VARIADIC, ZEND_SWITCH_LONG, ZEND_SWITCH_STRING,
    ZEND_VM_OP_CONSTRUCTOR, ZEND_VM_OP_MASK, ZEND_VM_OP_NEXT, ZEND_VM_OP_THIS,
};
use zend_ir::{LiteralId, OpNum, Opcode, Operand, PhpStr, VarNum};

use crate::php::{self, *};

/// Deepest nesting followed before giving up, counted like the `.zop` parser counts it
/// (arrays, constant ASTs, type lists and dynamic_func_defs together), so that every
/// recording parses back; it also bounds the native stack, which is PHP's.
const MAX_DEPTH: u32 = zend_ir::zop::MAX_DEPTH as u32;

/// Longest NULL-terminated pointer array (trait aliases, precedences) accepted.
const MAX_NULL_TERMINATED: usize = 1 << 20;

/// Why a script could not be converted: what is wrong, and where (outermost first).
#[derive(Debug)]
pub struct ConvError {
    what: String,
    context: Vec<String>,
}

impl ConvError {
    fn new(what: impl Into<String>) -> Self {
        ConvError {
            what: what.into(),
            context: Vec::new(),
        }
    }
}

impl fmt::Display for ConvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.context.iter().rev() {
            write!(f, "{c}: ")?;
        }
        f.write_str(&self.what)
    }
}

type Result<T> = std::result::Result<T, ConvError>;

fn fail<T>(what: impl Into<String>) -> Result<T> {
    Err(ConvError::new(what))
}

/// Adds a "where" to an error on its way out.
trait Context {
    fn ctx(self, f: impl FnOnce() -> String) -> Self;
}

impl<T> Context for Result<T> {
    fn ctx(self, f: impl FnOnce() -> String) -> Self {
        self.map_err(|mut e| {
            e.context.push(f());
            e
        })
    }
}

trait OrFail<T> {
    fn or_fail(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> OrFail<T> for Option<T> {
    fn or_fail(self, what: impl FnOnce() -> String) -> Result<T> {
        self.ok_or_else(|| ConvError::new(what()))
    }
}

/// Converts every element of an engine array, naming a failing one as `what[i]`.
fn each<T, U>(items: &[T], what: &str, mut convert: impl FnMut(&T) -> Result<U>) -> Result<Vec<U>> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(convert(item).ctx(|| format!("{what}[{i}]"))?);
    }
    Ok(out)
}

fn phpstr(bytes: &[u8]) -> PhpStr {
    PhpStr(bytes.to_vec())
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A count PHP stores as `int` that must not be negative.
fn count(value: i32, what: &str) -> Result<u32> {
    u32::try_from(value).map_err(|_| ConvError::new(format!("negative {what} ({value})")))
}

/// Converts the script PHP hands to an optimizer pass.
pub fn script(r: Reader<'_>, script: &zend_script) -> Result<ir::Script> {
    Converter {
        r,
        func_nesting: Cell::new(0),
    }
    .script(script)
}

impl<'a> Converter<'a> {
    fn script(&self, script: &'a zend_script) -> Result<ir::Script> {
        let r = self.r;
        let conv = self;
        let filename = r.str(script.filename).map(phpstr).unwrap_or_default();
        let main_op_array = conv
            .op_array(&script.main_op_array, 0)
            .ctx(|| "main script".to_string())?;

        let mut function_table = Vec::new();
        for (key, zv) in r.hash(&script.function_table) {
            let key = conv.str_key(key).ctx(|| "function table".to_string())?;
            let name = show(key.as_bytes());
            let func = conv.function(zv, 0).ctx(|| format!("function {name}"))?;
            function_table.push((key, Box::new(func)));
        }

        let mut class_table = Vec::new();
        for (key, zv) in r.hash(&script.class_table) {
            let key = conv.str_key(key).ctx(|| "class table".to_string())?;
            let name = show(key.as_bytes());
            let ce = conv
                .ptr::<zend_class_entry>(zv)
                .and_then(|ce| conv.class(ce))
                .ctx(|| format!("class table entry {name:?}"))?;
            class_table.push((key, ce));
        }

        let compiler_halt_offset = compiler_halt_offset(&filename.0)?;
        let early_bindings = ir::EarlyBinding::delayed_of(&main_op_array).or_fail(|| {
            "main script: a ZEND_DECLARE_CLASS_DELAYED without its name literals".to_string()
        })?;
        Ok(ir::Script {
            filename,
            main_op_array: Box::new(main_op_array),
            function_table,
            class_table,
            compiler_halt_offset,
            // What the compiler said is not in the compiled script: the cache's miss path
            // records it (`cache::compile_and_store`).
            warnings: Vec::new(),
            early_bindings,
        })
    }
}

extern "C" {
    /// `ZEND_API zval *zend_get_constant_str(const char *name, size_t name_len)`
    /// (Zend/zend_constants.c).
    fn zend_get_constant_str(name: *const std::ffi::c_char, name_len: usize) -> *mut zval;
}

/// The script's `__COMPILER_HALT_OFFSET__`, as OPcache reads it into
/// `zend_persistent_script.compiler_halt_offset` (zend_persist.c): `zend_compile_halt_compiler`
/// registered it in `EG(zend_constants)` under the name `zend_mangle_property_name` makes of
/// `__COMPILER_HALT_OFFSET__` and the file name (`"\0__COMPILER_HALT_OFFSET__\0" + filename`).
/// Looked up by that exact name, `zend_get_constant_str` is a plain `EG(zend_constants)` hash
/// lookup (its `__COMPILER_HALT_OFFSET__` and special-constant fallbacks only match other
/// names). Like OPcache's, the lookup sees a constant registered by an earlier compile of the
/// same file name in this request.
fn compiler_halt_offset(filename: &[u8]) -> Result<Option<u64>> {
    if filename.is_empty() {
        return Ok(None);
    }
    let mut name = b"\0__COMPILER_HALT_OFFSET__\0".to_vec();
    name.extend_from_slice(filename);
    // SAFETY: `name` is `name.len()` readable bytes; the engine is running (this is called
    // from an optimizer pass), so EG(zend_constants) is live, and a found constant lives at
    // least as long as the compiled script.
    let zv = unsafe { zend_get_constant_str(name.as_ptr().cast(), name.len()).as_ref() };
    let Some(zv) = zv else {
        return Ok(None);
    };
    if u32::from(z_type(zv)) != IS_LONG {
        return fail(format!(
            "__COMPILER_HALT_OFFSET__ is a {}, not an int",
            zval_type_name(z_type(zv))
        ));
    }
    let offset = z_lval(zv);
    u64::try_from(offset)
        .map(Some)
        .map_err(|_| ConvError::new(format!("negative __COMPILER_HALT_OFFSET__ ({offset})")))
}

struct Converter<'a> {
    r: Reader<'a>,
    /// op_arrays being converted, outermost to innermost (main or function, then each
    /// dynamic_func_def): bounded as the .zop parser bounds it, so every recording parses.
    func_nesting: Cell<usize>,
}

/// Addresses and sizes of the op_array an op belongs to, to decode its operands.
struct Frame {
    opcodes: usize,
    last: u32,
    literals: usize,
    last_literal: u32,
    last_var: u32,
    t: u32,
}

impl Frame {
    /// The op a byte offset from the op at `op_addr` lands on.
    fn jump_target(&self, op_addr: usize, offset: u32) -> Result<OpNum> {
        let n = element_at(op_addr, offset, self.opcodes, php::ZEND_OP_SIZE, self.last).map_err(
            |e| match e {
                Misplaced::Between => ConvError::new(format!(
                    "jump offset {} does not land on an op boundary",
                    offset as i32
                )),
                Misplaced::Outside(n) => ConvError::new(format!(
                    "jump target {n} (offset {}) outside ops 0..{}",
                    offset as i32, self.last
                )),
            },
        )?;
        Ok(OpNum::new(n))
    }

    /// The literal a CONST operand's byte offset from the op at `op_addr` lands on.
    fn literal(&self, op_addr: usize, offset: u32) -> Result<LiteralId> {
        let n = element_at(
            op_addr,
            offset,
            self.literals,
            php::ZVAL_SIZE,
            self.last_literal,
        )
        .map_err(|e| match e {
            Misplaced::Between => ConvError::new(format!(
                "constant offset {} does not land on a literal",
                offset as i32
            )),
            Misplaced::Outside(n) => ConvError::new(format!(
                "literal {n} (offset {}) outside literals 0..{}",
                offset as i32, self.last_literal
            )),
        })?;
        Ok(LiteralId::new(n))
    }

    /// The variable number of a frame byte offset (`EX_VAR_TO_NUM`), checked against the CV
    /// or TMP/VAR range.
    fn var(&self, offset: u32, cv: bool) -> Result<VarNum> {
        if offset % php::ZVAL_SIZE != 0 || offset / php::ZVAL_SIZE < php::ZEND_CALL_FRAME_SLOT {
            return fail(format!("variable offset {offset} is not a frame slot"));
        }
        let n = offset / php::ZVAL_SIZE - php::ZEND_CALL_FRAME_SLOT;
        let (lo, hi) = if cv {
            (0, self.last_var)
        } else {
            (self.last_var, self.last_var.saturating_add(self.t))
        };
        if n < lo || n >= hi {
            let kind = if cv { "CV" } else { "TMP/VAR" };
            return fail(format!(
                "{kind} slot {n} outside {lo}..{hi} (last_var={}, T={})",
                self.last_var, self.t
            ));
        }
        Ok(VarNum::new(n))
    }
}

impl<'a> Converter<'a> {
    fn str_key(&self, key: HashKey<'a>) -> Result<PhpStr> {
        match key {
            HashKey::Str(s) => Ok(phpstr(s)),
            HashKey::Long(n) => fail(format!("integer key {n} where a name was expected")),
        }
    }

    /// The `T` an `IS_PTR` table element points to.
    fn ptr<T>(&self, zv: &'a zval) -> Result<&'a T> {
        let ty = z_type(zv);
        if ty != IS_PTR as u8 && ty != IS_ALIAS_PTR as u8 {
            return fail(format!(
                "table element of zval type {ty}, expected a pointer"
            ));
        }
        self.r
            .z_ptr_as::<T>(zv)
            .or_fail(|| "NULL table element".to_string())
    }

    fn string(&self, s: *const zend_string, what: &str) -> Result<PhpStr> {
        self.r
            .str(s)
            .map(phpstr)
            .or_fail(|| format!("{what} is NULL"))
    }

    fn opt_string(&self, s: *const zend_string) -> Option<PhpStr> {
        self.r.str(s).map(phpstr)
    }

    /// A method table entry of a linked class whose code is not to be read (see
    /// [`ir::MethodStub`]: an internal function, or a trait method's copy whose code PHP's
    /// own passes may already have freed), or `None` for a method to convert. Only
    /// preloading links the classes an optimizer pass sees.
    fn method_stub(
        &self,
        ce: &'a zend_class_entry,
        position: usize,
        key: &PhpStr,
        zv: &'a zval,
    ) -> Result<Option<ir::MethodStub>> {
        let func = self.ptr::<zend_function>(zv)?;
        // SAFETY: every zend_function variant starts with the common header.
        let (fn_flags, scope) = unsafe { (func.common.fn_flags, func.common.scope) };
        let internal = self.r.function(func).0 == zend_ir::ZEND_INTERNAL_FUNCTION;
        let trait_clone = ce.ce_flags & php::ZEND_ACC_LINKED != 0
            && fn_flags & zend_ir::ZEND_ACC_TRAIT_CLONE != 0;
        if !internal && !trait_clone {
            return Ok(None);
        }
        let scope = self
            .r
            .deref(scope)
            .or_fail(|| "a method without a scope".to_string())?;
        Ok(Some(ir::MethodStub {
            position: u32::try_from(position)
                .map_err(|_| ConvError::new("too many methods".to_string()))?,
            key: key.clone(),
            scope: self.string(scope.name, "the method's class name")?,
            fn_flags,
        }))
    }

    /// A user function of a function table.
    fn function(&self, zv: &'a zval, depth: u32) -> Result<ir::OpArray> {
        let func = self.ptr::<zend_function>(zv)?;
        match self.r.function(func) {
            (_, Some(op_array)) => self.op_array(op_array, depth),
            (ty, None) => fail(format!(
                "function of type {ty} (only user functions, type {}, can be recorded)",
                zend_ir::ZEND_USER_FUNCTION
            )),
        }
    }

    fn op_array(&self, oa: &'a zend_op_array, depth: u32) -> Result<ir::OpArray> {
        let r = self.r;
        if oa.type_ != zend_ir::ZEND_USER_FUNCTION && oa.type_ != zend_ir::ZEND_EVAL_CODE {
            return fail(format!("op_array of type {}", oa.type_));
        }
        let function_name = self.opt_string(oa.function_name);
        let scope = match r.deref(oa.scope) {
            Some(ce) => Some(self.string(ce.name, "scope name")?),
            None => None,
        };
        self.op_array_body(oa, function_name, scope, depth).ctx(|| {
            let name = match (oa.function_name.is_null(), r.deref(oa.scope)) {
                (true, _) => "{main}".to_string(),
                (false, scope) => {
                    let f = r.str(oa.function_name).map(show).unwrap_or_default();
                    match scope.and_then(|ce| r.str(ce.name)) {
                        Some(s) => format!("{}::{f}", show(s)),
                        None => f,
                    }
                }
            };
            format!("op_array {name} (lines {}-{})", oa.line_start, oa.line_end)
        })
    }

    fn op_array_body(
        &self,
        oa: &'a zend_op_array,
        function_name: Option<PhpStr>,
        scope: Option<PhpStr>,
        depth: u32,
    ) -> Result<ir::OpArray> {
        let nesting = self.func_nesting.get();
        if nesting >= zend_ir::zop::MAX_FUNC_NESTING {
            return fail(format!(
                "op_arrays nested deeper than {} levels",
                zend_ir::zop::MAX_FUNC_NESTING
            ));
        }
        self.func_nesting.set(nesting + 1);
        let result = self.op_array_fields(oa, function_name, scope, depth);
        self.func_nesting.set(nesting);
        result
    }

    fn op_array_fields(
        &self,
        oa: &'a zend_op_array,
        function_name: Option<PhpStr>,
        scope: Option<PhpStr>,
        depth: u32,
    ) -> Result<ir::OpArray> {
        if depth > MAX_DEPTH {
            return fail("dynamic_func_defs nested too deeply");
        }
        let r = self.r;
        let fn_flags = oa.fn_flags;

        // Arguments: num_args, plus the variadic one; the return type sits at arg_info[-1].
        let n_args = oa.num_args as usize + usize::from(fn_flags & ZEND_ACC_VARIADIC != 0);
        let args = r
            .slice(oa.arg_info, n_args)
            .or_fail(|| format!("arg_info is NULL with {n_args} arguments"))?;
        let arg_info = each(args, "arg_info", |arg| self.arg_info(arg, false, depth))?;
        let return_info = if fn_flags & ZEND_ACC_HAS_RETURN_TYPE != 0 {
            let ret = r
                .return_info(oa)
                .or_fail(|| "ZEND_ACC_HAS_RETURN_TYPE set but arg_info is NULL".to_string())?;
            Some(
                self.arg_info(ret, true, depth)
                    .ctx(|| "return type".to_string())?,
            )
        } else {
            None
        };

        let last_var = count(oa.last_var, "last_var")?;
        let vars = r
            .slice(oa.vars, last_var as usize)
            .or_fail(|| "vars is NULL".to_string())?
            .iter()
            .enumerate()
            .map(|(i, &v)| self.string(v, &format!("CV name {i}")))
            .collect::<Result<Vec<_>>>()?;

        let last_literal = count(oa.last_literal, "last_literal")?;
        let zvals = r
            .slice(oa.literals, last_literal as usize)
            .or_fail(|| "literals is NULL".to_string())?;
        let mut literals = Vec::with_capacity(zvals.len());
        // `zend_insert_literal` zeroes every literal's u2, so a non-zero one was set on
        // purpose: ZEND_EXTRA_VALUE by zend_handle_numeric_dim / the optimizer, or RECV_INIT's
        // cache slot by pass_two / compact_literals.
        let mut literal_extra = Vec::new();
        for (i, zv) in zvals.iter().enumerate() {
            literals.push(self.zval(zv, depth).ctx(|| format!("literal {i}"))?);
            if z_u2(zv) != 0 {
                literal_extra.push((LiteralId::new(i as u32), z_u2(zv)));
            }
        }

        let ops = r
            .slice(oa.opcodes, oa.last as usize)
            .or_fail(|| "opcodes is NULL".to_string())?;
        let frame = Frame {
            opcodes: oa.opcodes as usize,
            last: oa.last,
            literals: oa.literals as usize,
            last_literal,
            last_var,
            t: oa.T,
        };
        let mut opcodes = Vec::with_capacity(ops.len());
        let mut jump_tables: HashMap<LiteralId, usize> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            let converted = self
                .op(&frame, op)
                .and_then(|converted| {
                    self.jump_table(&frame, i, &converted, &mut literals, &mut jump_tables)?;
                    Ok(converted)
                })
                .ctx(|| {
                    let name = Opcode(op.opcode)
                        .short_name()
                        .map_or_else(|| format!("opcode {}", op.opcode), str::to_string);
                    format!("op #{i} ({name}, line {})", op.lineno)
                })?;
            opcodes.push(converted);
        }

        let static_variables = match r.deref(oa.static_variables) {
            None => None,
            Some(ht) => {
                let mut vars = Vec::new();
                for (key, zv) in r.hash(ht) {
                    let name = self.str_key(key).ctx(|| "static variables".to_string())?;
                    let value = self
                        .zval(zv, depth)
                        .ctx(|| format!("static variable ${}", show(name.as_bytes())))?;
                    vars.push((name, value));
                }
                Some(vars)
            }
        };

        let ranges = r
            .slice(
                oa.live_range,
                count(oa.last_live_range, "last_live_range")? as usize,
            )
            .or_fail(|| "live_range is NULL".to_string())?;
        let live_range = each(ranges, "live_range", |lr| self.live_range(&frame, lr))?;

        let elements = r
            .slice(
                oa.try_catch_array,
                count(oa.last_try_catch, "last_try_catch")? as usize,
            )
            .or_fail(|| "try_catch_array is NULL".to_string())?;
        let try_catch_array = each(elements, "try_catch_array", |tc| self.try_catch(&frame, tc))?;

        let defs = r
            .slice(oa.dynamic_func_defs, oa.num_dynamic_func_defs as usize)
            .or_fail(|| "dynamic_func_defs is NULL".to_string())?;
        let dynamic_func_defs = each(defs, "dynamic_func_defs", |&def| {
            r.deref(def)
                .or_fail(|| "NULL entry".to_string())
                .and_then(|def| self.op_array(def, depth + 1))
                .map(Box::new)
        })?;

        Ok(ir::OpArray {
            type_: oa.type_,
            // ZEND_ACC_IMMUTABLE says that the op_array lives in a cache's shared memory
            // (zopt's or OPcache's), not what was compiled.
            fn_flags: fn_flags & !(ZEND_ACC_DONE_PASS_TWO | php::ZEND_ACC_IMMUTABLE),
            function_name,
            scope,
            num_args: oa.num_args,
            required_num_args: oa.required_num_args,
            arg_info,
            return_info,
            attributes: self.attributes(oa.attributes, depth)?,
            T: oa.T,
            cache_size: count(oa.cache_size, "cache_size")?,
            vars,
            opcodes,
            literals,
            literal_extra,
            static_variables,
            live_range,
            try_catch_array,
            filename: self.opt_string(oa.filename).unwrap_or_default(),
            line_start: oa.line_start,
            line_end: oa.line_end,
            doc_comment: self.opt_string(oa.doc_comment),
            dynamic_func_defs,
        })
    }

    fn op(&self, frame: &Frame, op: &zend_op) -> Result<ir::Op> {
        let opcode = Opcode(op.opcode);
        if !opcode.is_defined() {
            return fail(format!("unknown opcode {}", op.opcode));
        }
        let addr = op as *const zend_op as usize;
        let raw = php::znode_raw;

        let last_catch = opcode == ZEND_CATCH && op.extended_value & ZEND_LAST_CATCH != 0;
        let op1 = self
            .operand(
                frame,
                addr,
                op.op1_type,
                if left_uninitialised(opcode, 1) && op.op1_type == IS_UNUSED as u8 {
                    0
                } else {
                    meaningful_unused(op.op1_type, opcode.op1_flags(), raw(&op.op1))
                },
                opcode.op1_is_jmp_addr(),
            )
            .ctx(|| "op1".to_string())?;
        let op2 = self
            .operand(
                frame,
                addr,
                op.op2_type,
                if left_uninitialised(opcode, 2) && op.op2_type == IS_UNUSED as u8 {
                    0
                } else {
                    meaningful_unused(op.op2_type, opcode.op2_flags(), raw(&op.op2))
                },
                opcode.op2_is_jmp_addr() && !last_catch,
            )
            .ctx(|| "op2".to_string())?;

        let smart = op.result_type & (IS_SMART_BRANCH_JMPZ | IS_SMART_BRANCH_JMPNZ) as u8;
        let smart_branch = match u32::from(smart) {
            0 => ir::SmartBranch::None,
            IS_SMART_BRANCH_JMPZ => ir::SmartBranch::Jmpz,
            IS_SMART_BRANCH_JMPNZ => ir::SmartBranch::Jmpnz,
            _ => return fail("result_type has both smart branch bits"),
        };
        let result_type = op.result_type & !smart;
        if result_type == IS_CONST as u8 {
            return fail("result of type CONST");
        }
        let result = self
            .operand(frame, addr, result_type, raw(&op.result), false)
            .ctx(|| "result".to_string())?;

        let extended_value = if opcode.ext_is_jmp_addr() {
            frame
                .jump_target(addr, op.extended_value)
                .ctx(|| "extended_value".to_string())?
                .as_u32()
        } else {
            op.extended_value
        };

        Ok(ir::Op {
            opcode,
            op1,
            op2,
            result,
            extended_value,
            lineno: op.lineno,
            smart_branch,
        })
    }

    fn operand(
        &self,
        frame: &Frame,
        op_addr: usize,
        op_type: u8,
        raw: u32,
        jmp_addr: bool,
    ) -> Result<Operand> {
        Ok(match u32::from(op_type) {
            IS_UNUSED if jmp_addr => Operand::JmpAddr(frame.jump_target(op_addr, raw)?),
            IS_UNUSED => Operand::Unused(raw),
            IS_CONST => Operand::Const(frame.literal(op_addr, raw)?),
            IS_TMP_VAR => Operand::TmpVar(frame.var(raw, false)?),
            IS_VAR => Operand::Var(frame.var(raw, false)?),
            IS_CV => Operand::Cv(frame.var(raw, true)?),
            other => return fail(format!("unknown operand type {other}")),
        })
    }

    /// SWITCH_LONG, SWITCH_STRING and MATCH: the jump table literal (op2) holds byte offsets
    /// from this op; make them op numbers in the recorded literal.
    fn jump_table(
        &self,
        frame: &Frame,
        op_num: usize,
        op: &ir::Op,
        literals: &mut [ir::Literal],
        seen: &mut HashMap<LiteralId, usize>,
    ) -> Result<()> {
        if ![ZEND_SWITCH_LONG, ZEND_SWITCH_STRING, ZEND_MATCH].contains(&op.opcode) {
            return Ok(());
        }
        let Operand::Const(lit) = op.op2 else {
            return fail("jump table operand (op2) is not a CONST");
        };
        if let Some(other) = seen.insert(lit, op_num) {
            return fail(format!(
                "jump table literal {} is shared with op #{other}",
                lit.as_u32()
            ));
        }
        let ir::Literal::Array(entries) = &mut literals[lit.index()] else {
            return fail(format!(
                "jump table literal {} is not an array",
                lit.as_u32()
            ));
        };
        let op_addr = frame.opcodes + op_num * php::ZEND_OP_SIZE as usize;
        for (key, value) in entries.entries_mut() {
            let ir::Literal::Long(offset) = *value else {
                return fail(format!("jump table entry {key:?} is not an integer"));
            };
            let offset = i32::try_from(offset).map_err(|_| {
                ConvError::new(format!(
                    "jump table entry {key:?}: offset {offset} out of range"
                ))
            })?;
            let target = frame
                .jump_target(op_addr, offset as u32)
                .ctx(|| format!("jump table entry {key:?}"))?;
            *value = ir::Literal::Long(i64::from(target.as_u32()));
        }
        Ok(())
    }

    fn live_range(&self, frame: &Frame, lr: &zend_live_range) -> Result<ir::LiveRange> {
        let var = frame.var(lr.var & !ZEND_LIVE_MASK, false)?;
        if lr.start > lr.end || lr.end > frame.last {
            return fail(format!(
                "range {}..{} outside ops 0..{}",
                lr.start, lr.end, frame.last
            ));
        }
        Ok(ir::LiveRange {
            var,
            kind: lr.var & ZEND_LIVE_MASK,
            start: OpNum::new(lr.start),
            end: OpNum::new(lr.end),
        })
    }

    fn try_catch(&self, frame: &Frame, tc: &zend_try_catch_element) -> Result<ir::TryCatchElement> {
        let check = |n: u32, what: &str| -> Result<OpNum> {
            if n < frame.last {
                Ok(OpNum::new(n))
            } else {
                fail(format!("{what} {n} outside ops 0..{}", frame.last))
            }
        };
        let opt = |n: u32, what: &str| -> Result<Option<OpNum>> {
            if n == 0 {
                Ok(None)
            } else {
                check(n, what).map(Some)
            }
        };
        Ok(ir::TryCatchElement {
            try_op: check(tc.try_op, "try_op")?,
            catch_op: opt(tc.catch_op, "catch_op")?,
            finally_op: opt(tc.finally_op, "finally_op")?,
            finally_end: opt(tc.finally_end, "finally_end")?,
        })
    }

    fn arg_info(&self, arg: &'a zend_arg_info, is_return: bool, depth: u32) -> Result<ir::ArgInfo> {
        // The return slot's `name` is NULL and, like every user arg_info, its
        // `default_value` is never initialised by the compiler: it is not read.
        let name = if is_return {
            None
        } else {
            Some(self.string(arg.name, "argument name")?)
        };
        Ok(ir::ArgInfo {
            name,
            type_: self.zend_type(&arg.type_, depth)?,
            default_value: None,
        })
    }

    fn zend_type(&self, t: &'a zend_type, depth: u32) -> Result<ir::ZendType> {
        if depth > MAX_DEPTH {
            return fail("type nested too deeply");
        }
        let mask = t.type_mask;
        let names = if mask & _ZEND_TYPE_LIST_BIT != 0 {
            let list = self
                .r
                .type_list(t.ptr.cast())
                .or_fail(|| "type list is NULL".to_string())?;
            let mut types = Vec::with_capacity(list.len());
            for member in list {
                types.push(self.zend_type(member, depth + 1)?);
            }
            ir::TypeNames::List(types)
        } else if mask & _ZEND_TYPE_NAME_BIT != 0 {
            ir::TypeNames::Name(self.string(t.ptr.cast(), "type name")?)
        } else {
            ir::TypeNames::None
        };
        Ok(ir::ZendType {
            type_mask: mask,
            names,
        })
    }

    fn attributes(&self, ht: *const HashTable, depth: u32) -> Result<Vec<ir::Attribute>> {
        let Some(ht) = self.r.deref(ht) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (i, (_, zv)) in self.r.hash(ht).into_iter().enumerate() {
            let attr = self
                .ptr::<zend_attribute>(zv)
                .and_then(|a| self.attribute(a, depth))
                .ctx(|| format!("attribute {i}"))?;
            out.push(attr);
        }
        Ok(out)
    }

    fn attribute(&self, a: &'a zend_attribute, depth: u32) -> Result<ir::Attribute> {
        let mut args = Vec::new();
        for (i, arg) in self.r.attribute_args(a).iter().enumerate() {
            args.push(ir::AttributeArg {
                name: self.opt_string(arg.name),
                value: self
                    .zval(&arg.value, depth)
                    .ctx(|| format!("argument {i}"))?,
            });
        }
        Ok(ir::Attribute {
            name: self.string(a.name, "attribute name")?,
            lcname: self.string(a.lcname, "attribute lcname")?,
            flags: a.flags,
            lineno: a.lineno,
            offset: a.offset,
            args,
        })
    }

    /// A compile-time zval: literals, default values, constants.
    fn zval(&self, zv: &'a zval, depth: u32) -> Result<ir::Literal> {
        if depth > MAX_DEPTH {
            return fail("value nested too deeply");
        }
        let ty = z_type(zv);
        Ok(match u32::from(ty) {
            IS_NULL => ir::Literal::Null,
            IS_FALSE => ir::Literal::False,
            IS_TRUE => ir::Literal::True,
            IS_LONG => ir::Literal::Long(z_lval(zv)),
            IS_DOUBLE => ir::Literal::Double(ir::PhpDouble(z_dval_bits(zv))),
            IS_STRING => ir::Literal::String(
                self.r
                    .z_str(zv)
                    .map(phpstr)
                    .or_fail(|| "string zval with NULL string".to_string())?,
            ),
            IS_ARRAY => {
                let ht = self
                    .r
                    .z_arr(zv)
                    .or_fail(|| "array zval with NULL array".to_string())?;
                let mut entries = Vec::new();
                for (key, value) in self.r.hash(ht) {
                    let key = match key {
                        HashKey::Long(n) => ir::ArrayKey::Long(n),
                        HashKey::Str(s) => ir::ArrayKey::Str(phpstr(s)),
                    };
                    let value = self
                        .zval(value, depth + 1)
                        .ctx(|| format!("array element {key:?}"))?;
                    entries.push((key, value));
                }
                ir::Literal::Array(ir::PhpArray::with_next_free(entries, ht.nNextFreeElement))
            }
            IS_CONSTANT_AST => ir::Literal::Ast(Box::new(
                self.ast(self.r.z_ast(zv), depth + 1)?
                    .or_fail(|| "constant expression with NULL AST".to_string())?,
            )),
            _ => {
                return fail(format!(
                    "unsupported zval type {ty} ({})",
                    zval_type_name(ty)
                ))
            }
        })
    }

    /// Converts a constant-expression AST. A plain node keeps its line, which PHP reads at
    /// run time (a class constant's `Class "D" not found` names the line of `D::hello`);
    /// values, constant names and lists are recorded at line [`AST_LINENO`]: the
    /// `zend_ast_copy` that made the stored tree left their lines uninitialised (they differ
    /// from run to run), and nothing reads them.
    fn ast(&self, node: *const zend_ast, depth: u32) -> Result<Option<ir::Ast>> {
        if depth > MAX_DEPTH {
            return fail("constant expression nested too deeply");
        }
        let Some(view) = self.r.ast(node) else {
            return Ok(None);
        };
        Ok(Some(match view {
            AstView::Zval { kind, attr, val } => ir::Ast {
                kind,
                attr,
                lineno: AST_LINENO,
                body: ir::AstBody::Zval(
                    self.zval(val, depth + 1)
                        .ctx(|| format!("AST node of kind {kind}"))?,
                ),
            },
            AstView::Children {
                kind,
                attr,
                lineno,
                children,
            } => {
                let special = (kind >> zend_ir::ZEND_AST_SPECIAL_SHIFT) & 1 != 0
                    && (kind >> zend_ir::ZEND_AST_IS_LIST_SHIFT) == 0;
                if special {
                    // ZEND_AST_ZNODE and the declaration kinds never occur in constant
                    // expressions.
                    return fail(format!(
                        "unsupported AST kind {kind} in a constant expression"
                    ));
                }
                let mut out = Vec::with_capacity(children.len());
                for (i, &child) in children.iter().enumerate() {
                    out.push(
                        self.ast(child, depth + 1)
                            .ctx(|| format!("child {i} of AST node of kind {kind}"))?,
                    );
                }
                ir::Ast {
                    kind,
                    attr,
                    lineno: lineno.unwrap_or(AST_LINENO),
                    body: ir::AstBody::Children(out),
                }
            }
        }))
    }

    fn class(&self, ce: &'a zend_class_entry) -> Result<ir::ClassEntry> {
        let name = self.string(ce.name, "class name")?;
        let shown = show(name.as_bytes());
        self.class_body(ce, name).ctx(|| format!("class {shown}"))
    }

    fn class_body(&self, ce: &'a zend_class_entry, name: PhpStr) -> Result<ir::ClassEntry> {
        let r = self.r;
        if ce.type_ as u8 != ZEND_USER_CLASS as u8 {
            return fail(format!(
                "class entry of type {} (not a user class)",
                ce.type_
            ));
        }

        let interface_names = match r
            .interfaces(ce)
            .or_fail(|| "interfaces array is NULL".to_string())?
        {
            Interfaces::Resolved(ces) => ces
                .iter()
                .map(|&iface| {
                    let iface = r
                        .deref(iface)
                        .or_fail(|| "NULL resolved interface".to_string())?;
                    let name = self.string(iface.name, "interface name")?;
                    Ok(ir::ClassName {
                        lc_name: name.to_lowercase(),
                        name,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            Interfaces::Names(names) => names
                .iter()
                .map(|n| self.class_name(n))
                .collect::<Result<Vec<_>>>()?,
        };
        let trait_names = r
            .slice(ce.trait_names, ce.num_traits as usize)
            .or_fail(|| "trait_names is NULL".to_string())?
            .iter()
            .map(|n| self.class_name(n))
            .collect::<Result<Vec<_>>>()?;

        let trait_aliases = r
            .null_terminated(ce.trait_aliases, MAX_NULL_TERMINATED)
            .or_fail(|| "trait_aliases is not NULL-terminated".to_string())?
            .into_iter()
            .map(|a| {
                Ok(ir::TraitAlias {
                    method: self.method_ref(&a.trait_method)?,
                    alias: self.opt_string(a.alias),
                    modifiers: a.modifiers,
                })
            })
            .collect::<Result<Vec<_>>>()
            .ctx(|| "trait alias".to_string())?;
        let trait_precedences = r
            .null_terminated(ce.trait_precedences, MAX_NULL_TERMINATED)
            .or_fail(|| "trait_precedences is not NULL-terminated".to_string())?
            .into_iter()
            .map(|p| {
                Ok(ir::TraitPrecedence {
                    method: self.method_ref(&p.trait_method)?,
                    exclude_class_names: r
                        .exclude_class_names(p)
                        .iter()
                        .map(|&n| self.string(n, "excluded class name"))
                        .collect::<Result<Vec<_>>>()?,
                })
            })
            .collect::<Result<Vec<_>>>()
            .ctx(|| "trait precedence".to_string())?;

        let mut constants = Vec::new();
        for (key, zv) in r.hash(&ce.constants_table) {
            let cname = self.str_key(key).ctx(|| "constants table".to_string())?;
            let shown = show(cname.as_bytes());
            let c = self
                .ptr::<zend_class_constant>(zv)
                .and_then(|c| self.class_constant(cname, c))
                .ctx(|| format!("constant {shown}"))?;
            constants.push(c);
        }

        let defaults = r
            .slice(
                ce.default_properties_table,
                count(ce.default_properties_count, "default_properties_count")? as usize,
            )
            .or_fail(|| "default_properties_table is NULL".to_string())?;
        let static_defaults = r
            .slice(
                ce.default_static_members_table,
                count(
                    ce.default_static_members_count,
                    "default_static_members_count",
                )? as usize,
            )
            .or_fail(|| "default_static_members_table is NULL".to_string())?;
        let mut properties = Vec::new();
        for (key, zv) in r.hash(&ce.properties_info) {
            let pname = self.str_key(key).ctx(|| "properties table".to_string())?;
            let shown = show(pname.as_bytes());
            let p = self
                .ptr::<zend_property_info>(zv)
                .and_then(|p| self.property(p, defaults, static_defaults))
                .ctx(|| format!("property ${shown}"))?;
            properties.push(p);
        }

        let mut methods = Vec::new();
        let mut method_stubs = Vec::new();
        for (position, (key, zv)) in r.hash(&ce.function_table).into_iter().enumerate() {
            let mname = self.str_key(key).ctx(|| "method table".to_string())?;
            let shown = show(mname.as_bytes());
            if let Some(m) = self
                .method_stub(ce, position, &mname, zv)
                .ctx(|| format!("method {shown}"))?
            {
                method_stubs.push(m);
                continue;
            }
            let m = self.function(zv, 1).ctx(|| format!("method {shown}"))?;
            methods.push((mname, Box::new(m)));
        }

        let info = r.class_info(ce);
        Ok(ir::ClassEntry {
            name,
            parent_name: r.parent_name(ce).map(phpstr),
            // ZEND_ACC_CACHED and ZEND_ACC_IMMUTABLE say where the class's storage lives (a
            // cache), not what was compiled: a class served from zopt's shared memory has
            // them, the compiler never sets them.
            ce_flags: ce.ce_flags & !(php::ZEND_ACC_CACHED | php::ZEND_ACC_IMMUTABLE),
            refcount: u32::try_from(ce.refcount)
                .map_err(|_| ConvError::new(format!("negative refcount {}", ce.refcount)))?,
            interface_names,
            trait_names,
            trait_aliases,
            trait_precedences,
            constants,
            properties,
            methods,
            method_stubs,
            attributes: self.attributes(ce.attributes, 0)?,
            filename: self.opt_string(info.filename).unwrap_or_default(),
            line_start: info.line_start,
            line_end: info.line_end,
            doc_comment: self.opt_string(info.doc_comment),
            enum_backing_type: u8::try_from(ce.enum_backing_type).map_err(|_| {
                ConvError::new(format!("enum_backing_type {}", ce.enum_backing_type))
            })?,
        })
    }

    fn class_name(&self, n: &'a zend_class_name) -> Result<ir::ClassName> {
        Ok(ir::ClassName {
            name: self.string(n.name, "class name")?,
            lc_name: self.string(n.lc_name, "lowercased class name")?,
        })
    }

    fn method_ref(&self, m: &'a zend_trait_method_reference) -> Result<ir::TraitMethodRef> {
        Ok(ir::TraitMethodRef {
            method_name: self.string(m.method_name, "trait method name")?,
            class_name: self.opt_string(m.class_name),
        })
    }

    fn class_constant(
        &self,
        name: PhpStr,
        c: &'a zend_class_constant,
    ) -> Result<ir::ClassConstant> {
        let ce = self
            .r
            .deref(c.ce)
            .or_fail(|| "declaring class is NULL".to_string())?;
        Ok(ir::ClassConstant {
            name,
            value: self.zval(&c.value, 0)?,
            // ZEND_CLASS_CONST_FLAGS: Z_CONSTANT_FLAGS of the value, kept in its u2.
            flags: z_u2(&c.value),
            doc_comment: self.opt_string(c.doc_comment),
            attributes: self.attributes(c.attributes, 0)?,
            ce: self.string(ce.name, "declaring class name")?,
        })
    }

    fn property(
        &self,
        p: &'a zend_property_info,
        defaults: &'a [zval],
        static_defaults: &'a [zval],
    ) -> Result<ir::PropertyInfo> {
        let slot = if p.flags & ZEND_ACC_STATIC != 0 {
            static_defaults.get(p.offset as usize).or_fail(|| {
                format!(
                    "static offset {} outside the {} static members",
                    p.offset,
                    static_defaults.len()
                )
            })?
        } else {
            let rel = p.offset.wrapping_sub(php::OBJ_PROP_BASE);
            let num = rel / php::ZVAL_SIZE;
            if p.offset < php::OBJ_PROP_BASE || rel % php::ZVAL_SIZE != 0 {
                return fail(format!("property offset {} is not a slot", p.offset));
            }
            defaults.get(num as usize).or_fail(|| {
                format!(
                    "property slot {num} outside the {} default properties",
                    defaults.len()
                )
            })?
        };
        // A static member inherited by a class linked at compile time is an IS_INDIRECT
        // pointing at the parent's slot.
        let slot = if z_type(slot) == IS_INDIRECT as u8 {
            self.r
                .z_indirect(slot)
                .or_fail(|| "NULL indirect default value".to_string())?
        } else {
            slot
        };
        let default = if z_type(slot) == IS_UNDEF as u8 {
            None
        } else {
            Some(self.zval(slot, 0).ctx(|| "default value".to_string())?)
        };
        let ce = self
            .r
            .deref(p.ce)
            .or_fail(|| "declaring class is NULL".to_string())?;
        Ok(ir::PropertyInfo {
            name: self.string(p.name, "property name")?,
            flags: p.flags,
            offset: p.offset,
            type_: self.zend_type(&p.type_, 0)?,
            default,
            doc_comment: self.opt_string(p.doc_comment),
            attributes: self.attributes(p.attributes, 0)?,
            ce: self.string(ce.name, "declaring class name")?,
        })
    }
}

fn zval_type_name(ty: u8) -> &'static str {
    match u32::from(ty) {
        IS_UNDEF => "undef",
        IS_OBJECT => "object",
        IS_RESOURCE => "resource",
        IS_REFERENCE => "reference",
        IS_INDIRECT => "indirect",
        IS_PTR => "pointer",
        IS_ALIAS_PTR => "alias pointer",
        _ => "unknown",
    }
}

/// The value to record for an operand that may be unused. PHP leaves the operand value
/// uninitialised where the VM operand kind carries no number (THIS, NEXT, CONSTRUCTOR), so
/// recording it raw would make recordings of the same file differ from run to run; such
/// values are recorded as 0, which the VM never reads.
/// Operands (1: op1, 2: op2) that PHP 8.2's compiler emits from a `znode` whose `u.op` it
/// never set when the node is `IS_UNUSED` — `exit;` without a value (zend_compile_exit) and a
/// variadic parameter (zend_compile_params) — so their raw value is stack garbage the VM never
/// reads: recorded as 0. (Unused operands of the THIS, NEXT and CONSTRUCTOR kinds, which have
/// the same origin, are covered by [`meaningful_unused`].)
fn left_uninitialised(opcode: Opcode, operand: u8) -> bool {
    matches!((opcode, operand), (ZEND_EXIT, 1) | (ZEND_RECV_VARIADIC, 2))
}

fn meaningful_unused(op_type: u8, flags: u32, raw: u32) -> u32 {
    let kind = flags & ZEND_VM_OP_MASK;
    let meaningless = matches!(
        kind,
        ZEND_VM_OP_THIS | ZEND_VM_OP_NEXT | ZEND_VM_OP_CONSTRUCTOR
    );
    if op_type == IS_UNUSED as u8 && meaningless {
        0
    } else {
        raw
    }
}

/// The line number recorded for every constant-expression AST node (see `Converter::ast`).
const AST_LINENO: u32 = 0;

/// Why a relative byte offset does not name an element of an array.
enum Misplaced {
    /// Between elements, or the array is absent.
    Between,
    /// On an element boundary, but outside `0..count`.
    Outside(i64),
}

/// The index of the element of the array at `base` (`count` elements of `size` bytes) that
/// `op_addr + (int32_t)offset` points at: how pass two encodes jump targets and CONST
/// operands relative to their op.
fn element_at(
    op_addr: usize,
    offset: u32,
    base: usize,
    size: u32,
    count: u32,
) -> std::result::Result<u32, Misplaced> {
    let delta = op_addr as i64 + i64::from(offset as i32) - base as i64;
    let size = i64::from(size);
    if base == 0 || delta % size != 0 {
        return Err(Misplaced::Between);
    }
    let n = delta / size;
    if n < 0 || n >= i64::from(count) {
        return Err(Misplaced::Outside(n));
    }
    Ok(n as u32)
}
