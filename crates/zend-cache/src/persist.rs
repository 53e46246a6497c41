//! Two-phase persist, as `zend_persist_calc.c` and `zend_persist.c` do it.
//!
//! Phase 1, [`persist_calc`], walks the whole script once, deduplicates its strings (one
//! copy per distinct byte string, like OPcache's interning of persisted strings) and
//! computes the exact byte size of the persisted form. Phase 2, [`persist_into`], walks
//! the script again and writes it into one caller-provided buffer of exactly that size: no
//! reallocation, no growth, every record at the offset phase 1 allotted to it. Both phases
//! run the same traversal with the same allocator (only the writes are switched off in
//! phase 1), so the sizes cannot disagree; phase 2 still checks that it ended exactly at the
//! end of the buffer.
//!
//! The layout is described in [`crate::layout`].

use crate::layout::{self, *};
use hashbrown::HashMap;
use zend_ir::*;

/// Why a script cannot be persisted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersistError {
    #[error("values nest deeper than {MAX_VALUE_DEPTH} levels")]
    ValueTooDeep,
    #[error("op_arrays nest deeper than {MAX_FUNC_NESTING} levels")]
    FuncTooDeep,
    #[error("the persisted form would exceed {MAX_BODY_LEN} bytes")]
    TooLarge,
    #[error("a string is longer than 4 GiB")]
    StringTooLong,
    #[error("the output buffer holds {actual} bytes, the plan needs {expected}")]
    WrongBufferSize { expected: usize, actual: usize },
    #[error("the plan was computed for another script")]
    WrongScript,
    #[error(
        "class {0}: a linked class with internal methods (OPcache's preloading) is not cached"
    )]
    LinkedClass(String),
}

/// The distinct strings of a script in first-use order.
#[derive(Default)]
struct Strings<'s> {
    ids: HashMap<&'s [u8], u32>,
    list: Vec<&'s [u8]>,
    bytes: usize,
}

/// What phase 1 computed: the exact size of the persisted form, and the deduplicated string
/// table phase 2 writes (OPcache's xlat table plays this part).
pub struct PersistPlan<'s> {
    script: *const Script,
    size: usize,
    struct_end: usize,
    strings: Strings<'s>,
    op_arrays: u32,
    ops: u32,
}

impl PersistPlan<'_> {
    /// Exact size of the persisted form in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Number of distinct strings.
    pub fn string_count(&self) -> usize {
        self.strings.list.len()
    }

    /// Total bytes of the distinct strings.
    pub fn string_bytes(&self) -> usize {
        self.strings.bytes
    }
}

/// Phase 1: computes the exact size of `script`'s persisted form.
pub fn persist_calc(script: &Script) -> Result<PersistPlan<'_>, PersistError> {
    let mut strings = Strings::default();
    let mut p = Persister {
        out: None,
        cursor: header::SIZE,
        strings: Interner::Calc(&mut strings),
        op_arrays: 0,
        ops: 0,
    };
    p.script(script)?;
    let struct_end = p.cursor;
    let (op_arrays, ops) = (p.op_arrays, p.ops);
    let index = align_up(struct_end, string::ALIGN);
    let size = index
        .checked_add(strings.list.len() * string::SIZE)
        .and_then(|n| n.checked_add(strings.bytes))
        .filter(|&n| n <= MAX_BODY_LEN)
        .ok_or(PersistError::TooLarge)?;
    Ok(PersistPlan {
        script,
        size,
        struct_end,
        strings,
        op_arrays,
        ops: u32::try_from(ops).map_err(|_| PersistError::TooLarge)?,
    })
}

