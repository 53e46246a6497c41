//! The op_array model of PHP 8.2 (Zend Engine 4.2): scripts, op_arrays, zend_ops, literals,
//! types and classes, as zend_compile.h defines them.
//!
//! The model is the "pass one" form the optimizer works on (what `zend_revert_pass_two`
//! leaves): CONST operands are literal indices, jump targets are op numbers, TMP/VAR/CV
//! operands are variable numbers (`EX_VAR_TO_NUM`). Everything the engine needs to run the
//! code again is kept, so a recording can be written back; pointers and run-time state
//! (handlers, run-time cache contents, refcounts of shared structures) are not.

use crate::opcode::Opcode;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Declares a typed `u32` index (Cranelift's entity style): `new`, `as_u32`, `index()`,
/// `From<usize>` and a `Debug` that prints the prefix and number. Extra attributes (docs,
/// derives) go first. Exported so every crate's index types share one definition.
///
/// The number is stored plus one in a `NonZeroU32`, so `Option<Index>` is four bytes, as
/// PHP's `-1` sentinel is: the SSA and CFG records full of optional indices stay the size of
/// PHP's. `u32::MAX` is therefore not a valid index. Serialized as the plain number
/// (`#[serde(into = "u32", try_from = "u32")]` at the declaration).
#[macro_export]
macro_rules! index_type {
    ($(#[$attr:meta])* $name:ident, $prefix:literal) => {
        $(#[$attr])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name($crate::model::IndexRepr);

        impl $name {
            /// The index `n`; panics on `u32::MAX`, the one number it cannot hold.
            #[inline]
            pub const fn new(n: u32) -> Self {
                match $crate::model::IndexRepr::new(n) {
                    Some(v) => $name(v),
                    None => panic!(concat!(stringify!($name), " overflows u32")),
                }
            }

            #[inline]
            pub const fn as_u32(self) -> u32 {
                self.0.get()
            }

            #[inline]
            pub const fn index(self) -> usize {
                self.as_u32() as usize
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.as_u32())
            }
        }

        impl ::core::convert::From<usize> for $name {
            #[inline]
            fn from(i: usize) -> Self {
                match u32::try_from(i) {
                    Ok(n) => $name::new(n),
                    Err(_) => panic!(concat!(stringify!($name), " overflows u32")),
                }
            }
        }

        impl ::core::convert::From<$name> for u32 {
            #[inline]
            fn from(i: $name) -> u32 {
                i.as_u32()
            }
        }

        impl ::core::convert::TryFrom<u32> for $name {
            type Error = ::std::string::String;

            fn try_from(n: u32) -> ::core::result::Result<Self, Self::Error> {
                $crate::model::IndexRepr::new(n)
                    .map($name)
                    .ok_or_else(|| format!(concat!(stringify!($name), " {} out of range"), n))
            }
        }
    };
}

pub use index_repr::IndexRepr;

mod index_repr {
    /// What an [`index_type!`] holds: the number plus one, so that `Option` of it has a
    /// niche. Its field is private to this module so that no crate declaring an index type
    /// can read the stored (shifted) number by mistake.
    #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub struct IndexRepr(core::num::NonZeroU32);

    impl IndexRepr {
        /// `None` for `u32::MAX`.
        #[inline]
        pub const fn new(n: u32) -> Option<Self> {
            match core::num::NonZeroU32::new(n.wrapping_add(1)) {
                Some(v) => Some(IndexRepr(v)),
                None => None,
            }
        }

        #[inline]
        pub const fn get(self) -> u32 {
            self.0.get() - 1
        }
    }
}

index_type!(
    /// An op number: index into `OpArray::opcodes`.
    #[derive(Serialize, Deserialize)]
    #[serde(into = "u32", try_from = "u32")]
    OpNum, "op"
);
index_type!(
    /// A variable slot number (`EX_VAR_TO_NUM`): CVs are `0..last_var`, TMP/VAR above them.
    #[derive(Serialize, Deserialize)]
    #[serde(into = "u32", try_from = "u32")]
    VarNum, "var"
);
index_type!(
    /// Index into `OpArray::literals`.
    #[derive(Serialize, Deserialize)]
    #[serde(into = "u32", try_from = "u32")]
    LiteralId, "lit"
);

/// Operand types (`IS_UNUSED`, `IS_CONST`, ... in zend_compile.h).
pub const IS_UNUSED: u8 = 0;
pub const IS_CONST: u8 = 1 << 0;
pub const IS_TMP_VAR: u8 = 1 << 1;
pub const IS_VAR: u8 = 1 << 2;
pub const IS_CV: u8 = 1 << 3;
pub const IS_SMART_BRANCH_JMPZ: u8 = 1 << 4;
pub const IS_SMART_BRANCH_JMPNZ: u8 = 1 << 5;

/// One operand of a `zend_op` (op1, op2 or result), decoded by its type and the opcode's
/// VM flags.
///
/// The tags are numbered so that the usual kind tests are one comparison each, as PHP
/// tests `op_type` bits: TMP/VAR and TMP/VAR/CV are the top two and three tags of the u32
/// range. (The serialized form follows the declaration order, not these numbers.)
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum Operand {
    /// `IS_UNUSED`; the raw `znode_op` value, which some opcodes use as a number
    /// (argument number, fetch type, try-catch index...).
    Unused(u32) = 0,
    /// `IS_UNUSED` on an operand the VM flags mark `ZEND_VM_OP_JMP_ADDR`: a jump target.
    JmpAddr(OpNum) = 1,
    Const(LiteralId) = 2,
    TmpVar(VarNum) = u32::MAX - 1,
    Var(VarNum) = u32::MAX,
    Cv(VarNum) = u32::MAX - 2,
}

const _: () = assert!(std::mem::size_of::<Operand>() == 8);
const _: () = assert!(std::mem::size_of::<Option<Operand>>() == 8);

impl Operand {
    /// The `zend_uchar op_type` value of this operand.
    pub fn op_type(self) -> u8 {
        match self {
            Operand::Unused(_) | Operand::JmpAddr(_) => IS_UNUSED,
            Operand::Const(_) => IS_CONST,
            Operand::TmpVar(_) => IS_TMP_VAR,
            Operand::Var(_) => IS_VAR,
            Operand::Cv(_) => IS_CV,
        }
    }

    /// The variable this operand names, for TMP/VAR/CV.
    pub fn var(self) -> Option<VarNum> {
        match self {
            Operand::TmpVar(v) | Operand::Var(v) | Operand::Cv(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_unused(self) -> bool {
        self.op_type() == IS_UNUSED
    }
}

/// Which smart branch (if any) a comparison result feeds (`IS_SMART_BRANCH_JMPZ/JMPNZ` bits
/// of `result_type`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SmartBranch {
    #[default]
    None,
    Jmpz,
    Jmpnz,
}

/// A `zend_op`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Op {
    pub opcode: Opcode,
    pub op1: Operand,
    pub op2: Operand,
    pub result: Operand,
    /// Raw `extended_value`, except for opcodes whose VM flags say `ZEND_VM_EXT_JMP_ADDR`,
    /// where it is the target op number.
    pub extended_value: u32,
    pub lineno: u32,
    pub smart_branch: SmartBranch,
}

impl Op {
    /// `result_type` as PHP stores it, smart-branch bits included.
    pub fn result_type(&self) -> u8 {
        self.result.op_type()
            | match self.smart_branch {
                SmartBranch::None => 0,
                SmartBranch::Jmpz => IS_SMART_BRANCH_JMPZ,
                SmartBranch::Jmpnz => IS_SMART_BRANCH_JMPNZ,
            }
    }
}

/// A byte string: PHP strings are not UTF-8.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PhpStr(pub Vec<u8>);

impl PhpStr {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn to_lowercase(&self) -> PhpStr {
        PhpStr(self.0.to_ascii_lowercase())
    }
}

impl fmt::Debug for PhpStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

impl fmt::Display for PhpStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl From<&str> for PhpStr {
    fn from(s: &str) -> Self {
        PhpStr(s.as_bytes().to_vec())
    }
}

impl From<&[u8]> for PhpStr {
    fn from(s: &[u8]) -> Self {
        PhpStr(s.to_vec())
    }
}

/// A double kept bit-exact (NaN payloads and -0.0 included), so equality is bitwise.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PhpDouble(pub u64);

impl PhpDouble {
    pub fn new(value: f64) -> Self {
        PhpDouble(value.to_bits())
    }

    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl fmt::Debug for PhpDouble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.get())
    }
}

/// A hash key of a PHP array.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArrayKey {
    Long(i64),
    Str(PhpStr),
}

