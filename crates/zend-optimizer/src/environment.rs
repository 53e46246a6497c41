//! What the optimizer knows of the PHP process it optimizes for, beyond the script: the
//! process description of [`zend_ir::environment`] (re-exported here, where the passes
//! that fold from it live), and what SCCP's compile-time calls of `php_uname()` read.

use std::sync::OnceLock;
pub use zend_ir::environment::*;
use zend_ir::PhpStr;

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