/// Phase 2: writes `script` into `out`, which must be exactly `plan.size()` bytes long.
/// Every byte of `out` is written (padding is zeroed).
pub fn persist_into(
    script: &Script,
    plan: &PersistPlan<'_>,
    out: &mut [u8],
) -> Result<(), PersistError> {
    if !std::ptr::eq(plan.script, script) {
        return Err(PersistError::WrongScript);
    }
    if out.len() != plan.size {
        return Err(PersistError::WrongBufferSize {
            expected: plan.size,
            actual: out.len(),
        });
    }
    out.fill(0);
    let mut p = Persister {
        out: Some(&mut *out),
        cursor: header::SIZE,
        strings: Interner::Write(&plan.strings),
        op_arrays: 0,
        ops: 0,
    };
    p.script(script)?;
    // The same traversal, so the same allocations: phase 2 ends where phase 1 did.
    assert_eq!(
        p.cursor, plan.struct_end,
        "persist: phase 2 allocated differently from phase 1"
    );
    let index = align_up(plan.struct_end, string::ALIGN);
    let bytes_at = index + plan.strings.list.len() * string::SIZE;
    let mut pos = 0usize;
    for (i, s) in plan.strings.list.iter().enumerate() {
        let e = index + i * string::SIZE;
        put32(out, e + string::OFFSET, pos as u32);
        put32(out, e + string::LEN, s.len() as u32);
        out[bytes_at + pos..bytes_at + pos + s.len()].copy_from_slice(s);
        pos += s.len();
    }
    assert_eq!(
        bytes_at + pos,
        out.len(),
        "persist: the buffer was not filled exactly"
    );
    out[header::MAGIC..header::MAGIC + 4].copy_from_slice(&BODY_MAGIC);
    put32(out, header::BODY_LEN, out.len() as u32);
    put32(out, header::STRINGS_INDEX, index as u32);
    put32(out, header::STRING_COUNT, plan.strings.list.len() as u32);
    put32(out, header::STRING_BYTES, bytes_at as u32);
    put32(out, header::STRING_BYTES_LEN, pos as u32);
    put32(out, header::OP_ARRAY_COUNT, plan.op_arrays);
    put32(out, header::OP_COUNT, plan.ops);
    Ok(())
}

/// Both phases: the persisted form of `script` in a buffer allocated once at its exact size.
pub fn persist(script: &Script) -> Result<Vec<u8>, PersistError> {
    let plan = persist_calc(script)?;
    let mut out = vec![0u8; plan.size()];
    persist_into(script, &plan, &mut out)?;
    debug_assert_eq!(out.len(), plan.size());
    Ok(out)
}

