//! The `.zop` text printer. See the module documentation of [`crate::zop`] for the grammar.

use super::names;
use crate::model::*;
use crate::opcode::Opcode;
use std::fmt::Write;

/// Prints a script as `.zop` text.
pub fn print(script: &Script) -> String {
    let mut p = Printer {
        out: String::with_capacity(4096),
        script_file: &script.filename.0,
    };
    p.script(script);
    p.out
}

struct Printer<'a> {
    out: String,
    script_file: &'a [u8],
}

// `write!` into a String cannot fail; the results are ignored throughout.
impl Printer<'_> {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn script(&mut self, script: &Script) {
        self.out.push_str("zop 1\nscript ");
        write_string(&mut self.out, &script.filename.0);
        self.out.push('\n');
        if let Some(offset) = script.compiler_halt_offset {
            let _ = writeln!(self.out, "halt_offset {offset}");
        }
        for w in &script.warnings {
            let _ = write!(self.out, "warning {} {} ", w.type_, w.lineno);
            write_string(&mut self.out, &w.filename.0);
            self.out.push(' ');
            write_string(&mut self.out, &w.message.0);
            self.out.push('\n');
        }
        for b in &script.early_bindings {
            self.out.push_str("early_binding ");
            write_string(&mut self.out, &b.lcname.0);
            self.out.push(' ');
            write_string(&mut self.out, &b.rtd_key.0);
            self.out.push(' ');
            write_string(&mut self.out, &b.lc_parent_name.0);
            self.out.push('\n');
        }
        self.out.push_str("\nmain {\n");
        self.op_array_body(&script.main_op_array, 1);
        self.out.push_str("}\n");
        for (key, func) in &script.function_table {
            self.out.push_str("\nfunction ");
            write_string(&mut self.out, &key.0);
            self.out.push_str(" {\n");
            self.op_array_body(func, 1);
            self.out.push_str("}\n");
        }
        for (key, ce) in &script.class_table {
            self.out.push_str("\nclass ");
            write_string(&mut self.out, &key.0);
            self.out.push_str(" {\n");
            self.class_body(ce, 1);
            self.out.push_str("}\n");
        }
    }

    fn line_start(&mut self, depth: usize, keyword: &str) {
        self.indent(depth);
        self.out.push_str(keyword);
    }

    fn string_line(&mut self, depth: usize, keyword: &str, s: &[u8]) {
        self.line_start(depth, keyword);
        self.out.push(' ');
        write_string(&mut self.out, s);
        self.out.push('\n');
    }

    fn flags_line(&mut self, depth: usize, flags: u32, table: &[(u32, &str)]) {
        self.indent(depth);
        let _ = write!(self.out, "flags {flags:#010x}");
        if flags != 0 {
            self.out.push_str(" ; ");
            self.out.push_str(&names::flag_names(flags, table));
        }
        self.out.push('\n');
    }

    fn arg_info(&mut self, depth: usize, keyword: &str, arg: &ArgInfo) {
        self.line_start(depth, keyword);
        if let Some(name) = &arg.name {
            self.out.push(' ');
            write_name(&mut self.out, &name.0);
        }
        let has_type = !is_empty_type(&arg.type_);
        if has_type {
            self.out.push(' ');
            write_type(&mut self.out, &arg.type_);
        }
        if let Some(default) = &arg.default_value {
            self.out.push_str(" default=");
            write_string(&mut self.out, &default.0);
        }
        if has_type {
            self.out.push_str(" ; ");
            self.out.push_str(&names::type_to_string(&arg.type_));
        }
        self.out.push('\n');
    }

    fn op_array_body(&mut self, oa: &OpArray, depth: usize) {
        if let Some(name) = &oa.function_name {
            self.string_line(depth, "name", &name.0);
        }
        if let Some(scope) = &oa.scope {
            self.string_line(depth, "scope", &scope.0);
        }
        if oa.type_ != ZEND_USER_FUNCTION {
            self.indent(depth);
            match oa.type_ {
                ZEND_EVAL_CODE => self.out.push_str("kind eval\n"),
                ZEND_INTERNAL_FUNCTION => self.out.push_str("kind internal\n"),
                n => {
                    let _ = writeln!(self.out, "kind {n}");
                }
            }
        }
        self.flags_line(depth, oa.fn_flags, names::FN_FLAGS);
        self.indent(depth);
        let _ = writeln!(
            self.out,
            "args {} required {}",
            oa.num_args, oa.required_num_args
        );
        for arg in &oa.arg_info {
            self.arg_info(depth, "arg", arg);
        }
        if let Some(ret) = &oa.return_info {
            self.arg_info(depth, "return", ret);
        }
        for attr in &oa.attributes {
            self.indent(depth);
            write_attribute(&mut self.out, attr);
            self.out.push('\n');
        }
        self.indent(depth);
        let _ = writeln!(self.out, "T {}", oa.T);
        self.indent(depth);
        let _ = writeln!(self.out, "cache_size {}", oa.cache_size);
        if !oa.vars.is_empty() {
            self.line_start(depth, "vars");
            for v in &oa.vars {
                self.out.push(' ');
                write_name(&mut self.out, &v.0);
            }
            self.out.push('\n');
        }
        if let Some(statics) = &oa.static_variables {
            self.line_start(depth, "statics\n");
            for (name, value) in statics {
                self.line_start(depth, "static ");
                write_name(&mut self.out, &name.0);
                self.out.push_str(" = ");
                write_literal(&mut self.out, value, false);
                self.out.push('\n');
            }
        }
        for lr in &oa.live_range {
            self.indent(depth);
            let _ = write!(self.out, "live_range {} ", lr.var.as_u32());
            match names::LIVE_KINDS.iter().find(|(k, _)| *k == lr.kind) {
                Some((_, name)) => self.out.push_str(name),
                None => {
                    let _ = write!(self.out, "{}", lr.kind);
                }
            }
            let _ = writeln!(self.out, " {:04} {:04}", lr.start.as_u32(), lr.end.as_u32());
        }
        for tc in &oa.try_catch_array {
            self.indent(depth);
            let _ = write!(self.out, "try_catch {:04}", tc.try_op.as_u32());
            if let Some(op) = tc.catch_op {
                let _ = write!(self.out, " catch={:04}", op.as_u32());
            }
            if let Some(op) = tc.finally_op {
                let _ = write!(self.out, " finally={:04}", op.as_u32());
            }
            if let Some(op) = tc.finally_end {
                let _ = write!(self.out, " finally_end={:04}", op.as_u32());
            }
            self.out.push('\n');
        }
        if oa.filename.0 != self.script_file {
            self.string_line(depth, "file", &oa.filename.0);
        }
        self.indent(depth);
        let _ = writeln!(self.out, "lines {} {}", oa.line_start, oa.line_end);
        if let Some(doc) = &oa.doc_comment {
            self.string_line(depth, "doc", &doc.0);
        }
        for (i, lit) in oa.literals.iter().enumerate() {
            self.indent(depth);
            self.out.push('#');
            push_u32(&mut self.out, i as u32);
            self.out.push_str(" = ");
            write_literal(&mut self.out, lit, false);
            let extra = oa.literal_extra(LiteralId::new(i as u32));
            if extra != 0 {
                self.out.push_str(" extra=");
                push_u32(&mut self.out, extra);
            }
            self.out.push('\n');
        }
        let mut prev_line = oa.line_start;
        for (i, op) in oa.opcodes.iter().enumerate() {
            self.indent(depth);
            write_op(&mut self.out, oa, i, op, prev_line);
            prev_line = op.lineno;
        }
        for (i, def) in oa.dynamic_func_defs.iter().enumerate() {
            self.indent(depth);
            let _ = writeln!(self.out, "dynamic_func_def {i} {{");
            self.op_array_body(def, depth + 1);
            self.indent(depth);
            self.out.push_str("}\n");
        }
    }

    fn class_body(&mut self, ce: &ClassEntry, depth: usize) {
        self.string_line(depth, "name", &ce.name.0);
        if let Some(parent) = &ce.parent_name {
            self.string_line(depth, "parent", &parent.0);
        }
        self.flags_line(depth, ce.ce_flags, names::CE_FLAGS);
        if ce.refcount != 1 {
            self.indent(depth);
            let _ = writeln!(self.out, "refcount {}", ce.refcount);
        }
        if ce.filename.0 != self.script_file {
            self.string_line(depth, "file", &ce.filename.0);
        }
        self.indent(depth);
        let _ = writeln!(self.out, "lines {} {}", ce.line_start, ce.line_end);
        if let Some(doc) = &ce.doc_comment {
            self.string_line(depth, "doc", &doc.0);
        }
        if ce.enum_backing_type != 0 {
            self.indent(depth);
            let _ = writeln!(self.out, "enum_backing_type {}", ce.enum_backing_type);
        }
        for attr in &ce.attributes {
            self.indent(depth);
            write_attribute(&mut self.out, attr);
            self.out.push('\n');
        }
        for (keyword, list) in [
            ("interface", &ce.interface_names),
            ("trait", &ce.trait_names),
        ] {
            for cn in list {
                self.line_start(depth, keyword);
                self.out.push(' ');
                write_string(&mut self.out, &cn.name.0);
                if cn.lc_name.0 != cn.name.0.to_ascii_lowercase() {
                    self.out.push_str(" lc=");
                    write_string(&mut self.out, &cn.lc_name.0);
                }
                self.out.push('\n');
            }
        }
        for alias in &ce.trait_aliases {
            self.line_start(depth, "trait_alias ");
            write_method_ref(&mut self.out, &alias.method);
            if let Some(a) = &alias.alias {
                self.out.push_str(" as=");
                write_string(&mut self.out, &a.0);
            }
            if alias.modifiers != 0 {
                let _ = write!(self.out, " modifiers={:#x}", alias.modifiers);
            }
            self.out.push('\n');
        }
        for prec in &ce.trait_precedences {
            self.line_start(depth, "trait_precedence ");
            write_method_ref(&mut self.out, &prec.method);
            if !prec.exclude_class_names.is_empty() {
                self.out.push_str(" insteadof=[");
                for (i, n) in prec.exclude_class_names.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    write_string(&mut self.out, &n.0);
                }
                self.out.push(']');
            }
            self.out.push('\n');
        }
        for c in &ce.constants {
            self.line_start(depth, "const ");
            write_string(&mut self.out, &c.name.0);
            self.out.push_str(" = ");
            write_literal(&mut self.out, &c.value, false);
            let _ = write!(self.out, " flags={:#x}", c.flags);
            if c.ce != ce.name {
                self.out.push_str(" ce=");
                write_string(&mut self.out, &c.ce.0);
            }
            if let Some(doc) = &c.doc_comment {
                self.out.push_str(" doc=");
                write_string(&mut self.out, &doc.0);
            }
            for attr in &c.attributes {
                self.out.push(' ');
                write_attribute(&mut self.out, attr);
            }
            if c.flags != 0 {
                self.out.push_str(" ; ");
                self.out
                    .push_str(&names::flag_names(c.flags, names::CONST_FLAGS));
            }
            self.out.push('\n');
        }
        for p in &ce.properties {
            self.line_start(depth, "property ");
            write_name(&mut self.out, &p.name.0);
            let _ = write!(self.out, " flags={:#x} offset={}", p.flags, p.offset);
            let has_type = !is_empty_type(&p.type_);
            if has_type {
                self.out.push(' ');
                write_type(&mut self.out, &p.type_);
            }
            if let Some(default) = &p.default {
                self.out.push_str(" default=");
                write_literal(&mut self.out, default, false);
            }
            if p.ce != ce.name {
                self.out.push_str(" ce=");
                write_string(&mut self.out, &p.ce.0);
            }
            if let Some(doc) = &p.doc_comment {
                self.out.push_str(" doc=");
                write_string(&mut self.out, &doc.0);
            }
            for attr in &p.attributes {
                self.out.push(' ');
                write_attribute(&mut self.out, attr);
            }
            if p.flags != 0 || has_type {
                self.out.push_str(" ;");
                if p.flags != 0 {
                    self.out.push(' ');
                    self.out
                        .push_str(&names::flag_names(p.flags, names::PROP_FLAGS));
                }
                if has_type {
                    self.out.push(' ');
                    self.out.push_str(&names::type_to_string(&p.type_));
                }
            }
            self.out.push('\n');
        }
        for entry in ce.method_table() {
            let (key, method) = match entry {
                MethodEntry::User(key, method) => (key, method),
                MethodEntry::Stub(m) => {
                    self.line_start(depth, "method_stub ");
                    write_string(&mut self.out, &m.key.0);
                    self.out.push_str(" scope=");
                    write_string(&mut self.out, &m.scope.0);
                    let _ = write!(self.out, " flags={:#010x}", m.fn_flags);
                    self.out.push('\n');
                    continue;
                }
            };
            self.line_start(depth, "method ");
            write_string(&mut self.out, &key.0);
            self.out.push_str(" {\n");
            self.op_array_body(method, depth + 1);
            self.indent(depth);
            self.out.push_str("}\n");
        }
    }
}

