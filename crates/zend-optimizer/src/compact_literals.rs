//! Mirrors `zend_optimizer_compact_literals` (compact_literals.c, pass 11) as PHP 8.2 has
//! it: drops the literals no op uses, merges equal ones, and assigns the run-time cache
//! slots again from scratch (`cache_size`).
//!
//! Literals are merged by kind: one `null`, `false`, `true` and empty array each; integers
//! by value, doubles by bit pattern, strings by bytes. Some ops use a literal together with
//! the literals that follow it (the lowercased and namespace-fallback names of a function,
//! class or constant; the original string of a numeric array offset, marked
//! `ZEND_EXTRA_VALUE`): those groups are merged only with groups equal in every member, and
//! stay contiguous. Arrays with elements and constant expressions are never merged.
//!
//! Cache slots are then given per opcode: function, class, constant, global and
//! `$this->property` / `$this->method` names share one slot per name in the op_array;
//! static members (`Class::$prop`, `Class::method`, `Class::CONST`) one per class and
//! member; other ops a slot of their own. Parameters and return values with class types
//! get one pointer per class; `RECV_INIT` defaults that are constant expressions get an
//! aligned zval (their literal's `Z_EXTRA`, kept in `OpArray::literal_extra`).
//!
//! Guarantees: every CONST operand still denotes an equal value; `literal_extra` follows
//! the literals it belongs to; out-of-range literal operands are left alone.

use hashbrown::HashMap;

use crate::byte_table::{concat_eq, key_hash, ByteKeyTable, StoredKey};
use crate::helpers::{
    set_literal_extra, ZEND_EXTRA_VALUE, ZEND_FETCH_OBJ_FLAGS, ZEND_ISEMPTY, ZEND_LAST_CATCH,
};
use zend_ir::opcode::*;
use zend_ir::Opcode;
use zend_ir::{
    ArgInfo, Literal, LiteralId, OpArray, OpNum, Operand, TypeNames, _ZEND_TYPE_INTERSECTION_BIT,
    ZEND_ACC_VARIADIC,
};

use crate::ctx::OptimizerCtx;
use crate::provenance::ChangeKind;

const ZEND_ACC_HAS_TYPE_HINTS: u32 = 1 << 8;
/// FETCH_CONSTANT's op1 flag: an unqualified name in a namespace (three names to try).
const IS_CONSTANT_UNQUALIFIED_IN_NAMESPACE: u32 = 0x800;
/// `zend_op_array_extension_handles * sizeof(void*)`: no extension reserves op_array
/// handles in the configurations PHP's dumps come from.
const EXTENSION_HANDLES_SIZE: u32 = 0;
const PTR: u32 = 8;

/// The static-member kinds `add_static_slot` keys on.
const LITERAL_CLASS_CONST: u32 = 1;
const LITERAL_STATIC_METHOD: u32 = 2;
const LITERAL_STATIC_PROPERTY: u32 = 3;

/// The bias PHP adds to the hash of a string merge key: 0..2 for a group of 1..3 strings;
/// this one for an integer offset with its string. (Doubles, keyed by their bytes with bias
/// 200, have a table of their own.)
const KEY_LONG_WITH_STRING: u32 = 101;

/// `kept_at` of a literal dropped.
const DROPPED: u32 = u32::MAX;

/// The bytes of string literal `i` (none for another literal or none at all).
fn string_at(literals: &[Literal], i: usize) -> &[u8] {
    match literals.get(i) {
        Some(Literal::String(s)) => s.as_bytes(),
        _ => &[],
    }
}

/// The pass's tables, kept in the optimization context between op_arrays so that
/// compacting an op_array allocates nothing once they have grown.
#[derive(Default)]
pub(crate) struct Scratch {
    related: Vec<u8>,
    map: Vec<u32>,
    kept_at: Vec<u32>,
    /// Integer literals by value (a HashTable's integer keys).
    longs: HashMap<i64, u32>,
    /// Doubles by bit pattern (PHP keys them by their bytes).
    doubles: HashMap<u64, u32>,
    /// String keys: literal groups (`a`: the first literal, `b`: how many), integer
    /// offsets by their string (`a`: the string).
    strings: ByteKeyTable,
    /// A key of several parts, concatenated to be hashed.
    concat: Vec<u8>,
    /// `add_static_slot`'s `class::member` keys.
    statics: ByteKeyTable,
    /// Per literal, the shared cache slot of each kind of name (`NO_SLOT`: not yet given;
    /// a sentinel rather than an `Option` so that the array is cleared by a memset).
    slots: Vec<[u32; SLOT_KINDS]>,
}