/// A PHP array: its elements in insertion order (read through `Deref`), and
/// `nNextFreeElement`, which the keys alone do not give. A table the compiler or an
/// optimizer builds by inserting elements into a new array starts from `ZEND_LONG_MIN` (so
/// `[-5 => 1]` then appends at -4), the empty array `[]` is PHP 8.2's `zend_empty_array`,
/// whose next element is 0 (so `$a = []; $a[-5] = 1; $a[] = 2;` appends at 0), and removing
/// an element never lowers it. An optimizer that folds `$a[] = ...` or writes a folded
/// array back into PHP must keep it. `V` is [`Literal`] for constant arrays; an analysis
/// may hold other values (SCCP's lattice points).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PhpArray<V = Literal> {
    elements: Vec<(ArrayKey, V)>,
    next_free: i64,
}

impl<V> PhpArray<V> {
    /// An array with an explicit `nNextFreeElement` (as recorded from PHP).
    pub fn with_next_free(elements: Vec<(ArrayKey, V)>, next_free: i64) -> Self {
        PhpArray {
            elements,
            next_free,
        }
    }

    /// A new table (`array_init`): no element, `nNextFreeElement` `ZEND_LONG_MIN`.
    pub fn new() -> Self {
        PhpArray {
            elements: Vec::new(),
            next_free: i64::MIN,
        }
    }

