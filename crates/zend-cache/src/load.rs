//! Loading a persisted body: full validation, zero-copy views, and decoding into a
//! [`Script`].
//!
//! [`ScriptView::new`] checks every byte of a body before anything reads it: the header,
//! the string table, every span (bounds, alignment, and that it sits exactly where the
//! writer's allocator puts it, so records cannot overlap, alias or loop), every string
//! reference, every enum and presence flag, that padding and unused fields are zero, the
//! nesting limits, and the counts in the header. It allocates nothing, and its work is
//! linear in the body's size. After it, the view's accessors read fields in place without
//! allocating (iterating ops is a walk over 24-byte records), and [`ScriptView::to_script`]
//! decodes the owned model. No code here panics on any input, and there is no `unsafe`.

use crate::layout::{self, *};
use std::fmt;
use zend_ir::*;

/// What is wrong with a body, and where (byte offset in the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at body offset {at}")]
pub struct BodyError {
    pub kind: BodyErrorKind,
    pub at: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyErrorKind {
    /// Shorter than the fixed header.
    TooShort,
    BadMagic,
    /// The header's length fields disagree with the body's length.
    BadLength,
    /// The string index is not a run of consecutive strings filling the string bytes.
    BadStringTable,
    /// A span or record offset is not where the canonical layout puts it, or runs past the
    /// records area.
    BadOffset,
    /// A string reference is out of range (or absent where a string is required).
    BadString,
    /// An enum, flag, operand type or presence field holds an undefined value.
    BadEnum,
    /// A padding byte or an unused field is not zero.
    NonZeroPadding,
    /// Values or op_arrays nest deeper than the limits.
    TooDeep,
    /// Decoding would allocate far more than the body's size.
    TooLarge,
    /// The header's op_array or op count disagrees with the records.
    BadCount,
    /// A literal `u2` entry names no literal, is out of order or holds 0.
    BadLiteralExtra,
    /// An operand, jump target, live range or try/catch op holds `u32::MAX`, which no
    /// index of the model can hold.
    BadIndex,
}

impl fmt::Display for BodyErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BodyErrorKind::TooShort => "body shorter than its header",
            BodyErrorKind::BadMagic => "bad body magic",
            BodyErrorKind::BadLength => "body length mismatch",
            BodyErrorKind::BadStringTable => "malformed string table",
            BodyErrorKind::BadOffset => "non-canonical or out-of-bounds offset",
            BodyErrorKind::BadString => "bad string reference",
            BodyErrorKind::BadEnum => "undefined enum value",
            BodyErrorKind::NonZeroPadding => "non-zero padding",
            BodyErrorKind::TooDeep => "nesting too deep",
            BodyErrorKind::TooLarge => "decoded size out of proportion",
            BodyErrorKind::BadCount => "header count mismatch",
            BodyErrorKind::BadLiteralExtra => "bad literal u2 entry",
            BodyErrorKind::BadIndex => "index out of range",
        })
    }
}

#[inline]
fn r8(b: &[u8], at: usize) -> u8 {
    b[at]
}

#[inline]
fn r16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

#[inline]
fn r32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[inline]
fn r64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn err<T>(kind: BodyErrorKind, at: usize) -> Result<T, BodyError> {
    Err(BodyError {
        kind,
        at: at.min(u32::MAX as usize) as u32,
    })
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

const fn plain_operand_type(t: u8) -> bool {
    matches!(
        t,
        IS_UNUSED | IS_CONST | IS_TMP_VAR | IS_VAR | IS_CV | op::JMP_ADDR
    )
}

/// Non-zero for an op1/op2 type byte that is not an operand type.
static OPERAND_TYPE_BAD: [u8; 256] = {
    let mut t = [1u8; 256];
    let mut i = 0;
    while i < 256 {
        if plain_operand_type(i as u8) {
            t[i] = 0;
        }
        i += 1;
    }
    t
};

/// Non-zero for a result type byte that is not an operand type with at most one
/// smart-branch bit.
static RESULT_TYPE_BAD: [u8; 256] = {
    let mut t = [1u8; 256];
    let mut i = 0;
    while i < 256 {
        let rt = i as u8;
        let smart = rt & (IS_SMART_BRANCH_JMPZ | IS_SMART_BRANCH_JMPNZ);
        if plain_operand_type(rt & !smart) && smart != IS_SMART_BRANCH_JMPZ | IS_SMART_BRANCH_JMPNZ
        {
            t[i] = 0;
        }
        i += 1;
    }
    t
};

/// Facts the validation established.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyInfo {
    pub op_arrays: u32,
    pub ops: u32,
    pub strings: u32,
    /// An upper bound on the bytes of owned strings [`ScriptView::to_script`] allocates
    /// (string references × longest string, or the exact sum when that bound is too large).
    pub decoded_string_bytes: u64,
}

struct Check<'a> {
    b: &'a [u8],
    cursor: usize,
    /// End of the records area (start of the string index, before alignment).
    limit: usize,
    strings_index: usize,
    string_count: u32,
    /// Exact accounting of decoded string bytes (a second pass, only when the cheap bound,
    /// `refs × longest`, is over the limit).
    exact: bool,
    decoded: u64,
    refs: u64,
    longest: u64,
    op_arrays: u32,
    ops: u64,
}

type R = Result<(), BodyError>;