/// `zend_optimizer_compact_literals`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let count = op_array.literals.len();
    if count == 0 {
        return;
    }
    let logging = ctx.logging();
    let scratch = &mut ctx.state.work.compact_literals;
    // How many literals each used literal forms a group with (0: unused).
    let related = &mut scratch.related;
    related.clear();
    related.resize(count, 0);
    let mut mark = |operand: Operand, n: u8| {
        if let Operand::Const(lit) = operand {
            if let Some(r) = related.get_mut(lit.index()) {
                *r = n;
            }
        }
    };
    for op in &op_array.opcodes {
        // Every op below marks its CONST operands only.
        if !matches!(op.op1, Operand::Const(_)) && !matches!(op.op2, Operand::Const(_)) {
            continue;
        }
        match op.opcode {
            ZEND_INIT_FCALL_BY_NAME => mark(op.op2, 2),
            ZEND_INIT_NS_FCALL_BY_NAME => mark(op.op2, 3),
            ZEND_INIT_METHOD_CALL => {
                mark(op.op1, 1);
                mark(op.op2, 2);
            }
            ZEND_INIT_STATIC_METHOD_CALL => {
                mark(op.op1, 2);
                mark(op.op2, 2);
            }
            ZEND_CATCH => mark(op.op1, 2),
            ZEND_FETCH_CONSTANT => {
                let flags = match op.op1 {
                    Operand::Unused(n) => n,
                    _ => 0,
                };
                if flags & IS_CONSTANT_UNQUALIFIED_IN_NAMESPACE != 0 {
                    mark(op.op2, 3);
                } else {
                    mark(op.op2, 2);
                }
            }
            ZEND_FETCH_CLASS_CONSTANT => {
                mark(op.op1, 2);
                mark(op.op2, 1);
            }
            ZEND_ASSIGN_STATIC_PROP
            | ZEND_ASSIGN_STATIC_PROP_REF
            | ZEND_FETCH_STATIC_PROP_R
            | ZEND_FETCH_STATIC_PROP_W
            | ZEND_FETCH_STATIC_PROP_RW
            | ZEND_FETCH_STATIC_PROP_IS
            | ZEND_FETCH_STATIC_PROP_UNSET
            | ZEND_FETCH_STATIC_PROP_FUNC_ARG
            | ZEND_UNSET_STATIC_PROP
            | ZEND_ISSET_ISEMPTY_STATIC_PROP
            | ZEND_PRE_INC_STATIC_PROP
            | ZEND_PRE_DEC_STATIC_PROP
            | ZEND_POST_INC_STATIC_PROP
            | ZEND_POST_DEC_STATIC_PROP
            | ZEND_ASSIGN_STATIC_PROP_OP => {
                mark(op.op2, 2);
                mark(op.op1, 1);
            }
            ZEND_FETCH_CLASS | ZEND_INSTANCEOF => mark(op.op2, 2),
            ZEND_NEW => mark(op.op1, 2),
            ZEND_DECLARE_CLASS | ZEND_DECLARE_CLASS_DELAYED => {
                mark(op.op1, 2);
                mark(op.op2, 1);
            }
            ZEND_ISSET_ISEMPTY_DIM_OBJ
            | ZEND_ASSIGN_DIM
            | ZEND_UNSET_DIM
            | ZEND_FETCH_DIM_R
            | ZEND_FETCH_DIM_W
            | ZEND_FETCH_DIM_RW
            | ZEND_FETCH_DIM_IS
            | ZEND_FETCH_DIM_FUNC_ARG
            | ZEND_FETCH_DIM_UNSET
            | ZEND_FETCH_LIST_R
            | ZEND_FETCH_LIST_W
            | ZEND_ASSIGN_DIM_OP => {
                mark(op.op1, 1);
                if let Operand::Const(lit) = op.op2 {
                    if op_array.literal_extra(lit) == ZEND_EXTRA_VALUE {
                        mark(op.op2, 2);
                    } else {
                        mark(op.op2, 1);
                    }
                }
            }
            _ => {
                mark(op.op1, 1);
                mark(op.op2, 1);
            }
        }
    }

    // Merge equal literals: `map[old]` is the new index of the group old starts, and
    // `kept_at[old]` the new index of every literal kept (`DROPPED`: not kept). The walk
    // reads the literals where they are; the array is compacted after it, in one pass.
    let literals = &op_array.literals;
    let map = &mut scratch.map;
    map.clear();
    map.resize(count, 0);
    let kept_at = &mut scratch.kept_at;
    kept_at.clear();
    kept_at.resize(count, DROPPED);
    let (longs, doubles, strings) = (
        &mut scratch.longs,
        &mut scratch.doubles,
        &mut scratch.strings,
    );
    longs.clear();
    doubles.clear();
    strings.clear(count);
    let concat = &mut scratch.concat;
    let mut kept = 0u32;
    let mut keep = |k: usize, kept: &mut u32| {
        kept_at[k] = *kept;
        *kept += 1;
    };
    let (mut l_null, mut l_false, mut l_true, mut l_empty_arr) = (None, None, None, None);
    let mut i = 0;
    while i < count {
        let n = related[i];
        if n == 0 {
            i += 1;
            continue;
        }
        let j = kept;
        match &literals[i] {
            Literal::Null | Literal::False | Literal::True => {
                let slot = match &literals[i] {
                    Literal::Null => &mut l_null,
                    Literal::False => &mut l_false,
                    _ => &mut l_true,
                };
                match *slot {
                    Some(at) => map[i] = at,
                    None => {
                        *slot = Some(j);
                        keep(i, &mut kept);
                        map[i] = j;
                    }
                }
            }
            Literal::Long(value) if n == 1 => match longs.get(value) {
                Some(&at) => map[i] = at,
                None => {
                    longs.insert(*value, j);
                    keep(i, &mut kept);
                    map[i] = j;
                }
            },
            Literal::Long(_) => {
                // An integer offset with the numeric string it came from: merged by the
                // string.
                let bytes = string_at(literals, i + 1);
                let key = StoredKey {
                    kind: KEY_LONG_WITH_STRING,
                    a: (i + 1) as u32,
                    b: 1,
                };
                let hash = key_hash(KEY_LONG_WITH_STRING, bytes);
                match strings.get_or_insert(hash, key, j, |k| {
                    concat_eq(bytes, &[string_at(literals, k.a as usize)])
                }) {
                    Some(at) => map[i] = at,
                    None => {
                        keep(i, &mut kept);
                        if i + 1 < count {
                            keep(i + 1, &mut kept);
                        }
                        map[i] = j;
                    }
                }
                i += 1;
            }
            // A double's bytes as a key of their own kind: equal bytes, equal bits.
            Literal::Double(d) => match doubles.get(&d.0) {
                Some(&at) => map[i] = at,
                None => {
                    doubles.insert(d.0, j);
                    keep(i, &mut kept);
                    map[i] = j;
                }
            },
            Literal::String(s) => {
                // The group's strings, concatenated as PHP does for its key (a group of
                // one is its own bytes).
                let end = (i + n as usize).min(count);
                let bytes = if end - i == 1 {
                    s.as_bytes()
                } else {
                    concat.clear();
                    for k in i..end {
                        concat.extend_from_slice(string_at(literals, k));
                    }
                    &concat[..]
                };
                let kind = u32::from(n) - 1;
                let key = StoredKey {
                    kind,
                    a: i as u32,
                    b: (end - i) as u32,
                };
                let found = strings.get_or_insert(key_hash(kind, bytes), key, j, |k| {
                    let at = k.a as usize;
                    let mut parts: [&[u8]; 3] = [&[]; 3];
                    for (part, l) in parts.iter_mut().zip(at..at + k.b as usize) {
                        *part = string_at(literals, l);
                    }
                    concat_eq(bytes, &parts[..k.b as usize])
                });
                match found {
                    Some(at) => map[i] = at,
                    None => {
                        for k in i..end {
                            keep(k, &mut kept);
                        }
                        map[i] = j;
                    }
                }
                i += n as usize - 1;
            }
            Literal::Array(elements) if elements.is_empty() => match l_empty_arr {
                Some(at) => map[i] = at,
                None => {
                    l_empty_arr = Some(j);
                    keep(i, &mut kept);
                    map[i] = j;
                }
            },
            _ => {
                keep(i, &mut kept);
                map[i] = j;
            }
        }
        i += 1;
    }
    let kept = kept as usize;
    // The extras of the kept literals, in their order.
    let old_extra = std::mem::take(&mut op_array.literal_extra);
    if !old_extra.is_empty() {
        let extra = &mut op_array.literal_extra;
        if old_extra.windows(2).all(|w| w[0].0 < w[1].0) {
            // Sorted without repeats (as set_literal_extra keeps them): one walk.
            for &(l, x) in &old_extra {
                match kept_at.get(l.index()) {
                    Some(&at) if at != DROPPED && x != 0 => {
                        extra.push((LiteralId::new(at), x));
                    }
                    _ => {}
                }
            }
        } else {
            // Otherwise each kept literal's first extra.
            for (k, &at) in kept_at.iter().enumerate() {
                if at == DROPPED {
                    continue;
                }
                let x = old_extra
                    .iter()
                    .find(|(l, _)| l.index() == k)
                    .map_or(0, |&(_, v)| v);
                if x != 0 {
                    extra.push((LiteralId::new(at), x));
                }
            }
        }
    }
    if kept != count {
        let mut k = 0;
        op_array.literals.retain(|_| {
            let keep = kept_at[k] != DROPPED;
            k += 1;
            keep
        });
    }
    assign_cache_slots(op_array, kept, scratch);
    if kept != count && logging {
        ctx.note(op_array, OpNum::new(0), ChangeKind::LiteralMerged, || {
            format!("literals compacted: {count} -> {kept} (unused dropped, equal merged)")
        });
    }
}

