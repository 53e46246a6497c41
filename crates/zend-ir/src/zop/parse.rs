//! The `.zop` text parser: one pass over the bytes, line by line, recursive descent within a
//! line. See the module documentation of [`crate::zop`] for the grammar.

use super::names;
use super::print::{write_literal, Slots};
use crate::model::*;
use crate::opcode::Opcode;
use std::fmt;

/// Deepest nesting of arrays, constant ASTs, type lists and dynamic_func_defs the parser
/// accepts; deeper input is an error rather than a stack overflow.
pub const MAX_DEPTH: usize = 256;

/// Deepest nesting of op_arrays (a function, method or main script is level 1, each
/// dynamic_func_def one more); counted on top of [`MAX_DEPTH`], as op_array levels cost far
/// more stack than value levels.
pub const MAX_FUNC_NESTING: usize = 64;

/// Why a `.zop` text could not be parsed: where (1-based line and column, counted in
/// characters) and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file name given to [`parse_named`](super::parse_named), if any.
    pub file: Option<String>,
    pub line: usize,
    pub column: usize,
    /// E.g. `expected operand, found "foo"`.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

type Result<T> = std::result::Result<T, ParseError>;

/// Parses `.zop` text.
pub fn parse(text: &str) -> Result<Script> {
    Parser::new(text.as_bytes()).script()
}

/// Parses `.zop` text; errors name `file`.
pub fn parse_named(file: &str, text: &str) -> Result<Script> {
    parse(text).map_err(|mut e| {
        e.file = Some(file.to_string());
        e
    })
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The first `\n` in `s`, eight bytes at a time.
fn find_newline(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut chunks = s.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ NL;
        if (x.wrapping_sub(LO) & !x & HI) != 0 {
            return chunk.iter().position(|&b| b == b'\n').map(|i| base + i);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| base + i)
}

/// Decimal digits only, no sign, fitting in u32.
fn dec_u32(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: u32 = 0;
    for &d in digits {
        n = n.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
    }
    Some(n)
}

/// Where an op line looks things up.
struct OpCtx<'o> {
    vars: &'o [PhpStr],
    literals: &'o [Literal],
}

/// An op_array being parsed.
struct OpArrayState {
    oa: OpArray,
    seen: Vec<&'static str>,
    prev_line: u32,
}

/// What an op_array line did.
enum Line {
    More,
    End,
    /// Opened a `dynamic_func_def` block.
    Nested,
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    line_no: usize,
    line_start: usize,
    line_end: usize,
    next_line: usize,
    script_file: PhpStr,
    /// Op_arrays open around the current line.
    func_nesting: usize,
    /// Reused buffer for strings that are only compared.
    scratch: Vec<u8>,
}

impl<'a> Parser<'a> {
    fn new(s: &'a [u8]) -> Self {
        Parser {
            s,
            pos: 0,
            line_no: 0,
            line_start: 0,
            line_end: 0,
            next_line: 0,
            script_file: PhpStr::default(),
            func_nesting: 0,
            scratch: Vec::new(),
        }
    }

    // ---- errors -------------------------------------------------------------------------

    fn error_at(&self, at: usize, message: String) -> ParseError {
        let at = at.clamp(self.line_start, self.line_end.max(self.line_start));
        let column = self
            .s
            .get(self.line_start..at)
            .map_or(0, |b| b.iter().filter(|&&c| c & 0xC0 != 0x80).count())
            + 1;
        ParseError {
            file: None,
            line: self.line_no.max(1),
            column,
            message,
        }
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        self.error_at(self.pos, message.into())
    }

    /// What stands at the current position, for error messages.
    fn found(&self) -> String {
        if self.pos >= self.line_end {
            return if self.line_end >= self.s.len() && self.next_line > self.s.len() {
                "end of file".into()
            } else {
                "end of line".into()
            };
        }
        let rest = &self.s[self.pos..self.line_end];
        let len = if is_word(rest[0]) {
            rest.iter().take_while(|&&b| is_word(b)).count()
        } else if rest[0] == b'"' {
            rest.len()
        } else {
            1
        };
        let text: String = String::from_utf8_lossy(&rest[..len])
            .chars()
            .take(32)
            .collect();
        format!("{text:?}")
    }

    fn expected(&self, what: &str) -> ParseError {
        self.error(format!("expected {what}, found {}", self.found()))
    }

    // ---- lines --------------------------------------------------------------------------

    /// Moves to the next line that holds something besides blanks and comments.
    fn next_line(&mut self) -> bool {
        loop {
            if self.next_line > self.s.len() {
                self.pos = self.s.len();
                self.line_start = self.s.len();
                self.line_end = self.s.len();
                return false;
            }
            self.line_start = self.next_line;
            let rest = &self.s[self.line_start..];
            self.line_end = self.line_start + find_newline(rest).unwrap_or(rest.len());
            self.next_line = self.line_end + 1;
            self.line_no += 1;
            self.pos = self.line_start;
            if !self.at_eol() {
                return true;
            }
        }
    }

    /// Skips blanks; a `;` comment runs to the end of the line.
    fn skip_ws(&mut self) {
        while self.pos < self.line_end {
            match self.s[self.pos] {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b';' => self.pos = self.line_end,
                _ => break,
            }
        }
    }

    fn at_eol(&mut self) -> bool {
        self.skip_ws();
        self.pos >= self.line_end
    }

    fn expect_eol(&mut self) -> Result<()> {
        if self.at_eol() {
            Ok(())
        } else {
            Err(self.expected("end of line"))
        }
    }

    // ---- tokens -------------------------------------------------------------------------

    fn peek(&self) -> Option<u8> {
        if self.pos < self.line_end {
            Some(self.s[self.pos])
        } else {
            None
        }
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        let p = self.pos.checked_add(k)?;
        if p < self.line_end {
            Some(self.s[p])
        } else {
            None
        }
    }

    fn rest_starts_with(&self, prefix: &[u8]) -> bool {
        self.s
            .get(self.pos..self.line_end)
            .is_some_and(|r| r.starts_with(prefix))
    }

