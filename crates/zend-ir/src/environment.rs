//! What the optimizer knows of the PHP process it optimizes for, beyond the script.
//!
//! OPcache's optimizer reads the running PHP: its persistent constants, function and class
//! tables, `module_registry` and INI_SYSTEM entries. zopt reads generated tables instead
//! (zend-optimizer's `internal_table`, zend-inference's `func_infos_table`, this crate's
//! `internal_classes`), which describe `php -n` with OPcache: the PHP every zopt command
//! runs. Another process differs: php-fpm is another SAPI; Debian builds pcntl into the
//! CLI only; php.ini sets INI_SYSTEM values, `disable_functions` removes functions, and
//! every extension it loads (mbstring, intl, mysqli, PDO, ...) adds functions, constants
//! and modules. Whoever can see such a process (the extension, inside it) describes how it
//! differs from the tables with a [`Process`] and [`install`]s it once; every lookup then
//! answers for that process.
//!
//! Guarantees: without a `Process`, the answers are those of `php -n`. With one, they are
//! the process's: an entry of the tables the process lacks or holds with another value
//! answers as the process does, and what the process adds (an extension's functions,
//! persistent constants, modules, INI_SYSTEM entries) is known as PHP's optimizer knows
//! it. Like the tables it mirrors, this is process-wide: PHP's tables are.
//!
//! A [`Process`] prints as one fact per line ([`Process::describe`]) and reads back from
//! that text ([`Process::parse`]): the extension shows it (`zopt_get_configuration()`),
//! a cache keys its entries by it, and `zopt conformance --system-ini` takes the PHP it
//! compares with from it.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::{InternalProperty, Literal, PhpDouble, PhpStr, TypeNames, ZendType};

static MODULES_ARE_TABLES: AtomicBool = AtomicBool::new(false);

/// Declares whether every module the PHP run loads is known: those of the optimizer's
/// tables (as `php -n -d zend_extension=opcache` loads) and those an installed
/// [`Process`] adds.
pub fn set_modules_are_tables(exact: bool) {
    MODULES_ARE_TABLES.store(exact, Ordering::Relaxed);
}

/// Whether a module neither the tables nor the installed process name is known not to be
/// loaded.
pub fn modules_are_tables() -> bool {
    MODULES_ARE_TABLES.load(Ordering::Relaxed)
}

/// An internal function or method of the process that the tables do not have, as the
/// optimizer sees it: what the call graph and the send passes read (flags, declared
/// parameters and their send modes) and what inference reads (the declared return type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// `ZEND_ACC_*` flags: for a function DEPRECATED, VARIADIC and RETURN_REFERENCE; for a
    /// method also its visibility, STATIC, FINAL and ABSTRACT.
    pub flags: u32,
    /// Declared parameters, the variadic one excluded.
    pub num_args: u32,
    /// Each parameter's send mode: `b'0'` by value, `b'1'` by reference, `b'2'` prefer
    /// reference; the variadic one last.
    pub modes: Box<[u8]>,
    /// The return type as `zend_get_return_info_from_signature_only` converts it (the
    /// tentative one for a method without a real one), `MAY_BE_REF` added for a function
    /// returning by reference; `None` without a declared type.
    pub returns: Option<u32>,
    /// The one class the return type names (not for `static`).
    pub return_class: Option<Box<str>>,
    /// The return type is only tentative (a method's that an override may still change):
    /// PHP's optimizer uses it only for a call that cannot reach an override.
    pub tentative: bool,
    /// What a call without arguments returns, for a function PHP's SCCP calls at compile
    /// time (`@compile-time-eval`, as gd's `imagetypes()`): the process's answer.
    pub value: Option<Literal>,
}

/// An internal class (interface, trait) of the process that the tables do not have.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Class {
    /// Its name as declared.
    pub name: Box<str>,
    /// Its parent's name as declared.
    pub parent: Option<Box<str>>,
    /// Its parents and interfaces (inherited ones included), lowercased, sorted.
    pub ancestors: Vec<Box<str>>,
    /// Its public constants with a scalar value (inherited ones included; no enum case).
    pub constants: FxHashMap<Box<[u8]>, Literal>,
    /// Its methods by lowercased name (inherited ones included).
    pub methods: FxHashMap<Box<[u8]>, Function>,
    /// Its public properties (inherited ones included).
    pub properties: FxHashMap<Box<[u8]>, InternalProperty>,
}