/// The kinds of name that share one cache slot per literal (the tables of
/// `zend_optimizer_compact_literals`: `const_slot`, `class_slot`, ...).
const SLOT_KINDS: usize = 6;
/// A shared slot not given yet (no slot is at the last byte offset: a slot is 8 bytes or
/// more).
const NO_SLOT: u32 = u32::MAX;
const CONST_SLOT: usize = 0;
const CLASS_SLOT: usize = 1;
const FUNC_SLOT: usize = 2;
const BIND_VAR_SLOT: usize = 3;
const PROPERTY_SLOT: usize = 4;
const METHOD_SLOT: usize = 5;

/// Cache slots as they are handed out.
struct SlotTables<'a> {
    cache_size: u32,
    /// `class::member` keys of static members (`a`: the class, `b`: the member).
    statics: &'a mut ByteKeyTable,
    /// A key being looked up, concatenated.
    concat: &'a mut Vec<u8>,
    /// Per literal, its shared slot of each kind.
    slots: &'a mut Vec<[u32; SLOT_KINDS]>,
}

impl SlotTables<'_> {
    /// A fresh slot of `size` bytes.
    fn fresh(&mut self, size: u32) -> u32 {
        let slot = self.cache_size;
        self.cache_size += size;
        slot
    }

    /// `add_static_slot`: one slot per class and member name.
    fn static_slot(
        &mut self,
        op_array: &OpArray,
        class: LiteralId,
        member: LiteralId,
        kind: u32,
    ) -> u32 {
        let literals = &op_array.literals;
        let size = if kind == LITERAL_STATIC_PROPERTY {
            3
        } else {
            2
        } * PTR;
        let concat = &mut *self.concat;
        concat.clear();
        concat.extend_from_slice(string_at(literals, class.index()));
        concat.extend_from_slice(b"::");
        concat.extend_from_slice(string_at(literals, member.index()));
        let key = StoredKey {
            kind,
            a: class.index() as u32,
            b: member.index() as u32,
        };
        let next = self.cache_size;
        let found = self
            .statics
            .get_or_insert(key_hash(kind, concat), key, next, |k| {
                let class = string_at(literals, k.a as usize);
                let member = string_at(literals, k.b as usize);
                concat_eq(concat, &[class, b"::", member])
            });
        match found {
            Some(slot) => slot,
            None => self.fresh(size),
        }
    }

    /// The shared slot of kind `which` for literal `lit`, given on first use.
    fn shared(&mut self, which: usize, lit: LiteralId, size: u32) -> u32 {
        if let Some(&slot) = self.slots.get(lit.index()).map(|s| &s[which]) {
            if slot != NO_SLOT {
                return slot;
            }
        }
        let slot = self.fresh(size);
        if let Some(entry) = self.slots.get_mut(lit.index()) {
            entry[which] = slot;
        }
        slot
    }
}

