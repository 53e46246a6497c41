//! Arbitrary bytes as `.zop` text: parsing must never panic, and whatever parses must print
//! to text that parses back to the same script and prints the same again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zend_ir::zop::{parse, print};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(script) = parse(&text) {
        let printed = print(&script);
        let again = match parse(&printed) {
            Ok(s) => s,
            Err(e) => panic!("printed text does not parse: {e}\n{printed}"),
        };
        assert_eq!(again, script, "round trip changed the script:\n{printed}");
        assert_eq!(print(&again), printed, "printing is not canonical");
    }
});
