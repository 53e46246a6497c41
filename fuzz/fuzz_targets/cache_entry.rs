//! The cache entry loader on arbitrary bytes. The first byte picks what the rest is:
//!
//! - `0`: a whole entry file, as a lookup reads it (framing, checksum, key, body);
//! - `1`: a persisted body, without the checksum to hide behind: the validator, the
//!   zero-copy views and the decoder see every mutation;
//! - `2`: a persisted body framed into an entry with a correct checksum, through the whole
//!   lookup path.
//!
//! Nothing may panic, overflow the stack or allocate out of proportion. What the loader
//! accepts must decode, its views must agree with the decoded script, and the script must
//! persist back to a body that loads to the same script.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zend_cache::entry;
use zend_cache::{load, persist, CacheKey, ScriptView, SystemId, Validation};

fn key() -> CacheKey {
    CacheKey::new(
        b"/srv/app/fuzz.php".to_vec(),
        Validation::MtimeSize {
            mtime_sec: 1_700_000_000,
            mtime_nsec: 0,
            size: 1234,
        },
    )
}

fn check_body(body: &[u8]) {
    let Ok(view) = ScriptView::new(body) else {
        return;
    };
    let script = view.to_script();
    let mut ops = 0usize;
    let mut arrays = 0u32;
    view.for_each_op_array(|oa| {
        arrays += 1;
        ops += oa.ops().count();
        for lit in oa.literals() {
            let _ = lit.to_literal();
        }
        let _ = (
            oa.function_name(),
            oa.scope(),
            oa.filename(),
            oa.vars().count(),
        );
    });
    assert_eq!(arrays, view.op_array_count());
    assert_eq!(ops, view.op_count() as usize);
    let again = persist(&script).expect("an accepted script persists");
    assert_eq!(load(&again).expect("a re-persisted script loads"), script);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let sys = SystemId::new("8.2.36", 0x7FFEBFFF).digest();
    match mode % 3 {
        0 => {
            if let Ok(header) = entry::parse(rest) {
                if entry::validate_body(rest, &header).is_ok() {
                    check_body(&rest[header.body_offset..]);
                }
            }
            let _ = entry::parse_and_validate(rest, &sys, &key());
        }
        1 => check_body(rest),
        _ => {
            let framed = entry::encode_body(rest, &sys, &key(), 0).expect("small bodies frame");
            let accepted = entry::parse_and_validate(&framed, &sys, &key()).is_ok();
            assert_eq!(accepted, zend_cache::validate(rest).is_ok());
            check_body(rest);
        }
    }
});