/// How the process being optimized for differs from the optimizer's tables. Built by
/// whoever can see the process: the extension walks PHP's tables and compares them with
/// zend-optimizer's `tables`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Process {
    /// Constants the process folds to another value than the tables, or that only it has
    /// (`Some`), or that it does not fold at all (`None`: not defined, not persistent, or
    /// deprecated there).
    constants: FxHashMap<Box<[u8]>, Option<Literal>>,
    /// Those of the process's own constants flagged `CONST_NO_FILE_CACHE`.
    no_file_cache: FxHashSet<Box<[u8]>>,
    /// Functions (lowercased) of the tables the process lacks (`None`) or that only the
    /// process has (`Some`).
    functions: FxHashMap<Box<[u8]>, Option<Function>>,
    /// Methods (`lcclass::lcmethod`) of the tables the process lacks.
    methods: FxHashSet<Box<[u8]>>,
    /// Modules (lowercased) of the tables the process has not loaded (`None`) or that
    /// only the process has loaded (`Some`, with their version).
    modules: FxHashMap<Box<[u8]>, Option<Box<[u8]>>>,
    /// INI entries that differ from the tables' INI_SYSTEM entries or that only the
    /// process has. Where `enable_dl` is off (PHP then folds `ini_get()` of an entry that
    /// does not exist to false), every entry of the process that is not INI_SYSTEM is
    /// listed too.
    ini: FxHashMap<Box<[u8]>, Ini>,
    /// Classes (lowercased) only the process has.
    classes: FxHashMap<Box<[u8]>, Class>,
}

/// An INI entry of the process, as `ini_get()` folding sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ini<V = Box<[u8]>> {
    /// An INI_SYSTEM entry and its value (`None`: it has none, which `ini_get` gives as
    /// "").
    System(Option<V>),
    /// An entry that is not INI_SYSTEM: its value may change while the script runs.
    Other,
    /// No such entry.
    Missing,
}

impl<V> Ini<V> {
    /// The same entry with its value mapped.
    pub fn map<W>(self, f: impl FnOnce(V) -> W) -> Ini<W> {
        match self {
            Ini::System(v) => Ini::System(v.map(f)),
            Ini::Other => Ini::Other,
            Ini::Missing => Ini::Missing,
        }
    }

    /// The same entry, borrowing its value.
    pub fn as_ref(&self) -> Ini<&V> {
        match self {
            Ini::System(v) => Ini::System(v.as_ref()),
            Ini::Other => Ini::Other,
            Ini::Missing => Ini::Missing,
        }
    }
}

impl Process {
    /// The process folds constant `name` to `value` (`None`: does not fold it).
    pub fn constant(&mut self, name: &[u8], value: Option<Literal>) {
        self.constants.insert(name.into(), value);
    }

    /// Constant `name`, which only the process has, is flagged `CONST_NO_FILE_CACHE`: not
    /// folded when compiling for a file cache.
    pub fn no_file_cache(&mut self, name: &[u8]) {
        self.no_file_cache.insert(name.into());
    }

    /// The process has no function `lcname`.
    pub fn missing_function(&mut self, lcname: &[u8]) {
        self.functions.insert(lcname.into(), None);
    }

    /// The process has function `lcname`, which the tables do not.
    pub fn added_function(&mut self, lcname: &[u8], function: Function) {
        self.functions.insert(lcname.into(), Some(function));
    }

    /// The process has no method `lcclass::lcmethod` (key as zend-optimizer's
    /// `tables::methods` yields it).
    pub fn missing_method(&mut self, key: &[u8]) {
        self.methods.insert(key.into());
    }

    /// The process has not loaded module `lcname`.
    pub fn missing_module(&mut self, lcname: &[u8]) {
        self.modules.insert(lcname.into(), None);
    }

    /// The process has loaded module `lcname`, at `version`, which the tables have not.
    pub fn added_module(&mut self, lcname: &[u8], version: &[u8]) {
        self.modules.insert(lcname.into(), Some(version.into()));
    }