    /// The `nNextFreeElement` PHP gives `elements` built the usual way: `zend_empty_array`
    /// when there are none, else a new table the elements were inserted into in order.
    pub fn usual_next_free(elements: &[(ArrayKey, V)]) -> i64 {
        if elements.is_empty() {
            return 0;
        }
        elements.iter().fold(i64::MIN, |next, (k, _)| match *k {
            ArrayKey::Long(h) => next_free_after(next, h),
            ArrayKey::Str(_) => next,
        })
    }

    /// `nNextFreeElement`.
    pub fn next_free(&self) -> i64 {
        self.next_free
    }

    /// The key `zend_hash_next_index_insert` gives the next element, `None` when the array
    /// already holds it (the insert fails, at `ZEND_LONG_MAX`).
    pub fn next_index(&self) -> Option<i64> {
        let h = if self.next_free == i64::MIN {
            0
        } else {
            self.next_free
        };
        self.get(&ArrayKey::Long(h)).is_none().then_some(h)
    }

    pub fn get(&self, key: &ArrayKey) -> Option<&V> {
        self.elements.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn into_elements(self) -> Vec<(ArrayKey, V)> {
        self.elements
    }

    /// Same elements (and `nNextFreeElement`), each value mapped.
    pub fn map<W>(&self, f: impl FnMut(&V) -> W) -> PhpArray<W> {
        let mut f = f;
        PhpArray {
            elements: self
                .elements
                .iter()
                .map(|(k, v)| (k.clone(), f(v)))
                .collect(),
            next_free: self.next_free,
        }
    }

    /// Same elements (and `nNextFreeElement`), each value mapped, unless `f` fails on one.
    pub fn try_map<W>(&self, f: impl FnMut(&V) -> Option<W>) -> Option<PhpArray<W>> {
        let mut f = f;
        Some(PhpArray {
            elements: self
                .elements
                .iter()
                .map(|(k, v)| Some((k.clone(), f(v)?)))
                .collect::<Option<_>>()?,
            next_free: self.next_free,
        })
    }

    /// The values, to change them.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.elements.iter_mut().map(|(_, v)| v)
    }

    /// The elements, keys read-only, to change their values.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = (&ArrayKey, &mut V)> {
        self.elements.iter_mut().map(|(k, v)| (&*k, v))
    }

    /// Appends an element under a key the array does not hold (`zend_hash_add_new`).
    pub fn add_new(&mut self, key: ArrayKey, value: V) {
        if let ArrayKey::Long(h) = key {
            self.next_free = next_free_after(self.next_free, h);
        }
        self.elements.push((key, value));
    }

    /// `zend_hash_update`: replaces the value of `key` in place, or appends it.
    pub fn update(&mut self, key: ArrayKey, value: V) {
        match self.elements.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.add_new(key, value),
        }
    }

    /// `zend_hash_next_index_insert`: false when the array holds the next key already.
    pub fn next_index_insert(&mut self, value: V) -> bool {
        match self.next_index() {
            Some(h) => {
                self.add_new(ArrayKey::Long(h), value);
                true
            }
            None => false,
        }
    }

    /// `zend_hash_del`: `nNextFreeElement` stays.
    pub fn remove(&mut self, key: &ArrayKey) {
        if let Some(p) = self.elements.iter().position(|(k, _)| k == key) {
            self.elements.remove(p);
        }
    }
}

impl<V> Default for PhpArray<V> {
    fn default() -> Self {
        PhpArray::new()
    }
}

/// `nNextFreeElement` after inserting integer key `h` into a table whose next element was
/// `next` (`_zend_hash_index_add_or_update_i`).
pub fn next_free_after(next: i64, h: i64) -> i64 {
    if h >= next {
        h.saturating_add(1)
    } else {
        next
    }
}

impl<V> From<Vec<(ArrayKey, V)>> for PhpArray<V> {
    /// The array built the usual way ([`PhpArray::usual_next_free`]).
    fn from(elements: Vec<(ArrayKey, V)>) -> Self {
        let next_free = PhpArray::usual_next_free(&elements);
        PhpArray {
            elements,
            next_free,
        }
    }
}

impl<V> FromIterator<(ArrayKey, V)> for PhpArray<V> {
    fn from_iter<I: IntoIterator<Item = (ArrayKey, V)>>(iter: I) -> Self {
        PhpArray::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<V> std::ops::Deref for PhpArray<V> {
    type Target = [(ArrayKey, V)];
    fn deref(&self) -> &Self::Target {
        &self.elements
    }
}

impl<'a, V> IntoIterator for &'a PhpArray<V> {
    type Item = &'a (ArrayKey, V);
    type IntoIter = std::slice::Iter<'a, (ArrayKey, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.elements.iter()
    }
}

/// A compile-time value: the zvals of `literals`, default values and constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Literal {
    Null,
    False,
    True,
    Long(i64),
    Double(PhpDouble),
    String(PhpStr),
    /// An array in insertion order.
    Array(PhpArray),
    /// `IS_CONSTANT_AST`: a constant expression evaluated at run time.
    Ast(Box<Ast>),
}

