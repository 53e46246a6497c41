//! Writes the seed inputs of the `cache_entry` fuzz target (fuzz/seeds/cache_entry):
//! `ZC_WRITE_FUZZ_SEEDS=1 cargo test -p zend-cache --test fuzz_seeds -- --ignored`.
//! Each seed is a mode byte (see fuzz/fuzz_targets/cache_entry.rs) and an entry or body.

mod support;

use zend_cache::entry;
use zend_cache::*;

#[test]
#[ignore]
fn write_fuzz_seeds() {
    if std::env::var_os("ZC_WRITE_FUZZ_SEEDS").is_none() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/cache_entry");
    std::fs::create_dir_all(&dir).unwrap();
    let sys = SystemId::new("8.2.36", 0x7FFEBFFF).digest();
    let key = CacheKey::new(
        b"/srv/app/fuzz.php".to_vec(),
        Validation::MtimeSize {
            mtime_sec: 1_700_000_000,
            mtime_nsec: 0,
            size: 1234,
        },
    );
    let mut scripts = vec![(
        "rich".to_string(),
        support::rich_script("/srv/app/fuzz.php", 1),
    )];
    for (i, s) in support::sample_scripts(3).into_iter().enumerate() {
        scripts.push((format!("gen{i}"), s));
    }
    for (name, s) in scripts {
        let body = persist(&s).unwrap();
        let whole = entry::encode(&s, &sys, &key, 0).unwrap();
        std::fs::write(
            dir.join(format!("{name}.entry")),
            [&[0u8][..], &whole].concat(),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{name}.body")),
            [&[1u8][..], &body].concat(),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{name}.framed")),
            [&[2u8][..], &body].concat(),
        )
        .unwrap();
    }
}