    /// The process has class `lcname`, which the tables do not.
    pub fn added_class(&mut self, lcname: &[u8], class: Class) {
        self.classes.insert(lcname.into(), class);
    }

    /// INI entry `name` is `entry` in the process.
    pub fn ini(&mut self, name: &[u8], entry: Ini<&[u8]>) {
        self.ini.insert(name.into(), entry.map(Into::into));
    }

    /// Every difference, one per line, sorted: what a cache of optimized scripts must be
    /// keyed by (a script optimized for one process is wrong in a process that differs).
    /// [`Process::parse`] reads it back.
    pub fn describe(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        for (name, value) in &self.constants {
            let no_file_cache = self.no_file_cache.contains(name);
            let name = show(name);
            lines.push(match value {
                Some(v) if no_file_cache => {
                    format!("constant {name} = {} no-file-cache", literal_text(v))
                }
                Some(v) => format!("constant {name} = {}", literal_text(v)),
                None => format!("constant {name} not folded"),
            });
        }
        for (name, function) in &self.functions {
            lines.push(match function {
                Some(f) => format!("function {} {}", show(name), function_text(f)),
                None => format!("no function {}", show(name)),
            });
            if let Some(v) = function.as_ref().and_then(|f| f.value.as_ref()) {
                lines.push(format!(
                    "function-value {} = {}",
                    show(name),
                    literal_text(v)
                ));
            }
        }
        lines.extend(
            self.methods
                .iter()
                .map(|m| format!("no method {}", show(m))),
        );
        for (name, version) in &self.modules {
            lines.push(match version {
                Some(v) => format!("module {} {}", show(name), quoted(v)),
                None => format!("no module {}", show(name)),
            });
        }
        for (name, entry) in &self.ini {
            lines.push(match entry {
                Ini::System(Some(v)) => format!("ini {} = {}", show(name), quoted(v)),
                Ini::System(None) => format!("ini {} unset", show(name)),
                Ini::Other => format!("ini {} not INI_SYSTEM", show(name)),
                Ini::Missing => format!("ini {} missing", show(name)),
            });
        }
        for (lc, c) in &self.classes {
            let lc = show(lc);
            let mut line = format!("class {lc} name={}", c.name);
            if let Some(parent) = &c.parent {
                write!(line, " parent={parent}").unwrap();
            }
            write!(line, " ancestors={}", c.ancestors.join(",")).unwrap();
            lines.push(line);
            for (name, v) in &c.constants {
                lines.push(format!(
                    "class-constant {lc}::{} = {}",
                    show(name),
                    literal_text(v)
                ));
            }
            for (name, f) in &c.methods {
                lines.push(format!("method {lc}::{} {}", show(name), function_text(f)));
            }
            for (name, p) in &c.properties {
                let mut line = format!(
                    "property {lc}::{} flags={:#x} type={:#x}",
                    show(name),
                    p.flags,
                    p.type_.type_mask
                );
                if let TypeNames::Name(class) = &p.type_.names {
                    write!(line, " class={}", show(class.as_bytes())).unwrap();
                }
                lines.push(line);
            }
        }
        lines.sort();
        lines.join("\n")
    }

    /// Reads what [`Process::describe`] printed; the error names the line and what is
    /// wrong with it.
    pub fn parse(text: &str) -> Result<Process, String> {
        let mut p = Process::default();
        for (i, line) in text.lines().enumerate() {
            if line.is_empty() {
                continue;
            }
            parse_line(&mut p, line).map_err(|e| format!("line {}: {e}: {line:?}", i + 1))?;
        }
        if let Some((lc, _)) = p.classes.iter().find(|(_, c)| c.name.is_empty()) {
            return Err(format!("members of class {} but no `class` line", show(lc)));
        }
        Ok(p)
    }
}

/// Names (of constants, functions, modules, ini entries) are identifiers in every
/// extension; shown as they are, they must not hold what separates the fields.
fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn quoted(b: &[u8]) -> String {
    format!("\"{}\"", b.escape_ascii())
}