impl Check<'_> {
    fn u32(&self, at: usize) -> u32 {
        r32(self.b, at)
    }

    #[inline]
    fn zero(&self, at: usize, len: usize) -> R {
        let bytes = &self.b[at..at + len];
        if bytes.iter().fold(0u8, |acc, &x| acc | x) == 0 {
            return Ok(());
        }
        let i = bytes.iter().position(|&x| x != 0).unwrap_or(0);
        err(BodyErrorKind::NonZeroPadding, at + i)
    }

    fn enum_max(&self, at: usize, max: u32) -> Result<u32, BodyError> {
        let v = self.u32(at);
        if v > max {
            return err(BodyErrorKind::BadEnum, at);
        }
        Ok(v)
    }

    /// Places `count` records where the canonical allocator would; `off` is what the body
    /// says. Returns the offset.
    fn place(
        &mut self,
        off: u64,
        count: u64,
        size: usize,
        align: usize,
        at: usize,
    ) -> Result<usize, BodyError> {
        if count == 0 {
            if off != 0 {
                return err(BodyErrorKind::BadOffset, at);
            }
            return Ok(0);
        }
        let expected = align_up(self.cursor, align);
        if off != expected as u64 {
            return err(BodyErrorKind::BadOffset, at);
        }
        let end = count
            .checked_mul(size as u64)
            .and_then(|n| n.checked_add(off))
            .filter(|&n| n <= self.limit as u64);
        let Some(end) = end else {
            return err(BodyErrorKind::BadOffset, at);
        };
        self.zero(self.cursor, expected - self.cursor)?;
        self.cursor = end as usize;
        Ok(expected)
    }

    /// A span field at `at`: (offset, count).
    fn span(&mut self, at: usize, size: usize, align: usize) -> Result<(usize, usize), BodyError> {
        let off = self.u32(at) as u64;
        let count = self.u32(at + 4) as u64;
        let off = self.place(off, count, size, align, at)?;
        Ok((off, count as usize))
    }

    fn string_len(&self, id: u32) -> u64 {
        r32(
            self.b,
            self.strings_index + id as usize * string::SIZE + string::LEN,
        ) as u64
    }

    fn str(&mut self, at: usize) -> R {
        let id = self.u32(at);
        if id >= self.string_count {
            return err(BodyErrorKind::BadString, at);
        }
        if self.exact {
            self.decoded += self.string_len(id);
        } else {
            self.refs += 1;
        }
        Ok(())
    }

    fn opt_str(&mut self, at: usize) -> R {
        if self.u32(at) == NONE {
            return Ok(());
        }
        self.str(at)
    }

    fn header(&mut self) -> R {
        let b = self.b;
        if b.len() < header::SIZE {
            return err(BodyErrorKind::TooShort, 0);
        }
        if b[..4] != BODY_MAGIC {
            return err(BodyErrorKind::BadMagic, 0);
        }
        if self.u32(header::BODY_LEN) as usize != b.len() {
            return err(BodyErrorKind::BadLength, header::BODY_LEN);
        }
        let index = self.u32(header::STRINGS_INDEX) as usize;
        let count = self.u32(header::STRING_COUNT) as usize;
        let bytes_at = self.u32(header::STRING_BYTES) as usize;
        let bytes_len = self.u32(header::STRING_BYTES_LEN) as usize;
        if index < header::SIZE || index % string::ALIGN != 0 || index > b.len() {
            return err(BodyErrorKind::BadLength, header::STRINGS_INDEX);
        }
        if count > (b.len() - index) / string::SIZE || bytes_at != index + count * string::SIZE {
            return err(BodyErrorKind::BadLength, header::STRING_BYTES);
        }
        if bytes_at.checked_add(bytes_len) != Some(b.len()) {
            return err(BodyErrorKind::BadLength, header::STRING_BYTES_LEN);
        }
        let mut pos = 0usize;
        for i in 0..count {
            let e = index + i * string::SIZE;
            if self.u32(e + string::OFFSET) as usize != pos {
                return err(BodyErrorKind::BadStringTable, e);
            }
            let len = self.u32(e + string::LEN) as usize;
            self.longest = self.longest.max(len as u64);
            pos += len;
            if pos > bytes_len {
                return err(BodyErrorKind::BadStringTable, e + string::LEN);
            }
        }
        if pos != bytes_len {
            return err(BodyErrorKind::BadStringTable, index);
        }
        match self.u32(header::HAS_HALT_OFFSET) {
            0 => self.zero(header::HALT_OFFSET, 8)?,
            1 => {}
            _ => return err(BodyErrorKind::BadEnum, header::HAS_HALT_OFFSET),
        }
        self.strings_index = index;
        self.string_count = count as u32;
        // Records may run up to the index, minus its alignment padding.
        self.limit = index;
        Ok(())
    }

    fn script(&mut self) -> R {
        self.header()?;
        self.str(header::FILENAME)?;
        self.op_array(header::MAIN_OP_ARRAY, 1)?;
        let (funcs, n) = self.span(header::FUNCTION_TABLE, func::SIZE, func::ALIGN)?;
        for i in 0..n {
            let rec = funcs + i * func::SIZE;
            self.str(rec + func::KEY)?;
            self.op_array(rec + func::OP_ARRAY, 1)?;
        }
        let (classes, n) = self.span(header::CLASS_TABLE, class::SIZE, class::ALIGN)?;
        for i in 0..n {
            let rec = classes + i * class::SIZE;
            self.str(rec + class::KEY)?;
            self.class_entry(rec)?;
        }
        let (warnings, n) = self.span(header::WARNINGS, warning::SIZE, warning::ALIGN)?;
        for i in 0..n {
            let rec = warnings + i * warning::SIZE;
            self.str(rec + warning::FILENAME)?;
            self.str(rec + warning::MESSAGE)?;
        }
        let (bindings, n) = self.span(
            header::EARLY_BINDINGS,
            early_binding::SIZE,
            early_binding::ALIGN,
        )?;
        for i in 0..n {
            let rec = bindings + i * early_binding::SIZE;
            self.str(rec + early_binding::LCNAME)?;
            self.str(rec + early_binding::RTD_KEY)?;
            self.str(rec + early_binding::LC_PARENT_NAME)?;
        }
        // The records end where the string index begins (after its alignment).
        if align_up(self.cursor, string::ALIGN) != self.strings_index {
            return err(BodyErrorKind::BadLength, header::STRINGS_INDEX);
        }
        self.zero(self.cursor, self.strings_index - self.cursor)?;
        if self.u32(header::OP_ARRAY_COUNT) != self.op_arrays {
            return err(BodyErrorKind::BadCount, header::OP_ARRAY_COUNT);
        }
        if self.u32(header::OP_COUNT) as u64 != self.ops {
            return err(BodyErrorKind::BadCount, header::OP_COUNT);
        }
        let limit =
            (self.b.len() as u64).saturating_mul(MAX_STRING_EXPANSION) + STRING_EXPANSION_SLACK;
        if !self.exact {
            self.decoded = self.refs.saturating_mul(self.longest);
        }
        if self.decoded > limit {
            return err(BodyErrorKind::TooLarge, 0);
        }
        Ok(())
    }

    fn op_array(&mut self, rec: usize, nesting: usize) -> R {
        use layout::op_array as f;
        if nesting > MAX_FUNC_NESTING {
            return err(BodyErrorKind::TooDeep, rec);
        }
        self.op_arrays = self.op_arrays.checked_add(1).ok_or(BodyError {
            kind: BodyErrorKind::BadCount,
            at: 0,
        })?;
        self.enum_max(rec + f::TYPE, 0xff)?;
        self.opt_str(rec + f::FUNCTION_NAME)?;
        self.opt_str(rec + f::SCOPE)?;
        self.str(rec + f::FILENAME)?;
        self.opt_str(rec + f::DOC_COMMENT)?;
        let has_statics = self.enum_max(rec + f::HAS_STATIC_VARIABLES, 1)?;

        let (args, n) = self.span(rec + f::ARG_INFO, arg_info::SIZE, arg_info::ALIGN)?;
        for i in 0..n {
            self.arg_info(args + i * arg_info::SIZE)?;
        }
        if self.u32(rec + f::RETURN_INFO + 4) > 1 {
            return err(BodyErrorKind::BadEnum, rec + f::RETURN_INFO + 4);
        }
        let (ret, n) = self.span(rec + f::RETURN_INFO, arg_info::SIZE, arg_info::ALIGN)?;
        if n == 1 {
            self.arg_info(ret)?;
        }
        self.attributes(rec + f::ATTRIBUTES)?;
        let (vars, n) = self.span(rec + f::VARS, 4, 4)?;
        for i in 0..n {
            self.str(vars + i * 4)?;
        }
        let (ops, n) = self.span(rec + f::OPCODES, op::SIZE, op::ALIGN)?;
        self.ops += n as u64;
        self.ops(ops, n)?;
        let (lits, n) = self.span(rec + f::LITERALS, lit::SIZE, lit::ALIGN)?;
        for i in 0..n {
            self.literal(lits + i * lit::SIZE, 0)?;
        }
        let literal_count = n;
        let (extra, n) = self.span(
            rec + f::LITERAL_EXTRA,
            literal_extra::SIZE,
            literal_extra::ALIGN,
        )?;
        let mut next = 0u64; // lowest literal index the next entry may name
        for i in 0..n {
            let e = extra + i * literal_extra::SIZE;
            let l = u64::from(self.u32(e + literal_extra::LITERAL));
            if l < next || l >= literal_count as u64 {
                return err(BodyErrorKind::BadLiteralExtra, e + literal_extra::LITERAL);
            }
            if self.u32(e + literal_extra::VALUE) == 0 {
                return err(BodyErrorKind::BadLiteralExtra, e + literal_extra::VALUE);
            }
            next = l + 1;
        }
        if has_statics == 0 {
            self.zero(rec + f::STATIC_VARIABLES, SPAN)?;
        }
        let (statics, n) = self.span(
            rec + f::STATIC_VARIABLES,
            named_value::SIZE,
            named_value::ALIGN,
        )?;
        for i in 0..n {
            let e = statics + i * named_value::SIZE;
            self.str(e + named_value::NAME)?;
            self.zero(e + named_value::PAD, 4)?;
            self.literal(e + named_value::VALUE, 0)?;
        }
        let (ranges, n) = self.span(rec + f::LIVE_RANGE, live_range::SIZE, live_range::ALIGN)?;
        for i in 0..n {
            let e = ranges + i * live_range::SIZE;
            for field in [live_range::VAR, live_range::START, live_range::END] {
                self.index(e + field)?;
            }
        }
        let (tcs, n) = self.span(rec + f::TRY_CATCH, try_catch::SIZE, try_catch::ALIGN)?;
        for i in 0..n {
            let e = tcs + i * try_catch::SIZE;
            self.index(e + try_catch::TRY)?;
            let present = self.enum_max(e + try_catch::PRESENT, 7)?;
            for (bit, field) in [
                (1, try_catch::CATCH),
                (2, try_catch::FINALLY),
                (4, try_catch::FINALLY_END),
            ] {
                if present & bit == 0 {
                    self.zero(e + field, 4)?;
                } else {
                    self.index(e + field)?;
                }
            }
        }
        let (defs, n) = self.span(rec + f::DYNAMIC_FUNC_DEFS, f::SIZE, f::ALIGN)?;
        for i in 0..n {
            self.op_array(defs + i * f::SIZE, nesting + 1)?;
        }
        Ok(())
    }

    /// A field the model reads as an index (`OpNum`, `VarNum`): any number but `u32::MAX`.
    fn index(&self, at: usize) -> R {
        if self.u32(at) == u32::MAX {
            return err(BodyErrorKind::BadIndex, at);
        }
        Ok(())
    }

    /// Checks the operand type bytes of `n` op records at `ops` (a table lookup per byte)
    /// and that no operand read as an index holds `u32::MAX`, accumulated without
    /// branches; the slow path only runs to locate an error.
    fn ops(&mut self, ops: usize, n: usize) -> R {
        let records = &self.b[ops..ops + n * op::SIZE];
        let mut bad = 0u8;
        for r in records.chunks_exact(op::SIZE) {
            bad |= OPERAND_TYPE_BAD[r[op::OP1_TYPE] as usize]
                | OPERAND_TYPE_BAD[r[op::OP2_TYPE] as usize]
                | RESULT_TYPE_BAD[r[op::RESULT_TYPE] as usize]
                | Self::bad_index(r, op::OP1_TYPE, op::OP1)
                | Self::bad_index(r, op::OP2_TYPE, op::OP2)
                | Self::bad_index(r, op::RESULT_TYPE, op::RESULT);
        }
        if bad == 0 {
            return Ok(());
        }
        for (i, r) in records.chunks_exact(op::SIZE).enumerate() {
            for (field, table) in [
                (op::OP1_TYPE, &OPERAND_TYPE_BAD),
                (op::OP2_TYPE, &OPERAND_TYPE_BAD),
                (op::RESULT_TYPE, &RESULT_TYPE_BAD),
            ] {
                if table[r[field] as usize] != 0 {
                    return err(BodyErrorKind::BadEnum, ops + i * op::SIZE + field);
                }
            }
            for (ty, field) in [
                (op::OP1_TYPE, op::OP1),
                (op::OP2_TYPE, op::OP2),
                (op::RESULT_TYPE, op::RESULT),
            ] {
                if Self::bad_index(r, ty, field) != 0 {
                    return err(BodyErrorKind::BadIndex, ops + i * op::SIZE + field);
                }
            }
        }
        Ok(())
    }

    /// 1 when the operand at `field` is typed (a literal, variable or jump target, so read
    /// as an index) and holds `u32::MAX`.
    #[inline]
    fn bad_index(r: &[u8], ty: usize, field: usize) -> u8 {
        let typed = r[ty] & !(IS_SMART_BRANCH_JMPZ | IS_SMART_BRANCH_JMPNZ) != IS_UNUSED;
        (typed & (r32(r, field) == u32::MAX)) as u8
    }

    fn literal(&mut self, rec: usize, depth: usize) -> R {
        if depth > MAX_VALUE_DEPTH {
            return err(BodyErrorKind::TooDeep, rec);
        }
        let value = r64(self.b, rec + lit::VALUE);
        // Fast path for scalars: type and u2 together are just the type code.
        match r64(self.b, rec + lit::TYPE) {
            t if t == ty::IS_LONG as u64 || t == ty::IS_DOUBLE as u64 => return Ok(()),
            t if t == ty::IS_STRING as u64 && value < self.string_count as u64 => {
                if self.exact {
                    self.decoded += self.string_len(value as u32);
                } else {
                    self.refs += 1;
                }
                return Ok(());
            }
            t if (ty::IS_NULL as u64..=ty::IS_TRUE as u64).contains(&t) && value == 0 => {
                return Ok(());
            }
            _ => {}
        }
        let ty = self.u32(rec + lit::TYPE);
        let aux = self.u32(rec + lit::AUX);
        let ty = match u8::try_from(ty) {
            Ok(t) => t,
            Err(_) => return err(BodyErrorKind::BadEnum, rec + lit::TYPE),
        };
        match ty {
            ty::IS_NULL | ty::IS_FALSE | ty::IS_TRUE => {
                self.zero(rec + lit::VALUE, 8)?;
                self.zero(rec + lit::AUX, 4)
            }
            ty::IS_LONG | ty::IS_DOUBLE => self.zero(rec + lit::AUX, 4),
            ty::IS_STRING => {
                self.zero(rec + lit::AUX, 4)?;
                self.zero(rec + lit::VALUE + 4, 4)?;
                self.str(rec + lit::VALUE)
            }
            ty::IS_ARRAY => {
                let table = self.place(value, 1, ht::SIZE, ht::ALIGN, rec + lit::VALUE)?;
                self.zero(table + ht::PAD, 4)?;
                let base = self.place(
                    u64::from(self.u32(table + ht::BUCKETS)),
                    aux as u64,
                    bucket::SIZE,
                    bucket::ALIGN,
                    table + ht::BUCKETS,
                )?;
                for i in 0..aux as usize {
                    let e = base + i * bucket::SIZE;
                    self.zero(e + bucket::PAD, 4)?;
                    if self.u32(e + bucket::KEY) != NONE {
                        self.str(e + bucket::KEY)?;
                        self.zero(e + bucket::H, 8)?;
                    }
                    self.literal(e + bucket::VALUE, depth + 1)?;
                }
                Ok(())
            }
            ty::IS_CONSTANT_AST => {
                self.zero(rec + lit::AUX, 4)?;
                let node = self.place(
                    value,
                    1,
                    layout::ast::SIZE,
                    layout::ast::ALIGN,
                    rec + lit::VALUE,
                )?;
                self.ast(node, depth + 1)
            }
            _ => err(BodyErrorKind::BadEnum, rec + lit::TYPE),
        }
    }

    fn ast(&mut self, rec: usize, depth: usize) -> R {
        use layout::ast as f;
        if depth > MAX_VALUE_DEPTH {
            return err(BodyErrorKind::TooDeep, rec);
        }
        match self.enum_max(rec + f::BODY, 1)? {
            f::BODY_ZVAL => {
                self.zero(rec + f::COUNT, 4)?;
                self.literal(rec + f::ZVAL, depth + 1)
            }
            _ => {
                let count = self.u32(rec + f::COUNT) as u64;
                self.zero(rec + f::CHILDREN + 4, 12)?;
                let off = self.u32(rec + f::CHILDREN) as u64;
                let slots = self.place(off, count, 4, 4, rec + f::CHILDREN)?;
                for i in 0..count as usize {
                    let slot = slots + i * 4;
                    let child = self.u32(slot) as u64;
                    if child != 0 {
                        let node = self.place(child, 1, f::SIZE, f::ALIGN, slot)?;
                        self.ast(node, depth + 1)?;
                    }
                }
                Ok(())
            }
        }
    }

    fn zend_type(&mut self, rec: usize, depth: usize) -> R {
        if depth > MAX_VALUE_DEPTH {
            return err(BodyErrorKind::TooDeep, rec);
        }
        match self.enum_max(rec + ztype::KIND, 2)? {
            ztype::NAMES_NONE => self.zero(rec + ztype::A, 8),
            ztype::NAMES_NAME => {
                self.zero(rec + ztype::B, 4)?;
                self.str(rec + ztype::A)
            }
            _ => {
                let (base, n) = self.span(rec + ztype::A, ztype::SIZE, ztype::ALIGN)?;
                for i in 0..n {
                    self.zend_type(base + i * ztype::SIZE, depth + 1)?;
                }
                Ok(())
            }
        }
    }

    fn arg_info(&mut self, rec: usize) -> R {
        self.opt_str(rec + arg_info::NAME)?;
        self.opt_str(rec + arg_info::DEFAULT)?;
        self.zend_type(rec + arg_info::TYPE, 0)
    }

    fn attributes(&mut self, span_at: usize) -> R {
        let (base, n) = self.span(span_at, attribute::SIZE, attribute::ALIGN)?;
        for i in 0..n {
            let rec = base + i * attribute::SIZE;
            self.str(rec + attribute::NAME)?;
            self.str(rec + attribute::LCNAME)?;
            let (args, m) =
                self.span(rec + attribute::ARGS, named_value::SIZE, named_value::ALIGN)?;
            for j in 0..m {
                let e = args + j * named_value::SIZE;
                self.opt_str(e + named_value::NAME)?;
                self.zero(e + named_value::PAD, 4)?;
                self.literal(e + named_value::VALUE, 0)?;
            }
        }
        Ok(())
    }

    fn class_names(&mut self, span_at: usize) -> R {
        let (base, n) = self.span(span_at, class_name::SIZE, class_name::ALIGN)?;
        for i in 0..n {
            let rec = base + i * class_name::SIZE;
            self.str(rec + class_name::NAME)?;
            self.str(rec + class_name::LC_NAME)?;
        }
        Ok(())
    }

    fn class_entry(&mut self, rec: usize) -> R {
        use layout::class as f;
        self.str(rec + f::NAME)?;
        self.opt_str(rec + f::PARENT_NAME)?;
        self.str(rec + f::FILENAME)?;
        self.opt_str(rec + f::DOC_COMMENT)?;
        self.enum_max(rec + f::ENUM_BACKING_TYPE, 0xff)?;
        self.class_names(rec + f::INTERFACE_NAMES)?;
        self.class_names(rec + f::TRAIT_NAMES)?;
        let (base, n) = self.span(
            rec + f::TRAIT_ALIASES,
            trait_alias::SIZE,
            trait_alias::ALIGN,
        )?;
        for i in 0..n {
            let e = base + i * trait_alias::SIZE;
            self.str(e + trait_alias::METHOD_NAME)?;
            self.opt_str(e + trait_alias::CLASS_NAME)?;
            self.opt_str(e + trait_alias::ALIAS)?;
        }
        let (base, n) = self.span(
            rec + f::TRAIT_PRECEDENCES,
            trait_precedence::SIZE,
            trait_precedence::ALIGN,
        )?;
        for i in 0..n {
            let e = base + i * trait_precedence::SIZE;
            self.str(e + trait_precedence::METHOD_NAME)?;
            self.opt_str(e + trait_precedence::CLASS_NAME)?;
            let (names, m) = self.span(e + trait_precedence::EXCLUDE, 4, 4)?;
            for j in 0..m {
                self.str(names + j * 4)?;
            }
        }
        let (base, n) = self.span(
            rec + f::CONSTANTS,
            class_constant::SIZE,
            class_constant::ALIGN,
        )?;
        for i in 0..n {
            let e = base + i * class_constant::SIZE;
            self.str(e + class_constant::NAME)?;
            self.opt_str(e + class_constant::DOC_COMMENT)?;
            self.str(e + class_constant::CE)?;
            self.literal(e + class_constant::VALUE, 0)?;
            self.attributes(e + class_constant::ATTRIBUTES)?;
        }
        let (base, n) = self.span(rec + f::PROPERTIES, property::SIZE, property::ALIGN)?;
        for i in 0..n {
            let e = base + i * property::SIZE;
            self.str(e + property::NAME)?;
            self.opt_str(e + property::DOC_COMMENT)?;
            self.str(e + property::CE)?;
            self.zend_type(e + property::TYPE, 0)?;
            if self.enum_max(e + property::HAS_DEFAULT, 1)? == 1 {
                self.literal(e + property::DEFAULT, 0)?;
            } else {
                self.zero(e + property::DEFAULT, lit::SIZE)?;
            }
            self.attributes(e + property::ATTRIBUTES)?;
        }
        let (base, n) = self.span(rec + f::METHODS, func::SIZE, func::ALIGN)?;
        for i in 0..n {
            let e = base + i * func::SIZE;
            self.str(e + func::KEY)?;
            self.op_array(e + func::OP_ARRAY, 1)?;
        }
        self.attributes(rec + f::ATTRIBUTES)
    }
}

