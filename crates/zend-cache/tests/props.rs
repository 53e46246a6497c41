//! Property tests: every generated script survives persist → load exactly, phase 1's size
//! is phase 2's, the zero-copy view agrees with the decoded model, and no mutation of a
//! body or an entry makes the loader panic.

mod support;

use proptest::prelude::*;
use support::gen;
use zend_cache::entry;
use zend_cache::*;

fn key(path: &[u8], v: u64) -> CacheKey {
    CacheKey::new(
        path.to_vec(),
        Validation::MtimeSize {
            mtime_sec: v as i64,
            mtime_nsec: 5,
            size: 100 + v,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn persist_load_roundtrip(s in gen::script()) {
        let plan = persist_calc(&s).unwrap();
        let mut buf = vec![0u8; plan.size()];
        persist_into(&s, &plan, &mut buf).unwrap();
        prop_assert_eq!(buf.len(), plan.size());
        prop_assert_eq!(&persist(&s).unwrap(), &buf, "persist is deterministic");
        let loaded = load(&buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&loaded, &s);
        // Loading and persisting again gives the same bytes: the encoding is canonical.
        prop_assert_eq!(persist(&loaded).unwrap(), buf);
    }

    #[test]
    fn view_matches_model(s in gen::script()) {
        let buf = persist(&s).unwrap();
        let view = ScriptView::new(&buf).unwrap();
        let mut models = Vec::new();
        fn walk<'a>(oa: &'a zend_ir::OpArray, out: &mut Vec<&'a zend_ir::OpArray>) {
            out.push(oa);
            for d in &oa.dynamic_func_defs { walk(d, out); }
        }
        walk(&s.main_op_array, &mut models);
        for (_, f) in &s.function_table { walk(f, &mut models); }
        for (_, ce) in &s.class_table { for (_, m) in &ce.methods { walk(m, &mut models); } }
        let mut views = Vec::new();
        view.for_each_op_array(|oa| views.push(oa));
        prop_assert_eq!(views.len(), models.len());
        prop_assert_eq!(view.op_array_count() as usize, models.len());
        for (v, m) in views.iter().zip(&models) {
            let ops: Vec<_> = v.ops().map(|o| o.to_op()).collect();
            prop_assert_eq!(&ops, &m.opcodes);
            for (o, mo) in v.ops().zip(&m.opcodes) {
                prop_assert_eq!(o.result_type(), mo.result_type());
            }
            let lits: Vec<_> = v.literals().map(|l| l.to_literal()).collect();
            prop_assert_eq!(&lits, &m.literals);
            prop_assert_eq!(v.function_name(), m.function_name.as_ref().map(|n| n.as_bytes()));
            prop_assert_eq!(v.vars().count(), m.vars.len());
        }
    }

    #[test]
    fn entry_roundtrip(s in gen::script(), path in proptest::collection::vec(any::<u8>(), 0..40), v in any::<u64>()) {
        let sys = SystemId::new("8.2.0", 0).digest();
        let k = key(&path, v);
        let bytes = entry::encode(&s, &sys, &k, 7).unwrap();
        let (header, _) = entry::parse_and_validate(&bytes, &sys, &k).unwrap();
        prop_assert_eq!(header.path, &path[..]);
        prop_assert_eq!(header.body_offset % 16, 0);
        prop_assert_eq!(load(&bytes[header.body_offset..]).unwrap(), s);
    }

    /// Any change of any byte of a body, without the checksum to catch it: the loader
    /// either rejects it or returns a script (decoding it must not panic either).
    #[test]
    fn mutated_body_never_panics(s in gen::script(), edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), cut in any::<prop::sample::Index>()) {
        let mut buf = persist(&s).unwrap();
        for (at, byte) in edits {
            let i = at.index(buf.len());
            buf[i] = byte;
        }
        if let Ok(view) = ScriptView::new(&buf) {
            let script = view.to_script();
            view.for_each_op_array(|oa| { let _ = oa.ops().count(); });
            // Whatever it accepted is a script that persists back.
            prop_assert_eq!(load(&persist(&script).unwrap()).unwrap(), script);
        }
        let n = cut.index(buf.len());
        prop_assert!(load(&buf[..n]).is_err(), "a truncated body must be rejected");
    }
}

/// Nesting beyond the limits is refused when persisting (never written, never a stack
/// overflow when loading).
#[test]
fn too_deep_is_refused() {
    use zend_ir::*;
    let mut lit = Literal::Null;
    for _ in 0..=layout::MAX_VALUE_DEPTH + 1 {
        lit = Literal::Array(vec![(ArrayKey::Long(0), lit)].into());
    }
    let mut s = support::rich_script("/deep.php", 0);
    s.main_op_array.literals.push(lit);
    assert_eq!(persist(&s).err(), Some(PersistError::ValueTooDeep));

    let mut s = support::rich_script("/deep.php", 0);
    let mut oa = s.main_op_array.clone();
    for _ in 0..layout::MAX_FUNC_NESTING {
        let mut outer = s.main_op_array.clone();
        outer.dynamic_func_defs = vec![oa];
        oa = outer;
    }
    s.main_op_array = oa;
    assert_eq!(persist(&s).err(), Some(PersistError::FuncTooDeep));
}

#[test]
fn rich_script_roundtrips_and_dedups_strings() {
    let s = support::rich_script("/srv/app/src/Example.php", 3);
    let plan = persist_calc(&s).unwrap();
    let buf = persist(&s).unwrap();
    assert_eq!(buf.len(), plan.size());
    assert_eq!(load(&buf).unwrap(), s);
    // "hello", the file name, "Example", "Countable"... are stored once each.
    let view = ScriptView::new(&buf).unwrap();
    let mut seen = std::collections::HashSet::new();
    for id in 0..view.string_count() {
        assert!(
            seen.insert(view.string(id).to_vec()),
            "duplicate string {:?}",
            String::from_utf8_lossy(view.string(id))
        );
    }
    let path_count = buf
        .windows(b"/srv/app/src/Example.php".len())
        .filter(|w| w == b"/srv/app/src/Example.php")
        .count();
    assert_eq!(path_count, 1);
}
