//! What the optimizer knows of the PHP process it optimizes for, beyond the script.
//!
//! OPcache's optimizer reads the running PHP: its persistent constants, function and class
//! tables, `module_registry`, INI_SYSTEM entries (`ini_get`), and what the functions SCCP
//! calls at compile time return (`php_sapi_name()`, `php_uname()`). zopt reads generated
//! tables instead (`internal_table`), which describe `php -n` (the CLI) with OPcache: the
//! PHP every zopt command runs. Another process may differ: php-fpm is another SAPI with
//! other `PHP_CONFIG_FILE_PATH`; Debian builds pcntl (its functions and `SIG*` constants)
//! into the CLI only; php.ini sets INI_SYSTEM values and `disable_functions` removes
//! functions. A caller inside such a process (the extension) describes how it differs
//! from the tables with a [`Process`] and [`install`]s it once; every lookup then answers
//! for that process.
//!
//! Guarantees: without a `Process`, the answers are those of `php -n`. With one, no value
//! is folded that the process would not give: an entry of the tables that the process
//! lacks, or holds with another value, answers as the process does (or not at all), and
//! nothing the tables lack is ever invented. Like the tables it mirrors, this is
//! process-wide: PHP's tables are.
//!
//! A caller that knows the run loads exactly the tables' modules says so with
//! [`set_modules_are_tables`]; SCCP then folds `phpversion()` of any other extension to
//! `false`, as PHP's does. Without it, nothing is decided about a module outside the
//! tables (a call that depends on it stays a call).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};
use zend_ir::{Literal, PhpStr};

static MODULES_ARE_TABLES: AtomicBool = AtomicBool::new(false);

/// Declares whether the PHP run loads exactly the modules of the optimizer's tables (as
/// `php -n -d zend_extension=opcache` does).
pub fn set_modules_are_tables(exact: bool) {
    MODULES_ARE_TABLES.store(exact, Ordering::Relaxed);
}

/// Whether a module outside the tables is known not to be loaded.
pub fn modules_are_tables() -> bool {
    MODULES_ARE_TABLES.load(Ordering::Relaxed)
}

/// How the process being optimized for differs from the optimizer's tables. Built by
/// whoever can see the process (the extension walks the tables with
/// [`crate::tables`] and asks PHP about each entry).
#[derive(Debug, Default)]
pub struct Process {
    /// Constants of the tables the process folds to another value (`Some`) or does not
    /// fold at all (`None`: not defined, not persistent, or deprecated there).
    constants: FxHashMap<Box<[u8]>, Option<Literal>>,
    /// Functions of the tables (lowercased) the process does not have.
    functions: FxHashSet<Box<[u8]>>,
    /// Methods of the tables (`lcclass::lcmethod`) the process does not have.
    methods: FxHashSet<Box<[u8]>>,
    /// Modules of the tables (lowercased) the process has not loaded.
    modules: FxHashSet<Box<[u8]>>,
    /// INI_SYSTEM entries of the tables with another value in the process (`Some`, the
    /// inner `None` for no value) or that are not INI_SYSTEM entries there (`None`).
    ini_system: FxHashMap<Box<[u8]>, Option<IniValue>>,
}

/// The value of an INI entry (`None`: it has none, which `ini_get` gives as "").
type IniValue = Option<Box<[u8]>>;

impl Process {
    /// The process folds constant `name` to `value` (`None`: does not fold it).
    pub fn constant(&mut self, name: &[u8], value: Option<Literal>) {
        self.constants.insert(name.into(), value);
    }

    /// The process has no function `lcname`.
    pub fn missing_function(&mut self, lcname: &[u8]) {
        self.functions.insert(lcname.into());
    }

    /// The process has no method `lcclass::lcmethod` (key as [`crate::tables::methods`]
    /// yields it).
    pub fn missing_method(&mut self, key: &[u8]) {
        self.methods.insert(key.into());
    }