/// Validates a whole body (see the module documentation).
pub fn validate(body: &[u8]) -> Result<BodyInfo, BodyError> {
    let check = |exact| {
        let mut c = Check {
            b: body,
            cursor: header::SIZE,
            limit: 0,
            strings_index: 0,
            string_count: 0,
            exact,
            decoded: 0,
            refs: 0,
            longest: 0,
            op_arrays: 0,
            ops: 0,
        };
        c.script().map(|()| c)
    };
    let c = match check(false) {
        Err(BodyError {
            kind: BodyErrorKind::TooLarge,
            ..
        }) => check(true)?,
        r => r?,
    };
    Ok(BodyInfo {
        op_arrays: c.op_arrays,
        ops: c.ops as u32,
        strings: c.string_count,
        decoded_string_bytes: c.decoded,
    })
}

/// Validates and decodes a body into an owned [`Script`].
pub fn load(body: &[u8]) -> Result<Script, BodyError> {
    Ok(ScriptView::new(body)?.to_script())
}

// ---------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------

/// A validated body, read in place. Cheap to copy.
#[derive(Clone, Copy)]
pub struct ScriptView<'a> {
    b: &'a [u8],
    strings_index: usize,
    string_bytes: usize,
}

impl fmt::Debug for ScriptView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptView")
            .field("len", &self.b.len())
            .finish()
    }
}