impl Literal {
    /// The zval type code (`Z_TYPE`).
    pub fn type_code(&self) -> u8 {
        use crate::types::*;
        match self {
            Literal::Null => IS_NULL,
            Literal::False => IS_FALSE,
            Literal::True => IS_TRUE,
            Literal::Long(_) => IS_LONG,
            Literal::Double(_) => IS_DOUBLE,
            Literal::String(_) => IS_STRING,
            Literal::Array(_) => IS_ARRAY,
            Literal::Ast(_) => IS_CONSTANT_AST,
        }
    }
}

/// A `zend_ast` node of a constant expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ast {
    /// `zend_ast_kind`; its special/list bits and child count follow zend_ast.h.
    pub kind: u16,
    pub attr: u16,
    pub lineno: u32,
    pub body: AstBody,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AstBody {
    /// `ZEND_AST_ZVAL` and `ZEND_AST_CONSTANT` (whose zval is the constant's name).
    Zval(Literal),
    /// Ordinary nodes and lists; absent children are `None`.
    Children(Vec<Option<Ast>>),
}

pub const ZEND_AST_ZVAL: u16 = 64;
pub const ZEND_AST_CONSTANT: u16 = 65;
pub const ZEND_AST_ZNODE: u16 = 66;
pub const ZEND_AST_SPECIAL_SHIFT: u16 = 6;
pub const ZEND_AST_IS_LIST_SHIFT: u16 = 7;
pub const ZEND_AST_NUM_CHILDREN_SHIFT: u16 = 8;

/// A `zend_type`: the type mask (with Zend's kind and extra bits) and the class names it
/// points to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ZendType {
    /// `type_mask` exactly as PHP stores it (MAY_BE bits, `_ZEND_TYPE_*_BIT`s and, in
    /// arg_info, the send mode / variadic / promoted bits).
    pub type_mask: u32,
    pub names: TypeNames,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TypeNames {
    #[default]
    None,
    /// `_ZEND_TYPE_NAME_BIT`: one class name.
    Name(PhpStr),
    /// `_ZEND_TYPE_LIST_BIT`: a union or intersection list (nested for DNF types).
    List(Vec<ZendType>),
}

pub const _ZEND_TYPE_NAME_BIT: u32 = 1 << 24;
pub const _ZEND_TYPE_LIST_BIT: u32 = 1 << 22;
pub const _ZEND_TYPE_ITERABLE_BIT: u32 = 1 << 21;
pub const _ZEND_TYPE_ARENA_BIT: u32 = 1 << 20;
pub const _ZEND_TYPE_INTERSECTION_BIT: u32 = 1 << 19;
pub const _ZEND_TYPE_UNION_BIT: u32 = 1 << 18;
pub const _ZEND_TYPE_NULLABLE_BIT: u32 = 0x2;
pub const _ZEND_TYPE_EXTRA_FLAGS_SHIFT: u32 = 25;
pub const _ZEND_SEND_MODE_SHIFT: u32 = _ZEND_TYPE_EXTRA_FLAGS_SHIFT;
pub const _ZEND_IS_VARIADIC_BIT: u32 = 1 << (_ZEND_TYPE_EXTRA_FLAGS_SHIFT + 2);
pub const _ZEND_IS_PROMOTED_BIT: u32 = 1 << (_ZEND_TYPE_EXTRA_FLAGS_SHIFT + 3);
pub const _ZEND_IS_TENTATIVE_BIT: u32 = 1 << (_ZEND_TYPE_EXTRA_FLAGS_SHIFT + 4);

/// A `zend_arg_info`. For user functions `default_value` is always `None` (defaults live in
/// RECV_INIT).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArgInfo {
    pub name: Option<PhpStr>,
    pub type_: ZendType,
    pub default_value: Option<PhpStr>,
}

/// A `zend_live_range`, Zend's `var` field split in two: the variable ([`LiveRange::var`])
/// and the `ZEND_LIVE_*` kind PHP keeps in its low bits ([`LiveRange::kind`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LiveRange {
    pub var: VarNum,
    pub kind: u32,
    pub start: OpNum,
    pub end: OpNum,
}

pub const ZEND_LIVE_TMPVAR: u32 = 0;
pub const ZEND_LIVE_LOOP: u32 = 1;
pub const ZEND_LIVE_SILENCE: u32 = 2;
pub const ZEND_LIVE_ROPE: u32 = 3;
pub const ZEND_LIVE_NEW: u32 = 4;
pub const ZEND_LIVE_MASK: u32 = 7;

/// A `zend_try_catch_element`. Absent catch/finally parts are `None` (PHP stores 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TryCatchElement {
    pub try_op: OpNum,
    pub catch_op: Option<OpNum>,
    pub finally_op: Option<OpNum>,
    pub finally_end: Option<OpNum>,
}

/// A `zend_attribute`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Attribute {
    pub name: PhpStr,
    pub lcname: PhpStr,
    pub flags: u32,
    pub lineno: u32,
    /// Parameter offset for parameter attributes, 0 otherwise.
    pub offset: u32,
    pub args: Vec<AttributeArg>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AttributeArg {
    pub name: Option<PhpStr>,
    pub value: Literal,
}

pub const ZEND_INTERNAL_FUNCTION: u8 = 1;
pub const ZEND_USER_FUNCTION: u8 = 2;
pub const ZEND_EVAL_CODE: u8 = 4;

