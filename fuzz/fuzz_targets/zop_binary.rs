//! Arbitrary bytes as a binary `.zop`: decoding must never panic (nor overflow the stack or
//! allocate without bound). What decodes must re-encode to the same bytes and survive the
//! text form unchanged (unless it nests deeper than the text parser allows).

#![no_main]

use libfuzzer_sys::fuzz_target;
use zend_ir::zop::{from_binary, parse, print, to_binary};

const MAGIC: &[u8] = b"ZOPBIN\x00\x02";

fuzz_target!(|data: &[u8]| {
    // Most inputs get the magic for free, so the fuzzer explores the body; a few do not.
    let input = if data.first() == Some(&b'!') {
        data[1..].to_vec()
    } else {
        [MAGIC, data].concat()
    };
    if let Ok(script) = from_binary(&input) {
        assert_eq!(to_binary(&script), input, "re-encoding changed the bytes");
        let printed = print(&script);
        match parse(&printed) {
            Ok(again) => assert_eq!(again, script, "text round trip changed the script"),
            Err(e) => assert!(
                e.message.contains("nesting deeper"),
                "printed text does not parse: {e}\n{printed}"
            ),
        }
    }
});
