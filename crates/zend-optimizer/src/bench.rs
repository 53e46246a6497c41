//! How the benches time the optimizer over a corpus, so that `zopt bench`, the criterion
//! bench and the profiling loop measure alike.
//!
//! PHP's optimizer runs on op_arrays its compiler has just written: they are in the cache.
//! The extension hands our optimizer the op_arrays it has just converted, in the cache
//! too. A bench that copies the whole corpus first and then optimizes the copies one after
//! the other finds each script's ops long evicted by the copies made after it, and charges
//! the optimizer with misses neither PHP's optimizer nor ours pays when compiling a script
//!. So each script is copied
//! right before it is worked on, and only the work is timed.

use std::time::{Duration, Instant};

use zend_ir::Script;

/// Runs `work` on a fresh copy of each script, made right before, and returns the time
/// spent in `work` alone: neither making the copies nor dropping them is counted.
pub fn time_on_fresh_copies<'a>(
    scripts: impl IntoIterator<Item = &'a Script>,
    mut work: impl FnMut(&mut Script),
) -> Duration {
    let mut total = Duration::ZERO;
    for script in scripts {
        let mut copy = script.clone();
        let start = Instant::now();
        work(&mut copy);
        total += start.elapsed();
    }
    total
}