impl<'a> ScriptView<'a> {
    /// Validates `body` fully, then gives read access to it.
    pub fn new(body: &'a [u8]) -> Result<Self, BodyError> {
        validate(body)?;
        Ok(Self::trusted(body))
    }

    /// A view over a body that [`validate`] accepted before (the accessors rely on it; an
    /// unvalidated body may make them panic, never misbehave otherwise).
    pub(crate) fn trusted(body: &'a [u8]) -> Self {
        ScriptView {
            b: body,
            strings_index: r32(body, header::STRINGS_INDEX) as usize,
            string_bytes: r32(body, header::STRING_BYTES) as usize,
        }
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.b
    }

    /// The string with index `id`.
    #[inline]
    pub fn string(&self, id: u32) -> &'a [u8] {
        let e = self.strings_index + id as usize * string::SIZE;
        let off = self.string_bytes + r32(self.b, e + string::OFFSET) as usize;
        &self.b[off..off + r32(self.b, e + string::LEN) as usize]
    }

    pub fn string_count(&self) -> u32 {
        r32(self.b, header::STRING_COUNT)
    }

    fn str_at(&self, at: usize) -> &'a [u8] {
        self.string(r32(self.b, at))
    }

    fn opt_str_at(&self, at: usize) -> Option<&'a [u8]> {
        match r32(self.b, at) {
            NONE => None,
            id => Some(self.string(id)),
        }
    }

    fn span(&self, at: usize) -> (usize, usize) {
        (r32(self.b, at) as usize, r32(self.b, at + 4) as usize)
    }

    fn records(&self, at: usize, size: usize) -> impl ExactSizeIterator<Item = usize> + Clone {
        let (off, n) = self.span(at);
        (0..n).map(move |i| off + i * size)
    }

    pub fn filename(&self) -> &'a [u8] {
        self.str_at(header::FILENAME)
    }

    /// `__COMPILER_HALT_OFFSET__` of the script (`zend_persistent_script.compiler_halt_offset`),
    /// `None` when it has no `__halt_compiler()`.
    pub fn compiler_halt_offset(&self) -> Option<u64> {
        (r32(self.b, header::HAS_HALT_OFFSET) != 0).then(|| r64(self.b, header::HALT_OFFSET))
    }

    /// The diagnostics PHP's compiler emitted while compiling the script, in order
    /// ([`Script::warnings`]).
    pub fn warnings(&self) -> impl ExactSizeIterator<Item = WarningView<'a>> + Clone + 'a {
        let s = *self;
        self.records(header::WARNINGS, warning::SIZE)
            .map(move |rec| WarningView { s, rec })
    }

    /// The main op_array's delayed early bindings as compiled ([`Script::early_bindings`]):
    /// class lcname, runtime definition key and parent lcname of each.
    pub fn early_bindings(&self) -> impl ExactSizeIterator<Item = [&'a [u8]; 3]> + Clone + 'a {
        let s = *self;
        self.records(header::EARLY_BINDINGS, early_binding::SIZE)
            .map(move |rec| {
                [
                    s.str_at(rec + early_binding::LCNAME),
                    s.str_at(rec + early_binding::RTD_KEY),
                    s.str_at(rec + early_binding::LC_PARENT_NAME),
                ]
            })
    }

    /// Number of op_arrays (all of them, nested ones included).
    pub fn op_array_count(&self) -> u32 {
        r32(self.b, header::OP_ARRAY_COUNT)
    }

    /// Number of ops over all op_arrays.
    pub fn op_count(&self) -> u32 {
        r32(self.b, header::OP_COUNT)
    }

    pub fn main_op_array(&self) -> OpArrayView<'a> {
        OpArrayView {
            s: *self,
            rec: header::MAIN_OP_ARRAY,
        }
    }

    /// The function table: keys and op_arrays.
    pub fn functions(
        &self,
    ) -> impl ExactSizeIterator<Item = (&'a [u8], OpArrayView<'a>)> + Clone + 'a {
        let s = *self;
        self.records(header::FUNCTION_TABLE, func::SIZE)
            .map(move |rec| {
                (
                    s.str_at(rec + func::KEY),
                    OpArrayView {
                        s,
                        rec: rec + func::OP_ARRAY,
                    },
                )
            })
    }

    /// The class table.
    pub fn classes(&self) -> impl ExactSizeIterator<Item = ClassView<'a>> + Clone + 'a {
        let s = *self;
        self.records(header::CLASS_TABLE, class::SIZE)
            .map(move |rec| ClassView { s, rec })
    }

    /// Every op_array, nested ones included, depth first (main, functions, methods).
    pub fn for_each_op_array(&self, mut f: impl FnMut(OpArrayView<'a>)) {
        fn walk<'a>(oa: OpArrayView<'a>, f: &mut impl FnMut(OpArrayView<'a>)) {
            f(oa);
            for d in oa.dynamic_func_defs() {
                walk(d, f);
            }
        }
        walk(self.main_op_array(), &mut f);
        for (_, oa) in self.functions() {
            walk(oa, &mut f);
        }
        for ce in self.classes() {
            for (_, m) in ce.methods() {
                walk(m, &mut f);
            }
        }
    }

    /// Decodes the owned model.
    pub fn to_script(&self) -> Script {
        self.decode(true)
    }

    /// Decodes the owned model without the code of its op_arrays: `opcodes`, `literals`,
    /// `vars` and `literal_extra` are left empty, for a loader that reads them in place from
    /// the [`OpArrayView`]s (which [`ScriptView::main_op_array`], [`ScriptView::functions`],
    /// [`ClassView::methods`] and [`OpArrayView::dynamic_func_defs`] give in the same order as
    /// the model's tables). The bulk of a script is its code: this decodes a fraction of it.
    pub fn to_script_without_code(&self) -> Script {
        self.decode(false)
    }

    fn decode(&self, code: bool) -> Script {
        let d = Dec { s: *self, code };
        Script {
            filename: PhpStr(self.filename().to_vec()),
            main_op_array: d.op_array(header::MAIN_OP_ARRAY),
            function_table: self
                .functions()
                .map(|(k, oa)| (PhpStr(k.to_vec()), d.op_array(oa.rec)))
                .collect(),
            class_table: self
                .classes()
                .map(|ce| (PhpStr(ce.key().to_vec()), d.class_entry(ce.rec)))
                .collect(),
            compiler_halt_offset: self.compiler_halt_offset(),
            warnings: self.warnings().map(|w| w.to_error_info()).collect(),
            early_bindings: self
                .early_bindings()
                .map(|[lcname, rtd_key, parent]| EarlyBinding {
                    lcname: PhpStr(lcname.to_vec()),
                    rtd_key: PhpStr(rtd_key.to_vec()),
                    lc_parent_name: PhpStr(parent.to_vec()),
                })
                .collect(),
        }
    }
}

