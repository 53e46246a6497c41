//! The call-graph facts the DFA dumps print live in `zend-call-graph`; re-exported here.

pub use zend_call_graph::*;
