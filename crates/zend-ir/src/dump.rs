//! PHP-compatible dumps: the text `zend_dump_op_array` (Zend/Optimizer/zend_dump.c) prints at
//! `opcache.opt_debug_level`, byte for byte.
//!
//! Dumps are bytes, not `str`: PHP prints string literals raw, and stops at their first NUL
//! byte because it prints them with `%s`. Later stages (CFG, SSA, types) reuse the pieces
//! here ([`dump_op`], [`dump_type_info`], [`dump_var`]) through [`OpContext`].

use crate::model::*;
use crate::opcode::*;
use crate::types::*;
use std::io::Write;

/// `ZEND_DUMP_*` flags of zend_dump.h.
pub const ZEND_DUMP_HIDE_UNREACHABLE: u32 = 1 << 0;
pub const ZEND_DUMP_RC_INFERENCE: u32 = 1 << 1;
pub const ZEND_DUMP_CFG: u32 = 1 << 2;
pub const ZEND_DUMP_SSA: u32 = 1 << 3;
pub const ZEND_DUMP_LIVE_RANGES: u32 = 1 << 4;
pub const ZEND_DUMP_LINE_NUMBERS: u32 = 1 << 5;

/// `opcache.opt_debug_level` bits (zend_optimizer.h).
pub mod debug_level {
    /// `ZEND_DUMP_AFTER_PASS_N` is `1 << (N - 1)`.
    pub const fn after_pass(n: u32) -> u32 {
        1 << (n - 1)
    }
    pub const BEFORE_OPTIMIZER: u32 = 1 << 16;
    pub const AFTER_OPTIMIZER: u32 = 1 << 17;
    pub const BEFORE_BLOCK_PASS: u32 = 1 << 18;
    pub const AFTER_BLOCK_PASS: u32 = 1 << 19;
    pub const BLOCK_PASS_VARS: u32 = 1 << 20;
    pub const BEFORE_DFA_PASS: u32 = 1 << 21;
    pub const AFTER_DFA_PASS: u32 = 1 << 22;
    pub const DFA_CFG: u32 = 1 << 23;
    pub const DFA_DOMINATORS: u32 = 1 << 24;
    pub const DFA_LIVENESS: u32 = 1 << 25;
    pub const DFA_PHI: u32 = 1 << 26;
    pub const DFA_SSA: u32 = 1 << 27;
    pub const DFA_SSA_VARS: u32 = 1 << 28;
    pub const SCCP: u32 = 1 << 29;

    /// Stage names used on the command line, with their debug-level bits.
    pub const NAMED: &[(&str, u32)] = &[
        ("before", BEFORE_OPTIMIZER),
        ("after", AFTER_OPTIMIZER),
        ("before_block", BEFORE_BLOCK_PASS),
        ("after_block", AFTER_BLOCK_PASS),
        ("block_vars", BLOCK_PASS_VARS),
        ("before_dfa", BEFORE_DFA_PASS),
        ("after_dfa", AFTER_DFA_PASS),
        ("cfg", DFA_CFG),
        ("dom", DFA_DOMINATORS),
        ("liveness", DFA_LIVENESS),
        ("phi", DFA_PHI),
        ("ssa", DFA_SSA),
        ("types", DFA_SSA_VARS),
        ("sccp", SCCP),
        ("pass1", after_pass(1)),
        ("pass2", after_pass(2)),
        ("pass3", after_pass(3)),
        ("pass4", after_pass(4)),
        ("pass5", after_pass(5)),
        ("pass6", after_pass(6)),
        ("pass7", after_pass(7)),
        ("pass8", after_pass(8)),
        ("pass9", after_pass(9)),
        ("pass10", after_pass(10)),
        ("pass11", after_pass(11)),
        ("pass12", after_pass(12)),
        ("pass13", after_pass(13)),
        ("pass14", after_pass(14)),
    ];

    /// Parses a stage name (`before`, `cfg`, `pass3`...) or a hex/decimal bit mask.
    pub fn parse(s: &str) -> Option<u32> {
        if let Some(&(_, bits)) = NAMED.iter().find(|(name, _)| name.eq_ignore_ascii_case(s)) {
            return Some(bits);
        }
        crate::dump::parse_number(s)
    }

    /// The stage name of a single debug-level bit.
    pub fn name(bits: u32) -> Option<&'static str> {
        NAMED.iter().find(|&&(_, b)| b == bits).map(|&(n, _)| n)
    }
}

/// Parses `0x...` hex or decimal, as PHP's ini parser accepts for these levels.
pub fn parse_number(s: &str) -> Option<u32> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Prints what follows `#n.Vm` for SSA variable `n` (`NOVAL`, types, ranges).
pub type SsaVarInfo<'a> = &'a dyn Fn(&mut Vec<u8>, u32);

/// What an analysis adds to an op line: the successors of the op's block (the dump prints
/// `BBn` instead of op numbers for jump targets once a CFG exists) and, once SSA exists,
/// the SSA variables the op uses and defines.
#[derive(Default, Clone, Copy)]
pub struct OpContext<'a> {
    /// `b->successors` of the block containing the op.
    pub successors: Option<&'a [u32]>,
    /// The op's `zend_ssa_op`.
    pub ssa: Option<SsaOperands>,
    /// Prints what follows `#n.Vm` for an SSA variable (`NOVAL`, types, ranges), when
    /// the dump has such information.
    pub ssa_var_info: Option<SsaVarInfo<'a>>,
}