fn literal_text(v: &Literal) -> String {
    match v {
        Literal::Null => "null".into(),
        Literal::False => "false".into(),
        Literal::True => "true".into(),
        Literal::Long(l) => format!("int {l}"),
        Literal::Double(d) => format!("float {:#018x}", d.0),
        Literal::String(s) => format!("string {}", quoted(s.as_bytes())),
        // Persistent constants the optimizer folds are scalars.
        other => format!("unfoldable {other:?}"),
    }
}

fn function_text(f: &Function) -> String {
    let mut t = format!(
        "flags={:#x} args={} modes={}",
        f.flags,
        f.num_args,
        show(&f.modes)
    );
    match f.returns {
        Some(r) => write!(t, " returns={r:#x}").unwrap(),
        None => t.push_str(" returns=none"),
    }
    if let Some(class) = &f.return_class {
        write!(t, " class={class}").unwrap();
    }
    if f.tentative {
        t.push_str(" tentative=1");
    }
    t
}

fn parse_line(p: &mut Process, line: &str) -> Result<(), String> {
    let word = |s: &str| -> Result<(String, String), String> {
        let s = s.trim_start();
        let end = s.find(' ').unwrap_or(s.len());
        if end == 0 {
            return Err("a name is missing".into());
        }
        Ok((s[..end].to_string(), s[end..].trim_start().to_string()))
    };
    if let Some(rest) = line.strip_prefix("constant ") {
        let (name, rest) = word(rest)?;
        if rest == "not folded" {
            p.constant(name.as_bytes(), None);
            return Ok(());
        }
        let rest = rest
            .strip_prefix("= ")
            .ok_or("expected `= VALUE` or `not folded`")?;
        let (value, rest) = parse_literal(rest)?;
        match rest.trim() {
            "" => {}
            "no-file-cache" => p.no_file_cache(name.as_bytes()),
            other => return Err(format!("unexpected {other:?} after the value")),
        }
        p.constant(name.as_bytes(), Some(value));
    } else if let Some(rest) = line.strip_prefix("no function ") {
        p.missing_function(word(rest)?.0.as_bytes());
    } else if let Some(rest) = line.strip_prefix("function ") {
        let (name, rest) = word(rest)?;
        p.added_function(name.as_bytes(), parse_function(&rest)?);
    } else if let Some(rest) = line.strip_prefix("function-value ") {
        let (name, rest) = word(rest)?;
        let rest = rest.strip_prefix("= ").ok_or("expected `= VALUE`")?;
        let (value, rest) = parse_literal(rest)?;
        if !rest.trim().is_empty() {
            return Err("unexpected text after the value".into());
        }
        // Lines are sorted: the function's own line comes first.
        match p.functions.get_mut(name.as_bytes()) {
            Some(Some(f)) => f.value = Some(value),
            _ => return Err(format!("a value for {name}, which is no added function")),
        }
    } else if let Some(rest) = line.strip_prefix("no method ") {
        p.missing_method(word(rest)?.0.as_bytes());
    } else if let Some(rest) = line.strip_prefix("no module ") {
        p.missing_module(word(rest)?.0.as_bytes());
    } else if let Some(rest) = line.strip_prefix("module ") {
        let (name, rest) = word(rest)?;
        let (version, rest) = parse_quoted(&rest)?;
        if !rest.trim().is_empty() {
            return Err("unexpected text after the version".into());
        }
        p.added_module(name.as_bytes(), &version);
    } else if let Some(rest) = line.strip_prefix("class ") {
        let (lc, rest) = word(rest)?;
        let class = p.classes.entry(lc.as_bytes().into()).or_default();
        for field in rest.split(' ').filter(|f| !f.is_empty()) {
            match field.split_once('=').ok_or("expected KEY=VALUE")? {
                ("name", v) => class.name = v.into(),
                ("parent", v) => class.parent = Some(v.into()),
                ("ancestors", "") => {}
                ("ancestors", v) => class.ancestors = v.split(',').map(Into::into).collect(),
                (other, _) => return Err(format!("unknown field {other:?}")),
            }
        }
        if class.name.is_empty() {
            return Err("the class's name is missing".into());
        }
    } else if let Some(rest) = line.strip_prefix("class-constant ") {
        let (key, rest) = word(rest)?;
        let (lc, name) = member(&key)?;
        let rest = rest.strip_prefix("= ").ok_or("expected `= VALUE`")?;
        let (value, rest) = parse_literal(rest)?;
        if !rest.trim().is_empty() {
            return Err("unexpected text after the value".into());
        }
        let class = p.classes.entry(lc.into()).or_default();
        class.constants.insert(name.into(), value);
    } else if let Some(rest) = line.strip_prefix("method ") {
        let (key, rest) = word(rest)?;
        let (lc, name) = member(&key)?;
        let f = parse_function(&rest)?;
        p.classes
            .entry(lc.into())
            .or_default()
            .methods
            .insert(name.into(), f);
    } else if let Some(rest) = line.strip_prefix("property ") {
        let (key, rest) = word(rest)?;
        let (lc, name) = member(&key)?;
        let mut flags = None;
        let mut type_ = ZendType::default();
        for field in rest.split(' ').filter(|f| !f.is_empty()) {
            let (k, v) = field.split_once('=').ok_or("expected KEY=VALUE")?;
            match k {
                "flags" => flags = Some(number(v)?),
                "type" => type_.type_mask = number(v)?,
                "class" => type_.names = TypeNames::Name(PhpStr(v.as_bytes().to_vec())),
                other => return Err(format!("unknown field {other:?}")),
            }
        }
        let flags = flags.ok_or("flags are required")?;
        let property = InternalProperty { flags, type_ };
        p.classes
            .entry(lc.into())
            .or_default()
            .properties
            .insert(name.into(), property);
    } else if let Some(rest) = line.strip_prefix("ini ") {
        let (name, rest) = word(rest)?;
        let value;
        let entry = match rest.as_str() {
            "unset" => Ini::System(None),
            "not INI_SYSTEM" => Ini::Other,
            "missing" => Ini::Missing,
            _ => {
                let quoted = rest.strip_prefix("= ").ok_or("expected `= \"VALUE\"`")?;
                let after;
                (value, after) = parse_quoted(quoted)?;
                if !after.trim().is_empty() {
                    return Err("unexpected text after the value".into());
                }
                Ini::System(Some(value.as_slice()))
            }
        };
        p.ini(name.as_bytes(), entry);
    } else {
        return Err("unknown kind of fact".into());
    }
    Ok(())
}