/// A recorded diagnostic (`zend_error_info`).
#[derive(Clone, Copy, Debug)]
pub struct WarningView<'a> {
    s: ScriptView<'a>,
    rec: usize,
}

impl<'a> WarningView<'a> {
    /// `E_DEPRECATED`, `E_WARNING`, ...
    pub fn type_(&self) -> u32 {
        r32(self.s.b, self.rec + warning::TYPE)
    }

    pub fn lineno(&self) -> u32 {
        r32(self.s.b, self.rec + warning::LINENO)
    }

    pub fn filename(&self) -> &'a [u8] {
        self.s.str_at(self.rec + warning::FILENAME)
    }

    pub fn message(&self) -> &'a [u8] {
        self.s.str_at(self.rec + warning::MESSAGE)
    }

    fn to_error_info(self) -> ErrorInfo {
        ErrorInfo {
            type_: self.type_(),
            lineno: self.lineno(),
            filename: PhpStr(self.filename().to_vec()),
            message: PhpStr(self.message().to_vec()),
        }
    }
}

/// An op_array record.
#[derive(Clone, Copy, Debug)]
pub struct OpArrayView<'a> {
    s: ScriptView<'a>,
    rec: usize,
}

impl<'a> OpArrayView<'a> {
    fn u32(&self, field: usize) -> u32 {
        r32(self.s.b, self.rec + field)
    }