    /// The process has not loaded module `lcname`.
    pub fn missing_module(&mut self, lcname: &[u8]) {
        self.modules.insert(lcname.into());
    }

    /// INI_SYSTEM entry `name` has `value` in the process (`None`: it is no INI_SYSTEM
    /// entry there, so `ini_get` of it is not folded).
    pub fn ini_system(&mut self, name: &[u8], value: Option<Option<&[u8]>>) {
        self.ini_system
            .insert(name.into(), value.map(|v| v.map(Into::into)));
    }

    /// Every difference, one per line, sorted: what a cache of optimized scripts must be
    /// keyed by (a script optimized for one process is wrong in a process that differs).
    pub fn describe(&self) -> String {
        fn show(b: &[u8]) -> String {
            String::from_utf8_lossy(b).into_owned()
        }
        let mut lines: Vec<String> = Vec::new();
        for (name, value) in &self.constants {
            lines.push(match value {
                Some(v) => format!("constant {} = {v:?}", show(name)),
                None => format!("constant {} not folded", show(name)),
            });
        }
        lines.extend(
            self.functions
                .iter()
                .map(|f| format!("no function {}", show(f))),
        );
        lines.extend(
            self.methods
                .iter()
                .map(|m| format!("no method {}", show(m))),
        );
        lines.extend(
            self.modules
                .iter()
                .map(|m| format!("no module {}", show(m))),
        );
        for (name, value) in &self.ini_system {
            lines.push(match value {
                Some(Some(v)) => format!("ini {} = {}", show(name), show(v)),
                Some(None) => format!("ini {} unset", show(name)),
                None => format!("ini {} not INI_SYSTEM", show(name)),
            });
        }
        lines.sort();
        lines.join("\n")
    }
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
/// from the tables.
pub(crate) fn constant(name: &[u8]) -> Option<Option<Literal>> {
    process()?.constants.get(name).cloned()
}

/// Whether the installed process lacks table function `lcname`.
pub(crate) fn lacks_function(lcname: &[u8]) -> bool {
    process().is_some_and(|p| p.functions.contains(lcname))
}

/// Whether the installed process lacks table method `key` (`lcclass::lcmethod`).
pub(crate) fn lacks_method(key: &[u8]) -> bool {
    process().is_some_and(|p| p.methods.contains(key))
}

/// Whether the installed process has not loaded table module `lcname`.
pub(crate) fn lacks_module(lcname: &[u8]) -> bool {
    process().is_some_and(|p| p.modules.contains(lcname))
}

/// The installed process's answer for INI_SYSTEM entry `name`, when it differs.
pub(crate) fn ini_system(name: &[u8]) -> Option<Option<Option<&'static [u8]>>> {
    process()?
        .ini_system
        .get(name)
        .map(|v| v.as_ref().map(|v| v.as_deref()))
}

/// `uname(2)` as `php_uname()` reports it: sysname, nodename, release, version, machine.
/// The optimizer runs on the machine whose PHP will run the script (the extension runs
/// inside it), so this is what PHP's compile-time call would return.
pub(crate) fn uname() -> Option<&'static [PhpStr; 5]> {
    static UNAME: OnceLock<Option<[PhpStr; 5]>> = OnceLock::new();
    UNAME
        .get_or_init(|| {
            // SAFETY: uname fills the struct it is given; its fields are NUL-terminated.
            unsafe {
                let mut u: libc::utsname = std::mem::zeroed();
                if libc::uname(&mut u) != 0 {
                    return None;
                }
                let field = |f: &[libc::c_char]| {
                    PhpStr(
                        f.iter()
                            .take_while(|&&c| c != 0)
                            .map(|&c| c as u8)
                            .collect(),
                    )
                };
                Some([
                    field(&u.sysname),
                    field(&u.nodename),
                    field(&u.release),
                    field(&u.version),
                    field(&u.machine),
                ])
            }
        })
        .as_ref()
}