/// The SSA variables of one op (`zend_ssa_op` without its use chains).
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SsaOperands {
    pub op1_use: Option<u32>,
    pub op2_use: Option<u32>,
    pub result_use: Option<u32>,
    pub op1_def: Option<u32>,
    pub op2_def: Option<u32>,
    pub result_def: Option<u32>,
}

/// `zend_dump_ssa_var`: `#n.` (or `#?.`), the variable, then whatever `info` adds.
pub fn dump_ssa_var(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    ssa_var: Option<u32>,
    var_type: u8,
    var_num: u32,
    info: Option<SsaVarInfo<'_>>,
) {
    match ssa_var {
        Some(n) => {
            let _ = write!(out, "#{n}.");
        }
        None => out.extend_from_slice(b"#?."),
    }
    let var_type = if var_num < op_array.last_var() {
        IS_CV
    } else {
        var_type
    };
    dump_var(out, op_array, var_type, var_num);
    if let (Some(n), Some(info)) = (ssa_var, info) {
        info(out, n);
    }
}

/// A `zend_ssa_range`.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SsaRange {
    pub min: i64,
    pub max: i64,
    pub underflow: bool,
    pub overflow: bool,
}

/// `zend_dump_range`: ` RANGE[min..max]`, nothing when both ends are unbounded.
pub fn dump_range(out: &mut Vec<u8>, r: &SsaRange) {
    if r.underflow && r.overflow {
        return;
    }
    out.extend_from_slice(b" RANGE[");
    if r.underflow {
        out.extend_from_slice(b"--..");
    } else if r.min == i64::MIN {
        out.extend_from_slice(b"MIN..");
    } else {
        let _ = write!(out, "{}..", r.min);
    }
    if r.overflow {
        out.extend_from_slice(b"++]");
    } else if r.max == i64::MAX {
        out.extend_from_slice(b"MAX]");
    } else {
        let _ = write!(out, "{}]", r.max);
    }
}

/// What `zend_dump_op_array` prints from a function's `zend_func_info` (present when
/// OPcache optimizes with the call graph): flags in the header and the return line.
#[derive(Clone, Debug, Default)]
pub struct FuncInfoHeader {
    /// `ZEND_FUNC_*` flags.
    pub flags: u32,
    /// The return type mask and its class (`name`, `is_instanceof`).
    pub return_type: u32,
    pub return_ce: Option<(Vec<u8>, bool)>,
    pub return_range: SsaRange,
}

/// `ZEND_FUNC_*` bits zend_dump.c names in the header.
pub mod func_flags {
    pub const INDIRECT_VAR_ACCESS: u32 = 1 << 0;
    pub const NO_LOOPS: u32 = 1 << 3;
    pub const IRREDUCIBLE: u32 = 1 << 4;
    pub const RECURSIVE: u32 = 1 << 7;
    pub const RECURSIVE_DIRECTLY: u32 = 1 << 8;
    pub const RECURSIVE_INDIRECTLY: u32 = 1 << 9;
    pub const HAS_EXTENDED_FCALL: u32 = 1 << 10;
    pub const HAS_EXTENDED_STMT: u32 = 1 << 11;
}

/// The header of `zend_dump_op_array` with everything an analysis adds: `ssa_vars=`, the
/// function-info flags and the return line.
pub fn dump_op_array_header_ex(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    ssa_vars: Option<u32>,
    func_info: Option<&FuncInfoHeader>,
    msg: Option<&str>,
) {
    let mut extra = String::new();
    if let Some(n) = ssa_vars {
        extra.push_str(&format!(", ssa_vars={n}"));
    }
    if let Some(info) = func_info {
        use func_flags::*;
        let f = info.flags;
        if f & INDIRECT_VAR_ACCESS != 0 {
            extra.push_str(", dynamic");
        }
        if f & RECURSIVE != 0 {
            extra.push_str(", recursive");
            if f & RECURSIVE_DIRECTLY != 0 {
                extra.push_str(" directly");
            }
            if f & RECURSIVE_INDIRECTLY != 0 {
                extra.push_str(" indirectly");
            }
        }
        if f & IRREDUCIBLE != 0 {
            extra.push_str(", irreducible");
        }
        if f & NO_LOOPS != 0 {
            extra.push_str(", no_loops");
        }
        if f & HAS_EXTENDED_STMT != 0 {
            extra.push_str(", extended_stmt");
        }
        if f & HAS_EXTENDED_FCALL != 0 {
            extra.push_str(", extended_fcall");
        }
    }
    dump_op_array_header(out, op_array, &extra, msg);
    if let Some(info) = func_info {
        out.extend_from_slice(b"     ; return ");
        let ce = info
            .return_ce
            .as_ref()
            .map(|(name, inst)| (name.as_slice(), *inst));
        dump_type_info(out, info.return_type, ce, 0);
        dump_range(out, &info.return_range);
        out.push(b'\n');
    }
}