    pub fn type_(&self) -> u8 {
        self.u32(op_array::TYPE) as u8
    }

    pub fn fn_flags(&self) -> u32 {
        self.u32(op_array::FN_FLAGS)
    }

    pub fn function_name(&self) -> Option<&'a [u8]> {
        self.s.opt_str_at(self.rec + op_array::FUNCTION_NAME)
    }

    pub fn scope(&self) -> Option<&'a [u8]> {
        self.s.opt_str_at(self.rec + op_array::SCOPE)
    }

    pub fn filename(&self) -> &'a [u8] {
        self.s.str_at(self.rec + op_array::FILENAME)
    }

    pub fn last_var(&self) -> u32 {
        self.u32(op_array::VARS + 4)
    }

    #[allow(non_snake_case)]
    pub fn T(&self) -> u32 {
        self.u32(op_array::T)
    }

    /// The CV names.
    pub fn vars(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + Clone + 'a {
        let s = self.s;
        s.records(self.rec + op_array::VARS, 4)
            .map(move |at| s.str_at(at))
    }

    /// The ops, read in place.
    pub fn ops(&self) -> OpsIter<'a> {
        let (off, n) = self.s.span(self.rec + op_array::OPCODES);
        OpsIter {
            b: &self.s.b[off..off + n * op::SIZE],
        }
    }

    /// The raw op records: `len() / 24` records laid out as `zend_op` without its handler.
    pub fn op_bytes(&self) -> &'a [u8] {
        self.ops().b
    }

    /// The literals, read in place.
    pub fn literals(&self) -> impl ExactSizeIterator<Item = LiteralView<'a>> + Clone + 'a {
        let s = self.s;
        s.records(self.rec + op_array::LITERALS, lit::SIZE)
            .map(move |rec| LiteralView { s, rec })
    }

    /// Literal `i`, in constant time (`None` past the end).
    pub fn literal(&self, i: usize) -> Option<LiteralView<'a>> {
        let (off, n) = self.s.span(self.rec + op_array::LITERALS);
        (i < n).then(|| LiteralView {
            s: self.s,
            rec: off + i * lit::SIZE,
        })
    }

    /// String-table index of CV `i`'s name, in constant time (`None` past the end).
    pub fn var_id(&self, i: usize) -> Option<u32> {
        let (off, n) = self.s.span(self.rec + op_array::VARS);
        (i < n).then(|| r32(self.s.b, off + i * 4))
    }

    /// The literals' non-zero `u2` values, in increasing literal order.
    pub fn literal_extra(&self) -> impl ExactSizeIterator<Item = (LiteralId, u32)> + Clone + 'a {
        let b = self.s.b;
        self.s
            .records(self.rec + op_array::LITERAL_EXTRA, literal_extra::SIZE)
            .map(move |e| {
                (
                    LiteralId::new(r32(b, e + literal_extra::LITERAL)),
                    r32(b, e + literal_extra::VALUE),
                )
            })
    }

    /// String-table index of each CV name (see [`ScriptView::string`]).
    pub fn var_ids(&self) -> impl ExactSizeIterator<Item = u32> + Clone + 'a {
        let b = self.s.b;
        self.s
            .records(self.rec + op_array::VARS, 4)
            .map(move |at| r32(b, at))
    }

    pub fn dynamic_func_defs(&self) -> impl ExactSizeIterator<Item = OpArrayView<'a>> + Clone + 'a {
        let s = self.s;
        s.records(self.rec + op_array::DYNAMIC_FUNC_DEFS, op_array::SIZE)
            .map(move |rec| OpArrayView { s, rec })
    }

    pub fn to_op_array(&self) -> OpArray {
        *Dec {
            s: self.s,
            code: true,
        }
        .op_array(self.rec)
    }
}

/// Iterator over op records in place.
#[derive(Clone)]
pub struct OpsIter<'a> {
    b: &'a [u8],
}

impl<'a> Iterator for OpsIter<'a> {
    type Item = OpView<'a>;

    #[inline]
    fn next(&mut self) -> Option<OpView<'a>> {
        if self.b.len() < op::SIZE {
            return None;
        }
        let (rec, rest) = self.b.split_at(op::SIZE);
        self.b = rest;
        Some(OpView {
            r: rec.try_into().unwrap(),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.b.len() / op::SIZE;
        (n, Some(n))
    }
}

impl ExactSizeIterator for OpsIter<'_> {}

/// One op record (24 bytes) in place.
#[derive(Clone, Copy)]
pub struct OpView<'a> {
    r: &'a [u8; op::SIZE],
}

impl fmt::Debug for OpView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_op().fmt(f)
    }
}

impl OpView<'_> {
    #[inline]
    pub fn opcode(&self) -> Opcode {
        Opcode(self.r[op::OPCODE])
    }

    #[inline]
    fn raw(&self, at: usize) -> u32 {
        r32(self.r, at)
    }

    #[inline]
    pub fn op1(&self) -> Operand {
        operand(self.r[op::OP1_TYPE], self.raw(op::OP1))
    }

    #[inline]
    pub fn op2(&self) -> Operand {
        operand(self.r[op::OP2_TYPE], self.raw(op::OP2))
    }

    #[inline]
    pub fn result(&self) -> Operand {
        operand(
            self.r[op::RESULT_TYPE] & !(IS_SMART_BRANCH_JMPZ | IS_SMART_BRANCH_JMPNZ),
            self.raw(op::RESULT),
        )
    }

    /// `result_type` as PHP stores it (smart-branch bits included).
    #[inline]
    pub fn result_type(&self) -> u8 {
        self.r[op::RESULT_TYPE] & !op::JMP_ADDR
    }

    #[inline]
    pub fn extended_value(&self) -> u32 {
        self.raw(op::EXTENDED_VALUE)
    }

    #[inline]
    pub fn lineno(&self) -> u32 {
        self.raw(op::LINENO)
    }

    #[inline]
    pub fn smart_branch(&self) -> SmartBranch {
        let rt = self.r[op::RESULT_TYPE];
        if rt & IS_SMART_BRANCH_JMPZ != 0 {
            SmartBranch::Jmpz
        } else if rt & IS_SMART_BRANCH_JMPNZ != 0 {
            SmartBranch::Jmpnz
        } else {
            SmartBranch::None
        }
    }

    #[inline]
    pub fn to_op(&self) -> Op {
        Op {
            opcode: self.opcode(),
            op1: self.op1(),
            op2: self.op2(),
            result: self.result(),
            extended_value: self.extended_value(),
            lineno: self.lineno(),
            smart_branch: self.smart_branch(),
        }
    }
}

