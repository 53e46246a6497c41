//! The `zopt.*` INI settings, registered with `zend_register_ini_entries_ex`.
//!
//! | setting | values | changeable |
//! |---|---|---|
//! | `zopt.mode` | `off` (default), `record`, `roundtrip`, `optimize` | php.ini / `-d` only (`PHP_INI_SYSTEM`) |
//! | `zopt.optimization_level` | pass bitmask of `optimize` mode, as `opcache.optimization_level` (default `0x7FFEBFFF`) | php.ini / `-d` only |
//! | `zopt.verify` | `0` (default) / `1`: after each write-back, capture the script again and warn unless it is exactly what was written | anywhere |
//! | `zopt.record_dir` | directory the recordings go to (in `roundtrip` / `optimize` mode: recordings of what was written back) | anywhere (`PHP_INI_ALL`) |
//! | `zopt.record_format` | `text` (default, `.zop`), `binary` (`.zopb`), `both` | anywhere |
//! | `zopt.cache_dir` | directory of zopt's opcode cache; empty (default): no cache (see [`crate::cache`]) | php.ini / `-d` only |
//! | `zopt.cache_validation` | `mtime` (default: modification time and size) or `content` (size and content hash) | php.ini / `-d` only |
//! | `zopt.cache_max_bytes` | size limit of the cache directory in bytes (or `512M`, `2G`), oldest entries evicted; `0` (default): none | php.ini / `-d` only |
//! | `zopt.cache_stats` | file the cache counters are appended to at shutdown, as a JSON line; empty (default): none | php.ini / `-d` only |
//! | `zopt.memory_consumption` | MB of the shared-memory cache segment mapped at startup and shared by forked workers (php-fpm), `64` or `64M` or `1G`; `0` (default): none | php.ini / `-d` only |
//! | `zopt.interned_strings_buffer` | MB of that segment for interned strings (default `8`; `8M` too) | php.ini / `-d` only |
//! | `zopt.max_accelerated_files` | slots of the segment's script table (default `10000`) | php.ini / `-d` only |
//! | `zopt.validate_timestamps` | `1` (default): check a script's source against its shared-memory entry, at most every `revalidate_freq` seconds; `0`: never (as OPcache's) | anywhere |
//! | `zopt.revalidate_freq` | seconds between two checks of one script's source (default `2`) | anywhere |
//! | `zopt.shm_run_time_form` | `1` (default): keep each script of the shared-memory cache in PHP's run-time form too, so that a hit binds it without rebuilding (see [`crate::image`]); `0`: every hit rebuilds the script from its entry | php.ini / `-d` only |
//! | `zopt.record_warnings` | `0` (default, as `opcache.record_warnings`): a script served from the cache says nothing of what PHP's compiler warned about when it compiled it; `1`: those diagnostics (deprecations, warnings) are emitted again on every hit, as when the script is compiled. Entries always keep them | anywhere |
//!
//! Each setting has an `on_modify` handler that validates the new value and keeps the
//! parsed form in a Rust static; an invalid value is refused with a warning naming the
//! accepted ones, and PHP keeps the previous (at startup: the default) value.

use std::ffi::{c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use crate::php::{self, zend_ini_entry, zend_ini_entry_def, zend_string, FAILURE, SUCCESS};
use crate::FfiCell;

/// What the extension does (`zopt.mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Loaded but inactive.
    Off,
    /// Record every script OPcache compiles as `.zop`.
    Record,
    /// Capture every script and write it back unchanged: PHP must behave as without zopt.
    Roundtrip,
    /// Capture, run zopt's optimizer pipeline, write the result back.
    Optimize,
}

/// How recordings are written (`zopt.record_format`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.zop` text ([`zend_ir::zop::print`]).
    Text,
    /// `.zopb` binary ([`zend_ir::zop::to_binary`]).
    Binary,
    /// Both files, from the same conversion.
    Both,
}

/// `opcache.optimization_level`'s default, which `zopt.optimization_level` shares.
pub const DEFAULT_OPTIMIZATION_LEVEL: u32 = 0x7FFE_BFFF;