/// A number in hex (`0x...`) or decimal.
fn number(v: &str) -> Result<u32, String> {
    match v.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => v.parse(),
    }
    .map_err(|_| format!("{v:?} is not a number"))
}

/// `lcclass::member` split in two.
fn member(key: &str) -> Result<(&[u8], &[u8]), String> {
    let (class, member) = key
        .split_once("::")
        .ok_or_else(|| format!("{key:?} is not CLASS::MEMBER"))?;
    Ok((class.as_bytes(), member.as_bytes()))
}

fn parse_function(text: &str) -> Result<Function, String> {
    let mut f = Function {
        flags: 0,
        num_args: 0,
        modes: Box::new([]),
        returns: None,
        return_class: None,
        tentative: false,
        value: None,
    };
    let mut seen = [false; 3];
    for field in text.split(' ').filter(|f| !f.is_empty()) {
        let (key, value) = field.split_once('=').ok_or("expected KEY=VALUE")?;
        match key {
            "flags" => (f.flags, seen[0]) = (number(value)?, true),
            "args" => (f.num_args, seen[1]) = (number(value)?, true),
            "modes" => {
                if !value.bytes().all(|m| matches!(m, b'0'..=b'2')) {
                    return Err(format!("send modes {value:?} are not 0, 1 or 2"));
                }
                (f.modes, seen[2]) = (value.as_bytes().into(), true);
            }
            "returns" if value == "none" => f.returns = None,
            "returns" => f.returns = Some(number(value)?),
            "class" => f.return_class = Some(value.into()),
            "tentative" => {
                f.tentative = match value {
                    "0" => false,
                    "1" => true,
                    _ => return Err(format!("tentative={value:?} is not 0 or 1")),
                }
            }
            other => return Err(format!("unknown field {other:?}")),
        }
    }
    if seen.contains(&false) {
        return Err("flags, args and modes are required".into());
    }
    Ok(f)
}