#[inline]
fn operand(t: u8, v: u32) -> Operand {
    match t {
        IS_CONST => Operand::Const(LiteralId::new(v)),
        IS_TMP_VAR => Operand::TmpVar(VarNum::new(v)),
        IS_VAR => Operand::Var(VarNum::new(v)),
        IS_CV => Operand::Cv(VarNum::new(v)),
        op::JMP_ADDR => Operand::JmpAddr(OpNum::new(v)),
        _ => Operand::Unused(v),
    }
}

/// A literal (zval) record in place.
#[derive(Clone, Copy)]
pub struct LiteralView<'a> {
    s: ScriptView<'a>,
    rec: usize,
}

impl fmt::Debug for LiteralView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_literal().fmt(f)
    }
}

impl<'a> LiteralView<'a> {
    /// `Z_TYPE`.
    pub fn type_code(&self) -> u8 {
        self.s.b[self.rec + lit::TYPE]
    }

    pub fn long(&self) -> Option<i64> {
        (self.type_code() == ty::IS_LONG).then(|| r64(self.s.b, self.rec) as i64)
    }

    pub fn double(&self) -> Option<f64> {
        (self.type_code() == ty::IS_DOUBLE).then(|| f64::from_bits(r64(self.s.b, self.rec)))
    }

    pub fn string(&self) -> Option<&'a [u8]> {
        (self.type_code() == ty::IS_STRING).then(|| self.s.str_at(self.rec))
    }

    /// The string-table index of a string literal (see [`ScriptView::string`]).
    pub fn string_id(&self) -> Option<u32> {
        (self.type_code() == ty::IS_STRING).then(|| r32(self.s.b, self.rec))
    }

    pub fn to_literal(&self) -> Literal {
        Dec {
            s: self.s,
            code: true,
        }
        .literal(self.rec)
    }
}

/// A class table entry in place.
#[derive(Clone, Copy, Debug)]
pub struct ClassView<'a> {
    s: ScriptView<'a>,
    rec: usize,
}

impl<'a> ClassView<'a> {
    pub fn key(&self) -> &'a [u8] {
        self.s.str_at(self.rec + class::KEY)
    }

    pub fn name(&self) -> &'a [u8] {
        self.s.str_at(self.rec + class::NAME)
    }

    pub fn methods(
        &self,
    ) -> impl ExactSizeIterator<Item = (&'a [u8], OpArrayView<'a>)> + Clone + 'a {
        let s = self.s;
        s.records(self.rec + class::METHODS, func::SIZE)
            .map(move |rec| {
                (
                    s.str_at(rec + func::KEY),
                    OpArrayView {
                        s,
                        rec: rec + func::OP_ARRAY,
                    },
                )
            })
    }

    pub fn to_class_entry(&self) -> ClassEntry {
        Dec {
            s: self.s,
            code: true,
        }
        .class_entry(self.rec)
    }
}

// ---------------------------------------------------------------------------------------
// Decoding (of a validated body)
// ---------------------------------------------------------------------------------------

struct Dec<'a> {
    s: ScriptView<'a>,
    /// Decode each op_array's code (ops, literals, CV names, literal `u2`s); without it they
    /// are left empty for a loader that reads them in place.
    code: bool,
}