static MODE: AtomicU8 = AtomicU8::new(0);
static FORMAT: AtomicU8 = AtomicU8::new(0);
static RECORD_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
static OPTIMIZATION_LEVEL: AtomicU32 = AtomicU32::new(DEFAULT_OPTIMIZATION_LEVEL);
static VERIFY: AtomicBool = AtomicBool::new(false);
static CACHE_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
static CACHE_STATS: Mutex<Option<PathBuf>> = Mutex::new(None);
static CACHE_CONTENT_VALIDATION: AtomicBool = AtomicBool::new(false);
static CACHE_MAX_BYTES: AtomicU64 = AtomicU64::new(0);
static MEMORY_CONSUMPTION: AtomicU64 = AtomicU64::new(0);
static INTERNED_STRINGS_BUFFER: AtomicU64 = AtomicU64::new(8);
static MAX_ACCELERATED_FILES: AtomicU64 = AtomicU64::new(10_000);
static VALIDATE_TIMESTAMPS: AtomicBool = AtomicBool::new(true);
static REVALIDATE_FREQ: AtomicU64 = AtomicU64::new(2);
static RUN_TIME_FORM: AtomicBool = AtomicBool::new(true);
static RECORD_WARNINGS: AtomicBool = AtomicBool::new(false);

/// `zopt.record_warnings`.
#[inline(always)]
pub fn record_warnings() -> bool {
    RECORD_WARNINGS.load(Ordering::Relaxed)
}

/// `zopt.shm_run_time_form`.
pub fn shm_run_time_form() -> bool {
    RUN_TIME_FORM.load(Ordering::Relaxed)
}

/// `zopt.memory_consumption` in bytes (0: no shared-memory cache).
pub fn memory_consumption() -> usize {
    (MEMORY_CONSUMPTION.load(Ordering::Relaxed) as usize).saturating_mul(1 << 20)
}

/// `zopt.interned_strings_buffer` in bytes.
pub fn interned_strings_buffer() -> usize {
    (INTERNED_STRINGS_BUFFER.load(Ordering::Relaxed) as usize).saturating_mul(1 << 20)
}

/// `zopt.max_accelerated_files`.
pub fn max_accelerated_files() -> usize {
    MAX_ACCELERATED_FILES.load(Ordering::Relaxed) as usize
}

/// `zopt.validate_timestamps`.
pub fn validate_timestamps() -> bool {
    VALIDATE_TIMESTAMPS.load(Ordering::Relaxed)
}

/// `zopt.revalidate_freq` in seconds.
pub fn revalidate_freq() -> i64 {
    REVALIDATE_FREQ.load(Ordering::Relaxed) as i64
}

fn parse_count(name: &str, value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("{name}: {value:?} is not a non-negative number"))
}

fn path_setting(setting: &Mutex<Option<PathBuf>>) -> Option<PathBuf> {
    setting
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

fn set_path(setting: &Mutex<Option<PathBuf>>, value: &str) {
    *setting
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) =
        (!value.is_empty()).then(|| PathBuf::from(value));
}

/// `zopt.cache_dir`, or `None` when empty.
pub fn cache_dir() -> Option<PathBuf> {
    path_setting(&CACHE_DIR)
}

/// `zopt.cache_stats`, or `None` when empty.
pub fn cache_stats() -> Option<PathBuf> {
    path_setting(&CACHE_STATS)
}

/// `zopt.cache_validation`.
pub fn cache_validation() -> zend_cache::ValidationMode {
    if CACHE_CONTENT_VALIDATION.load(Ordering::Relaxed) {
        zend_cache::ValidationMode::ContentHash
    } else {
        zend_cache::ValidationMode::MtimeSize
    }
}

/// `zopt.cache_max_bytes`, `None` for no limit.
pub fn cache_max_bytes() -> Option<u64> {
    Some(CACHE_MAX_BYTES.load(Ordering::Relaxed)).filter(|&n| n > 0)
}

fn parse_validation(value: &str) -> Result<bool, String> {
    match value.trim() {
        "mtime" => Ok(false),
        "content" => Ok(true),
        other => Err(format!(
            "zopt.cache_validation: unknown value {other:?} (accepted: mtime, content)"
        )),
    }
}

/// A size as php.ini writes one: digits, optionally followed by `K`, `M` or `G` (either
/// case, powers of 1024, as `zend_ini_parse_quantity`), in bytes; a bare number is in
/// `unit` bytes.
fn parse_quantity(value: &str, unit: u64) -> Option<u64> {
    let value = value.trim();
    let (digits, factor) = match value.as_bytes().last()? {
        b'k' | b'K' => (&value[..value.len() - 1], 1 << 10),
        b'm' | b'M' => (&value[..value.len() - 1], 1 << 20),
        b'g' | b'G' => (&value[..value.len() - 1], 1 << 30),
        _ => (value, unit),
    };
    digits.trim_end().parse::<u64>().ok()?.checked_mul(factor)
}

