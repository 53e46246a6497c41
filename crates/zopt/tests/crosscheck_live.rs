//! `zopt crosscheck` on every fixture, recorded afresh by real PHP 8.2 and the zopt
//! extension at optimization level 0: pruned Cytron, Braun et al. and PHP-style SSA agree on
//! every op_array (PHP and the extension are required, as for conformance_live).

mod common;

use common::{extension, workspace_root};

use zopt::php::Php;

#[test]
fn cytron_braun_and_php_ssa_agree_on_fixtures() {
    let php = Php::locate(None, Some(extension())).unwrap();
    let report =
        zopt::crosscheck::run(Some(&php), &[workspace_root().join("fixtures/php")]).unwrap();
    report.print();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.disagreements.is_empty());
    assert!(
        report.three_way > 1000,
        "{} op_arrays checked three ways",
        report.three_way
    );
    assert_eq!(report.agreeing(), report.checked());
    // Braun's redundant phi SCCs only where control flow is irreducible (loops also
    // entered from a catch block count).
    assert_eq!(report.braun_redundant_split[2], 0);
    assert_eq!(report.cytron_redundant_phis, 0);
}