impl Dec<'_> {
    fn u32(&self, at: usize) -> u32 {
        r32(self.s.b, at)
    }

    fn str(&self, at: usize) -> PhpStr {
        PhpStr(self.s.str_at(at).to_vec())
    }

    fn opt_str(&self, at: usize) -> Option<PhpStr> {
        self.s.opt_str_at(at).map(|s| PhpStr(s.to_vec()))
    }

    fn list<T>(&self, span_at: usize, size: usize, f: impl Fn(usize) -> T) -> Vec<T> {
        self.s.records(span_at, size).map(f).collect()
    }

    fn op_array(&self, rec: usize) -> Box<OpArray> {
        use layout::op_array as f;
        let view = OpArrayView { s: self.s, rec };
        Box::new(OpArray {
            type_: self.u32(rec + f::TYPE) as u8,
            fn_flags: self.u32(rec + f::FN_FLAGS),
            function_name: self.opt_str(rec + f::FUNCTION_NAME),
            scope: self.opt_str(rec + f::SCOPE),
            num_args: self.u32(rec + f::NUM_ARGS),
            required_num_args: self.u32(rec + f::REQUIRED_NUM_ARGS),
            arg_info: self.list(rec + f::ARG_INFO, arg_info::SIZE, |r| self.arg_info(r)),
            return_info: self
                .list(rec + f::RETURN_INFO, arg_info::SIZE, |r| self.arg_info(r))
                .pop(),
            attributes: self.attributes(rec + f::ATTRIBUTES),
            T: self.u32(rec + f::T),
            cache_size: self.u32(rec + f::CACHE_SIZE),
            vars: if self.code {
                self.list(rec + f::VARS, 4, |r| self.str(r))
            } else {
                Vec::new()
            },
            opcodes: if self.code {
                view.ops().map(|o| o.to_op()).collect()
            } else {
                Vec::new()
            },
            literals: if self.code {
                self.list(rec + f::LITERALS, lit::SIZE, |r| self.literal(r))
            } else {
                Vec::new()
            },
            literal_extra: if self.code {
                view.literal_extra().collect()
            } else {
                Vec::new()
            },
            static_variables: (self.u32(rec + f::HAS_STATIC_VARIABLES) == 1).then(|| {
                self.list(rec + f::STATIC_VARIABLES, named_value::SIZE, |e| {
                    (
                        self.str(e + named_value::NAME),
                        self.literal(e + named_value::VALUE),
                    )
                })
            }),
            live_range: self.list(rec + f::LIVE_RANGE, live_range::SIZE, |e| LiveRange {
                var: VarNum::new(self.u32(e + live_range::VAR)),
                kind: self.u32(e + live_range::KIND),
                start: OpNum::new(self.u32(e + live_range::START)),
                end: OpNum::new(self.u32(e + live_range::END)),
            }),
            try_catch_array: self.list(rec + f::TRY_CATCH, try_catch::SIZE, |e| {
                let present = self.u32(e + try_catch::PRESENT);
                let opt = |bit: u32, at: usize| {
                    (present & bit != 0).then(|| OpNum::new(self.u32(e + at)))
                };
                TryCatchElement {
                    try_op: OpNum::new(self.u32(e + try_catch::TRY)),
                    catch_op: opt(1, try_catch::CATCH),
                    finally_op: opt(2, try_catch::FINALLY),
                    finally_end: opt(4, try_catch::FINALLY_END),
                }
            }),
            filename: self.str(rec + f::FILENAME),
            line_start: self.u32(rec + f::LINE_START),
            line_end: self.u32(rec + f::LINE_END),
            doc_comment: self.opt_str(rec + f::DOC_COMMENT),
            dynamic_func_defs: self.list(rec + f::DYNAMIC_FUNC_DEFS, f::SIZE, |r| self.op_array(r)),
        })
    }

    fn literal(&self, rec: usize) -> Literal {
        let b = self.s.b;
        let value = r64(b, rec + lit::VALUE);
        match r8(b, rec + lit::TYPE) {
            ty::IS_NULL => Literal::Null,
            ty::IS_FALSE => Literal::False,
            ty::IS_TRUE => Literal::True,
            ty::IS_LONG => Literal::Long(value as i64),
            ty::IS_DOUBLE => Literal::Double(PhpDouble(value)),
            ty::IS_STRING => Literal::String(self.str(rec + lit::VALUE)),
            ty::IS_ARRAY => {
                let (table, n) = (value as usize, self.u32(rec + lit::AUX) as usize);
                let off = r32(b, table + ht::BUCKETS) as usize;
                let next_free = r64(b, table + ht::NEXT_FREE) as i64;
                Literal::Array(PhpArray::with_next_free(
                    (0..n)
                        .map(|i| {
                            let e = off + i * bucket::SIZE;
                            let key = match self.u32(e + bucket::KEY) {
                                NONE => ArrayKey::Long(r64(b, e + bucket::H) as i64),
                                _ => ArrayKey::Str(self.str(e + bucket::KEY)),
                            };
                            (key, self.literal(e + bucket::VALUE))
                        })
                        .collect(),
                    next_free,
                ))
            }
            _ => Literal::Ast(Box::new(self.ast(value as usize))),
        }
    }

    fn ast(&self, rec: usize) -> Ast {
        use layout::ast as f;
        let b = self.s.b;
        Ast {
            kind: r16(b, rec + f::KIND),
            attr: r16(b, rec + f::ATTR),
            lineno: self.u32(rec + f::LINENO),
            body: if self.u32(rec + f::BODY) == f::BODY_ZVAL {
                AstBody::Zval(self.literal(rec + f::ZVAL))
            } else {
                let slots = self.u32(rec + f::CHILDREN) as usize;
                let n = self.u32(rec + f::COUNT) as usize;
                AstBody::Children(
                    (0..n)
                        .map(|i| match self.u32(slots + i * 4) {
                            0 => None,
                            node => Some(self.ast(node as usize)),
                        })
                        .collect(),
                )
            },
        }
    }

    fn zend_type(&self, rec: usize) -> ZendType {
        ZendType {
            type_mask: self.u32(rec + ztype::MASK),
            names: match self.u32(rec + ztype::KIND) {
                ztype::NAMES_NONE => TypeNames::None,
                ztype::NAMES_NAME => TypeNames::Name(self.str(rec + ztype::A)),
                _ => TypeNames::List(self.list(rec + ztype::A, ztype::SIZE, |r| self.zend_type(r))),
            },
        }
    }

    fn arg_info(&self, rec: usize) -> ArgInfo {
        ArgInfo {
            name: self.opt_str(rec + arg_info::NAME),
            type_: self.zend_type(rec + arg_info::TYPE),
            default_value: self.opt_str(rec + arg_info::DEFAULT),
        }
    }

    fn attributes(&self, span_at: usize) -> Vec<Attribute> {
        self.list(span_at, attribute::SIZE, |rec| Attribute {
            name: self.str(rec + attribute::NAME),
            lcname: self.str(rec + attribute::LCNAME),
            flags: self.u32(rec + attribute::FLAGS),
            lineno: self.u32(rec + attribute::LINENO),
            offset: self.u32(rec + attribute::OFFSET),
            args: self.list(rec + attribute::ARGS, named_value::SIZE, |e| AttributeArg {
                name: self.opt_str(e + named_value::NAME),
                value: self.literal(e + named_value::VALUE),
            }),
        })
    }

    fn class_names(&self, span_at: usize) -> Vec<ClassName> {
        self.list(span_at, class_name::SIZE, |e| ClassName {
            name: self.str(e + class_name::NAME),
            lc_name: self.str(e + class_name::LC_NAME),
        })
    }

    fn class_entry(&self, rec: usize) -> ClassEntry {
        use layout::class as f;
        ClassEntry {
            name: self.str(rec + f::NAME),
            parent_name: self.opt_str(rec + f::PARENT_NAME),
            ce_flags: self.u32(rec + f::CE_FLAGS),
            refcount: self.u32(rec + f::REFCOUNT),
            interface_names: self.class_names(rec + f::INTERFACE_NAMES),
            trait_names: self.class_names(rec + f::TRAIT_NAMES),
            trait_aliases: self.list(rec + f::TRAIT_ALIASES, trait_alias::SIZE, |e| TraitAlias {
                method: TraitMethodRef {
                    method_name: self.str(e + trait_alias::METHOD_NAME),
                    class_name: self.opt_str(e + trait_alias::CLASS_NAME),
                },
                alias: self.opt_str(e + trait_alias::ALIAS),
                modifiers: self.u32(e + trait_alias::MODIFIERS),
            }),
            trait_precedences: self.list(rec + f::TRAIT_PRECEDENCES, trait_precedence::SIZE, |e| {
                TraitPrecedence {
                    method: TraitMethodRef {
                        method_name: self.str(e + trait_precedence::METHOD_NAME),
                        class_name: self.opt_str(e + trait_precedence::CLASS_NAME),
                    },
                    exclude_class_names: self
                        .list(e + trait_precedence::EXCLUDE, 4, |r| self.str(r)),
                }
            }),
            constants: self.list(rec + f::CONSTANTS, class_constant::SIZE, |e| {
                ClassConstant {
                    name: self.str(e + class_constant::NAME),
                    value: self.literal(e + class_constant::VALUE),
                    flags: self.u32(e + class_constant::FLAGS),
                    doc_comment: self.opt_str(e + class_constant::DOC_COMMENT),
                    attributes: self.attributes(e + class_constant::ATTRIBUTES),
                    ce: self.str(e + class_constant::CE),
                }
            }),
            properties: self.list(rec + f::PROPERTIES, property::SIZE, |e| PropertyInfo {
                name: self.str(e + property::NAME),
                flags: self.u32(e + property::FLAGS),
                offset: self.u32(e + property::OFFSET),
                type_: self.zend_type(e + property::TYPE),
                default: (self.u32(e + property::HAS_DEFAULT) == 1)
                    .then(|| self.literal(e + property::DEFAULT)),
                doc_comment: self.opt_str(e + property::DOC_COMMENT),
                attributes: self.attributes(e + property::ATTRIBUTES),
                ce: self.str(e + property::CE),
            }),
            methods: self.list(rec + f::METHODS, func::SIZE, |e| {
                (self.str(e + func::KEY), self.op_array(e + func::OP_ARRAY))
            }),
            // Never persisted (`PersistError::LinkedClass`).
            method_stubs: Vec::new(),
            attributes: self.attributes(rec + f::ATTRIBUTES),
            filename: self.str(rec + f::FILENAME),
            line_start: self.u32(rec + f::LINE_START),
            line_end: self.u32(rec + f::LINE_END),
            doc_comment: self.opt_str(rec + f::DOC_COMMENT),
            enum_backing_type: self.u32(rec + f::ENUM_BACKING_TYPE) as u8,
        }
    }
}
