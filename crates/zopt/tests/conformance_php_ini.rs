//! Conformance against PHP as it runs with its own php.ini and conf.d: every extension the
//! machine has installed loaded (on Debian at least ctype, tokenizer, iconv, PDO, ... of
//! php8.2-common, and whatever else is there: mbstring, intl, mysqli, xml...), dl() off.
//! zopt's optimizer reads that PHP's description of itself (the extension's
//! `zopt_get_configuration()['environment']`) and must then fold, type and optimize as
//! OPcache does there. Nothing here assumes which extensions are installed: the answers
//! are PHP's own, on this machine.
//!
//! Its own test binary: the description is installed process-wide, once.

mod common;

use common::{extension, fixtures_conform};

use zopt::php::{Php, PhpIni};

#[test]
fn the_default_level_is_identical_under_php_s_own_configuration() {
    let mut php = Php::locate(None, Some(extension())).unwrap();
    php.ini = PhpIni::Default;
    let process = php.environment().unwrap();
    let description = process.describe();
    // Debian's php8.2-cli depends on php8.2-common, whose conf.d loads ctype.
    assert!(
        description.lines().any(|l| l.starts_with("module ctype ")),
        "PHP's own configuration loads no extension beyond the binary's:\n{description}"
    );
    assert!(zend_optimizer::environment::install(process));
    fixtures_conform(&php, 0x7FFE_BFFF, &["sccp", "types", "after_dfa", "after"]);
}