/// The opcodes `op_slot` gives a cache slot to: the others are skipped without a look at
/// their operands (most ops; `op_slot` does nothing for them, which a test checks).
const SLOT_OPCODES: OpcodeSet = OpcodeSet::of(&[
    ZEND_RECV_INIT,
    ZEND_RECV,
    ZEND_RECV_VARIADIC,
    ZEND_VERIFY_RETURN_TYPE,
    ZEND_ASSIGN_STATIC_PROP_OP,
    ZEND_ASSIGN_OBJ_OP,
    ZEND_ASSIGN_OBJ,
    ZEND_ASSIGN_OBJ_REF,
    ZEND_FETCH_OBJ_R,
    ZEND_FETCH_OBJ_W,
    ZEND_FETCH_OBJ_RW,
    ZEND_FETCH_OBJ_IS,
    ZEND_FETCH_OBJ_UNSET,
    ZEND_FETCH_OBJ_FUNC_ARG,
    ZEND_UNSET_OBJ,
    ZEND_PRE_INC_OBJ,
    ZEND_PRE_DEC_OBJ,
    ZEND_POST_INC_OBJ,
    ZEND_POST_DEC_OBJ,
    ZEND_ISSET_ISEMPTY_PROP_OBJ,
    ZEND_INIT_FCALL,
    ZEND_INIT_FCALL_BY_NAME,
    ZEND_INIT_NS_FCALL_BY_NAME,
    ZEND_INIT_METHOD_CALL,
    ZEND_INIT_STATIC_METHOD_CALL,
    ZEND_DEFINED,
    ZEND_FETCH_CONSTANT,
    ZEND_FETCH_CLASS_CONSTANT,
    ZEND_ASSIGN_STATIC_PROP,
    ZEND_ASSIGN_STATIC_PROP_REF,
    ZEND_FETCH_STATIC_PROP_R,
    ZEND_FETCH_STATIC_PROP_W,
    ZEND_FETCH_STATIC_PROP_RW,
    ZEND_FETCH_STATIC_PROP_IS,
    ZEND_FETCH_STATIC_PROP_UNSET,
    ZEND_FETCH_STATIC_PROP_FUNC_ARG,
    ZEND_UNSET_STATIC_PROP,
    ZEND_ISSET_ISEMPTY_STATIC_PROP,
    ZEND_PRE_INC_STATIC_PROP,
    ZEND_PRE_DEC_STATIC_PROP,
    ZEND_POST_INC_STATIC_PROP,
    ZEND_POST_DEC_STATIC_PROP,
    ZEND_FETCH_CLASS,
    ZEND_INSTANCEOF,
    ZEND_NEW,
    ZEND_CATCH,
    ZEND_BIND_GLOBAL,
    ZEND_DECLARE_ANON_CLASS,
    ZEND_DECLARE_CLASS_DELAYED,
    ZEND_SEND_VAL,
    ZEND_SEND_VAL_EX,
    ZEND_SEND_VAR,
    ZEND_SEND_VAR_EX,
    ZEND_SEND_VAR_NO_REF,
    ZEND_SEND_VAR_NO_REF_EX,
    ZEND_SEND_REF,
    ZEND_SEND_FUNC_ARG,
    ZEND_CHECK_FUNC_ARG,
]);