fn parse_bytes(value: &str) -> Result<u64, String> {
    parse_quantity(value, 1).ok_or_else(|| {
        format!("zopt.cache_max_bytes: {value:?} is not a number of bytes (or of K, M, G)")
    })
}

/// A size in MB (`64`), or with a suffix (`64M`, `1G`) as OPcache's
/// `opcache.memory_consumption=64M` is often written: a whole number of MB.
fn parse_megabytes(name: &str, value: &str) -> Result<u64, String> {
    match parse_quantity(value, 1 << 20) {
        Some(bytes) if bytes % (1 << 20) == 0 => Ok(bytes >> 20),
        _ => Err(format!(
            "{name}: {value:?} is not a number of MB (64, 64M or 1G)"
        )),
    }
}

pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Record,
        2 => Mode::Roundtrip,
        3 => Mode::Optimize,
        _ => Mode::Off,
    }
}

/// `zopt.optimization_level`.
pub fn optimization_level() -> u32 {
    OPTIMIZATION_LEVEL.load(Ordering::Relaxed)
}

/// `zopt.verify`.
pub fn verify() -> bool {
    VERIFY.load(Ordering::Relaxed)
}

pub fn format() -> Format {
    match FORMAT.load(Ordering::Relaxed) {
        1 => Format::Binary,
        2 => Format::Both,
        _ => Format::Text,
    }
}

/// `zopt.record_dir`, or `None` when empty.
pub fn record_dir() -> Option<PathBuf> {
    RECORD_DIR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

fn parse_mode(value: &str) -> Result<Mode, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "off" | "" => Ok(Mode::Off),
        "record" => Ok(Mode::Record),
        "roundtrip" => Ok(Mode::Roundtrip),
        "optimize" => Ok(Mode::Optimize),
        _ => Err(format!(
            "invalid zopt.mode value {value:?}; expected one of: off, record, roundtrip, optimize"
        )),
    }
}

/// A number as PHP's INI parser reads `opcache.optimization_level` (`0x` hex, `0` octal, or
/// decimal).
fn parse_level(value: &str) -> Result<u32, String> {
    let v = value.trim();
    let parsed = if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u32::from_str_radix(hex, 16).ok()
    } else if v.len() > 1 && v.starts_with('0') {
        u32::from_str_radix(&v[1..], 8).ok()
    } else {
        v.parse::<u32>().ok()
    };
    parsed.ok_or_else(|| {
        format!(
            "invalid zopt.optimization_level value {value:?}; expected a number such as 0x7FFEBFFF"
        )
    })
}

fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "off" | "false" | "no" => Ok(false),
        "1" | "on" | "true" | "yes" => Ok(true),
        _ => Err(format!(
            "invalid value {value:?} for an on/off setting; expected 0 or 1"
        )),
    }
}

fn parse_format(value: &str) -> Result<Format, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "text" | "" => Ok(Format::Text),
        "binary" => Ok(Format::Binary),
        "both" => Ok(Format::Both),
        _ => Err(format!(
            "invalid zopt.record_format value {value:?}; expected one of: text, binary, both"
        )),
    }
}

/// Applies a new value of one setting; `Err` is the message of the warning to emit.
fn apply(setting: Setting, value: &str) -> Result<(), String> {
    match setting {
        Setting::Mode => MODE.store(parse_mode(value)? as u8, Ordering::Relaxed),
        Setting::Format => FORMAT.store(parse_format(value)? as u8, Ordering::Relaxed),
        Setting::OptimizationLevel => {
            OPTIMIZATION_LEVEL.store(parse_level(value)?, Ordering::Relaxed)
        }
        Setting::Verify => VERIFY.store(parse_bool(value)?, Ordering::Relaxed),
        Setting::RecordDir => set_path(&RECORD_DIR, value),
        Setting::CacheDir => set_path(&CACHE_DIR, value),
        Setting::CacheStats => set_path(&CACHE_STATS, value),
        Setting::CacheValidation => {
            CACHE_CONTENT_VALIDATION.store(parse_validation(value)?, Ordering::Relaxed)
        }
        Setting::CacheMaxBytes => CACHE_MAX_BYTES.store(parse_bytes(value)?, Ordering::Relaxed),
        Setting::MemoryConsumption => MEMORY_CONSUMPTION.store(
            parse_megabytes("zopt.memory_consumption", value)?,
            Ordering::Relaxed,
        ),
        Setting::InternedStringsBuffer => INTERNED_STRINGS_BUFFER.store(
            parse_megabytes("zopt.interned_strings_buffer", value)?,
            Ordering::Relaxed,
        ),
        Setting::MaxAcceleratedFiles => MAX_ACCELERATED_FILES.store(
            parse_count("zopt.max_accelerated_files", value)?,
            Ordering::Relaxed,
        ),
        Setting::ValidateTimestamps => {
            VALIDATE_TIMESTAMPS.store(parse_bool(value)?, Ordering::Relaxed)
        }
        Setting::RevalidateFreq => REVALIDATE_FREQ.store(
            parse_count("zopt.revalidate_freq", value)?,
            Ordering::Relaxed,
        ),
        Setting::RunTimeForm => RUN_TIME_FORM.store(parse_bool(value)?, Ordering::Relaxed),
        Setting::RecordWarnings => RECORD_WARNINGS.store(parse_bool(value)?, Ordering::Relaxed),
    }
    Ok(())
}