/// A `zend_op_array`.
#[allow(non_snake_case)]
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OpArray {
    /// `ZEND_USER_FUNCTION` or `ZEND_EVAL_CODE`.
    pub type_: u8,
    pub fn_flags: u32,
    /// `None` for the main script (dumped as `$_main`).
    pub function_name: Option<PhpStr>,
    /// Name of the class this op_array belongs to.
    pub scope: Option<PhpStr>,
    pub num_args: u32,
    pub required_num_args: u32,
    /// `arg_info[0..num_args]`, plus the variadic one when `ZEND_ACC_VARIADIC` is set.
    pub arg_info: Vec<ArgInfo>,
    /// `arg_info[-1]`, present when `ZEND_ACC_HAS_RETURN_TYPE` is set.
    pub return_info: Option<ArgInfo>,
    pub attributes: Vec<Attribute>,
    /// Number of TMP/VAR slots.
    pub T: u32,
    /// Bytes of run-time cache (`cache_size`).
    pub cache_size: u32,
    /// CV names without the `$`: `vars.len()` is `last_var`.
    pub vars: Vec<PhpStr>,
    pub opcodes: Vec<Op>,
    pub literals: Vec<Literal>,
    /// The literals' non-zero `u2` (`Z_EXTRA`) values, `(literal, value)` in increasing
    /// literal order; every other literal's `u2` is 0 (`zend_insert_literal` zeroes it).
    /// PHP reads two kinds: `ZEND_EXTRA_VALUE` (1) on an integer array offset that was a
    /// numeric string (`zend_handle_numeric_dim`; the original string is the next literal and
    /// is what ArrayAccess receives), and the run-time cache slot `pass_two` stores in a
    /// RECV_INIT constant-expression default (`Z_CACHE_SLOT`). Sparse because nearly every
    /// op_array has none.
    pub literal_extra: Vec<(LiteralId, u32)>,
    /// Static variables and their initial values (`None`: no table).
    pub static_variables: Option<Vec<(PhpStr, Literal)>>,
    pub live_range: Vec<LiveRange>,
    pub try_catch_array: Vec<TryCatchElement>,
    pub filename: PhpStr,
    pub line_start: u32,
    pub line_end: u32,
    pub doc_comment: Option<PhpStr>,
    /// Closures and functions declared at run time, referenced by index from
    /// DECLARE_LAMBDA_FUNCTION / DECLARE_FUNCTION.
    pub dynamic_func_defs: Vec<Box<OpArray>>,
}

impl OpArray {
    pub fn last_var(&self) -> u32 {
        self.vars.len() as u32
    }

    pub fn op(&self, n: OpNum) -> &Op {
        &self.opcodes[n.index()]
    }

    pub fn literal(&self, id: LiteralId) -> &Literal {
        &self.literals[id.index()]
    }

    /// The `u2` (`Z_EXTRA`) of literal `id`: 0 unless listed in `literal_extra`.
    pub fn literal_extra(&self, id: LiteralId) -> u32 {
        self.literal_extra
            .iter()
            .find(|(l, _)| *l == id)
            .map_or(0, |&(_, v)| v)
    }

    /// The name `zend_dump_op_array_name` prints: `Class::method`, `function` or `$_main`.
    pub fn display_name(&self) -> String {
        match (&self.function_name, &self.scope) {
            (None, _) => "$_main".to_string(),
            (Some(f), Some(s)) => format!("{s}::{f}"),
            (Some(f), None) => f.to_string(),
        }
    }

    /// Checks that every number this op_array holds points inside it: CVs below `last_var`,
    /// TMP/VARs in `last_var..last_var + T`, literals in the table, jumps to an op, try/catch
    /// and live-range offsets within the ops. PHP's op_arrays always pass; a recording edited
    /// by hand or damaged may not, and every analysis indexes by these numbers.
    pub fn check_bounds(&self) -> Result<(), OpArrayError> {
        let fail = |op: Option<usize>, message: String| {
            Err(OpArrayError {
                op: op.map(|n| OpNum::new(n as u32)),
                message,
            })
        };
        let ops = self.opcodes.len();
        let vars = self.last_var() as usize;
        let slots = vars + self.T as usize;
        for (i, op) in self.opcodes.iter().enumerate() {
            for (what, operand) in [("op1", op.op1), ("op2", op.op2), ("result", op.result)] {
                let bad = match operand {
                    Operand::Const(lit) => (lit.index() >= self.literals.len()).then(|| {
                        format!("{what} literal {} of {}", lit.as_u32(), self.literals.len())
                    }),
                    Operand::Cv(v) => {
                        (v.index() >= vars).then(|| format!("{what} CV {} of {vars}", v.as_u32()))
                    }
                    Operand::TmpVar(v) | Operand::Var(v) => (v.index() < vars
                        || v.index() >= slots)
                        .then(|| format!("{what} TMP/VAR {} outside {vars}..{slots}", v.as_u32())),
                    Operand::JmpAddr(t) => (t.index() >= ops)
                        .then(|| format!("{what} jumps to op {} of {ops}", t.as_u32())),
                    Operand::Unused(_) => None,
                };
                if let Some(message) = bad {
                    return fail(Some(i), message);
                }
            }
        }
        for tc in &self.try_catch_array {
            for at in [Some(tc.try_op), tc.catch_op, tc.finally_op, tc.finally_end]
                .into_iter()
                .flatten()
            {
                if at.index() > ops {
                    return fail(None, format!("try/catch offset {} of {ops}", at.as_u32()));
                }
            }
        }
        for lr in &self.live_range {
            if lr.start > lr.end || lr.end.index() > ops || lr.var.index() >= slots {
                return fail(
                    None,
                    format!(
                        "live range of var {} [{}, {}) of {ops} ops",
                        lr.var.as_u32(),
                        lr.start.as_u32(),
                        lr.end.as_u32()
                    ),
                );
            }
        }
        Ok(())
    }
}