/// A set of opcodes, a bit each.
struct OpcodeSet([u64; 4]);

impl OpcodeSet {
    const fn of(opcodes: &[Opcode]) -> OpcodeSet {
        let mut bits = [0u64; 4];
        let mut k = 0;
        while k < opcodes.len() {
            let op = opcodes[k].0 as usize;
            bits[op / 64] |= 1 << (op % 64);
            k += 1;
        }
        OpcodeSet(bits)
    }

    #[inline]
    fn contains(&self, opcode: Opcode) -> bool {
        let op = opcode.0 as usize;
        self.0[op / 64] & (1 << (op % 64)) != 0
    }
}

/// The run-time cache slot of op `n` (its literals already renumbered), by opcode.
fn op_slot(op_array: &mut OpArray, n: usize, t: &mut SlotTables) {
    let op = op_array.opcodes[n];
    let (op1, op2) = (lit(op.op1), lit(op.op2));
    let op1_unused = op.op1.is_unused();
    match op.opcode {
        ZEND_RECV_INIT | ZEND_RECV | ZEND_RECV_VARIADIC => {
            let arg_num = match op.op1 {
                Operand::Unused(a) => a,
                _ => 0,
            };
            let classes = type_num_classes(op_array, arg_num);
            if classes != 0 {
                op_array.opcodes[n].extended_value = t.fresh(classes * PTR);
            }
        }
        ZEND_VERIFY_RETURN_TYPE => {
            let classes = type_num_classes(op_array, 0);
            if classes != 0 {
                let slot = t.fresh(classes * PTR);
                set_num(&mut op_array.opcodes[n].op2, slot);
            }
        }
        ZEND_ASSIGN_STATIC_PROP_OP => {
            let slot = match (op1, op2) {
                (Some(prop), Some(class)) => {
                    Some(t.static_slot(op_array, class, prop, LITERAL_STATIC_PROPERTY))
                }
                (Some(_), None) => Some(t.fresh(3 * PTR)),
                (None, Some(class)) => Some(t.shared(CLASS_SLOT, class, PTR)),
                (None, None) => None,
            };
            if let (Some(slot), Some(data)) = (slot, op_array.opcodes.get_mut(n + 1)) {
                data.extended_value = slot;
            }
        }
        ZEND_ASSIGN_OBJ_OP => {
            if let Some(prop) = op2 {
                let slot = if op1_unused {
                    t.shared(PROPERTY_SLOT, prop, 3 * PTR)
                } else {
                    t.fresh(3 * PTR)
                };
                if let Some(data) = op_array.opcodes.get_mut(n + 1) {
                    data.extended_value = slot;
                }
            }
        }
        ZEND_ASSIGN_OBJ
        | ZEND_ASSIGN_OBJ_REF
        | ZEND_FETCH_OBJ_R
        | ZEND_FETCH_OBJ_W
        | ZEND_FETCH_OBJ_RW
        | ZEND_FETCH_OBJ_IS
        | ZEND_FETCH_OBJ_UNSET
        | ZEND_FETCH_OBJ_FUNC_ARG
        | ZEND_UNSET_OBJ
        | ZEND_PRE_INC_OBJ
        | ZEND_PRE_DEC_OBJ
        | ZEND_POST_INC_OBJ
        | ZEND_POST_DEC_OBJ => {
            if let Some(prop) = op2 {
                let slot = if op1_unused {
                    t.shared(PROPERTY_SLOT, prop, 3 * PTR)
                } else {
                    t.fresh(3 * PTR)
                };
                op_array.opcodes[n].extended_value =
                    slot | (op.extended_value & ZEND_FETCH_OBJ_FLAGS);
            }
        }
        ZEND_ISSET_ISEMPTY_PROP_OBJ => {
            if let Some(prop) = op2 {
                let slot = if op1_unused {
                    t.shared(PROPERTY_SLOT, prop, 3 * PTR)
                } else {
                    t.fresh(3 * PTR)
                };
                op_array.opcodes[n].extended_value = slot | (op.extended_value & ZEND_ISEMPTY);
            }
        }
        ZEND_INIT_FCALL | ZEND_INIT_FCALL_BY_NAME | ZEND_INIT_NS_FCALL_BY_NAME => {
            if let Some(func) = op2 {
                let slot = t.shared(FUNC_SLOT, func, PTR);
                set_num(&mut op_array.opcodes[n].result, slot);
            }
        }
        ZEND_INIT_METHOD_CALL => {
            if let Some(method) = op2 {
                let slot = if op1_unused {
                    t.shared(METHOD_SLOT, method, 2 * PTR)
                } else {
                    t.fresh(2 * PTR)
                };
                set_num(&mut op_array.opcodes[n].result, slot);
            }
        }
        ZEND_INIT_STATIC_METHOD_CALL => {
            let slot = match (op1, op2) {
                (Some(class), Some(method)) => {
                    Some(t.static_slot(op_array, class, method, LITERAL_STATIC_METHOD))
                }
                (None, Some(_)) => Some(t.fresh(2 * PTR)),
                (Some(class), None) => Some(t.shared(CLASS_SLOT, class, PTR)),
                (None, None) => None,
            };
            if let Some(slot) = slot {
                set_num(&mut op_array.opcodes[n].result, slot);
            }
        }
        ZEND_DEFINED => {
            if let Some(name) = op1 {
                op_array.opcodes[n].extended_value = t.shared(CONST_SLOT, name, PTR);
            }
        }
        ZEND_FETCH_CONSTANT => {
            if let Some(name) = op2 {
                op_array.opcodes[n].extended_value = t.shared(CONST_SLOT, name, PTR);
            }
        }
        ZEND_FETCH_CLASS_CONSTANT => {
            op_array.opcodes[n].extended_value = match (op1, op2) {
                (Some(class), Some(name)) => {
                    t.static_slot(op_array, class, name, LITERAL_CLASS_CONST)
                }
                _ => t.fresh(2 * PTR),
            };
        }
        ZEND_ASSIGN_STATIC_PROP
        | ZEND_ASSIGN_STATIC_PROP_REF
        | ZEND_FETCH_STATIC_PROP_R
        | ZEND_FETCH_STATIC_PROP_W
        | ZEND_FETCH_STATIC_PROP_RW
        | ZEND_FETCH_STATIC_PROP_IS
        | ZEND_FETCH_STATIC_PROP_UNSET
        | ZEND_FETCH_STATIC_PROP_FUNC_ARG
        | ZEND_UNSET_STATIC_PROP
        | ZEND_ISSET_ISEMPTY_STATIC_PROP
        | ZEND_PRE_INC_STATIC_PROP
        | ZEND_PRE_DEC_STATIC_PROP
        | ZEND_POST_INC_STATIC_PROP
        | ZEND_POST_DEC_STATIC_PROP => {
            let flags = op.extended_value & ZEND_FETCH_OBJ_FLAGS;
            let slot = match (op1, op2) {
                (Some(prop), Some(class)) => {
                    Some(t.static_slot(op_array, class, prop, LITERAL_STATIC_PROPERTY))
                }
                (Some(_), None) => Some(t.fresh(3 * PTR)),
                (None, Some(class)) => Some(t.shared(CLASS_SLOT, class, PTR)),
                (None, None) => None,
            };
            if let Some(slot) = slot {
                op_array.opcodes[n].extended_value = slot | flags;
            }
        }
        ZEND_FETCH_CLASS | ZEND_INSTANCEOF => {
            if let Some(class) = op2 {
                op_array.opcodes[n].extended_value = t.shared(CLASS_SLOT, class, PTR);
            }
        }
        ZEND_NEW => {
            if let Some(class) = op1 {
                let slot = t.shared(CLASS_SLOT, class, PTR);
                set_num(&mut op_array.opcodes[n].op2, slot);
            }
        }
        ZEND_CATCH => {
            if let Some(class) = op1 {
                let slot = t.shared(CLASS_SLOT, class, PTR);
                op_array.opcodes[n].extended_value = slot | (op.extended_value & ZEND_LAST_CATCH);
            }
        }
        ZEND_BIND_GLOBAL => {
            if let Some(name) = op2 {
                op_array.opcodes[n].extended_value = t.shared(BIND_VAR_SLOT, name, PTR);
            }
        }
        ZEND_DECLARE_ANON_CLASS | ZEND_DECLARE_CLASS_DELAYED => {
            op_array.opcodes[n].extended_value = t.fresh(PTR);
        }
        ZEND_SEND_VAL
        | ZEND_SEND_VAL_EX
        | ZEND_SEND_VAR
        | ZEND_SEND_VAR_EX
        | ZEND_SEND_VAR_NO_REF
        | ZEND_SEND_VAR_NO_REF_EX
        | ZEND_SEND_REF
        | ZEND_SEND_FUNC_ARG
        | ZEND_CHECK_FUNC_ARG
            if op2.is_some() =>
        {
            // A named argument caches where the name lands.
            let slot = t.fresh(2 * PTR);
            set_num(&mut op_array.opcodes[n].result, slot);
        }
        _ => {}
    }
}