fn parse_literal(text: &str) -> Result<(Literal, &str), String> {
    let (kind, rest) = text.split_once(' ').unwrap_or((text, ""));
    fn token(rest: &str) -> (String, &str) {
        let end = rest.find(' ').unwrap_or(rest.len());
        (rest[..end].to_string(), &rest[end..])
    }
    Ok(match kind {
        "null" => (Literal::Null, rest),
        "false" => (Literal::False, rest),
        "true" => (Literal::True, rest),
        "int" => {
            let (n, rest) = token(rest);
            let n = n.parse().map_err(|_| format!("{n:?} is not an int"))?;
            (Literal::Long(n), rest)
        }
        "float" => {
            let (n, rest) = token(rest);
            let bits = n
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{n:?} is not a float's bits in hex"))?;
            (Literal::Double(PhpDouble(bits)), rest)
        }
        "string" => {
            let (s, rest) = parse_quoted(rest)?;
            return Ok((Literal::String(PhpStr(s)), rest));
        }
        other => return Err(format!("unknown value kind {other:?}")),
    })
}

/// A string as [`quoted`] prints it (Rust's `escape_ascii`), and what follows it.
fn parse_quoted(text: &str) -> Result<(Vec<u8>, &str), String> {
    let body = text.strip_prefix('"').ok_or("expected a quoted string")?;
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Ok((out, &body[i + 1..])),
            b'\\' => {
                let c = *bytes.get(i + 1).ok_or("unterminated escape")?;
                i += 2;
                out.push(match c {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'0' => 0,
                    b'\\' | b'\'' | b'"' => c,
                    b'x' => {
                        let hex = body.get(i..i + 2).ok_or("short \\x escape")?;
                        i += 2;
                        u8::from_str_radix(hex, 16).map_err(|_| "bad \\x escape")?
                    }
                    _ => return Err(format!("unknown escape \\{}", c as char)),
                });
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Err("unterminated string".into())
}

static PROCESS: OnceLock<Process> = OnceLock::new();

/// Makes `process` what every lookup answers for, for the rest of the process's life.
/// False (and `process` dropped) if one was installed already: PHP's tables do not change
/// once it runs.
pub fn install(process: Process) -> bool {
    PROCESS.set(process).is_ok()
}

/// The installed [`Process`]. One no different from the tables answers every lookup from
/// empty sets, which return before hashing the key.
#[inline]
fn process() -> Option<&'static Process> {
    PROCESS.get()
}

/// The installed process's answer for constant `name`: `Some(answer)` when it differs
/// from the tables or only the process has it.
pub fn constant(name: &[u8]) -> Option<Option<Literal>> {
    process()?.constants.get(name).cloned()
}

/// Whether constant `name`, which only the installed process has, is flagged
/// `CONST_NO_FILE_CACHE`.
pub fn constant_is_no_file_cache(name: &[u8]) -> bool {
    process().is_some_and(|p| p.no_file_cache.contains(name))
}

/// Whether the installed process lacks table function `lcname`.
pub fn lacks_function(lcname: &[u8]) -> bool {
    process().is_some_and(|p| matches!(p.functions.get(lcname), Some(None)))
}

/// Function `lcname` of the installed process, which the tables do not have.
pub fn added_function(lcname: &[u8]) -> Option<&'static Function> {
    process()?.functions.get(lcname)?.as_ref()
}

/// Whether the installed process lacks table method `key` (`lcclass::lcmethod`).
pub fn lacks_method(key: &[u8]) -> bool {
    process().is_some_and(|p| p.methods.contains(key))
}

/// Whether the installed process has not loaded table module `lcname`.
pub fn lacks_module(lcname: &[u8]) -> bool {
    process().is_some_and(|p| matches!(p.modules.get(lcname), Some(None)))
}

/// The version of module `lcname`, which the installed process loads and the tables do
/// not.
pub fn added_module(lcname: &[u8]) -> Option<&'static [u8]> {
    process()?.modules.get(lcname)?.as_deref()
}

/// Class `lcname` of the installed process, which the tables do not have.
#[inline]
pub fn added_class(lcname: &[u8]) -> Option<&'static Class> {
    let classes = &process()?.classes;
    if classes.is_empty() {
        return None;
    }
    classes.get(lcname)
}

