//! The library behind the `zopt` command line: running real PHP (the oracle), finding
//! corpora, our side of every dump stage, and the conformance comparison.

pub mod bench;
pub mod bench_analyses;
pub mod bench_optimizer;
pub mod cache;
pub mod conformance;
pub mod corpus;
pub mod crosscheck;
pub mod dfa;
pub mod exec_diff;
pub mod fastcgi;
pub mod func_info;
pub mod fuzz;
pub mod json;
pub mod opt;
pub mod php;
pub mod stages;
