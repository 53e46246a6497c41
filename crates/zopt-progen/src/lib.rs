//! zopt-progen: a seeded generator of random PHP 8.2 programs for differential fuzzing of
//! zopt against PHP (the dumps of every stage, and the output of every execution mode).
//!
//! Guarantees, for every seed and the default [`Config`]:
//! - the program is valid PHP 8.2 and runs under `php -n` to the end with exit status 0:
//!   every expression is generated for a type it is guaranteed to have at run time (ints
//!   stay ints through explicit casts, divisors are forced non-zero or the division sits in
//!   a `try` that catches it, arrays hold scalars only, array reads use `??`/`isset`), and
//!   every exception thrown on purpose is caught;
//! - it is deterministic: no time, randomness, object ids, addresses or refcounts reach the
//!   output, and notices are printed by an error handler as `E<level>: <message>` without
//!   file paths;
//! - it terminates quickly: loops are counted with constant bounds, recursion descends on
//!   a bounded depth argument, calls only go to functions declared before (or to itself,
//!   recursing down), strings and arrays built in loops are capped, and a global step
//!   budget (`step_ok()`) bounds loops whose bodies call and function entries;
//! - it prints a digest of its state as it goes (`var_export` of values after statements,
//!   and of every variable at the end);
//! - the same seed and configuration give the same program, byte for byte.
//!
//! The program is a [`tree::Node`] whose statements, declarations and expressions are
//! marked for the reducer (`zopt fuzz` cuts statements and replaces expressions by
//! literals while a failure persists).

pub mod gen;
pub mod rng;
pub mod tree;

pub use gen::{generate, Config, Program, Weights};
pub use tree::{EditId, EditKind, Edits, Node};