/// `n` in decimal, without the formatting machinery (the printer's hot path).
fn push_u32(out: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &b in &buf[i..] {
        out.push(b as char);
    }
}

/// `n` in decimal, zero-padded to at least four digits (`%04u`).
fn push_u32_pad4(out: &mut String, n: u32) {
    if n < 1000 {
        out.push('0');
        if n < 100 {
            out.push('0');
            if n < 10 {
                out.push('0');
            }
        }
    }
    push_u32(out, n);
}

fn is_empty_type(t: &ZendType) -> bool {
    t.type_mask == 0 && t.names == TypeNames::None
}

fn write_method_ref(out: &mut String, m: &TraitMethodRef) {
    write_string(out, &m.method_name.0);
    if let Some(c) = &m.class_name {
        out.push_str(" class=");
        write_string(out, &c.0);
    }
}

/// The operand slots an opcode's line shows after its name: op1, op2 and, for opcodes whose
/// extended_value is a jump target, that target.
pub(crate) struct Slots {
    pub op1_jump: bool,
    pub op2_jump: bool,
    pub ext_jump: bool,
}

impl Slots {
    pub(crate) fn of(opcode: Opcode) -> Slots {
        Slots {
            op1_jump: opcode.op1_is_jmp_addr(),
            op2_jump: opcode.op2_is_jmp_addr(),
            ext_jump: opcode.ext_is_jmp_addr(),
        }
    }
}