/// A problem of an op_array (a number pointing outside it, [`OpArray::check_bounds`]; a
/// check after an optimizer pass), with the op it concerns when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpArrayError {
    pub op: Option<OpNum>,
    pub message: String,
}

impl fmt::Display for OpArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.op {
            Some(op) => write!(f, "op {}: {}", op.as_u32(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for OpArrayError {}

/// A `zend_class_constant`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClassConstant {
    pub name: PhpStr,
    pub value: Literal,
    /// `ZEND_CLASS_CONST_FLAGS`: visibility, final, enum case...
    pub flags: u32,
    pub doc_comment: Option<PhpStr>,
    pub attributes: Vec<Attribute>,
    /// Name of the declaring class.
    pub ce: PhpStr,
}

/// A `zend_property_info` with the property's default value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PropertyInfo {
    pub name: PhpStr,
    pub flags: u32,
    /// Byte offset in the object (instance) or index in the static members table.
    pub offset: u32,
    pub type_: ZendType,
    /// Default value; `None` when the slot is `IS_UNDEF` (typed property without default).
    pub default: Option<Literal>,
    pub doc_comment: Option<PhpStr>,
    pub attributes: Vec<Attribute>,
    /// Name of the declaring class.
    pub ce: PhpStr,
}

/// A trait method reference (`zend_trait_method_reference`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraitMethodRef {
    pub method_name: PhpStr,
    pub class_name: Option<PhpStr>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraitAlias {
    pub method: TraitMethodRef,
    pub alias: Option<PhpStr>,
    pub modifiers: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraitPrecedence {
    pub method: TraitMethodRef,
    pub exclude_class_names: Vec<PhpStr>,
}

/// A class, interface, trait or enum name with its lowercased lookup key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClassName {
    pub name: PhpStr,
    pub lc_name: PhpStr,
}

/// A `zend_class_entry` of a compiled script: not yet linked, except in the script of
/// OPcache's preloading, whose classes are linked (`ZEND_ACC_LINKED`: members inherited,
/// each naming its declaring class).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClassEntry {
    pub name: PhpStr,
    pub parent_name: Option<PhpStr>,
    pub ce_flags: u32,
    /// `ce->refcount`: above 1 the entry is shared (class aliases).
    pub refcount: u32,
    pub interface_names: Vec<ClassName>,
    pub trait_names: Vec<ClassName>,
    pub trait_aliases: Vec<TraitAlias>,
    pub trait_precedences: Vec<TraitPrecedence>,
    pub constants: Vec<ClassConstant>,
    pub properties: Vec<PropertyInfo>,
    /// The method table in order: lowercased key and op_array.
    pub methods: Vec<(PhpStr, Box<OpArray>)>,
    /// The entries of the method table whose code the optimizer never sees, which only a
    /// linked class has (only OPcache's preloading hands the optimizer linked classes): see
    /// [`MethodStub`]. Not part of `methods`; each keeps its place in PHP's table.
    pub method_stubs: Vec<MethodStub>,
    pub attributes: Vec<Attribute>,
    pub filename: PhpStr,
    pub line_start: u32,
    pub line_end: u32,
    pub doc_comment: Option<PhpStr>,
    /// Backing type of an enum (`IS_UNDEF`, `IS_LONG` or `IS_STRING`).
    pub enum_backing_type: u8,
}

/// A method table entry of a linked class whose code the optimizer never sees: an internal
/// function (inherited, as an exception's `getMessage`, or given to every enum, as
/// `cases`) or a copy of a trait's method (`ZEND_ACC_TRAIT_CLONE`), which OPcache
/// overwrites with the trait's optimized method after the optimizer (and whose code may
/// already be freed while the optimizer runs: PHP's own passes skip it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MethodStub {
    /// Its place in the whole method table (user methods and stubs together).
    pub position: u32,
    /// The lowercased key.
    pub key: PhpStr,
    /// The class that declares it (`func->common.scope->name`): for an internal function an
    /// internal class, or the enum itself for the functions PHP gives every enum; for a
    /// trait method's copy, the class using the trait (or the one it inherits the copy
    /// from).
    pub scope: PhpStr,
    /// `func->common.fn_flags`.
    pub fn_flags: u32,
}

