//! The shared-memory level across processes: children forked after the segment was made
//! share it, and a writer killed (SIGKILL) while it holds the lock leaves it usable.
//!
//! One test in this binary: it forks, and a forked child of a multi-threaded test harness
//! must not race other tests' threads.

mod support;

use std::time::{Duration, Instant};
use zend_cache::{persist, CacheKey, ShmCache, ShmConfig, ShmLookup, SystemId, Validation};

fn key(name: &str) -> CacheKey {
    CacheKey::new(
        format!("/srv/{name}.php").into_bytes(),
        Validation::MtimeSize {
            mtime_sec: 1,
            mtime_nsec: 0,
            size: 10,
        },
    )
}

fn wait(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: pid is a child of this process.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    status
}

#[test]
fn forked_workers_share_the_segment_and_survive_a_writer_killed_mid_store() {
    let c = ShmCache::create(ShmConfig::with_size(4 << 20), &SystemId::new("8.2.0", 0)).unwrap();
    let body = persist(&support::rich_script("/srv/a.php", 1)).unwrap();
    c.store(&key("parent"), &body).unwrap();

    // A child sees the parent's entry and the parent sees the child's.
    // SAFETY: the child only uses the segment and exits with a status.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let ok = matches!(c.lookup_key(&key("parent")), ShmLookup::Hit(_))
            && c.store(&key("child"), &body).is_ok();
        // SAFETY: leaves the child without running the harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let status = wait(pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    let ShmLookup::Hit(e) = c.lookup_key(&key("child")) else {
        panic!("the child's store is not visible")
    };
    assert_eq!(e.body(), &body[..]);

    // A child killed half-way through writing an entry, holding the lock.
    let used = c.stats().data_used;
    // SAFETY: the child writes half a body into its allocation and waits to be killed.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let _ = c.store_with(&key("torn"), body.len(), |out| {
            out[..body.len() / 2].copy_from_slice(&body[..body.len() / 2]);
            loop {
                // SAFETY: waits for a signal.
                unsafe { libc::pause() };
            }
        });
        // SAFETY: not reached.
        unsafe { libc::_exit(0) };
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.stats().data_used == used {
        assert!(Instant::now() < deadline, "the child never allocated");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: pid is our child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    wait(pid);

    assert!(matches!(c.lookup_key(&key("torn")), ShmLookup::Miss));
    // The next writer takes the lock the dead one held, and stores.
    c.store(&key("after"), &body).unwrap();
    let s = c.stats();
    assert_eq!(s.writer_deaths, 1);
    assert!(
        s.wasted > 0,
        "the dead writer's allocation counts as wasted"
    );
    for name in ["parent", "child", "after"] {
        let ShmLookup::Hit(e) = c.lookup_key(&key(name)) else {
            panic!("{name} not served")
        };
        assert_eq!(e.body(), &body[..]);
    }
    // The dead writer's script can be stored by someone else.
    c.store(&key("torn"), &body).unwrap();
    assert!(matches!(c.lookup_key(&key("torn")), ShmLookup::Hit(_)));

    // A child killed half-way through persisting a run-time image, holding the lock: the
    // image is never published, and the next writer (a hit, which only tries the lock)
    // recovers the lock and makes the image.
    let ShmLookup::Hit(parent) = c.lookup_key(&key("parent")) else {
        panic!("parent not served")
    };
    let used = c.stats().data_used;
    // SAFETY: the child allocates part of an image and waits to be killed.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let _ = c.attach_image(parent, |w| {
            let p = w.alloc(4096, 16)?;
            // SAFETY: `p` has 4096 bytes.
            unsafe { p.write_bytes(0xAB, 4096) };
            loop {
                // SAFETY: waits for a signal.
                unsafe { libc::pause() };
            }
        });
        // SAFETY: not reached.
        unsafe { libc::_exit(0) };
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.stats().data_used == used {
        assert!(Instant::now() < deadline, "the child never allocated");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: pid is our child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    wait(pid);
    assert!(parent.image().is_none() && !parent.image_refused());
    let wasted = c.stats().wasted;
    assert!(c
        .attach_image(parent, |w| w.alloc(16, 16).map(|p| p.cast_const()))
        .unwrap());
    let s = c.stats();
    assert_eq!(s.writer_deaths, 2);
    assert!(s.wasted >= wasted + 4096, "{s:?}");
    assert!(parent.image().is_some());
}