fn write_op(out: &mut String, oa: &OpArray, i: usize, op: &Op, prev_line: u32) {
    push_u32_pad4(out, i as u32);
    out.push(' ');
    match op.result {
        Operand::Unused(_) => {}
        result => {
            write_operand(out, oa, result, false);
            out.push_str(" = ");
        }
    }
    match op.opcode.short_name() {
        Some(name) => out.push_str(name),
        None => {
            let _ = write!(out, "OP_{}", op.opcode.0);
        }
    }
    let slots = Slots::of(op.opcode);
    let shown = if slots.ext_jump && op.extended_value != 0 {
        3
    } else if op.op2 != Operand::Unused(0) {
        2
    } else if op.op1 != Operand::Unused(0) {
        1
    } else {
        0
    };
    if shown >= 1 {
        out.push(' ');
        write_operand(out, oa, op.op1, slots.op1_jump);
    }
    if shown >= 2 {
        out.push(' ');
        write_operand(out, oa, op.op2, slots.op2_jump);
    }
    if shown >= 3 {
        out.push(' ');
        push_u32_pad4(out, op.extended_value);
    }
    if !slots.ext_jump && op.extended_value != 0 {
        out.push_str(" ext=");
        push_u32(out, op.extended_value);
    }
    if let Operand::Unused(n @ 1..) = op.result {
        let _ = write!(out, " result={n}");
    }
    match op.smart_branch {
        SmartBranch::None => {}
        SmartBranch::Jmpz => out.push_str(" smart=jmpz"),
        SmartBranch::Jmpnz => out.push_str(" smart=jmpnz"),
    }
    if op.lineno != prev_line {
        out.push_str(" line=");
        push_u32(out, op.lineno);
    }
    out.push('\n');
}

