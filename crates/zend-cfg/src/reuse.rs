//! Vectors an analysis result reuses from the result it replaces (`*_reusing` builds of the
//! CFG, the liveness sets and the SSA form): their contents are garbage, only their memory
//! serves. Too small, a vector is replaced rather than grown, since growing would copy
//! what is thrown away.

/// `v` emptied, with room for `n` elements (doubling when replaced, as growth would: the
/// next op_array is often as large).
pub fn emptied<T>(mut v: Vec<T>, n: usize) -> Vec<T> {
    if v.capacity() < n {
        return Vec::with_capacity(n.max(2 * v.capacity()));
    }
    v.clear();
    v
}

/// `v` holding `n` copies of `value` (exactly `n` of memory when replaced: a zero `value`
/// of a plain type is then a zeroed allocation, which costs no fill).
pub fn refilled<T: Clone>(mut v: Vec<T>, n: usize, value: T) -> Vec<T> {
    if v.capacity() < n {
        return vec![value; n];
    }
    v.clear();
    v.resize(n, value);
    v
}