#[derive(Copy, Clone)]
#[repr(usize)]
enum Setting {
    Mode = 1,
    RecordDir = 2,
    Format = 3,
    OptimizationLevel = 4,
    Verify = 5,
    CacheDir = 6,
    CacheStats = 7,
    CacheValidation = 8,
    CacheMaxBytes = 9,
    MemoryConsumption = 10,
    InternedStringsBuffer = 11,
    MaxAcceleratedFiles = 12,
    ValidateTimestamps = 13,
    RevalidateFreq = 14,
    RunTimeForm = 15,
    RecordWarnings = 16,
}

/// `ZEND_INI_MH`: PHP calls it with every new value; `mh_arg1` says which setting.
unsafe extern "C" fn on_modify(
    _entry: *mut zend_ini_entry,
    new_value: *mut zend_string,
    mh_arg1: *mut c_void,
    _mh_arg2: *mut c_void,
    _mh_arg3: *mut c_void,
    _stage: c_int,
) -> c_int {
    let outcome = std::panic::catch_unwind(|| {
        let setting = match mh_arg1 as usize {
            1 => Setting::Mode,
            2 => Setting::RecordDir,
            3 => Setting::Format,
            4 => Setting::OptimizationLevel,
            6 => Setting::CacheDir,
            7 => Setting::CacheStats,
            8 => Setting::CacheValidation,
            9 => Setting::CacheMaxBytes,
            10 => Setting::MemoryConsumption,
            11 => Setting::InternedStringsBuffer,
            12 => Setting::MaxAcceleratedFiles,
            13 => Setting::ValidateTimestamps,
            14 => Setting::RevalidateFreq,
            15 => Setting::RunTimeForm,
            16 => Setting::RecordWarnings,
            _ => Setting::Verify,
        };
        // SAFETY: PHP passes the live new value (or NULL) for the duration of the call.
        let reader = unsafe { php::Reader::new() };
        let value = reader.str(new_value).unwrap_or_default();
        apply(setting, &String::from_utf8_lossy(value))
    });
    match outcome {
        Ok(Ok(())) => SUCCESS as c_int,
        Ok(Err(message)) => {
            crate::warning(&message);
            FAILURE as c_int
        }
        Err(_) => FAILURE as c_int,
    }
}

const fn entry(
    name: &'static [u8],
    default: &'static [u8],
    setting: Setting,
    modifiable: u32,
) -> zend_ini_entry_def {
    zend_ini_entry_def {
        name: name.as_ptr() as *const c_char,
        on_modify: Some(on_modify),
        mh_arg1: setting as usize as *mut c_void,
        mh_arg2: std::ptr::null_mut(),
        mh_arg3: std::ptr::null_mut(),
        value: default.as_ptr() as *const c_char,
        displayer: None,
        // Lengths without the terminating NUL.
        value_length: (default.len() - 1) as u32,
        name_length: (name.len() - 1) as u16,
        modifiable: modifiable as u8,
    }
}

const fn terminator() -> zend_ini_entry_def {
    zend_ini_entry_def {
        name: std::ptr::null(),
        on_modify: None,
        mh_arg1: std::ptr::null_mut(),
        mh_arg2: std::ptr::null_mut(),
        mh_arg3: std::ptr::null_mut(),
        value: std::ptr::null(),
        displayer: None,
        value_length: 0,
        name_length: 0,
        modifiable: 0,
    }
}