/// `zend_dump_const`: a leading space, then the value.
pub fn dump_const(out: &mut Vec<u8>, lit: &Literal) {
    match lit {
        Literal::Null => out.extend_from_slice(b" null"),
        Literal::False => out.extend_from_slice(b" bool(false)"),
        Literal::True => out.extend_from_slice(b" bool(true)"),
        Literal::Long(l) => {
            let _ = write!(out, " int({l})");
        }
        Literal::Double(d) => {
            out.extend_from_slice(b" float(");
            format_g(out, d.get());
            out.push(b')');
        }
        Literal::String(s) => {
            out.extend_from_slice(b" string(\"");
            out.extend_from_slice(c_str(s.as_bytes()));
            out.extend_from_slice(b"\")");
        }
        Literal::Array(_) => out.extend_from_slice(b" array(...)"),
        Literal::Ast(_) => {
            let _ = write!(out, " zval(type={})", IS_CONSTANT_AST);
        }
    }
}

/// The bytes C's `%s` prints: everything before the first NUL.
pub fn c_str(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(nul) => &bytes[..nul],
        None => bytes,
    }
}

/// C's `printf("%g", v)` as glibc prints it: 6 significant digits, trailing zeros removed,
/// exponent form below 1e-4 and from 1e6 on, `inf`/`nan` with their sign.
pub fn format_g(out: &mut Vec<u8>, v: f64) {
    const PRECISION: i32 = 6;
    if v.is_nan() {
        out.extend_from_slice(if v.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return;
    }
    if v.is_infinite() {
        out.extend_from_slice(if v < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // The exponent after rounding to PRECISION significant digits decides the style.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, v);
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    if !(-4..PRECISION).contains(&exp) {
        out.extend_from_slice(strip_fraction_zeros(mantissa).as_bytes());
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else {
        let fixed = format!("{:.*}", (PRECISION - 1 - exp) as usize, v);
        out.extend_from_slice(strip_fraction_zeros(&fixed).as_bytes());
    }
}

fn strip_fraction_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `zend_dump_var`: `CVn($name)`, `Vn`, `Tn`, or `Xn` for anything else.
pub fn dump_var(out: &mut Vec<u8>, op_array: &OpArray, var_type: u8, var_num: u32) {
    if var_type == IS_CV && var_num < op_array.last_var() {
        let _ = write!(out, "CV{var_num}($");
        out.extend_from_slice(c_str(op_array.vars[var_num as usize].as_bytes()));
        out.push(b')');
    } else if var_type == IS_VAR {
        let _ = write!(out, "V{var_num}");
    } else if var_type & (IS_VAR | IS_TMP_VAR) == IS_TMP_VAR {
        let _ = write!(out, "T{var_num}");
    } else {
        let _ = write!(out, "X{var_num}");
    }
}

fn dump_operand_var(out: &mut Vec<u8>, op_array: &OpArray, operand: Operand) {
    if let Some(var) = operand.var() {
        dump_var(out, op_array, operand.op_type(), var.as_u32());
    }
}

/// Appends `item` to a comma-separated list whose first element is pending in `first`.
fn list_item(out: &mut Vec<u8>, first: &mut bool, item: &str) {
    if !std::mem::take(first) {
        out.extend_from_slice(b", ");
    }
    out.extend_from_slice(item.as_bytes());
}

/// `zend_dump_type_info`: ` [type, type...]`. `ce` is the class name and whether it is an
/// `instanceof` bound.
pub fn dump_type_info(out: &mut Vec<u8>, info: u32, ce: Option<(&[u8], bool)>, dump_flags: u32) {
    let may = MayBe::from_bits_retain(info);
    let mut first = true;
    out.extend_from_slice(b" [");
    if may.contains(MayBe::GUARD) {
        out.push(b'!');
    }
    if may.contains(MayBe::UNDEF) {
        list_item(out, &mut first, "undef");
    }
    if may.contains(MayBe::INDIRECT) {
        list_item(out, &mut first, "ind");
    }
    if may.contains(MayBe::REF) {
        list_item(out, &mut first, "ref");
    }
    if dump_flags & ZEND_DUMP_RC_INFERENCE != 0 {
        if may.contains(MayBe::RC1) {
            list_item(out, &mut first, "rc1");
        }
        if may.contains(MayBe::RCN) {
            list_item(out, &mut first, "rcn");
        }
    }
    let dump_ce = |out: &mut Vec<u8>| {
        if let Some((name, is_instanceof)) = ce {
            out.extend_from_slice(if is_instanceof {
                b" (instanceof "
            } else {
                b" ("
            });
            out.extend_from_slice(c_str(name));
            out.push(b')');
        }
    };
    if may.contains(MayBe::CLASS) {
        list_item(out, &mut first, "class");
        dump_ce(out);
    } else if may.contains(MayBe::ANY) {
        list_item(out, &mut first, "any");
    } else {
        if may.contains(MayBe::NULL) {
            list_item(out, &mut first, "null");
        }
        if may.contains(MayBe::BOOL) {
            list_item(out, &mut first, "bool");
        } else if may.contains(MayBe::FALSE) {
            list_item(out, &mut first, "false");
        } else if may.contains(MayBe::TRUE) {
            list_item(out, &mut first, "true");
        }
        if may.contains(MayBe::LONG) {
            list_item(out, &mut first, "long");
        }
        if may.contains(MayBe::DOUBLE) {
            list_item(out, &mut first, "double");
        }
        if may.contains(MayBe::STRING) {
            list_item(out, &mut first, "string");
        }
        if may.contains(MayBe::ARRAY) {
            list_item(out, &mut first, "");
            dump_array_kind(out, info);
            out.extend_from_slice(b"array");
            dump_array_info(out, may);
        }
        if may.contains(MayBe::OBJECT) {
            list_item(out, &mut first, "object");
            dump_ce(out);
        }
        if may.contains(MayBe::RESOURCE) {
            list_item(out, &mut first, "resource");
        }
    }
    out.push(b']');
}

/// The `!`, `empty `, `packed `, `hash ` or `[empty, packed, hash] ` before `array`.
fn dump_array_kind(out: &mut Vec<u8>, info: u32) {
    const PACKED: u32 = 1 << 21;
    const NUMERIC_HASH: u32 = 1 << 22;
    const STRING_HASH: u32 = 1 << 23;
    const EMPTY: u32 = 1 << 29;
    const KEY_ANY: u32 = PACKED | NUMERIC_HASH | STRING_HASH | EMPTY;
    const PACKED_GUARD: u32 = 1 << 27;
    if info & PACKED_GUARD != 0 {
        out.push(b'!');
    }
    let keys = info & KEY_ANY;
    let hash = info & (NUMERIC_HASH | STRING_HASH) != 0;
    if keys == EMPTY {
        out.extend_from_slice(b"empty ");
    } else if keys == PACKED {
        out.extend_from_slice(b"packed ");
    } else if hash && info & (PACKED | EMPTY) == 0 {
        out.extend_from_slice(b"hash ");
    } else if keys != KEY_ANY && keys != 0 {
        let mut first = true;
        out.push(b'[');
        if info & EMPTY != 0 {
            list_item(out, &mut first, "empty");
        }
        if info & PACKED != 0 {
            list_item(out, &mut first, "packed");
        }
        if hash {
            list_item(out, &mut first, "hash");
        }
        out.extend_from_slice(b"] ");
    }
}

fn dump_array_info(out: &mut Vec<u8>, may: MayBe) {
    if may.intersects(MayBe::ARRAY_KEY_LONG | MayBe::ARRAY_KEY_STRING)
        && (!may.intersects(MayBe::ARRAY_KEY_LONG) || !may.intersects(MayBe::ARRAY_KEY_STRING))
    {
        let mut first = true;
        out.extend_from_slice(b" [");
        if may.intersects(MayBe::ARRAY_KEY_LONG) {
            list_item(out, &mut first, "long");
        }
        if may.intersects(MayBe::ARRAY_KEY_STRING) {
            list_item(out, &mut first, "string");
        }
        out.push(b']');
    }
    if may.intersects(MayBe::ARRAY_OF_ANY | MayBe::ARRAY_OF_REF) {
        let mut first = true;
        out.extend_from_slice(b" of [");
        if may.contains(MayBe::ARRAY_OF_ANY) {
            list_item(out, &mut first, "any");
        } else {
            for (bit, name) in [
                (MayBe::ARRAY_OF_NULL, "null"),
                (MayBe::ARRAY_OF_FALSE, "false"),
                (MayBe::ARRAY_OF_TRUE, "true"),
                (MayBe::ARRAY_OF_LONG, "long"),
                (MayBe::ARRAY_OF_DOUBLE, "double"),
                (MayBe::ARRAY_OF_STRING, "string"),
                (MayBe::ARRAY_OF_ARRAY, "array"),
                (MayBe::ARRAY_OF_OBJECT, "object"),
                (MayBe::ARRAY_OF_RESOURCE, "resource"),
            ] {
                if may.contains(bit) {
                    list_item(out, &mut first, name);
                }
            }
        }
        if may.contains(MayBe::ARRAY_OF_REF) {
            list_item(out, &mut first, "ref");
        }
        out.push(b']');
    }
}

fn dump_class_fetch_type(out: &mut Vec<u8>, fetch_type: u32) {
    const ZEND_FETCH_CLASS_MASK: u32 = 0x0f;
    const ZEND_FETCH_CLASS_NO_AUTOLOAD: u32 = 0x80;
    const ZEND_FETCH_CLASS_SILENT: u32 = 0x0100;
    const ZEND_FETCH_CLASS_EXCEPTION: u32 = 0x0200;
    let kind: &[u8] = match fetch_type & ZEND_FETCH_CLASS_MASK {
        1 => b" (self)",
        2 => b" (parent)",
        3 => b" (static)",
        4 => b" (auto)",
        5 => b" (interface)",
        6 => b" (trait)",
        _ => b"",
    };
    out.extend_from_slice(kind);
    if fetch_type & ZEND_FETCH_CLASS_NO_AUTOLOAD != 0 {
        out.extend_from_slice(b" (no-autoload)");
    }
    if fetch_type & ZEND_FETCH_CLASS_SILENT != 0 {
        out.extend_from_slice(b" (silent)");
    }
    if fetch_type & ZEND_FETCH_CLASS_EXCEPTION != 0 {
        out.extend_from_slice(b" (exception)");
    }
}

/// `zend_dump_unused_op`.
fn dump_unused_op(out: &mut Vec<u8>, num: u32, flags: u32) {
    const IS_CONSTANT_UNQUALIFIED_IN_NAMESPACE: u32 = 0x800;
    match flags & ZEND_VM_OP_MASK {
        ZEND_VM_OP_NUM => {
            let _ = write!(out, " {num}");
        }
        ZEND_VM_OP_TRY_CATCH if num != u32::MAX => {
            let _ = write!(out, " try-catch({num})");
        }
        ZEND_VM_OP_THIS => out.extend_from_slice(b" THIS"),
        ZEND_VM_OP_NEXT => out.extend_from_slice(b" NEXT"),
        ZEND_VM_OP_CLASS_FETCH => dump_class_fetch_type(out, num),
        ZEND_VM_OP_CONSTRUCTOR => out.extend_from_slice(b" CONSTRUCTOR"),
        ZEND_VM_OP_CONST_FETCH if num & IS_CONSTANT_UNQUALIFIED_IN_NAMESPACE != 0 => {
            out.extend_from_slice(b" (unqualified-in-namespace)");
        }
        _ => {}
    }
}

/// The raw `znode_op` value of an unused operand (a jump target is an op number).
fn unused_value(operand: Operand) -> u32 {
    match operand {
        Operand::Unused(raw) => raw,
        Operand::JmpAddr(target) => target.as_u32(),
        _ => 0,
    }
}

fn dump_jump(out: &mut Vec<u8>, ctx: &OpContext, n: &mut usize, target: u32) {
    match ctx.successors {
        Some(successors) => {
            let _ = write!(
                out,
                " BB{}",
                successors.get(*n).copied().unwrap_or(u32::MAX)
            );
            *n += 1;
        }
        None => {
            let _ = write!(out, " {target:04}");
        }
    }
}

fn opcode_name(out: &mut Vec<u8>, opcode: Opcode) {
    match opcode.short_name() {
        Some(name) => out.extend_from_slice(name.as_bytes()),
        None => {
            let _ = write!(out, "OP_{}", opcode.0);
        }
    }
}

fn dump_extended_value(out: &mut Vec<u8>, op: &Op, flags: u32) {
    let ext = op.extended_value;
    match flags & ZEND_VM_EXT_MASK {
        ZEND_VM_EXT_NUM => {
            let _ = write!(out, " {ext}");
        }
        ZEND_VM_EXT_OP => {
            out.extend_from_slice(b" (");
            opcode_name(out, Opcode(ext as u8));
            out.push(b')');
        }
        ZEND_VM_EXT_TYPE => {
            let name: &[u8] = match ext.try_into().unwrap_or(u8::MAX) {
                IS_NULL => b" (null)",
                IS_FALSE => b" (false)",
                IS_TRUE => b" (true)",
                IS_LONG => b" (long)",
                IS_DOUBLE => b" (double)",
                IS_STRING => b" (string)",
                IS_ARRAY => b" (array)",
                IS_OBJECT => b" (object)",
                IS_RESOURCE => b" (resource)",
                _IS_BOOL => b" (bool)",
                IS_CALLABLE => b" (callable)",
                IS_VOID => b" (void)",
                IS_NEVER => b" (never)",
                _ => b" (???)",
            };
            out.extend_from_slice(name);
        }
        ZEND_VM_EXT_TYPE_MASK => {
            let single = |t: u8| 1u32 << t;
            let name: Option<&[u8]> = match ext {
                e if e == single(IS_NULL) => Some(b" (null)"),
                e if e == single(IS_FALSE) => Some(b" (false)"),
                e if e == single(IS_TRUE) => Some(b" (true)"),
                e if e == single(IS_LONG) => Some(b" (long)"),
                e if e == single(IS_DOUBLE) => Some(b" (double)"),
                e if e == single(IS_STRING) => Some(b" (string)"),
                e if e == single(IS_ARRAY) => Some(b" (array)"),
                e if e == single(IS_OBJECT) => Some(b" (object)"),
                e if e == single(IS_RESOURCE) => Some(b" (resource)"),
                e if e == single(IS_FALSE) | single(IS_TRUE) => Some(b" (bool)"),
                _ => None,
            };
            match name {
                Some(name) => out.extend_from_slice(name),
                None => {
                    out.extend_from_slice(b" TYPE");
                    dump_type_info(out, ext, None, 0);
                }
            }
        }
        ZEND_VM_EXT_EVAL => {
            let name: &[u8] = match ext {
                1 => b" (eval)",
                2 => b" (include)",
                4 => b" (include_once)",
                8 => b" (require)",
                16 => b" (require_once)",
                _ => b" (???)",
            };
            out.extend_from_slice(name);
        }
        ZEND_VM_EXT_SRC => {
            const ZEND_RETURNS_FUNCTION: u32 = 1 << 0;
            const ZEND_RETURNS_VALUE: u32 = 1 << 1;
            if ext == ZEND_RETURNS_VALUE {
                out.extend_from_slice(b" (value)");
            } else if ext & ZEND_RETURNS_FUNCTION != 0 {
                out.extend_from_slice(b" (function)");
            }
        }
        _ => {
            if flags & ZEND_VM_EXT_VAR_FETCH != 0 {
                if ext & (1 << 1) != 0 {
                    out.extend_from_slice(b" (global)");
                } else if ext & (1 << 2) != 0 {
                    out.extend_from_slice(b" (local)");
                } else if ext & (1 << 3) != 0 {
                    out.extend_from_slice(b" (global+lock)");
                }
            }
            if flags & ZEND_VM_EXT_ISSET != 0 {
                out.extend_from_slice(if ext & 1 == 0 {
                    b" (isset)"
                } else {
                    b" (empty)"
                });
            }
            if flags & ZEND_VM_EXT_ARRAY_INIT != 0 {
                let _ = write!(out, " {}", ext >> 2);
                if ext & (1 << 1) == 0 {
                    out.extend_from_slice(b" (packed)");
                }
            }
            if flags & ZEND_VM_EXT_REF != 0 && ext & 1 != 0 {
                out.extend_from_slice(b" (ref)");
            }
            if flags & (ZEND_VM_EXT_DIM_WRITE | ZEND_VM_EXT_FETCH_REF) != 0 {
                match ext & 3 {
                    1 => out.extend_from_slice(b" (ref)"),
                    2 => out.extend_from_slice(b" (dim write)"),
                    _ => {}
                }
            }
        }
    }
}

/// `zend_dump_op`: one op without its number.
pub fn dump_op(out: &mut Vec<u8>, op_array: &OpArray, op: &Op, ctx: &OpContext) {
    let flags = op.opcode.flags();
    let mut n = 0usize;
    let ssa = ctx.ssa;
    let info = ctx.ssa_var_info;
    let ssa_var = |out: &mut Vec<u8>, num: u32, operand: Operand| {
        if let Some(var) = operand.var() {
            dump_ssa_var(
                out,
                op_array,
                Some(num),
                operand.op_type(),
                var.as_u32(),
                info,
            );
        }
    };

    if !matches!(
        ssa,
        Some(SsaOperands {
            result_use: Some(_),
            ..
        })
    ) && op.result.var().is_some()
    {
        match ssa.and_then(|s| s.result_def) {
            Some(def) => ssa_var(out, def, op.result),
            None => dump_operand_var(out, op_array, op.result),
        }
        out.extend_from_slice(b" = ");
    }
    opcode_name(out, op.opcode);
    dump_extended_value(out, op, flags);

    match op.op1 {
        Operand::Const(lit) => dump_literal(out, op_array, lit),
        Operand::TmpVar(_) | Operand::Var(_) | Operand::Cv(_) => {
            dump_var_operand(
                out,
                op_array,
                op.op1,
                ssa.map(|s| (s.op1_use, s.op1_def)),
                &ssa_var,
            );
        }
        unused => {
            let op1_flags = zend_vm_op1_flags(flags);
            if op1_flags & ZEND_VM_OP_MASK == ZEND_VM_OP_JMP_ADDR {
                dump_jump(out, ctx, &mut n, unused_value(unused));
            } else {
                dump_unused_op(out, unused_value(unused), op1_flags);
            }
        }
    }

    match op.op2 {
        Operand::Const(lit) => {
            if matches!(
                op.opcode,
                ZEND_SWITCH_LONG | ZEND_SWITCH_STRING | ZEND_MATCH
            ) {
                dump_jump_table(out, op_array, lit, ctx, &mut n);
            } else {
                dump_literal(out, op_array, lit);
            }
        }
        Operand::TmpVar(_) | Operand::Var(_) | Operand::Cv(_) => {
            dump_var_operand(
                out,
                op_array,
                op.op2,
                ssa.map(|s| (s.op2_use, s.op2_def)),
                &ssa_var,
            );
        }
        unused => {
            let op2_flags = zend_vm_op2_flags(flags);
            if op2_flags & ZEND_VM_OP_MASK == ZEND_VM_OP_JMP_ADDR {
                const ZEND_LAST_CATCH: u32 = 1;
                if op.opcode != ZEND_CATCH || op.extended_value & ZEND_LAST_CATCH == 0 {
                    dump_jump(out, ctx, &mut n, unused_value(unused));
                }
            } else {
                dump_unused_op(out, unused_value(unused), op2_flags);
            }
        }
    }

    if flags & ZEND_VM_EXT_MASK == ZEND_VM_EXT_JMP_ADDR {
        dump_jump(out, ctx, &mut n, op.extended_value);
    }
    if let Operand::Const(lit) = op.result {
        dump_literal(out, op_array, lit);
    } else if let Some(SsaOperands {
        result_use: Some(used),
        result_def,
        ..
    }) = ssa
    {
        if op.result.var().is_some() {
            out.push(b' ');
            ssa_var(out, used, op.result);
            if let Some(def) = result_def {
                out.extend_from_slice(b" -> ");
                ssa_var(out, def, op.result);
            }
        }
    }
}

/// A TMP/VAR/CV op1 or op2: plain, or with its SSA use and definition.
fn dump_var_operand(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    operand: Operand,
    ssa: Option<(Option<u32>, Option<u32>)>,
    ssa_var: &dyn Fn(&mut Vec<u8>, u32, Operand),
) {
    match ssa {
        None => {
            out.push(b' ');
            dump_operand_var(out, op_array, operand);
        }
        Some((used, defined)) => {
            if let Some(used) = used {
                out.push(b' ');
                ssa_var(out, used, operand);
            } else if defined.is_none() {
                out.push(b' ');
                dump_operand_var(out, op_array, operand);
            }
            if let Some(defined) = defined {
                out.extend_from_slice(b" -> ");
                ssa_var(out, defined, operand);
            }
        }
    }
}

fn dump_literal(out: &mut Vec<u8>, op_array: &OpArray, lit: LiteralId) {
    match op_array.literals.get(lit.index()) {
        Some(value) => dump_const(out, value),
        None => {
            let _ = write!(out, " <bad literal {}>", lit.as_u32());
        }
    }
}

fn dump_jump_table(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    lit: LiteralId,
    ctx: &OpContext,
    n: &mut usize,
) {
    if let Some(Literal::Array(table)) = op_array.literals.get(lit.index()) {
        for (key, target) in table {
            match key {
                ArrayKey::Str(s) => {
                    out.extend_from_slice(b" \"");
                    out.extend_from_slice(c_str(s.as_bytes()));
                    out.extend_from_slice(b"\":");
                }
                ArrayKey::Long(l) => {
                    let _ = write!(out, " {l}:");
                }
            }
            match ctx.successors {
                Some(successors) => {
                    let _ = write!(
                        out,
                        " BB{},",
                        successors.get(*n).copied().unwrap_or(u32::MAX)
                    );
                    *n += 1;
                }
                None => {
                    let target = match target {
                        Literal::Long(t) => *t as u32,
                        _ => u32::MAX,
                    };
                    let _ = write!(out, " {target:04},");
                }
            }
        }
        out.extend_from_slice(b" default:");
    } else {
        dump_literal(out, op_array, lit);
    }
}

/// `zend_dump_op_line` without a CFG: number, padding, op, newline.
pub fn dump_op_line(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    num: OpNum,
    dump_flags: u32,
    ctx: &OpContext,
) {
    let op = &op_array.opcodes[num.index()];
    if dump_flags & ZEND_DUMP_LINE_NUMBERS != 0 {
        let _ = write!(out, "L{:04} ", op.lineno);
    }
    let number = format!("{:04}", num.as_u32());
    out.extend_from_slice(number.as_bytes());
    // `fprintf("%*c", 5 - len, ' ')` pads to five columns and always prints one space.
    let pad = 5usize.saturating_sub(number.len()).max(1);
    out.extend(std::iter::repeat_n(b' ', pad));
    dump_op(out, op_array, op, ctx);
    out.push(b'\n');
}

/// The header `zend_dump_op_array` prints before the ops. `extra` is inserted inside the
/// parentheses after `tmps=N` (SSA and function-info stages add to it).
pub fn dump_op_array_header(out: &mut Vec<u8>, op_array: &OpArray, extra: &str, msg: Option<&str>) {
    out.push(b'\n');
    match (&op_array.function_name, &op_array.scope) {
        (None, _) => out.extend_from_slice(b"$_main"),
        (Some(f), Some(s)) => {
            out.extend_from_slice(c_str(s.as_bytes()));
            out.extend_from_slice(b"::");
            out.extend_from_slice(c_str(f.as_bytes()));
        }
        (Some(f), None) => out.extend_from_slice(c_str(f.as_bytes())),
    }
    let _ = write!(
        out,
        ":\n     ; (lines={}, args={}, vars={}, tmps={}{extra})\n",
        op_array.opcodes.len(),
        op_array.num_args,
        op_array.last_var(),
        op_array.T
    );
    if let Some(msg) = msg {
        let _ = writeln!(out, "     ; ({msg})");
    }
    out.extend_from_slice(b"     ; ");
    out.extend_from_slice(c_str(op_array.filename.as_bytes()));
    let _ = writeln!(out, ":{}-{}", op_array.line_start, op_array.line_end);
}

/// `zend_dump_op_array` for an op_array without CFG or SSA.
pub fn dump_op_array(out: &mut Vec<u8>, op_array: &OpArray, dump_flags: u32, msg: Option<&str>) {
    dump_op_array_ex(out, op_array, dump_flags, msg, None);
}

/// [`dump_op_array`] of an op_array that has a `zend_func_info` (the call graph was built):
/// its flags and return line are in the header.
pub fn dump_op_array_ex(
    out: &mut Vec<u8>,
    op_array: &OpArray,
    dump_flags: u32,
    msg: Option<&str>,
    func_info: Option<&FuncInfoHeader>,
) {
    dump_op_array_header_ex(out, op_array, None, func_info, msg);
    for i in 0..op_array.opcodes.len() {
        dump_op_line(
            out,
            op_array,
            OpNum::from(i),
            dump_flags,
            &OpContext::default(),
        );
    }
    if dump_flags & ZEND_DUMP_LIVE_RANGES != 0 {
        dump_live_ranges(out, op_array);
    }
    if !op_array.try_catch_array.is_empty() {
        out.extend_from_slice(b"EXCEPTION TABLE:\n");
        for tc in &op_array.try_catch_array {
            let _ = write!(out, "     {:04}", tc.try_op.as_u32());
            for part in [tc.catch_op, tc.finally_op] {
                match part {
                    Some(op) => {
                        let _ = write!(out, ", {:04}", op.as_u32());
                    }
                    None => out.extend_from_slice(b", -"),
                }
            }
            // PHP ends the line only when there is no finally_end: an entry with one runs
            // into the next entry (or the next op_array's header).
            match tc.finally_end {
                Some(op) => {
                    let _ = write!(out, ", {:04}", op.as_u32());
                }
                None => out.extend_from_slice(b", -\n"),
            }
        }
    }
}

/// The `LIVE RANGES:` section.
pub fn dump_live_ranges(out: &mut Vec<u8>, op_array: &OpArray) {
    if op_array.live_range.is_empty() {
        return;
    }
    out.extend_from_slice(b"LIVE RANGES:\n");
    for range in &op_array.live_range {
        let _ = write!(
            out,
            "     {}: {:04} - {:04} ",
            range.var.as_u32(),
            range.start.as_u32(),
            range.end.as_u32()
        );
        let kind: &[u8] = match range.kind {
            ZEND_LIVE_TMPVAR => b"(tmp/var)\n",
            ZEND_LIVE_LOOP => b"(loop)\n",
            ZEND_LIVE_SILENCE => b"(silence)\n",
            ZEND_LIVE_ROPE => b"(rope)\n",
            ZEND_LIVE_NEW => b"(new)\n",
            _ => b"",
        };
        out.extend_from_slice(kind);
    }
}

/// The script-level dumps that need no analysis: "before optimizer" (`0x10000`), and
/// "after optimizer" (`0x20000`) when the optimizer changes nothing. Op_arrays are visited
/// in `zend_foreach_op_array` order; eval code is skipped as `zend_optimize` skips it.
pub fn dump_script(script: &Script, debug_bits: u32) -> Option<Vec<u8>> {
    let (flags, msg) = match debug_bits {
        debug_level::BEFORE_OPTIMIZER => (ZEND_DUMP_LIVE_RANGES, "before optimizer"),
        debug_level::AFTER_OPTIMIZER => (0, "after optimizer"),
        _ => return None,
    };
    let mut out = Vec::new();
    for op_array in script.op_arrays() {
        if op_array.type_ == ZEND_EVAL_CODE {
            continue;
        }
        dump_op_array(&mut out, op_array, flags, Some(msg));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: f64) -> String {
        let mut out = Vec::new();
        format_g(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    #[allow(clippy::approx_constant, clippy::excessive_precision)]
    fn percent_g_matches_glibc() {
        // Expected strings are what glibc's printf("%g") prints for these values.
        assert_eq!(g(2.0), "2");
        assert_eq!(g(0.1), "0.1");
        assert_eq!(g(1.5e300), "1.5e+300");
        assert_eq!(g(123456.0), "123456");
        assert_eq!(g(1234567.0), "1.23457e+06");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(f64::INFINITY), "inf");
        assert_eq!(g(f64::NEG_INFINITY), "-inf");
        assert_eq!(g(3.14159265), "3.14159");
        assert_eq!(g(999999.5), "1e+06");
        assert_eq!(g(9.2233720368547758e18), "9.22337e+18");
    }
}

#[cfg(test)]
mod glibc_oracle {
    use super::format_g;

    fn glibc_g(v: f64) -> String {
        let mut buf = [0u8; 64];
        // SAFETY: the buffer is large enough for any %g output and NUL-terminated by snprintf.
        let len = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%g".as_ptr(), v) };
        String::from_utf8(buf[..len as usize].to_vec()).unwrap()
    }

    #[test]
    fn percent_g_agrees_with_libc_snprintf() {
        let mut values = vec![
            0.5,
            2.5,
            1234565.0,
            1234575.0,
            0.000123456,
            1e-5,
            1e15,
            1e16,
            123456.5,
            999999.5,
            f64::MIN_POSITIVE,
            f64::MAX,
            5e-324,
            1.0 / 3.0,
            -2.0 / 3.0,
            100000.0,
            1000000.0,
            f64::NAN,
            -f64::NAN,
            0.0,
            -0.0,
        ];
        // A deterministic spread over many magnitudes and mantissas.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(f64::from_bits(x));
            values.push((x % 100_000_000) as f64 / 8.0);
        }
        for v in values {
            let mut ours = Vec::new();
            format_g(&mut ours, v);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                glibc_g(v),
                "value bits {:#x}",
                v.to_bits()
            );
        }
    }
}