fn lit(operand: Operand) -> Option<LiteralId> {
    match operand {
        Operand::Const(l) => Some(l),
        _ => None,
    }
}

fn set_num(operand: &mut Operand, n: u32) {
    if let Operand::Unused(v) = operand {
        *v = n;
    }
}

/// How many class names a parameter's (`arg_num` > 0) or the return value's (0) type holds:
/// the run-time cache keeps one class pointer for each.
fn type_num_classes(op_array: &OpArray, arg_num: u32) -> u32 {
    let info: Option<&ArgInfo> = if arg_num > 0 {
        if op_array.fn_flags & ZEND_ACC_HAS_TYPE_HINTS == 0 {
            return 0;
        }
        if arg_num <= op_array.num_args {
            op_array.arg_info.get(arg_num as usize - 1)
        } else if op_array.fn_flags & ZEND_ACC_VARIADIC != 0 {
            op_array.arg_info.get(op_array.num_args as usize)
        } else {
            None
        }
    } else {
        op_array.return_info.as_ref()
    };
    let Some(info) = info else { return 0 };
    match &info.type_.names {
        TypeNames::None => 0,
        TypeNames::Name(_) => 1,
        TypeNames::List(types) => {
            if info.type_.type_mask & _ZEND_TYPE_INTERSECTION_BIT != 0 {
                return types.len() as u32;
            }
            types
                .iter()
                .map(|t| match &t.names {
                    TypeNames::List(inner) if t.type_mask & _ZEND_TYPE_INTERSECTION_BIT != 0 => {
                        inner.len() as u32
                    }
                    _ => 1,
                })
                .sum()
        }
    }
}

