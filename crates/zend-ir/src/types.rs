//! MAY_BE_* type masks with PHP 8.2's exact bit values (Zend/zend_type_info.h), and the
//! zval type codes (Zend/zend_types.h) they are built from.

use bitflags::bitflags;
use serde::{Deserialize, Serialize};

pub const IS_UNDEF: u8 = 0;
pub const IS_NULL: u8 = 1;
pub const IS_FALSE: u8 = 2;
pub const IS_TRUE: u8 = 3;
pub const IS_LONG: u8 = 4;
pub const IS_DOUBLE: u8 = 5;
pub const IS_STRING: u8 = 6;
pub const IS_ARRAY: u8 = 7;
pub const IS_OBJECT: u8 = 8;
pub const IS_RESOURCE: u8 = 9;
pub const IS_REFERENCE: u8 = 10;
pub const IS_CONSTANT_AST: u8 = 11;
pub const IS_CALLABLE: u8 = 12;
pub const IS_ITERABLE: u8 = 13;
pub const IS_VOID: u8 = 14;
pub const IS_STATIC: u8 = 15;
pub const IS_MIXED: u8 = 16;
pub const IS_NEVER: u8 = 17;
pub const _IS_BOOL: u8 = 18;
pub const _IS_NUMBER: u8 = 19;

bitflags! {
    /// A set of types a value may have (`uint32_t` MAY_BE_* masks in zend_inference).
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub struct MayBe: u32 {
        const UNDEF = 1 << IS_UNDEF;
        const NULL = 1 << IS_NULL;
        const FALSE = 1 << IS_FALSE;
        const TRUE = 1 << IS_TRUE;
        const BOOL = Self::FALSE.bits() | Self::TRUE.bits();
        const LONG = 1 << IS_LONG;
        const DOUBLE = 1 << IS_DOUBLE;
        const STRING = 1 << IS_STRING;
        const ARRAY = 1 << IS_ARRAY;
        const OBJECT = 1 << IS_OBJECT;
        const RESOURCE = 1 << IS_RESOURCE;
        const ANY = Self::NULL.bits() | Self::FALSE.bits() | Self::TRUE.bits()
            | Self::LONG.bits() | Self::DOUBLE.bits() | Self::STRING.bits()
            | Self::ARRAY.bits() | Self::OBJECT.bits() | Self::RESOURCE.bits();
        const REF = 1 << IS_REFERENCE;

        // Only in declared types (zend_type masks), overlapping the array-of bits below.
        const CALLABLE = 1 << IS_CALLABLE;
        const ITERABLE = 1 << IS_ITERABLE;
        const VOID = 1 << IS_VOID;
        const STATIC = 1 << IS_STATIC;
        const NEVER = 1 << IS_NEVER;

        const ARRAY_OF_NULL = Self::NULL.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_FALSE = Self::FALSE.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_TRUE = Self::TRUE.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_LONG = Self::LONG.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_DOUBLE = Self::DOUBLE.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_STRING = Self::STRING.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_ARRAY = Self::ARRAY.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_OBJECT = Self::OBJECT.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_RESOURCE = Self::RESOURCE.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_ANY = Self::ANY.bits() << MAY_BE_ARRAY_SHIFT;
        const ARRAY_OF_REF = Self::REF.bits() << MAY_BE_ARRAY_SHIFT;

        const ARRAY_PACKED = 1 << 21;
        const ARRAY_NUMERIC_HASH = 1 << 22;
        const ARRAY_STRING_HASH = 1 << 23;
        const ARRAY_EMPTY = 1 << 29;
        const ARRAY_KEY_LONG = Self::ARRAY_PACKED.bits() | Self::ARRAY_NUMERIC_HASH.bits();
        const ARRAY_KEY_STRING = Self::ARRAY_STRING_HASH.bits();
        const ARRAY_KEY_ANY = Self::ARRAY_KEY_LONG.bits() | Self::ARRAY_KEY_STRING.bits()
            | Self::ARRAY_EMPTY.bits();

        const CLASS = 1 << 24;
        const INDIRECT = 1 << 25;
        const RC1 = 1 << 30;
        const RCN = 1 << 31;
        const GUARD = 1 << 28;
    }
}

/// `MAY_BE_ARRAY_SHIFT`: array element types sit this many bits above the value types.
pub const MAY_BE_ARRAY_SHIFT: u32 = IS_REFERENCE as u32;

/// `zend_convert_type` without its class lookup: a declared type's `type_mask` (with its
/// kind bits) as MAY_BE bits, the way inference reads a parameter or return type. A type
/// naming classes is an object; an unset type is anything.
pub fn convert_type_mask(type_mask: u32) -> u32 {
    const ZEND_TYPE_MASK: u32 = (1 << 25) - 1;
    const MAY_BE_MASK: u32 = (1 << 18) - 1;
    const KIND_MASK: u32 = crate::_ZEND_TYPE_LIST_BIT | crate::_ZEND_TYPE_NAME_BIT;
    const CALLABLE: u32 = 1 << IS_CALLABLE;
    const VOID: u32 = 1 << IS_VOID;
    const STATIC: u32 = 1 << IS_STATIC;
    let any_array = (MayBe::ARRAY_KEY_ANY | MayBe::ARRAY_OF_ANY | MayBe::ARRAY_OF_REF).bits();
    let [null, string, array, object, resource] = [
        MayBe::NULL,
        MayBe::STRING,
        MayBe::ARRAY,
        MayBe::OBJECT,
        MayBe::RESOURCE,
    ]
    .map(|m| m.bits());
    let rc = (MayBe::RC1 | MayBe::RCN).bits();
    if type_mask & ZEND_TYPE_MASK == 0 {
        return MayBe::ANY.bits() | any_array | rc;
    }
    let pure = type_mask & MAY_BE_MASK;
    let mut tmp = pure & MayBe::ANY.bits();
    if pure & VOID != 0 {
        tmp |= null;
    }
    if pure & CALLABLE != 0 {
        tmp |= string | object | array | any_array;
    }
    if pure & STATIC != 0 {
        tmp |= object;
    }
    if pure & array != 0 {
        tmp |= any_array;
    }
    if type_mask & KIND_MASK != 0 {
        tmp |= object;
    }
    if tmp & (string | array | object | resource) != 0 {
        tmp |= rc;
    }
    tmp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_values_match_zend_type_info_h() {
        assert_eq!(MayBe::ANY.bits(), 0x3fe);
        assert_eq!(MayBe::REF.bits(), 0x400);
        assert_eq!(MayBe::ARRAY_OF_ANY.bits(), 0x3fe << 10);
        assert_eq!(MayBe::ARRAY_OF_REF.bits(), 1 << 20);
        assert_eq!(
            MayBe::ARRAY_KEY_ANY.bits(),
            (1 << 21) | (1 << 22) | (1 << 23) | (1 << 29)
        );
        assert_eq!(MayBe::CLASS.bits(), 1 << 24);
        assert_eq!(MayBe::RC1.bits() | MayBe::RCN.bits(), 0xc000_0000);
    }
}