/// The entries, NULL-terminated as `zend_register_ini_entries_ex` expects.
pub static INI_ENTRIES: FfiCell<[zend_ini_entry_def; 17]> = FfiCell::new([
    entry(
        b"zopt.mode\0",
        b"off\0",
        Setting::Mode,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.record_dir\0",
        b"\0",
        Setting::RecordDir,
        php::ZEND_INI_ALL,
    ),
    entry(
        b"zopt.record_format\0",
        b"text\0",
        Setting::Format,
        php::ZEND_INI_ALL,
    ),
    entry(
        b"zopt.optimization_level\0",
        b"0x7FFEBFFF\0",
        Setting::OptimizationLevel,
        php::ZEND_INI_SYSTEM,
    ),
    entry(b"zopt.verify\0", b"0\0", Setting::Verify, php::ZEND_INI_ALL),
    entry(
        b"zopt.cache_dir\0",
        b"\0",
        Setting::CacheDir,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.cache_stats\0",
        b"\0",
        Setting::CacheStats,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.cache_validation\0",
        b"mtime\0",
        Setting::CacheValidation,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.cache_max_bytes\0",
        b"0\0",
        Setting::CacheMaxBytes,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.memory_consumption\0",
        b"0\0",
        Setting::MemoryConsumption,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.interned_strings_buffer\0",
        b"8\0",
        Setting::InternedStringsBuffer,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.max_accelerated_files\0",
        b"10000\0",
        Setting::MaxAcceleratedFiles,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.validate_timestamps\0",
        b"1\0",
        Setting::ValidateTimestamps,
        php::ZEND_INI_ALL,
    ),
    entry(
        b"zopt.revalidate_freq\0",
        b"2\0",
        Setting::RevalidateFreq,
        php::ZEND_INI_ALL,
    ),
    entry(
        b"zopt.shm_run_time_form\0",
        b"1\0",
        Setting::RunTimeForm,
        php::ZEND_INI_SYSTEM,
    ),
    entry(
        b"zopt.record_warnings\0",
        b"0\0",
        Setting::RecordWarnings,
        php::ZEND_INI_ALL,
    ),
    terminator(),
]);

/// Every `zopt.*` setting as this process has it, typed as `opcache_get_configuration()`
/// types OPcache's (`zopt_get_configuration()["directives"]`): sizes in bytes, flags as
/// booleans, empty paths as empty strings.
pub fn configuration_json() -> serde_json::Value {
    let path = |p: Option<PathBuf>| p.map_or(String::new(), |p| p.display().to_string());
    let mode = match mode() {
        Mode::Off => "off",
        Mode::Record => "record",
        Mode::Roundtrip => "roundtrip",
        Mode::Optimize => "optimize",
    };
    let record_format = match format() {
        Format::Text => "text",
        Format::Binary => "binary",
        Format::Both => "both",
    };
    let validation = match cache_validation() {
        zend_cache::ValidationMode::MtimeSize => "mtime",
        zend_cache::ValidationMode::ContentHash => "content",
    };
    serde_json::json!({
        "zopt.mode": mode,
        "zopt.optimization_level": optimization_level(),
        "zopt.verify": verify(),
        "zopt.record_dir": path(record_dir()),
        "zopt.record_format": record_format,
        "zopt.cache_dir": path(cache_dir()),
        "zopt.cache_validation": validation,
        "zopt.cache_max_bytes": cache_max_bytes().unwrap_or(0),
        "zopt.cache_stats": path(cache_stats()),
        "zopt.memory_consumption": memory_consumption(),
        "zopt.interned_strings_buffer": interned_strings_buffer(),
        "zopt.max_accelerated_files": max_accelerated_files(),
        "zopt.validate_timestamps": validate_timestamps(),
        "zopt.revalidate_freq": revalidate_freq(),
        "zopt.shm_run_time_form": shm_run_time_form(),
        "zopt.record_warnings": record_warnings(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_as_php_ini_writes_them() {
        let mb = |v: &str| parse_megabytes("zopt.memory_consumption", v);
        assert_eq!(mb("64"), Ok(64));
        assert_eq!(mb(" 64M "), Ok(64));
        assert_eq!(mb("128m"), Ok(128));
        assert_eq!(mb("1G"), Ok(1024));
        assert_eq!(mb("0"), Ok(0));
        assert_eq!(mb("2048K"), Ok(2));
        for bad in ["512K", "64MB", "-1", "", "M", "lots"] {
            assert!(mb(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert_eq!(parse_bytes("2k"), Ok(2048));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert!(parse_bytes("99999999999999G").is_err());
    }
}