fn write_operand(out: &mut String, oa: &OpArray, operand: Operand, jump_slot: bool) {
    match operand {
        Operand::Unused(0) => out.push('_'),
        Operand::Unused(n) => {
            if jump_slot {
                let _ = write!(out, "num({n})");
            } else {
                push_u32(out, n);
            }
        }
        Operand::JmpAddr(t) => {
            if !jump_slot {
                out.push('@');
            }
            push_u32_pad4(out, t.as_u32());
        }
        Operand::Const(id) => {
            out.push('#');
            push_u32(out, id.as_u32());
            if let Some(lit) = oa.literals.get(id.index()) {
                out.push(':');
                write_literal(out, lit, true);
            }
        }
        Operand::TmpVar(v) => {
            out.push('T');
            push_u32(out, v.as_u32());
        }
        Operand::Var(v) => {
            out.push('V');
            push_u32(out, v.as_u32());
        }
        Operand::Cv(v) => {
            out.push_str("CV");
            push_u32(out, v.as_u32());
            if let Some(name) = oa.vars.get(v.index()) {
                out.push('(');
                write_name(out, &name.0);
                out.push(')');
            }
        }
    }
}

/// `"..."` with `\\`, `\"`, `\n`, `\r`, `\t` and `\xHH` escapes; printable ASCII is kept as
/// is, every other byte is `\xHH`. A backslash stays single unless what follows would read as
/// an escape.
pub(crate) fn write_string(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => {
                let plain_next = matches!(bytes.get(i + 1),
                    Some(&n) if (0x20..=0x7e).contains(&n)
                        && !matches!(n, b'\\' | b'"' | b'n' | b'r' | b't' | b'x'));
                out.push_str(if plain_next { "\\" } else { "\\\\" });
            }
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
}

/// Whether a name prints as `$name` rather than as a string.
fn is_simple_name(bytes: &[u8]) -> bool {
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_'),
        _ => false,
    }
}