/// The installed process's INI entry `name`, when it differs from the tables' INI_SYSTEM
/// entries, only the process has it, or (`enable_dl` off) it is not INI_SYSTEM.
pub fn ini(name: &[u8]) -> Option<Ini<&'static [u8]>> {
    Some(process()?.ini.get(name)?.as_ref().map(|v| &**v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_reads_back_as_the_process_it_describes() {
        let mut p = Process::default();
        p.constant(b"MB_CASE_UPPER", Some(Literal::Long(0)));
        p.constant(
            b"PHP_SAPI",
            Some(Literal::String(PhpStr(b"fpm-fcgi".to_vec()))),
        );
        p.constant(
            b"X_PATH",
            Some(Literal::String(PhpStr(b"a \"b\"\n\\\xff".to_vec()))),
        );
        p.no_file_cache(b"X_PATH");
        p.constant(b"M_HALF", Some(Literal::Double(PhpDouble::new(0.5))));
        p.constant(b"SIGKILL", None);
        p.missing_function(b"pcntl_fork");
        p.added_function(
            b"mb_strlen",
            Function {
                flags: 0,
                num_args: 2,
                modes: b"00".as_slice().into(),
                returns: Some(0x10),
                return_class: None,
                tentative: false,
                value: None,
            },
        );
        p.added_function(
            b"mysqli_query",
            Function {
                flags: 0x4000,
                num_args: 1,
                modes: b"02".as_slice().into(),
                returns: None,
                return_class: Some("mysqli_result".into()),
                tentative: false,
                value: None,
            },
        );
        p.added_function(
            b"imagetypes",
            Function {
                flags: 0,
                num_args: 0,
                modes: Box::new([]),
                returns: Some(0x10),
                return_class: None,
                tentative: false,
                value: Some(Literal::Long(63)),
            },
        );
        p.missing_method(b"closure::bind");
        p.missing_module(b"pcntl");
        p.added_module(b"mbstring", b"8.2.36");
        p.ini(b"a.b", Ini::System(Some(b"x y")));
        p.ini(b"c", Ini::System(None));
        p.ini(b"d", Ini::Other);
        p.ini(b"e", Ini::Missing);
        let mut class = Class {
            name: "DOMText".into(),
            parent: Some("DOMCharacterData".into()),
            ancestors: vec!["domcharacterdata".into(), "domnode".into()],
            ..Class::default()
        };
        class
            .constants
            .insert(b"X".as_slice().into(), Literal::Long(3));
        class.methods.insert(
            b"splittext".as_slice().into(),
            Function {
                flags: 1,
                num_args: 1,
                modes: b"0".as_slice().into(),
                returns: Some(0x104),
                return_class: Some("DOMText".into()),
                tentative: true,
                value: None,
            },
        );
        class.properties.insert(
            b"wholeText".as_slice().into(),
            InternalProperty {
                flags: 0x81,
                type_: ZendType {
                    type_mask: 0x40,
                    names: TypeNames::None,
                },
            },
        );
        class.properties.insert(
            b"parentNode".as_slice().into(),
            InternalProperty {
                flags: 0x81,
                type_: ZendType {
                    type_mask: (1 << 24) | 2,
                    names: TypeNames::Name(PhpStr(b"DOMNode".to_vec())),
                },
            },
        );
        p.added_class(b"domtext", class);
        p.added_class(
            b"traversable2",
            Class {
                name: "Traversable2".into(),
                ..Class::default()
            },
        );
        let text = p.describe();
        assert_eq!(Process::parse(&text), Ok(p.clone()), "{text}");
        assert_eq!(Process::parse(&text).unwrap().describe(), text);
    }

    #[test]
    fn a_wrong_line_is_named() {
        let e = Process::parse("no module x\nconstant A = int x1\n").unwrap_err();
        assert!(e.starts_with("line 2: \"x1\" is not an int"), "{e}");
        let e = Process::parse("function f flags=0 args=1").unwrap_err();
        assert!(e.contains("flags, args and modes are required"), "{e}");
        assert!(Process::parse("something else").is_err());
    }
}
