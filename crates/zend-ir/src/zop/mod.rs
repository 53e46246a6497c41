//! The `.zop` format: a lossless, readable text form of a [`Script`](crate::Script), and a
//! binary form (bincode).