/// A variable-like name: `$name` or a string.
pub(crate) fn write_name(out: &mut String, bytes: &[u8]) {
    if is_simple_name(bytes) {
        out.push('$');
        // Simple names are ASCII.
        out.push_str(std::str::from_utf8(bytes).unwrap_or_default());
    } else {
        write_string(out, bytes);
    }
}

/// A double, exactly: the shortest decimal that reads back as the same value, with the raw
/// bits appended when the decimal alone does not give them back (NaN payloads, negative NaN).
pub(crate) fn write_double(out: &mut String, d: PhpDouble) {
    let v = d.get();
    let start = out.len();
    let _ = write!(out, "{v:?}");
    let exact = out[start..].parse::<f64>().map(f64::to_bits) == Ok(d.0);
    if !exact {
        let _ = write!(out, ":{:#018x}", d.0);
    }
}

pub(crate) fn write_literal(out: &mut String, lit: &Literal, elide: bool) {
    match lit {
        Literal::Null => out.push_str("null"),
        Literal::False => out.push_str("bool(false)"),
        Literal::True => out.push_str("bool(true)"),
        Literal::Long(n) => {
            let _ = write!(out, "int({n})");
        }
        Literal::Double(d) => {
            out.push_str("float(");
            write_double(out, *d);
            out.push(')');
        }
        Literal::String(s) => {
            out.push_str("string(");
            write_string(out, &s.0);
            out.push(')');
        }
        Literal::Array(elems) => {
            if elide && !elems.is_empty() {
                out.push_str("array(...)");
                return;
            }
            out.push_str("array(");
            for (i, (k, v)) in elems.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match k {
                    ArrayKey::Long(n) => {
                        let _ = write!(out, "{n}");
                    }
                    ArrayKey::Str(s) => write_string(out, &s.0),
                }
                out.push_str(" => ");
                write_literal(out, v, false);
            }
            if elems.next_free() != PhpArray::usual_next_free(elems) {
                if !elems.is_empty() {
                    out.push_str(", ");
                }
                let _ = write!(out, "next={}", elems.next_free());
            }
            out.push(')');
        }
        Literal::Ast(ast) => {
            if elide {
                out.push_str("ast(...)");
            } else {
                write_ast(out, ast);
            }
        }
    }
}

pub(crate) fn write_ast(out: &mut String, ast: &Ast) {
    out.push_str("ast(");
    match names::ast_kind_name(ast.kind) {
        Some(name) => out.push_str(name),
        None => {
            let _ = write!(out, "{}", ast.kind);
        }
    }
    if ast.attr != 0 {
        let _ = write!(out, " attr={}", ast.attr);
    }
    let _ = write!(out, " line={}", ast.lineno);
    match &ast.body {
        AstBody::Zval(lit) => {
            out.push_str(" = ");
            write_literal(out, lit, false);
        }
        AstBody::Children(children) => {
            out.push_str(" [");
            for (i, child) in children.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match child {
                    Some(c) => write_ast(out, c),
                    None => out.push('_'),
                }
            }
            out.push(']');
        }
    }
    out.push(')');
}

pub(crate) fn write_type(out: &mut String, t: &ZendType) {
    let _ = write!(out, "type({:#010x}", t.type_mask);
    match &t.names {
        TypeNames::None => {}
        TypeNames::Name(n) => {
            out.push(' ');
            write_string(out, &n.0);
        }
        TypeNames::List(list) => {
            out.push_str(" [");
            for (i, e) in list.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_type(out, e);
            }
            out.push(']');
        }
    }
    out.push(')');
}

pub(crate) fn write_attribute(out: &mut String, a: &Attribute) {
    out.push_str("#[");
    write_string(out, &a.name.0);
    if !a.args.is_empty() {
        out.push('(');
        for (i, arg) in a.args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if let Some(name) = &arg.name {
                if is_simple_name(&name.0) {
                    out.push_str(std::str::from_utf8(&name.0).unwrap_or_default());
                } else {
                    write_string(out, &name.0);
                }
                out.push_str(": ");
            }
            write_literal(out, &arg.value, false);
        }
        out.push(')');
    }
    if a.lcname.0 != a.name.0.to_ascii_lowercase() {
        out.push_str(" lc=");
        write_string(out, &a.lcname.0);
    }
    if a.flags != 0 {
        let _ = write!(out, " flags={:#x}", a.flags);
    }
    let _ = write!(out, " line={}", a.lineno);
    if a.offset != 0 {
        let _ = write!(out, " offset={}", a.offset);
    }
    out.push(']');
}