/// The second half of `zend_optimizer_compact_literals`: every op's operands renumbered by
/// `scratch.map` (old literal to new), and in the same visit its run-time cache slot (which
/// reads that op's new literals only); then the RECV_INIT constant-expression slots.
fn assign_cache_slots(op_array: &mut OpArray, literal_count: usize, scratch: &mut Scratch) {
    scratch.statics.clear(0);
    scratch.slots.clear();
    scratch.slots.resize(literal_count, [NO_SLOT; SLOT_KINDS]);
    let map = &scratch.map;
    let mut t = SlotTables {
        cache_size: EXTENSION_HANDLES_SIZE,
        statics: &mut scratch.statics,
        concat: &mut scratch.concat,
        slots: &mut scratch.slots,
    };
    for n in 0..op_array.opcodes.len() {
        let op = &mut op_array.opcodes[n];
        if let Operand::Const(lit) = &mut op.op1 {
            if let Some(&new) = map.get(lit.index()) {
                *lit = LiteralId::new(new);
            }
        }
        if let Operand::Const(lit) = &mut op.op2 {
            if let Some(&new) = map.get(lit.index()) {
                *lit = LiteralId::new(new);
            }
        }
        if SLOT_OPCODES.contains(op.opcode) {
            op_slot(op_array, n, &mut t);
        }
    }
    op_array.cache_size = t.cache_size;

    // Constant-expression defaults cache their value in an 8-byte aligned zval.
    for n in 0..op_array.opcodes.len() {
        let op = &op_array.opcodes[n];
        if op.opcode == ZEND_RECV_INIT {
            if let Some(l) = lit(op.op2) {
                if matches!(op_array.literals.get(l.index()), Some(Literal::Ast(_))) {
                    op_array.cache_size = op_array.cache_size.next_multiple_of(8);
                    set_literal_extra(op_array, l, op_array.cache_size);
                    op_array.cache_size += 16;
                }
            }
        } else if op.opcode != ZEND_RECV {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zend_ir::{Op, PhpStr, SmartBranch, VarNum, ZendType};

    /// `SLOT_OPCODES` holds every opcode `op_slot` does something for: with the others,
    /// whatever their operands, it gives no slot and changes no op.
    #[test]
    fn op_slot_ignores_the_opcodes_it_is_not_called_for() {
        let operands = [
            Operand::Const(LiteralId::new(0)),
            Operand::Const(LiteralId::new(1)),
            Operand::Unused(0),
            Operand::Unused(1),
            Operand::Unused(IS_CONSTANT_UNQUALIFIED_IN_NAMESPACE),
            Operand::Cv(VarNum::new(0)),
            Operand::TmpVar(VarNum::new(1)),
        ];
        // A parameter and a return value of a class type, which the RECV ops and
        // VERIFY_RETURN_TYPE give slots for.
        let class_typed = ArgInfo {
            name: Some(PhpStr::from("x")),
            type_: ZendType {
                type_mask: 0,
                names: TypeNames::Name(PhpStr::from("C")),
            },
            default_value: None,
        };
        let mut scratch = Scratch::default();
        for code in 0..=u8::MAX {
            let opcode = Opcode(code);
            if SLOT_OPCODES.contains(opcode) {
                continue;
            }
            for op1 in operands {
                for op2 in operands {
                    let op = Op {
                        opcode,
                        op1,
                        op2,
                        result: Operand::Unused(0),
                        extended_value: 0,
                        lineno: 1,
                        smart_branch: SmartBranch::None,
                    };
                    let mut op_array = OpArray {
                        opcodes: vec![op, op],
                        literals: vec![
                            Literal::String(PhpStr::from("A")),
                            Literal::String(PhpStr::from("a")),
                        ],
                        fn_flags: ZEND_ACC_HAS_TYPE_HINTS,
                        num_args: 1,
                        arg_info: vec![class_typed.clone()],
                        return_info: Some(class_typed.clone()),
                        ..OpArray::default()
                    };
                    let before = op_array.clone();
                    scratch.slots.clear();
                    scratch.slots.resize(2, [NO_SLOT; SLOT_KINDS]);
                    let mut t = SlotTables {
                        cache_size: EXTENSION_HANDLES_SIZE,
                        statics: &mut scratch.statics,
                        concat: &mut scratch.concat,
                        slots: &mut scratch.slots,
                    };
                    op_slot(&mut op_array, 0, &mut t);
                    assert_eq!(t.cache_size, EXTENSION_HANDLES_SIZE, "{opcode:?}");
                    assert_eq!(op_array, before, "{opcode:?}");
                }
            }
        }
    }
}