    /// Consumes byte `b` after blanks.
    fn eat(&mut self, b: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, b: u8) -> Result<()> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{}`", b as char)))
        }
    }

    /// The run of `[A-Za-z0-9_]` at the position (no blanks skipped), consumed.
    fn word(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.pos < self.line_end && is_word(self.s[self.pos]) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    /// Consumes keyword `w` (a whole word) after blanks.
    fn eat_word(&mut self, w: &[u8]) -> bool {
        self.skip_ws();
        let end = self.pos + w.len();
        if end <= self.line_end
            && &self.s[self.pos..end] == w
            && (end == self.line_end || !is_word(self.s[end]))
        {
            self.pos = end;
            true
        } else {
            false
        }
    }

    /// A `key=` at the position (after blanks): the key, not consumed.
    fn peek_key(&mut self) -> Option<&'a [u8]> {
        self.skip_ws();
        let mut end = self.pos;
        while end < self.line_end && is_word(self.s[end]) {
            end += 1;
        }
        if end > self.pos && end < self.line_end && self.s[end] == b'=' {
            Some(&self.s[self.pos..end])
        } else {
            None
        }
    }

    /// Consumes `key=` (seen by `peek_key`).
    fn take_key(&mut self) -> &'a [u8] {
        let key = self.word();
        self.pos += 1; // '='
        key
    }

    fn u64_number(&mut self, what: &str) -> Result<u64> {
        self.skip_ws();
        let start = self.pos;
        let (radix, digits_start) = if self.rest_starts_with(b"0x") || self.rest_starts_with(b"0X")
        {
            (16, self.pos + 2)
        } else {
            (10, self.pos)
        };
        let line = &self.s[..self.line_end];
        let mut end = digits_start;
        if radix == 10 {
            while end < line.len() && line[end].is_ascii_digit() {
                end += 1;
            }
        } else {
            while end < line.len() && line[end].is_ascii_hexdigit() {
                end += 1;
            }
        }
        if end == digits_start || (end < self.line_end && is_word(self.s[end])) {
            return Err(self.expected(what));
        }
        let digits = &self.s[digits_start..end];
        let mut n: u64 = 0;
        if radix == 10 && digits.len() <= 19 {
            // Cannot overflow: 19 decimal digits fit in a u64.
            for &d in digits {
                n = n * 10 + u64::from(d - b'0');
            }
        } else {
            for &d in digits {
                let v = u64::from((d as char).to_digit(radix).unwrap_or(0));
                n = match n
                    .checked_mul(u64::from(radix))
                    .and_then(|n| n.checked_add(v))
                {
                    Some(n) => n,
                    None => return Err(self.error_at(start, format!("{what} out of range"))),
                };
            }
        }
        self.pos = end;
        Ok(n)
    }

    fn u32_number(&mut self, what: &str) -> Result<u32> {
        self.skip_ws();
        let start = self.pos;
        let n = self.u64_number(what)?;
        u32::try_from(n).map_err(|_| self.error_at(start, format!("{what} out of range")))
    }

    /// A number read as an index of the model (`OpNum`, `VarNum`, `LiteralId`): any `u32`
    /// but `u32::MAX`, which the index types reserve.
    fn index_number<T: TryFrom<u32>>(&mut self, what: &str) -> Result<T> {
        self.skip_ws();
        let start = self.pos;
        let n = self.u32_number(what)?;
        T::try_from(n).map_err(|_| self.error_at(start, format!("{what} out of range")))
    }

    fn u16_number(&mut self, what: &str) -> Result<u16> {
        self.skip_ws();
        let start = self.pos;
        let n = self.u64_number(what)?;
        u16::try_from(n).map_err(|_| self.error_at(start, format!("{what} out of range")))
    }

    fn u8_number(&mut self, what: &str) -> Result<u8> {
        self.skip_ws();
        let start = self.pos;
        let n = self.u64_number(what)?;
        u8::try_from(n).map_err(|_| self.error_at(start, format!("{what} out of range")))
    }

    fn i64_number(&mut self) -> Result<i64> {
        self.skip_ws();
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos = start;
            return Err(self.expected("integer"));
        }
        let magnitude = self.u64_number("integer")?;
        let value = if negative {
            if magnitude <= 1u64 << 63 {
                Some((magnitude as i64).wrapping_neg())
            } else {
                None
            }
        } else {
            i64::try_from(magnitude).ok()
        };
        value.ok_or_else(|| self.error_at(start, "integer out of range".into()))
    }

    /// `"..."` with escapes; raw bytes (UTF-8) are taken as they are.
    fn string(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.string_into(&mut out)?;
        Ok(out)
    }

    /// [`Parser::string`], appending to `out`.
    fn string_into(&mut self, out: &mut Vec<u8>) -> Result<()> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.expected("string"));
        }
        let start = self.pos;
        self.pos += 1;
        loop {
            // Copy the run up to the next quote or backslash in one go.
            let rest = &self.s[self.pos..self.line_end];
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
                .unwrap_or(rest.len());
            out.extend_from_slice(&rest[..run]);
            self.pos += run;
            let Some(b) = self.peek() else {
                return Err(self.error_at(start, "unterminated string".into()));
            };
            self.pos += 1;
            match b {
                b'"' => return Ok(()),
                b'\\' => match self.peek() {
                    Some(b'\\') => {
                        out.push(b'\\');
                        self.pos += 1;
                    }
                    Some(b'"') => {
                        out.push(b'"');
                        self.pos += 1;
                    }
                    Some(b'n') => {
                        out.push(b'\n');
                        self.pos += 1;
                    }
                    Some(b'r') => {
                        out.push(b'\r');
                        self.pos += 1;
                    }
                    Some(b't') => {
                        out.push(b'\t');
                        self.pos += 1;
                    }
                    Some(b'x') => {
                        let hex = |c: Option<u8>| c.and_then(|c| (c as char).to_digit(16));
                        match (hex(self.peek_at(1)), hex(self.peek_at(2))) {
                            (Some(h), Some(l)) => {
                                out.push((h * 16 + l) as u8);
                                self.pos += 3;
                            }
                            _ => {
                                self.pos -= 1;
                                return Err(self.error("expected two hex digits after `\\x`"));
                            }
                        }
                    }
                    // Any other backslash is a backslash.
                    _ => out.push(b'\\'),
                },
                _ => out.push(b),
            }
        }
    }

    fn php_str(&mut self) -> Result<PhpStr> {
        self.string().map(PhpStr)
    }

    /// `$name` or a string.
    fn name(&mut self) -> Result<PhpStr> {
        self.skip_ws();
        match self.peek() {
            Some(b'$') => {
                self.pos += 1;
                let w = self.word();
                if w.is_empty() {
                    return Err(self.expected("name after `$`"));
                }
                Ok(PhpStr(w.to_vec()))
            }
            Some(b'"') => self.php_str(),
            _ => Err(self.expected("`$name` or string")),
        }
    }

    fn at_name(&mut self) -> bool {
        self.skip_ws();
        matches!(self.peek(), Some(b'$' | b'"'))
    }

    /// `[item, item, ...]` / `(item, ...)`: the opening byte already consumed.
    fn list<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(close) {
                return Ok(out);
            }
            if !self.eat(b',') {
                return Err(self.expected(&format!("`,` or `{}`", close as char)));
            }
        }
    }

    fn check_depth(&self, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            Err(self.too_deep())
        } else {
            Ok(())
        }
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> ParseError {
        self.error(format!("nesting deeper than {MAX_DEPTH} levels"))
    }

    // ---- values -------------------------------------------------------------------------

    // The recursive functions below (literal, array, ast, zend_type) keep their frames
    // small: everything else they need lives in separate non-inlined functions, so that
    // the deepest nesting MAX_DEPTH allows fits in a small stack even in debug builds.

    fn literal(&mut self, depth: usize) -> Result<Literal> {
        self.check_depth(depth)?;
        self.skip_ws();
        if self.rest_starts_with(b"array(") {
            self.pos += 6;
            let mut items = Vec::new();
            let mut next_free = None;
            if !self.eat(b')') {
                loop {
                    if let Some(n) = self.array_next_free()? {
                        next_free = Some(n);
                        break;
                    }
                    let key = self.array_key()?;
                    let value = self.literal(depth + 1)?;
                    items.push((key, value));
                    if self.eat(b')') {
                        break;
                    }
                    self.list_separator(b')')?;
                }
            }
            Ok(Literal::Array(match next_free {
                Some(n) => PhpArray::with_next_free(items, n),
                None => PhpArray::from(items),
            }))
        } else if self.rest_starts_with(b"ast(") {
            Ok(Literal::Ast(Box::new(self.ast(depth + 1)?)))
        } else {
            self.scalar_literal()
        }
    }

    /// The `,` between list items (the closing byte was not there).
    #[inline(never)]
    fn list_separator(&mut self, close: u8) -> Result<()> {
        if self.eat(b',') {
            Ok(())
        } else {
            Err(self.expected(&format!("`,` or `{}`", close as char)))
        }
    }

    /// `next=N)`, the last item of an array with an unusual `nNextFreeElement`.
    #[inline(never)]
    fn array_next_free(&mut self) -> Result<Option<i64>> {
        self.skip_ws();
        if !self.rest_starts_with(b"next=") {
            return Ok(None);
        }
        self.pos += 5;
        let n = self.i64_number()?;
        self.skip_ws();
        if !self.eat(b')') {
            return Err(self.expected("`)` after the array's next=N"));
        }
        Ok(Some(n))
    }

    /// `KEY =>` of an array element.
    #[inline(never)]
    fn array_key(&mut self) -> Result<ArrayKey> {
        self.skip_ws();
        let key = if self.peek() == Some(b'"') {
            ArrayKey::Str(self.php_str()?)
        } else if matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            ArrayKey::Long(self.i64_number()?)
        } else {
            return Err(self.expected("array key"));
        };
        self.skip_ws();
        if !self.rest_starts_with(b"=>") {
            return Err(self.expected("`=>`"));
        }
        self.pos += 2;
        Ok(key)
    }

    #[inline(never)]
    fn scalar_literal(&mut self) -> Result<Literal> {
        let start = self.pos;
        let word = self.word();
        let lit = match word {
            b"null" => Literal::Null,
            b"bool" => {
                self.expect(b'(')?;
                let v = if self.eat_word(b"true") {
                    Literal::True
                } else if self.eat_word(b"false") {
                    Literal::False
                } else {
                    return Err(self.expected("`true` or `false`"));
                };
                self.expect(b')')?;
                v
            }
            b"int" => {
                self.expect(b'(')?;
                let v = self.i64_number()?;
                self.expect(b')')?;
                Literal::Long(v)
            }
            b"float" => {
                self.expect(b'(')?;
                let v = self.double()?;
                self.expect(b')')?;
                Literal::Double(v)
            }
            b"string" => {
                self.expect(b'(')?;
                let v = self.php_str()?;
                self.expect(b')')?;
                Literal::String(v)
            }
            _ => {
                self.pos = start;
                return Err(self.expected("literal"));
            }
        };
        Ok(lit)
    }

    /// A double: decimal text (what Rust's `f64` parser reads), optionally `:0x<bits>`.
    fn double(&mut self) -> Result<PhpDouble> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.line_end
            && (self.s[self.pos].is_ascii_alphanumeric()
                || matches!(self.s[self.pos], b'.' | b'+' | b'-'))
        {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        let Ok(value) = text.parse::<f64>() else {
            self.pos = start;
            return Err(self.expected("float"));
        };
        if self.peek() == Some(b':') {
            self.pos += 1;
            let bits_at = self.pos;
            if !self.rest_starts_with(b"0x") {
                return Err(self.expected("`0x` and the bits of the double"));
            }
            let bits = self.u64_number("bits of the double")?;
            let agrees = if value.is_nan() {
                f64::from_bits(bits).is_nan()
            } else {
                value.to_bits() == bits
            };
            if !agrees {
                return Err(self.error_at(
                    bits_at,
                    format!("bits {bits:#018x} are not the double {text}"),
                ));
            }
            return Ok(PhpDouble(bits));
        }
        Ok(PhpDouble::new(value))
    }

    /// `ast(KIND [attr=N] [line=N] = LITERAL)` or `ast(KIND [attr=N] [line=N] [CHILD, ...])`.
    fn ast(&mut self, depth: usize) -> Result<Ast> {
        self.check_depth(depth)?;
        let (kind, attr, lineno) = self.ast_head()?;
        let body = if self.eat(b'=') {
            AstBody::Zval(self.literal(depth + 1)?)
        } else if self.eat(b'[') {
            let mut children = Vec::new();
            if !self.eat(b']') {
                loop {
                    let child = if self.eat_word(b"_") {
                        None
                    } else {
                        Some(self.ast(depth + 1)?)
                    };
                    children.push(child);
                    if self.eat(b']') {
                        break;
                    }
                    self.list_separator(b']')?;
                }
            }
            AstBody::Children(children)
        } else {
            return Err(self.expected("`= literal` or `[children]`"));
        };
        self.expect(b')')?;
        Ok(Ast {
            kind,
            attr,
            lineno,
            body,
        })
    }

    /// `ast(KIND [attr=N] [line=N]`.
    #[inline(never)]
    fn ast_head(&mut self) -> Result<(u16, u16, u32)> {
        if !self.eat_word(b"ast") {
            return Err(self.expected("`ast(`"));
        }
        self.expect(b'(')?;
        self.skip_ws();
        let kind = if self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.u16_number("AST kind")?
        } else {
            let at = self.pos;
            let w = self.word();
            if w.is_empty() {
                return Err(self.expected("AST kind"));
            }
            names::ast_kind_from_name(w).ok_or_else(|| {
                self.error_at(
                    at,
                    format!("unknown AST kind `{}`", String::from_utf8_lossy(w)),
                )
            })?
        };
        let (mut attr, mut lineno) = (None, None);
        while let Some(key) = self.peek_key() {
            let at = self.pos;
            match key {
                b"attr" if attr.is_none() => {
                    self.take_key();
                    attr = Some(self.u16_number("attr")?);
                }
                b"line" if lineno.is_none() => {
                    self.take_key();
                    lineno = Some(self.u32_number("line")?);
                }
                _ => return Err(self.unexpected_key(at, key)),
            }
        }
        Ok((kind, attr.unwrap_or(0), lineno.unwrap_or(0)))
    }

    fn at_type(&mut self) -> bool {
        self.skip_ws();
        self.rest_starts_with(b"type(")
    }

    /// `type(MASK)`, `type(MASK "Name")` or `type(MASK [TYPE, ...])`.
    fn zend_type(&mut self, depth: usize) -> Result<ZendType> {
        self.check_depth(depth)?;
        let type_mask = self.type_head()?;
        let names = match self.peek() {
            Some(b'"') => TypeNames::Name(self.php_str()?),
            Some(b'[') => {
                self.pos += 1;
                let mut list = Vec::new();
                if !self.eat(b']') {
                    loop {
                        list.push(self.zend_type(depth + 1)?);
                        if self.eat(b']') {
                            break;
                        }
                        self.list_separator(b']')?;
                    }
                }
                TypeNames::List(list)
            }
            _ => TypeNames::None,
        };
        self.expect(b')')?;
        Ok(ZendType { type_mask, names })
    }

    /// `type(MASK`, then blanks.
    #[inline(never)]
    fn type_head(&mut self) -> Result<u32> {
        if !self.eat_word(b"type") {
            return Err(self.expected("`type(`"));
        }
        self.expect(b'(')?;
        let type_mask = self.u32_number("type mask")?;
        self.skip_ws();
        Ok(type_mask)
    }

    fn at_attribute(&mut self) -> bool {
        self.skip_ws();
        self.rest_starts_with(b"#[")
    }

    /// `#["Name"(ARGS) lc="..." flags=N line=N offset=N]`.
    fn attribute(&mut self, depth: usize) -> Result<Attribute> {
        self.skip_ws();
        if !self.rest_starts_with(b"#[") {
            return Err(self.expected("`#[`"));
        }
        self.pos += 2;
        let name = self.php_str()?;
        let mut args = Vec::new();
        if self.peek() == Some(b'(') {
            self.pos += 1;
            args = self.list(b')', |p| {
                p.skip_ws();
                let start = p.pos;
                let arg_name = if p.peek() == Some(b'"') {
                    Some(p.php_str()?)
                } else {
                    let w = p.word();
                    if !w.is_empty() && p.peek() == Some(b':') {
                        Some(PhpStr(w.to_vec()))
                    } else {
                        p.pos = start;
                        None
                    }
                };
                if arg_name.is_some() {
                    p.expect(b':')?;
                }
                Ok(AttributeArg {
                    name: arg_name,
                    value: p.literal(depth)?,
                })
            })?;
        }
        let (mut lc, mut flags, mut lineno, mut offset) = (None, None, None, None);
        while let Some(key) = self.peek_key() {
            let at = self.pos;
            match key {
                b"lc" if lc.is_none() => {
                    self.take_key();
                    lc = Some(self.php_str()?);
                }
                b"flags" if flags.is_none() => {
                    self.take_key();
                    flags = Some(self.u32_number("flags")?);
                }
                b"line" if lineno.is_none() => {
                    self.take_key();
                    lineno = Some(self.u32_number("line")?);
                }
                b"offset" if offset.is_none() => {
                    self.take_key();
                    offset = Some(self.u32_number("offset")?);
                }
                _ => return Err(self.unexpected_key(at, key)),
            }
        }
        self.expect(b']')?;
        Ok(Attribute {
            lcname: lc.unwrap_or_else(|| name.to_lowercase()),
            name,
            flags: flags.unwrap_or(0),
            lineno: lineno.unwrap_or(0),
            offset: offset.unwrap_or(0),
            args,
        })
    }

    // ---- op lines -----------------------------------------------------------------------

    fn var_index(&mut self, prefix: usize) -> Result<VarNum> {
        // The caller saw `prefix` letters followed by a digit.
        self.pos += prefix;
        let at = self.pos;
        let w = self.word();
        // u32::MAX is no slot (VarNum cannot hold it).
        dec_u32(w)
            .and_then(|n| VarNum::try_from(n).ok())
            .ok_or_else(|| self.error_at(at, "variable number out of range".into()))
    }

    /// One operand. `jump`: a bare number is a jump target (else a raw unused value).
    fn operand(&mut self, jump: bool, ctx: &OpCtx<'_>, depth: usize) -> Result<Operand> {
        self.skip_ws();
        let digit_at = |p: &Self, k: usize| p.peek_at(k).is_some_and(|b| b.is_ascii_digit());
        match self.peek() {
            Some(b'#') if digit_at(self, 1) => {
                self.pos += 1;
                let at = self.pos;
                let id = self.index_number::<LiteralId>("literal number")?;
                if self.peek() == Some(b':') {
                    self.pos += 1;
                    self.check_annotation(id, ctx, at, depth)?;
                }
                Ok(Operand::Const(id))
            }
            Some(b'@') => {
                self.pos += 1;
                Ok(Operand::JmpAddr(self.index_number::<OpNum>("op number")?))
            }
            Some(b'0'..=b'9') => Ok(if jump {
                Operand::JmpAddr(self.index_number::<OpNum>("op number")?)
            } else {
                Operand::Unused(self.u32_number("number")?)
            }),
            Some(b'T') if digit_at(self, 1) => Ok(Operand::TmpVar(self.var_index(1)?)),
            Some(b'V') if digit_at(self, 1) => Ok(Operand::Var(self.var_index(1)?)),
            Some(b'C') if self.peek_at(1) == Some(b'V') && digit_at(self, 2) => {
                let v = self.var_index(2)?;
                if self.peek() == Some(b'(') {
                    let at = self.pos;
                    self.pos += 1;
                    let name = self.name()?;
                    self.expect(b')')?;
                    match ctx.vars.get(v.index()) {
                        Some(declared) if *declared == name => {}
                        Some(declared) => {
                            return Err(self.error_at(
                                at,
                                format!("CV{} is ${declared} in `vars`, not ${name}", v.as_u32()),
                            ))
                        }
                        None => {
                            return Err(self.error_at(
                                at,
                                format!(
                                    "CV{} is not in `vars` ({} declared)",
                                    v.as_u32(),
                                    ctx.vars.len()
                                ),
                            ))
                        }
                    }
                }
                Ok(Operand::Cv(v))
            }
            Some(b'_') if !self.peek_at(1).is_some_and(is_word) => {
                self.pos += 1;
                Ok(Operand::Unused(0))
            }
            Some(b'n') if self.rest_starts_with(b"num(") => {
                self.pos += 4;
                let n = self.u32_number("number")?;
                self.expect(b')')?;
                Ok(Operand::Unused(n))
            }
            _ => Err(self.expected("operand")),
        }
    }

    /// The `:value` after `#N` must agree with the literal table (`array(...)` and `ast(...)`
    /// stand for any array and any AST).
    fn check_annotation(
        &mut self,
        id: LiteralId,
        ctx: &OpCtx<'_>,
        at: usize,
        depth: usize,
    ) -> Result<()> {
        let Some(declared) = ctx.literals.get(id.index()) else {
            return Err(self.error_at(
                at,
                format!(
                    "literal #{} is not in the literal table ({} entries)",
                    id.as_u32(),
                    ctx.literals.len()
                ),
            ));
        };
        self.skip_ws();
        let value_at = self.pos;
        let matches = if self.rest_starts_with(b"array(...)") {
            self.pos += 10;
            matches!(declared, Literal::Array(_))
        } else if self.rest_starts_with(b"ast(...)") {
            self.pos += 8;
            matches!(declared, Literal::Ast(_))
        } else if let (Literal::String(declared), true) =
            (declared, self.rest_starts_with(b"string("))
        {
            // The common case, compared without allocating.
            self.pos += 7;
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            let parsed = self.string_into(&mut scratch);
            let same = scratch == declared.0;
            self.scratch = scratch;
            parsed?;
            self.expect(b')')?;
            same
        } else {
            self.literal(depth)? == *declared
        };
        if matches {
            Ok(())
        } else {
            let mut shown = String::new();
            write_literal(&mut shown, declared, true);
            Err(self.error_at(
                value_at,
                format!("literal #{} is {shown} in the literal table", id.as_u32()),
            ))
        }
    }

    /// `NNNN [RESULT =] OPCODE [op1 [op2 [ext]]] [key=value...]`, at the op number.
    fn op_line(
        &mut self,
        index: usize,
        prev_line: u32,
        ctx: &OpCtx<'_>,
        depth: usize,
    ) -> Result<Op> {
        let at = self.pos;
        let number = self.word();
        if dec_u32(number).map(|n| n as usize) != Some(index) {
            return Err(self.error_at(
                at,
                format!(
                    "expected op number {index:04}, found {:?}",
                    String::from_utf8_lossy(number)
                ),
            ));
        }
        self.skip_ws();
        let mut result = None;
        let starts_operand = match self.peek() {
            Some(b'#' | b'@') => true,
            Some(b'T' | b'V') => self.peek_at(1).is_some_and(|b| b.is_ascii_digit()),
            Some(b'C') => {
                self.peek_at(1) == Some(b'V') && self.peek_at(2).is_some_and(|b| b.is_ascii_digit())
            }
            _ => false,
        };
        if starts_operand {
            result = Some(self.operand(false, ctx, depth)?);
            self.expect(b'=')?;
        }
        self.skip_ws();
        let name_at = self.pos;
        let name = self.word();
        if name.is_empty() {
            return Err(self.expected("opcode"));
        }
        let opcode = match name.strip_prefix(b"OP_").and_then(dec_u32) {
            Some(n) => u8::try_from(n).ok().map(Opcode),
            None => names::opcode_by_name(name.strip_prefix(b"ZEND_").unwrap_or(name)),
        }
        .ok_or_else(|| {
            self.error_at(
                name_at,
                format!("unknown opcode `{}`", String::from_utf8_lossy(name)),
            )
        })?;
        let slots = Slots::of(opcode);
        let mut op = Op {
            opcode,
            op1: Operand::Unused(0),
            op2: Operand::Unused(0),
            result: result.unwrap_or(Operand::Unused(0)),
            extended_value: 0,
            lineno: prev_line,
            smart_branch: SmartBranch::None,
        };
        let max_slots = if slots.ext_jump { 3 } else { 2 };
        let mut ext = None;
        let mut n = 0;
        while !self.at_eol() && self.peek_key().is_none() {
            match n {
                0 => op.op1 = self.operand(slots.op1_jump, ctx, depth)?,
                1 => op.op2 = self.operand(slots.op2_jump, ctx, depth)?,
                _ if n < max_slots => ext = Some(self.u32_number("jump target")?),
                _ => return Err(self.expected("`key=value` or end of line")),
            }
            n += 1;
        }
        let (mut line, mut smart, mut raw_result) = (None, None, None);
        while let Some(key) = self.peek_key() {
            let at = self.pos;
            match key {
                b"ext" if ext.is_none() => {
                    self.take_key();
                    ext = Some(self.u32_number("extended_value")?);
                }
                b"line" if line.is_none() => {
                    self.take_key();
                    line = Some(self.u32_number("line")?);
                }
                b"smart" if smart.is_none() => {
                    self.take_key();
                    smart = Some(if self.eat_word(b"jmpz") {
                        SmartBranch::Jmpz
                    } else if self.eat_word(b"jmpnz") {
                        SmartBranch::Jmpnz
                    } else {
                        return Err(self.expected("`jmpz` or `jmpnz`"));
                    });
                }
                b"result" if raw_result.is_none() && result.is_none() => {
                    self.take_key();
                    raw_result = Some(self.u32_number("raw result")?);
                }
                _ => return Err(self.unexpected_key(at, key)),
            }
        }
        self.expect_eol()?;
        op.extended_value = ext.unwrap_or(0);
        op.lineno = line.unwrap_or(prev_line);
        op.smart_branch = smart.unwrap_or_default();
        if let Some(raw) = raw_result {
            op.result = Operand::Unused(raw);
        }
        Ok(op)
    }

    // ---- blocks -------------------------------------------------------------------------

    /// `{` at the end of a block's opening line.
    fn open_block(&mut self) -> Result<()> {
        self.expect(b'{')?;
        self.expect_eol()
    }

    fn unexpected_key(&self, at: usize, key: &[u8]) -> ParseError {
        self.error_at(
            at,
            format!("unexpected key `{}`", String::from_utf8_lossy(key)),
        )
    }

    /// The next `key=` of a line whose keys may each appear once, with its position;
    /// `None` at the end of the keys.
    fn next_unique_key(&mut self, seen: &mut Vec<&'a [u8]>) -> Result<Option<(&'a [u8], usize)>> {
        let Some(key) = self.peek_key() else {
            return Ok(None);
        };
        let at = self.pos;
        if seen.contains(&key) {
            return Err(self.error_at(at, format!("duplicate `{}`", String::from_utf8_lossy(key))));
        }
        seen.push(key);
        Ok(Some((key, at)))
    }

    fn unexpected_eof(&self, what: &str) -> ParseError {
        self.error(format!("expected {what}, found end of file"))
    }

    fn op_array_body(&mut self, depth: usize) -> Result<OpArray> {
        self.check_depth(depth)?;
        if self.func_nesting >= MAX_FUNC_NESTING {
            return Err(self.error(format!(
                "op_arrays nested deeper than {MAX_FUNC_NESTING} levels"
            )));
        }
        self.func_nesting += 1;
        let mut st = Box::new(OpArrayState {
            oa: self.new_op_array(),
            seen: Vec::new(),
            prev_line: 0,
        });
        loop {
            match self.op_array_line(&mut st, depth)? {
                Line::More => {}
                Line::End => {
                    self.func_nesting -= 1;
                    return Ok(st.oa);
                }
                Line::Nested => {
                    let def = self.op_array_body(depth + 1)?;
                    st.oa.dynamic_func_defs.push(Box::new(def));
                }
            }
        }
    }

    fn new_op_array(&self) -> OpArray {
        OpArray {
            type_: ZEND_USER_FUNCTION,
            fn_flags: 0,
            function_name: None,
            scope: None,
            num_args: 0,
            required_num_args: 0,
            arg_info: Vec::new(),
            return_info: None,
            attributes: Vec::new(),
            T: 0,
            cache_size: 0,
            vars: Vec::new(),
            opcodes: Vec::new(),
            literals: Vec::new(),
            literal_extra: Vec::new(),
            static_variables: None,
            live_range: Vec::new(),
            try_catch_array: Vec::new(),
            filename: self.script_file.clone(),
            line_start: 0,
            line_end: 0,
            doc_comment: None,
            dynamic_func_defs: Vec::new(),
        }
    }

    /// One line of an op_array block; kept out of `op_array_body` so that the frames of
    /// nested dynamic_func_defs stay small.
    #[inline(never)]
    fn op_array_line(&mut self, st: &mut OpArrayState, depth: usize) -> Result<Line> {
        if !self.next_line() {
            return Err(self.unexpected_eof("`}` closing the op_array"));
        }
        let oa = &mut st.oa;
        let at = self.pos;
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                self.expect_eol()?;
                return Ok(Line::End);
            }
            Some(b'0'..=b'9') => {
                let ctx = OpCtx {
                    vars: &oa.vars,
                    literals: &oa.literals,
                };
                let op = self.op_line(oa.opcodes.len(), st.prev_line, &ctx, depth)?;
                st.prev_line = op.lineno;
                oa.opcodes.push(op);
                return Ok(Line::More);
            }
            Some(b'#') if self.peek_at(1) == Some(b'[') => {
                oa.attributes.push(self.attribute(depth)?);
                self.expect_eol()?;
                return Ok(Line::More);
            }
            Some(b'#') => {
                self.pos += 1;
                let n = self.u32_number("literal number")?;
                if n as usize != oa.literals.len() {
                    return Err(self.error_at(
                        at,
                        format!("expected literal #{}, found #{n}", oa.literals.len()),
                    ));
                }
                self.expect(b'=')?;
                oa.literals.push(self.literal(depth)?);
                if self.eat_word(b"extra") {
                    self.expect(b'=')?;
                    let at = self.pos;
                    let extra = self.u32_number("literal extra")?;
                    if extra == 0 {
                        return Err(self.error_at(at, "extra=0: leave it out".to_string()));
                    }
                    oa.literal_extra.push((LiteralId::new(n), extra));
                }
                self.expect_eol()?;
                return Ok(Line::More);
            }
            _ => {}
        }
        let word = self.word();
        let field: &'static str = match word {
            b"name" => "name",
            b"scope" => "scope",
            b"kind" => "kind",
            b"flags" => "flags",
            b"args" => "args",
            b"return" => "return",
            b"T" => "T",
            b"cache_size" => "cache_size",
            b"statics" => "statics",
            b"file" => "file",
            b"lines" => "lines",
            b"doc" => "doc",
            // Repeatable fields.
            b"arg" => "arg",
            b"vars" => "vars",
            b"static" => "static",
            b"live_range" => "live_range",
            b"try_catch" => "try_catch",
            b"dynamic_func_def" => "dynamic_func_def",
            _ => {
                self.pos = at;
                return Err(self.expected("op_array field, literal, op or `}`"));
            }
        };
        let repeatable = matches!(
            field,
            "arg" | "vars" | "static" | "live_range" | "try_catch" | "dynamic_func_def"
        );
        if !repeatable {
            if st.seen.contains(&field) {
                return Err(self.error_at(at, format!("duplicate `{field}`")));
            }
            st.seen.push(field);
        }
        match field {
            "name" => oa.function_name = Some(self.php_str()?),
            "scope" => oa.scope = Some(self.php_str()?),
            "kind" => {
                oa.type_ = if self.eat_word(b"user") {
                    ZEND_USER_FUNCTION
                } else if self.eat_word(b"eval") {
                    ZEND_EVAL_CODE
                } else if self.eat_word(b"internal") {
                    ZEND_INTERNAL_FUNCTION
                } else {
                    self.u8_number("`user`, `eval`, `internal` or a number")?
                }
            }
            "flags" => oa.fn_flags = self.u32_number("flags")?,
            "args" => {
                oa.num_args = self.u32_number("number of arguments")?;
                if !self.eat_word(b"required") {
                    return Err(self.expected("`required`"));
                }
                oa.required_num_args = self.u32_number("number of required arguments")?;
            }
            "arg" => {
                let arg = self.arg_info(depth)?;
                oa.arg_info.push(arg);
            }
            "return" => oa.return_info = Some(self.arg_info(depth)?),
            "T" => oa.T = self.u32_number("number of temporaries")?,
            "cache_size" => oa.cache_size = self.u32_number("cache size")?,
            "vars" => {
                while !self.at_eol() {
                    let v = self.name()?;
                    oa.vars.push(v);
                }
            }
            "statics" => {
                if oa.static_variables.is_some() {
                    return Err(self.error_at(at, "`statics` after `static`".into()));
                }
                oa.static_variables = Some(Vec::new());
            }
            "static" => {
                let name = self.name()?;
                self.expect(b'=')?;
                let value = self.literal(depth)?;
                oa.static_variables
                    .get_or_insert_with(Vec::new)
                    .push((name, value));
            }
            "live_range" => {
                let var = self.index_number::<VarNum>("variable number")?;
                self.skip_ws();
                let kind_at = self.pos;
                let kind = if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.u32_number("live range kind")?
                } else {
                    let w = self.word();
                    names::LIVE_KINDS
                        .iter()
                        .find(|(_, n)| n.as_bytes() == w)
                        .map(|&(k, _)| k)
                        .ok_or_else(|| {
                            self.pos = kind_at;
                            self.expected(
                                "live range kind (tmpvar, loop, silence, rope, new or a number)",
                            )
                        })?
                };
                let start = self.index_number::<OpNum>("start op")?;
                let end = self.index_number::<OpNum>("end op")?;
                oa.live_range.push(LiveRange {
                    var,
                    kind,
                    start,
                    end,
                });
            }
            "try_catch" => {
                let try_op = self.index_number::<OpNum>("try op")?;
                let (mut catch_op, mut finally_op, mut finally_end) = (None, None, None);
                while let Some(key) = self.peek_key() {
                    let key_at = self.pos;
                    let slot = match key {
                        b"catch" => &mut catch_op,
                        b"finally" => &mut finally_op,
                        b"finally_end" => &mut finally_end,
                        _ => return Err(self.unexpected_key(key_at, key)),
                    };
                    if slot.is_some() {
                        return Err(self.error_at(
                            key_at,
                            format!("duplicate `{}`", String::from_utf8_lossy(key)),
                        ));
                    }
                    self.take_key();
                    *slot = Some(self.index_number::<OpNum>("op number")?);
                }
                oa.try_catch_array.push(TryCatchElement {
                    try_op,
                    catch_op,
                    finally_op,
                    finally_end,
                });
            }
            "file" => oa.filename = self.php_str()?,
            "lines" => {
                if !oa.opcodes.is_empty() {
                    return Err(self.error_at(at, "`lines` must come before the ops".into()));
                }
                oa.line_start = self.u32_number("start line")?;
                oa.line_end = self.u32_number("end line")?;
                st.prev_line = oa.line_start;
            }
            "doc" => oa.doc_comment = Some(self.php_str()?),
            "dynamic_func_def" => {
                let n = self.u32_number("index")?;
                if n as usize != oa.dynamic_func_defs.len() {
                    return Err(self.error_at(
                        at,
                        format!(
                            "expected dynamic_func_def {}, found {n}",
                            oa.dynamic_func_defs.len()
                        ),
                    ));
                }
                self.open_block()?;
                return Ok(Line::Nested);
            }
            _ => unreachable!("every field is handled"),
        }
        self.expect_eol()?;
        Ok(Line::More)
    }

    /// `[NAME] [TYPE] [default="..."]`.
    fn arg_info(&mut self, depth: usize) -> Result<ArgInfo> {
        let name = if self.at_name() {
            Some(self.name()?)
        } else {
            None
        };
        let type_ = if self.at_type() {
            self.zend_type(depth)?
        } else {
            ZendType::default()
        };
        let mut default_value = None;
        if self.peek_key() == Some(b"default") {
            self.take_key();
            default_value = Some(self.php_str()?);
        }
        Ok(ArgInfo {
            name,
            type_,
            default_value,
        })
    }

    fn class_body(&mut self, depth: usize) -> Result<ClassEntry> {
        let mut ce = ClassEntry {
            name: PhpStr::default(),
            parent_name: None,
            ce_flags: 0,
            refcount: 1,
            interface_names: Vec::new(),
            trait_names: Vec::new(),
            trait_aliases: Vec::new(),
            trait_precedences: Vec::new(),
            constants: Vec::new(),
            properties: Vec::new(),
            methods: Vec::new(),
            method_stubs: Vec::new(),
            attributes: Vec::new(),
            filename: self.script_file.clone(),
            line_start: 0,
            line_end: 0,
            doc_comment: None,
            enum_backing_type: 0,
        };
        // Members whose declaring class was not given: it is this class.
        let mut const_ce: Vec<Option<PhpStr>> = Vec::new();
        let mut prop_ce: Vec<Option<PhpStr>> = Vec::new();
        let mut seen: Vec<&'static str> = Vec::new();
        loop {
            if !self.next_line() {
                return Err(self.unexpected_eof("`}` closing the class"));
            }
            let at = self.pos;
            if self.peek() == Some(b'}') {
                self.pos += 1;
                self.expect_eol()?;
                for (c, given) in ce.constants.iter_mut().zip(const_ce) {
                    c.ce = given.unwrap_or_else(|| ce.name.clone());
                }
                for (p, given) in ce.properties.iter_mut().zip(prop_ce) {
                    p.ce = given.unwrap_or_else(|| ce.name.clone());
                }
                return Ok(ce);
            }
            if self.at_attribute() {
                ce.attributes.push(self.attribute(depth)?);
                self.expect_eol()?;
                continue;
            }
            let word = self.word();
            let field: &'static str = match word {
                b"name" => "name",
                b"parent" => "parent",
                b"flags" => "flags",
                b"refcount" => "refcount",
                b"file" => "file",
                b"lines" => "lines",
                b"doc" => "doc",
                b"enum_backing_type" => "enum_backing_type",
                b"interface" => "interface",
                b"trait" => "trait",
                b"trait_alias" => "trait_alias",
                b"trait_precedence" => "trait_precedence",
                b"const" => "const",
                b"property" => "property",
                b"method" => "method",
                b"method_stub" => "method_stub",
                _ => {
                    self.pos = at;
                    return Err(self.expected("class field or `}`"));
                }
            };
            let repeatable = matches!(
                field,
                "interface"
                    | "trait"
                    | "trait_alias"
                    | "trait_precedence"
                    | "const"
                    | "property"
                    | "method"
                    | "method_stub"
            );
            if !repeatable {
                if seen.contains(&field) {
                    return Err(self.error_at(at, format!("duplicate `{field}`")));
                }
                seen.push(field);
            }
            match field {
                "name" => ce.name = self.php_str()?,
                "parent" => ce.parent_name = Some(self.php_str()?),
                "flags" => ce.ce_flags = self.u32_number("flags")?,
                "refcount" => ce.refcount = self.u32_number("refcount")?,
                "file" => ce.filename = self.php_str()?,
                "lines" => {
                    ce.line_start = self.u32_number("start line")?;
                    ce.line_end = self.u32_number("end line")?;
                }
                "doc" => ce.doc_comment = Some(self.php_str()?),
                "enum_backing_type" => ce.enum_backing_type = self.u8_number("type code")?,
                "interface" | "trait" => {
                    let name = self.php_str()?;
                    let mut lc_name = None;
                    if self.peek_key() == Some(b"lc") {
                        self.take_key();
                        lc_name = Some(self.php_str()?);
                    }
                    let cn = ClassName {
                        lc_name: lc_name.unwrap_or_else(|| name.to_lowercase()),
                        name,
                    };
                    if field == "interface" {
                        ce.interface_names.push(cn);
                    } else {
                        ce.trait_names.push(cn);
                    }
                }
                "trait_alias" => {
                    let method = self.method_ref()?;
                    let (mut alias, mut modifiers) = (None, None);
                    while let Some(key) = self.peek_key() {
                        let key_at = self.pos;
                        match key {
                            b"as" if alias.is_none() => {
                                self.take_key();
                                alias = Some(self.php_str()?);
                            }
                            b"modifiers" if modifiers.is_none() => {
                                self.take_key();
                                modifiers = Some(self.u32_number("modifiers")?);
                            }
                            _ => return Err(self.unexpected_key(key_at, key)),
                        }
                    }
                    ce.trait_aliases.push(TraitAlias {
                        method,
                        alias,
                        modifiers: modifiers.unwrap_or(0),
                    });
                }
                "trait_precedence" => {
                    let method = self.method_ref()?;
                    let mut exclude_class_names = Vec::new();
                    if self.peek_key() == Some(b"insteadof") {
                        self.take_key();
                        self.expect(b'[')?;
                        exclude_class_names = self.list(b']', |p| p.php_str())?;
                    }
                    ce.trait_precedences.push(TraitPrecedence {
                        method,
                        exclude_class_names,
                    });
                }
                "const" => {
                    let name = self.php_str()?;
                    self.expect(b'=')?;
                    let value = self.literal(depth)?;
                    let mut c = ClassConstant {
                        name,
                        value,
                        flags: 0,
                        doc_comment: None,
                        attributes: Vec::new(),
                        ce: PhpStr::default(),
                    };
                    let mut given_ce = None;
                    let mut seen_keys: Vec<&'a [u8]> = Vec::new();
                    loop {
                        if self.at_attribute() {
                            c.attributes.push(self.attribute(depth)?);
                            continue;
                        }
                        let Some((key, key_at)) = self.next_unique_key(&mut seen_keys)? else {
                            break;
                        };
                        match key {
                            b"flags" => {
                                self.take_key();
                                c.flags = self.u32_number("flags")?;
                            }
                            b"ce" => {
                                self.take_key();
                                given_ce = Some(self.php_str()?);
                            }
                            b"doc" => {
                                self.take_key();
                                c.doc_comment = Some(self.php_str()?);
                            }
                            _ => return Err(self.unexpected_key(key_at, key)),
                        }
                    }
                    ce.constants.push(c);
                    const_ce.push(given_ce);
                }
                "property" => {
                    let name = self.name()?;
                    let mut p = PropertyInfo {
                        name,
                        flags: 0,
                        offset: 0,
                        type_: ZendType::default(),
                        default: None,
                        doc_comment: None,
                        attributes: Vec::new(),
                        ce: PhpStr::default(),
                    };
                    let mut given_ce = None;
                    let mut seen_keys: Vec<&'a [u8]> = Vec::new();
                    let mut seen_type = false;
                    loop {
                        if self.at_attribute() {
                            p.attributes.push(self.attribute(depth)?);
                            continue;
                        }
                        if self.at_type() {
                            if seen_type {
                                return Err(self.error("duplicate type"));
                            }
                            seen_type = true;
                            p.type_ = self.zend_type(depth)?;
                            continue;
                        }
                        let Some((key, key_at)) = self.next_unique_key(&mut seen_keys)? else {
                            break;
                        };
                        match key {
                            b"flags" => {
                                self.take_key();
                                p.flags = self.u32_number("flags")?;
                            }
                            b"offset" => {
                                self.take_key();
                                p.offset = self.u32_number("offset")?;
                            }
                            b"default" => {
                                self.take_key();
                                p.default = Some(self.literal(depth)?);
                            }
                            b"ce" => {
                                self.take_key();
                                given_ce = Some(self.php_str()?);
                            }
                            b"doc" => {
                                self.take_key();
                                p.doc_comment = Some(self.php_str()?);
                            }
                            _ => return Err(self.unexpected_key(key_at, key)),
                        }
                    }
                    ce.properties.push(p);
                    prop_ce.push(given_ce);
                }
                "method" => {
                    let key = self.php_str()?;
                    self.open_block()?;
                    let method = self.op_array_body(depth + 1)?;
                    ce.methods.push((key, Box::new(method)));
                    continue;
                }
                "method_stub" => {
                    let key = self.php_str()?;
                    if self.peek_key() != Some(b"scope") {
                        return Err(self.expected("`scope=`"));
                    }
                    self.take_key();
                    let scope = self.php_str()?;
                    if self.peek_key() != Some(b"flags") {
                        return Err(self.expected("`flags=`"));
                    }
                    self.take_key();
                    let fn_flags = self.u32_number("flags")?;
                    let position = u32::try_from(ce.methods.len() + ce.method_stubs.len())
                        .map_err(|_| self.error("too many methods"))?;
                    ce.method_stubs.push(MethodStub {
                        position,
                        key,
                        scope,
                        fn_flags,
                    });
                }
                _ => unreachable!("every field is handled"),
            }
            self.expect_eol()?;
        }
    }

    /// `"method" [class="Trait"]`.
    fn method_ref(&mut self) -> Result<TraitMethodRef> {
        let method_name = self.php_str()?;
        let mut class_name = None;
        if self.peek_key() == Some(b"class") {
            self.take_key();
            class_name = Some(self.php_str()?);
        }
        Ok(TraitMethodRef {
            method_name,
            class_name,
        })
    }

    fn script(mut self) -> Result<Script> {
        let mut main = None;
        let mut function_table = Vec::new();
        let mut class_table = Vec::new();
        let mut seen_script = false;
        let mut compiler_halt_offset = None;
        let mut warnings = Vec::new();
        let mut early_bindings = Vec::new();
        let mut first = true;
        while self.next_line() {
            let at = self.pos;
            let word = self.word();
            // `script`, `halt_offset`, `warning` and `early_binding` lines come before every
            // block.
            let in_blocks = main.is_some() || !function_table.is_empty() || !class_table.is_empty();
            match word {
                b"zop" if first => {
                    self.skip_ws();
                    let v_at = self.pos;
                    let version = self.u32_number("format version")?;
                    if version != 1 {
                        return Err(self.error_at(
                            v_at,
                            format!("unsupported .zop version {version} (this reader knows 1)"),
                        ));
                    }
                }
                b"script" => {
                    if seen_script || in_blocks {
                        return Err(
                            self.error_at(at, "`script` must come once, before every block".into())
                        );
                    }
                    seen_script = true;
                    self.script_file = self.php_str()?;
                }
                b"halt_offset" => {
                    if compiler_halt_offset.is_some() {
                        return Err(self.error_at(at, "duplicate `halt_offset`".into()));
                    }
                    if in_blocks {
                        return Err(
                            self.error_at(at, "`halt_offset` must come before every block".into())
                        );
                    }
                    compiler_halt_offset = Some(self.u64_number("halt offset")?);
                }
                b"warning" => {
                    if in_blocks {
                        return Err(
                            self.error_at(at, "`warning` must come before every block".into())
                        );
                    }
                    let type_ = self.u32_number("error type")?;
                    let lineno = self.u32_number("line number")?;
                    let filename = self.php_str()?;
                    let message = self.php_str()?;
                    warnings.push(ErrorInfo {
                        type_,
                        lineno,
                        filename,
                        message,
                    });
                }
                b"early_binding" => {
                    if in_blocks {
                        return Err(self
                            .error_at(at, "`early_binding` must come before every block".into()));
                    }
                    let lcname = self.php_str()?;
                    let rtd_key = self.php_str()?;
                    let lc_parent_name = self.php_str()?;
                    early_bindings.push(EarlyBinding {
                        lcname,
                        rtd_key,
                        lc_parent_name,
                    });
                }
                b"main" => {
                    if main.is_some() {
                        return Err(self.error_at(at, "duplicate `main`".into()));
                    }
                    self.open_block()?;
                    main = Some(self.op_array_body(0)?);
                    first = false;
                    continue;
                }
                b"function" => {
                    let key = self.php_str()?;
                    self.open_block()?;
                    function_table.push((key, Box::new(self.op_array_body(0)?)));
                    first = false;
                    continue;
                }
                b"class" => {
                    let key = self.php_str()?;
                    self.open_block()?;
                    class_table.push((key, self.class_body(0)?));
                    first = false;
                    continue;
                }
                _ => {
                    self.pos = at;
                    return Err(self.expected(
                        "`script`, `halt_offset`, `warning`, `early_binding`, `main`, \
                         `function` or `class`",
                    ));
                }
            }
            first = false;
            self.expect_eol()?;
        }
        let Some(main_op_array) = main else {
            return Err(self.error("expected a `main { ... }` block, found end of file"));
        };
        Ok(Script {
            filename: self.script_file,
            main_op_array: Box::new(main_op_array),
            function_table,
            class_table,
            compiler_halt_offset,
            warnings,
            early_bindings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::find_newline;

    #[test]
    fn find_newline_matches_naive_search() {
        let mut seed: u32 = 1;
        for len in 0..64 {
            for _ in 0..50 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        [b'\n', b'a', 0, 0x0b, 0x8a, 0xff, 0x09][(seed >> 16) as usize % 7]
                    })
                    .collect();
                let naive = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), naive, "{bytes:?}");
            }
        }
    }
}