impl MethodStub {
    /// Whether it is a copy of a trait's method, not an internal function.
    pub fn is_trait_clone(&self) -> bool {
        self.fn_flags & ZEND_ACC_TRAIT_CLONE != 0
    }

    /// For an internal function of linked class `ce`, the internal class whose method of
    /// the same name has its signature: the declaring class, or for the functions
    /// `zend_enum_register_funcs` gives every enum (`cases`, `from`, `tryFrom`) the
    /// interface declaring them. `None` for a trait method's copy.
    pub fn internal_class(&self, ce: &ClassEntry) -> Option<&'static str> {
        if self.is_trait_clone() {
            None
        } else if self.scope == ce.name {
            Some(if self.key.as_bytes() == b"cases" {
                "UnitEnum"
            } else {
                "BackedEnum"
            })
        } else {
            crate::internal_class(&self.scope.as_bytes().to_ascii_lowercase())
        }
    }
}

/// An entry of a class's method table.
#[derive(Clone, Copy, Debug)]
pub enum MethodEntry<'a> {
    /// A user method: its lowercased key and op_array.
    User(&'a PhpStr, &'a OpArray),
    Stub(&'a MethodStub),
}

impl ClassEntry {
    /// The method table in PHP's order, user methods and stubs together.
    pub fn method_table(&self) -> impl Iterator<Item = MethodEntry<'_>> + '_ {
        let mut user = self.methods.iter();
        let mut stubs = self.method_stubs.iter().peekable();
        (0..self.methods.len() + self.method_stubs.len()).filter_map(move |i| {
            match stubs.next_if(|m| m.position as usize == i) {
                Some(m) => Some(MethodEntry::Stub(m)),
                None => user.next().map(|(k, f)| MethodEntry::User(k, f)),
            }
        })
    }

    /// The method stub whose lowercased key is `lckey`.
    pub fn method_stub(&self, lckey: &[u8]) -> Option<&MethodStub> {
        self.method_stubs.iter().find(|m| m.key.as_bytes() == lckey)
    }
}

/// A compiled script (`zend_script`): what OPcache optimizes and caches.
///
/// Every op_array (main, functions, methods, `dynamic_func_defs`) is boxed, as PHP's are
/// pointers: a pass works on one op_array while it reads the rest of the script, and the
/// optimizer lends it out of the script by swapping boxes rather than moving the op_array.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Script {
    pub filename: PhpStr,
    pub main_op_array: Box<OpArray>,
    /// `function_table` in order: key (lowercased name, or a run-time declaration key) and
    /// op_array.
    pub function_table: Vec<(PhpStr, Box<OpArray>)>,
    /// `class_table` in order: key and class.
    pub class_table: Vec<(PhpStr, ClassEntry)>,
    /// The byte offset just past `__halt_compiler();` in the file: the value of the
    /// script's `__COMPILER_HALT_OFFSET__` constant, which the compiler registers under the
    /// name mangled with the file name and which a script served from a cache must register
    /// again. `None` when the script has no `__halt_compiler()`. Mirrors
    /// `zend_persistent_script.compiler_halt_offset`.
    pub compiler_halt_offset: Option<u64>,
    /// The diagnostics PHP's compiler emitted while compiling the script (deprecations,
    /// warnings, notices), in order: what a cache replays on a hit, so that a script served
    /// from it says what it says when compiled. Mirrors `zend_persistent_script.warnings`
    /// (`opcache.record_warnings`).
    pub warnings: Vec<ErrorInfo>,
    /// The main op_array's delayed early bindings (its `ZEND_DECLARE_CLASS_DELAYED` ops), in
    /// op order, as compiled: taken before any optimization, so that a class whose
    /// declaration the optimizer removed as unreachable is still bound when the script is
    /// loaded, as PHP binds it while compiling. Mirrors `zend_persistent_script.early_bindings`
    /// (`zend_accel_build_delayed_early_binding_list` runs before OPcache's optimizer).
    pub early_bindings: Vec<EarlyBinding>,
}

/// One delayed early binding (`zend_early_binding`, without the run-time cache slot, which
/// belongs to the op when the op is still there).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EarlyBinding {
    /// The class's lowercased name.
    pub lcname: PhpStr,
    /// Its runtime definition key: the class table holds the unlinked class under it.
    pub rtd_key: PhpStr,
    /// Its parent's lowercased name.
    pub lc_parent_name: PhpStr,
}

impl EarlyBinding {
    /// The delayed early bindings of the main op_array `main`, in op order (none unless the
    /// compiler flagged it [`ZEND_ACC_EARLY_BINDING`]), as
    /// `zend_accel_build_delayed_early_binding_list` lists them: the class name is op1's
    /// literal, the runtime definition key the literal after it, the parent name op2's.
    /// `None` when such an op does not have those literals (not PHP's compiler's output).
    pub fn delayed_of(main: &OpArray) -> Option<Vec<EarlyBinding>> {
        if main.fn_flags & ZEND_ACC_EARLY_BINDING == 0 {
            return Some(Vec::new());
        }
        let string = |id: usize| match main.literals.get(id) {
            Some(Literal::String(s)) => Some(s.clone()),
            _ => None,
        };
        main.opcodes
            .iter()
            .filter(|op| op.opcode == crate::opcode_table::ZEND_DECLARE_CLASS_DELAYED)
            .map(|op| match (op.op1, op.op2) {
                (Operand::Const(name), Operand::Const(parent)) => Some(EarlyBinding {
                    lcname: string(name.index())?,
                    rtd_key: string(name.index() + 1)?,
                    lc_parent_name: string(parent.index())?,
                }),
                _ => None,
            })
            .collect()
    }
}