fn put32(out: &mut [u8], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

enum Interner<'s, 'p> {
    Calc(&'p mut Strings<'s>),
    Write(&'p Strings<'s>),
}

struct Persister<'s, 'p> {
    /// `None` in phase 1: only the allocator and the string table run.
    out: Option<&'p mut [u8]>,
    cursor: usize,
    strings: Interner<'s, 'p>,
    op_arrays: u32,
    ops: u64,
}

type R = Result<(), PersistError>;

impl<'s> Persister<'s, '_> {
    // --- writes (no-ops in phase 1) ---

    #[inline]
    fn w8(&mut self, at: usize, v: u8) {
        if let Some(out) = self.out.as_deref_mut() {
            out[at] = v;
        }
    }

    #[inline]
    fn w16(&mut self, at: usize, v: u16) {
        if let Some(out) = self.out.as_deref_mut() {
            out[at..at + 2].copy_from_slice(&v.to_le_bytes());
        }
    }

    #[inline]
    fn w32(&mut self, at: usize, v: u32) {
        if let Some(out) = self.out.as_deref_mut() {
            out[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }

    #[inline]
    fn w64(&mut self, at: usize, v: u64) {
        if let Some(out) = self.out.as_deref_mut() {
            out[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
    }

    // --- allocation and strings ---

    /// Allocates an array of `count` records and writes its span at `span_at`.
    fn alloc(
        &mut self,
        span_at: usize,
        count: usize,
        size: usize,
        align: usize,
    ) -> Result<usize, PersistError> {
        if count == 0 {
            return Ok(0);
        }
        let off = align_up(self.cursor, align);
        let end = count
            .checked_mul(size)
            .and_then(|n| n.checked_add(off))
            .filter(|&n| n <= MAX_BODY_LEN)
            .ok_or(PersistError::TooLarge)?;
        self.cursor = end;
        self.w32(span_at, off as u32);
        self.w32(span_at + 4, count as u32);
        Ok(off)
    }

    fn string(&mut self, s: &'s [u8]) -> Result<u32, PersistError> {
        match &mut self.strings {
            Interner::Calc(strings) => {
                if s.len() > u32::MAX as usize {
                    return Err(PersistError::StringTooLong);
                }
                if let Some(&id) = strings.ids.get(s) {
                    return Ok(id);
                }
                let id = strings.list.len() as u32;
                strings.ids.insert(s, id);
                strings.list.push(s);
                strings.bytes += s.len();
                if strings.bytes > MAX_BODY_LEN {
                    return Err(PersistError::TooLarge);
                }
                Ok(id)
            }
            Interner::Write(strings) => Ok(*strings
                .ids
                .get(s)
                .expect("persist: string missing from the phase 1 table")),
        }
    }

    fn str_at(&mut self, at: usize, s: &'s PhpStr) -> R {
        let id = self.string(&s.0)?;
        self.w32(at, id);
        Ok(())
    }

    fn opt_str_at(&mut self, at: usize, s: &'s Option<PhpStr>) -> R {
        let id = match s {
            Some(s) => self.string(&s.0)?,
            None => NONE,
        };
        self.w32(at, id);
        Ok(())
    }

    // --- the traversal ---

    fn script(&mut self, s: &'s Script) -> R {
        self.str_at(header::FILENAME, &s.filename)?;
        if let Some(offset) = s.compiler_halt_offset {
            self.w32(header::HAS_HALT_OFFSET, 1);
            self.w64(header::HALT_OFFSET, offset);
        }
        self.op_array(header::MAIN_OP_ARRAY, &s.main_op_array, 1)?;
        let funcs = self.alloc(
            header::FUNCTION_TABLE,
            s.function_table.len(),
            func::SIZE,
            func::ALIGN,
        )?;
        for (i, (key, f)) in s.function_table.iter().enumerate() {
            let rec = funcs + i * func::SIZE;
            self.str_at(rec + func::KEY, key)?;
            self.op_array(rec + func::OP_ARRAY, f, 1)?;
        }
        let classes = self.alloc(
            header::CLASS_TABLE,
            s.class_table.len(),
            class::SIZE,
            class::ALIGN,
        )?;
        for (i, (key, ce)) in s.class_table.iter().enumerate() {
            let rec = classes + i * class::SIZE;
            self.str_at(rec + class::KEY, key)?;
            self.class_entry(rec, ce)?;
        }
        let warnings = self.alloc(
            header::WARNINGS,
            s.warnings.len(),
            warning::SIZE,
            warning::ALIGN,
        )?;
        for (i, w) in s.warnings.iter().enumerate() {
            let rec = warnings + i * warning::SIZE;
            self.w32(rec + warning::TYPE, w.type_);
            self.w32(rec + warning::LINENO, w.lineno);
            self.str_at(rec + warning::FILENAME, &w.filename)?;
            self.str_at(rec + warning::MESSAGE, &w.message)?;
        }
        let bindings = self.alloc(
            header::EARLY_BINDINGS,
            s.early_bindings.len(),
            early_binding::SIZE,
            early_binding::ALIGN,
        )?;
        for (i, b) in s.early_bindings.iter().enumerate() {
            let rec = bindings + i * early_binding::SIZE;
            self.str_at(rec + early_binding::LCNAME, &b.lcname)?;
            self.str_at(rec + early_binding::RTD_KEY, &b.rtd_key)?;
            self.str_at(rec + early_binding::LC_PARENT_NAME, &b.lc_parent_name)?;
        }
        Ok(())
    }

    fn op_array(&mut self, rec: usize, oa: &'s OpArray, nesting: usize) -> R {
        use layout::op_array as f;
        if nesting > MAX_FUNC_NESTING {
            return Err(PersistError::FuncTooDeep);
        }
        self.op_arrays += 1;
        self.ops += oa.opcodes.len() as u64;
        self.w32(rec + f::TYPE, oa.type_ as u32);
        self.w32(rec + f::FN_FLAGS, oa.fn_flags);
        self.opt_str_at(rec + f::FUNCTION_NAME, &oa.function_name)?;
        self.opt_str_at(rec + f::SCOPE, &oa.scope)?;
        self.w32(rec + f::NUM_ARGS, oa.num_args);
        self.w32(rec + f::REQUIRED_NUM_ARGS, oa.required_num_args);
        self.w32(rec + f::T, oa.T);
        self.w32(rec + f::CACHE_SIZE, oa.cache_size);
        self.str_at(rec + f::FILENAME, &oa.filename)?;
        self.w32(rec + f::LINE_START, oa.line_start);
        self.w32(rec + f::LINE_END, oa.line_end);
        self.opt_str_at(rec + f::DOC_COMMENT, &oa.doc_comment)?;

        let args = self.alloc(
            rec + f::ARG_INFO,
            oa.arg_info.len(),
            arg_info::SIZE,
            arg_info::ALIGN,
        )?;
        for (i, a) in oa.arg_info.iter().enumerate() {
            self.arg_info(args + i * arg_info::SIZE, a)?;
        }
        let ret = self.alloc(
            rec + f::RETURN_INFO,
            oa.return_info.is_some() as usize,
            arg_info::SIZE,
            arg_info::ALIGN,
        )?;
        if let Some(r) = &oa.return_info {
            self.arg_info(ret, r)?;
        }
        self.attributes(rec + f::ATTRIBUTES, &oa.attributes)?;

        let vars = self.alloc(rec + f::VARS, oa.vars.len(), 4, 4)?;
        for (i, v) in oa.vars.iter().enumerate() {
            self.str_at(vars + i * 4, v)?;
        }
        let ops = self.alloc(rec + f::OPCODES, oa.opcodes.len(), op::SIZE, op::ALIGN)?;
        if self.out.is_some() {
            for (i, o) in oa.opcodes.iter().enumerate() {
                self.op(ops + i * op::SIZE, o);
            }
        }
        let lits = self.alloc(rec + f::LITERALS, oa.literals.len(), lit::SIZE, lit::ALIGN)?;
        for (i, l) in oa.literals.iter().enumerate() {
            self.literal(lits + i * lit::SIZE, l, 0)?;
        }
        let extra = self.alloc(
            rec + f::LITERAL_EXTRA,
            oa.literal_extra.len(),
            literal_extra::SIZE,
            literal_extra::ALIGN,
        )?;
        for (i, &(l, v)) in oa.literal_extra.iter().enumerate() {
            let e = extra + i * literal_extra::SIZE;
            self.w32(e + literal_extra::LITERAL, l.as_u32());
            self.w32(e + literal_extra::VALUE, v);
        }
        if let Some(statics) = &oa.static_variables {
            self.w32(rec + f::HAS_STATIC_VARIABLES, 1);
            let base = self.alloc(
                rec + f::STATIC_VARIABLES,
                statics.len(),
                named_value::SIZE,
                named_value::ALIGN,
            )?;
            for (i, (name, value)) in statics.iter().enumerate() {
                let e = base + i * named_value::SIZE;
                self.str_at(e + named_value::NAME, name)?;
                self.literal(e + named_value::VALUE, value, 0)?;
            }
        }
        let lr = self.alloc(
            rec + f::LIVE_RANGE,
            oa.live_range.len(),
            live_range::SIZE,
            live_range::ALIGN,
        )?;
        for (i, r) in oa.live_range.iter().enumerate() {
            let e = lr + i * live_range::SIZE;
            self.w32(e + live_range::VAR, r.var.as_u32());
            self.w32(e + live_range::KIND, r.kind);
            self.w32(e + live_range::START, r.start.as_u32());
            self.w32(e + live_range::END, r.end.as_u32());
        }
        let tc = self.alloc(
            rec + f::TRY_CATCH,
            oa.try_catch_array.len(),
            try_catch::SIZE,
            try_catch::ALIGN,
        )?;
        for (i, t) in oa.try_catch_array.iter().enumerate() {
            let e = tc + i * try_catch::SIZE;
            let present = t.catch_op.is_some() as u32
                | (t.finally_op.is_some() as u32) << 1
                | (t.finally_end.is_some() as u32) << 2;
            self.w32(e + try_catch::PRESENT, present);
            self.w32(e + try_catch::TRY, t.try_op.as_u32());
            self.w32(e + try_catch::CATCH, t.catch_op.map_or(0, |o| o.as_u32()));
            self.w32(
                e + try_catch::FINALLY,
                t.finally_op.map_or(0, |o| o.as_u32()),
            );
            self.w32(
                e + try_catch::FINALLY_END,
                t.finally_end.map_or(0, |o| o.as_u32()),
            );
        }
        let defs = self.alloc(
            rec + f::DYNAMIC_FUNC_DEFS,
            oa.dynamic_func_defs.len(),
            f::SIZE,
            f::ALIGN,
        )?;
        for (i, d) in oa.dynamic_func_defs.iter().enumerate() {
            self.op_array(defs + i * f::SIZE, d, nesting + 1)?;
        }
        Ok(())
    }

    fn op(&mut self, rec: usize, o: &Op) {
        let (t1, v1) = operand(o.op1);
        let (t2, v2) = operand(o.op2);
        let (tr, vr) = operand(o.result);
        let smart = match o.smart_branch {
            SmartBranch::None => 0,
            SmartBranch::Jmpz => IS_SMART_BRANCH_JMPZ,
            SmartBranch::Jmpnz => IS_SMART_BRANCH_JMPNZ,
        };
        self.w32(rec + op::OP1, v1);
        self.w32(rec + op::OP2, v2);
        self.w32(rec + op::RESULT, vr);
        self.w32(rec + op::EXTENDED_VALUE, o.extended_value);
        self.w32(rec + op::LINENO, o.lineno);
        self.w8(rec + op::OPCODE, o.opcode.0);
        self.w8(rec + op::OP1_TYPE, t1);
        self.w8(rec + op::OP2_TYPE, t2);
        self.w8(rec + op::RESULT_TYPE, tr | smart);
    }

    fn literal(&mut self, rec: usize, l: &'s Literal, depth: usize) -> R {
        if depth > MAX_VALUE_DEPTH {
            return Err(PersistError::ValueTooDeep);
        }
        self.w32(rec + lit::TYPE, l.type_code() as u32);
        match l {
            Literal::Null | Literal::False | Literal::True => {}
            Literal::Long(v) => self.w64(rec + lit::VALUE, *v as u64),
            Literal::Double(d) => self.w64(rec + lit::VALUE, d.0),
            Literal::String(s) => {
                let id = self.string(&s.0)?;
                self.w64(rec + lit::VALUE, id as u64);
            }
            Literal::Array(elems) => {
                // Like a zval: the value holds the table's offset, u2 the element count.
                let table = self.alloc_detached(1, ht::SIZE, ht::ALIGN)?;
                let base = self.alloc_detached(elems.len(), bucket::SIZE, bucket::ALIGN)?;
                self.w64(rec + lit::VALUE, table as u64);
                self.w32(rec + lit::AUX, elems.len() as u32);
                self.w64(table + ht::NEXT_FREE, elems.next_free() as u64);
                self.w32(table + ht::BUCKETS, base as u32);
                for (i, (key, value)) in elems.iter().enumerate() {
                    let e = base + i * bucket::SIZE;
                    match key {
                        ArrayKey::Long(h) => {
                            self.w64(e + bucket::H, *h as u64);
                            self.w32(e + bucket::KEY, NONE);
                        }
                        ArrayKey::Str(s) => self.str_at(e + bucket::KEY, s)?,
                    }
                    self.literal(e + bucket::VALUE, value, depth + 1)?;
                }
            }
            Literal::Ast(ast) => {
                let node = self.alloc_detached(1, layout::ast::SIZE, layout::ast::ALIGN)?;
                self.w64(rec + lit::VALUE, node as u64);
                self.ast(node, ast, depth + 1)?;
            }
        }
        Ok(())
    }

    /// Allocates without writing a span (the caller stores the offset its own way).
    fn alloc_detached(
        &mut self,
        count: usize,
        size: usize,
        align: usize,
    ) -> Result<usize, PersistError> {
        if count == 0 {
            return Ok(0);
        }
        let off = align_up(self.cursor, align);
        self.cursor = count
            .checked_mul(size)
            .and_then(|n| n.checked_add(off))
            .filter(|&n| n <= MAX_BODY_LEN)
            .ok_or(PersistError::TooLarge)?;
        Ok(off)
    }

    fn ast(&mut self, rec: usize, a: &'s Ast, depth: usize) -> R {
        use layout::ast as f;
        if depth > MAX_VALUE_DEPTH {
            return Err(PersistError::ValueTooDeep);
        }
        self.w16(rec + f::KIND, a.kind);
        self.w16(rec + f::ATTR, a.attr);
        self.w32(rec + f::LINENO, a.lineno);
        match &a.body {
            AstBody::Zval(l) => {
                self.w32(rec + f::BODY, f::BODY_ZVAL);
                self.literal(rec + f::ZVAL, l, depth + 1)?;
            }
            AstBody::Children(children) => {
                self.w32(rec + f::BODY, f::BODY_CHILDREN);
                self.w32(rec + f::COUNT, children.len() as u32);
                let slots = self.alloc_detached(children.len(), 4, 4)?;
                self.w32(rec + f::CHILDREN, slots as u32);
                for (i, child) in children.iter().enumerate() {
                    if let Some(child) = child {
                        let node = self.alloc_detached(1, f::SIZE, f::ALIGN)?;
                        self.w32(slots + i * 4, node as u32);
                        self.ast(node, child, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn zend_type(&mut self, rec: usize, t: &'s ZendType, depth: usize) -> R {
        if depth > MAX_VALUE_DEPTH {
            return Err(PersistError::ValueTooDeep);
        }
        self.w32(rec + ztype::MASK, t.type_mask);
        match &t.names {
            TypeNames::None => {}
            TypeNames::Name(n) => {
                self.w32(rec + ztype::KIND, ztype::NAMES_NAME);
                self.str_at(rec + ztype::A, n)?;
            }
            TypeNames::List(list) => {
                self.w32(rec + ztype::KIND, ztype::NAMES_LIST);
                let base = self.alloc(rec + ztype::A, list.len(), ztype::SIZE, ztype::ALIGN)?;
                for (i, t) in list.iter().enumerate() {
                    self.zend_type(base + i * ztype::SIZE, t, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    fn arg_info(&mut self, rec: usize, a: &'s ArgInfo) -> R {
        self.opt_str_at(rec + arg_info::NAME, &a.name)?;
        self.opt_str_at(rec + arg_info::DEFAULT, &a.default_value)?;
        self.zend_type(rec + arg_info::TYPE, &a.type_, 0)
    }

    fn attributes(&mut self, span_at: usize, attrs: &'s [Attribute]) -> R {
        let base = self.alloc(span_at, attrs.len(), attribute::SIZE, attribute::ALIGN)?;
        for (i, a) in attrs.iter().enumerate() {
            let rec = base + i * attribute::SIZE;
            self.str_at(rec + attribute::NAME, &a.name)?;
            self.str_at(rec + attribute::LCNAME, &a.lcname)?;
            self.w32(rec + attribute::FLAGS, a.flags);
            self.w32(rec + attribute::LINENO, a.lineno);
            self.w32(rec + attribute::OFFSET, a.offset);
            let args = self.alloc(
                rec + attribute::ARGS,
                a.args.len(),
                named_value::SIZE,
                named_value::ALIGN,
            )?;
            for (j, arg) in a.args.iter().enumerate() {
                let e = args + j * named_value::SIZE;
                self.opt_str_at(e + named_value::NAME, &arg.name)?;
                self.literal(e + named_value::VALUE, &arg.value, 0)?;
            }
        }
        Ok(())
    }

    fn class_names(&mut self, span_at: usize, names: &'s [ClassName]) -> R {
        let base = self.alloc(span_at, names.len(), class_name::SIZE, class_name::ALIGN)?;
        for (i, n) in names.iter().enumerate() {
            let rec = base + i * class_name::SIZE;
            self.str_at(rec + class_name::NAME, &n.name)?;
            self.str_at(rec + class_name::LC_NAME, &n.lc_name)?;
        }
        Ok(())
    }

    fn class_entry(&mut self, rec: usize, ce: &'s ClassEntry) -> R {
        if !ce.method_stubs.is_empty() {
            return Err(PersistError::LinkedClass(
                String::from_utf8_lossy(&ce.name.0).into_owned(),
            ));
        }
        use layout::class as f;
        self.str_at(rec + f::NAME, &ce.name)?;
        self.opt_str_at(rec + f::PARENT_NAME, &ce.parent_name)?;
        self.w32(rec + f::CE_FLAGS, ce.ce_flags);
        self.w32(rec + f::REFCOUNT, ce.refcount);
        self.str_at(rec + f::FILENAME, &ce.filename)?;
        self.w32(rec + f::LINE_START, ce.line_start);
        self.w32(rec + f::LINE_END, ce.line_end);
        self.opt_str_at(rec + f::DOC_COMMENT, &ce.doc_comment)?;
        self.w32(rec + f::ENUM_BACKING_TYPE, ce.enum_backing_type as u32);

        self.class_names(rec + f::INTERFACE_NAMES, &ce.interface_names)?;
        self.class_names(rec + f::TRAIT_NAMES, &ce.trait_names)?;
        let base = self.alloc(
            rec + f::TRAIT_ALIASES,
            ce.trait_aliases.len(),
            trait_alias::SIZE,
            trait_alias::ALIGN,
        )?;
        for (i, a) in ce.trait_aliases.iter().enumerate() {
            let e = base + i * trait_alias::SIZE;
            self.str_at(e + trait_alias::METHOD_NAME, &a.method.method_name)?;
            self.opt_str_at(e + trait_alias::CLASS_NAME, &a.method.class_name)?;
            self.opt_str_at(e + trait_alias::ALIAS, &a.alias)?;
            self.w32(e + trait_alias::MODIFIERS, a.modifiers);
        }
        let base = self.alloc(
            rec + f::TRAIT_PRECEDENCES,
            ce.trait_precedences.len(),
            trait_precedence::SIZE,
            trait_precedence::ALIGN,
        )?;
        for (i, p) in ce.trait_precedences.iter().enumerate() {
            let e = base + i * trait_precedence::SIZE;
            self.str_at(e + trait_precedence::METHOD_NAME, &p.method.method_name)?;
            self.opt_str_at(e + trait_precedence::CLASS_NAME, &p.method.class_name)?;
            let names = self.alloc(
                e + trait_precedence::EXCLUDE,
                p.exclude_class_names.len(),
                4,
                4,
            )?;
            for (j, n) in p.exclude_class_names.iter().enumerate() {
                self.str_at(names + j * 4, n)?;
            }
        }
        let base = self.alloc(
            rec + f::CONSTANTS,
            ce.constants.len(),
            class_constant::SIZE,
            class_constant::ALIGN,
        )?;
        for (i, c) in ce.constants.iter().enumerate() {
            let e = base + i * class_constant::SIZE;
            self.str_at(e + class_constant::NAME, &c.name)?;
            self.w32(e + class_constant::FLAGS, c.flags);
            self.opt_str_at(e + class_constant::DOC_COMMENT, &c.doc_comment)?;
            self.str_at(e + class_constant::CE, &c.ce)?;
            self.literal(e + class_constant::VALUE, &c.value, 0)?;
            self.attributes(e + class_constant::ATTRIBUTES, &c.attributes)?;
        }
        let base = self.alloc(
            rec + f::PROPERTIES,
            ce.properties.len(),
            property::SIZE,
            property::ALIGN,
        )?;
        for (i, p) in ce.properties.iter().enumerate() {
            let e = base + i * property::SIZE;
            self.str_at(e + property::NAME, &p.name)?;
            self.w32(e + property::FLAGS, p.flags);
            self.w32(e + property::OFFSET, p.offset);
            self.opt_str_at(e + property::DOC_COMMENT, &p.doc_comment)?;
            self.str_at(e + property::CE, &p.ce)?;
            self.zend_type(e + property::TYPE, &p.type_, 0)?;
            if let Some(d) = &p.default {
                self.w32(e + property::HAS_DEFAULT, 1);
                self.literal(e + property::DEFAULT, d, 0)?;
            }
            self.attributes(e + property::ATTRIBUTES, &p.attributes)?;
        }
        let base = self.alloc(rec + f::METHODS, ce.methods.len(), func::SIZE, func::ALIGN)?;
        for (i, (key, m)) in ce.methods.iter().enumerate() {
            let e = base + i * func::SIZE;
            self.str_at(e + func::KEY, key)?;
            self.op_array(e + func::OP_ARRAY, m, 1)?;
        }
        self.attributes(rec + f::ATTRIBUTES, &ce.attributes)
    }
}

/// Operand type byte and value of an operand.
fn operand(o: Operand) -> (u8, u32) {
    match o {
        Operand::Unused(v) => (IS_UNUSED, v),
        Operand::JmpAddr(t) => (op::JMP_ADDR, t.as_u32()),
        Operand::Const(l) => (IS_CONST, l.as_u32()),
        Operand::TmpVar(v) => (IS_TMP_VAR, v.as_u32()),
        Operand::Var(v) => (IS_VAR, v.as_u32()),
        Operand::Cv(v) => (IS_CV, v.as_u32()),
    }
}