/// One diagnostic recorded while compiling (`zend_error_info`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// `E_DEPRECATED`, `E_WARNING`, ... (`zend_error_info.type`).
    pub type_: u32,
    pub lineno: u32,
    pub filename: PhpStr,
    pub message: PhpStr,
}

pub const ZEND_ACC_ABSTRACT: u32 = 1 << 6;
pub const ZEND_ACC_TRAIT_CLONE: u32 = 1 << 20;
pub const ZEND_ACC_HAS_RETURN_TYPE: u32 = 1 << 13;
pub const ZEND_ACC_VARIADIC: u32 = 1 << 14;
pub const ZEND_ACC_STRICT_TYPES: u32 = 1 << 31;
/// A main op_array with `ZEND_DECLARE_CLASS_DELAYED` ops.
pub const ZEND_ACC_EARLY_BINDING: u32 = 1 << 16;

impl Script {
    /// The trait method a linked class's trait-method copy `stub` was made from, through
    /// the aliases of the class using the trait and traits using traits: the trait and the
    /// method's key in it. The copy has the method's signature (its code is not to be read,
    /// see [`MethodStub`]).
    pub fn trait_method_of(&self, stub: &MethodStub) -> Option<(&ClassEntry, &PhpStr)> {
        let mut user = self.class_named(stub.scope.as_bytes())?;
        let mut key = stub.key.as_bytes().to_ascii_lowercase();
        // Each step goes one trait deeper; traits cannot use themselves, a damaged
        // recording could.
        for _ in 0..16 {
            let alias = user.trait_aliases.iter().find(|a| {
                a.alias
                    .as_ref()
                    .is_some_and(|n| n.as_bytes().eq_ignore_ascii_case(&key))
            });
            let (name, from) = match alias {
                Some(a) => (
                    a.method.method_name.as_bytes().to_ascii_lowercase(),
                    a.method.class_name.as_ref(),
                ),
                None => (key.clone(), None),
            };
            let traits: Vec<&ClassEntry> = match from {
                Some(t) => self.class_named(t.as_bytes()).into_iter().collect(),
                None => user
                    .trait_names
                    .iter()
                    .filter_map(|t| self.class_named(t.name.as_bytes()))
                    .collect(),
            };
            let mut deeper = None;
            for t in traits {
                if let Some((k, _)) = t.methods.iter().find(|(k, _)| k.as_bytes() == &name[..]) {
                    return Some((t, k));
                }
                if let Some(m) = t.method_stub(&name).filter(|m| m.is_trait_clone()) {
                    deeper = Some(m);
                }
            }
            let next = deeper?;
            user = self.class_named(next.scope.as_bytes())?;
            key = name;
        }
        None
    }

    /// The class (not an alias entry) whose name is `name`, case-insensitively.
    fn class_named(&self, name: &[u8]) -> Option<&ClassEntry> {
        self.class_table
            .iter()
            .map(|(_, ce)| ce)
            .find(|ce| ce.name.as_bytes().eq_ignore_ascii_case(name))
    }

    /// The methods of every class-table entry (inherited and abstract ones included):
    /// with the main op_array and the functions, room for every op_array of a script
    /// without closures.
    pub fn method_count(&self) -> usize {
        self.class_table
            .iter()
            .map(|(_, ce)| ce.methods.len())
            .sum()
    }

    /// Every op_array in the order `zend_foreach_op_array` visits them: the main op_array,
    /// functions, then each class's own non-abstract methods, each followed by its dynamic
    /// function definitions (depth first).
    pub fn op_arrays(&self) -> Vec<&OpArray> {
        fn with_dynamic<'a>(op_array: &'a OpArray, out: &mut Vec<&'a OpArray>) {
            out.push(op_array);
            for def in &op_array.dynamic_func_defs {
                with_dynamic(def, out);
            }
        }
        let mut out = Vec::new();
        with_dynamic(&self.main_op_array, &mut out);
        for (_, func) in &self.function_table {
            with_dynamic(func, &mut out);
        }
        for (key, ce) in &self.class_table {
            if ce.refcount > 1 && !key.0.eq_ignore_ascii_case(&ce.name.0) {
                continue;
            }
            for (_, method) in &ce.methods {
                if method.scope.as_ref() == Some(&ce.name)
                    && method.type_ == ZEND_USER_FUNCTION
                    && method.fn_flags & (ZEND_ACC_ABSTRACT | ZEND_ACC_TRAIT_CLONE) == 0
                {
                    with_dynamic(method, &mut out);
                }
            }
        }
        out
    }
}
