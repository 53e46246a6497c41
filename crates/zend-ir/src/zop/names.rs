//! Symbolic names the `.zop` printer shows (flag comments, AST kinds, live range kinds,
//! human-readable types) and the opcode name lookup the parser uses.

use crate::model::*;
use crate::opcode::Opcode;
use std::collections::HashMap;
use std::sync::OnceLock;

/// `fn_flags` bits of an op_array (zend_compile.h, "function" column).
pub(crate) const FN_FLAGS: &[(u32, &str)] = &[
    (1 << 0, "PUBLIC"),
    (1 << 1, "PROTECTED"),
    (1 << 2, "PRIVATE"),
    (1 << 3, "CHANGED"),
    (1 << 4, "STATIC"),
    (1 << 5, "FINAL"),
    (1 << 6, "ABSTRACT"),
    (1 << 7, "IMMUTABLE"),
    (1 << 8, "HAS_TYPE_HINTS"),
    (1 << 9, "TOP_LEVEL"),
    (1 << 10, "PRELOADED"),
    (1 << 11, "DEPRECATED"),
    (1 << 12, "RETURN_REFERENCE"),
    (1 << 13, "HAS_RETURN_TYPE"),
    (1 << 14, "VARIADIC"),
    (1 << 15, "HAS_FINALLY_BLOCK"),
    (1 << 16, "EARLY_BINDING"),
    (1 << 17, "USES_THIS"),
    (1 << 18, "CALL_VIA_TRAMPOLINE"),
    (1 << 19, "NEVER_CACHE"),
    (1 << 20, "TRAIT_CLONE"),
    (1 << 21, "CTOR"),
    (1 << 22, "CLOSURE"),
    (1 << 23, "FAKE_CLOSURE"),
    (1 << 24, "GENERATOR"),
    (1 << 25, "DONE_PASS_TWO"),
    (1 << 26, "HEAP_RT_CACHE"),
    (1 << 27, "COMPILE_TIME_EVAL"),
    (1 << 31, "STRICT_TYPES"),
];

/// `ce_flags` bits of a class entry.
pub(crate) const CE_FLAGS: &[(u32, &str)] = &[
    (1 << 0, "INTERFACE"),
    (1 << 1, "TRAIT"),
    (1 << 2, "ANON_CLASS"),
    (1 << 3, "LINKED"),
    (1 << 4, "IMPLICIT_ABSTRACT_CLASS"),
    (1 << 5, "FINAL"),
    (1 << 6, "EXPLICIT_ABSTRACT_CLASS"),
    (1 << 7, "IMMUTABLE"),
    (1 << 8, "HAS_TYPE_HINTS"),
    (1 << 9, "TOP_LEVEL"),
    (1 << 10, "PRELOADED"),
    (1 << 11, "USE_GUARDS"),
    (1 << 12, "CONSTANTS_UPDATED"),
    (1 << 13, "NO_DYNAMIC_PROPERTIES"),
    (1 << 14, "HAS_STATIC_IN_METHODS"),
    (1 << 15, "ALLOW_DYNAMIC_PROPERTIES"),
    (1 << 16, "READONLY_CLASS"),
    (1 << 17, "RESOLVED_PARENT"),
    (1 << 18, "RESOLVED_INTERFACES"),
    (1 << 19, "UNRESOLVED_VARIANCE"),
    (1 << 20, "NEARLY_LINKED"),
    (1 << 22, "CACHED"),
    (1 << 23, "CACHEABLE"),
    (1 << 24, "HAS_AST_CONSTANTS"),
    (1 << 25, "HAS_AST_PROPERTIES"),
    (1 << 26, "HAS_AST_STATICS"),
    (1 << 27, "FILE_CACHED"),
    (1 << 28, "ENUM"),
    (1 << 29, "NOT_SERIALIZABLE"),
];

/// Property flags.
pub(crate) const PROP_FLAGS: &[(u32, &str)] = &[
    (1 << 0, "PUBLIC"),
    (1 << 1, "PROTECTED"),
    (1 << 2, "PRIVATE"),
    (1 << 3, "CHANGED"),
    (1 << 4, "STATIC"),
    (1 << 5, "PROMOTED"),
    (1 << 7, "READONLY"),
];

/// Class constant flags (`ZEND_CLASS_CONST_FLAGS`).
pub(crate) const CONST_FLAGS: &[(u32, &str)] = &[
    (1 << 0, "PUBLIC"),
    (1 << 1, "PROTECTED"),
    (1 << 2, "PRIVATE"),
    (1 << 5, "FINAL"),
    (1 << 6, "CASE"),
];

/// Names of the set bits, `|`-separated, with unnamed bits in hex.
pub(crate) fn flag_names(flags: u32, table: &[(u32, &str)]) -> String {
    let mut out = String::new();
    let mut rest = flags;
    for &(bit, name) in table {
        if flags & bit != 0 {
            if !out.is_empty() {
                out.push('|');
            }
            out.push_str(name);
            rest &= !bit;
        }
    }
    if rest != 0 {
        if !out.is_empty() {
            out.push('|');
        }
        out.push_str(&format!("{rest:#x}"));
    }
    out
}

/// `zend_ast_kind` names without the `ZEND_AST_` prefix (zend_ast.h of PHP 8.2).
pub(crate) const AST_KINDS: &[(u16, &str)] = &[
    (64, "ZVAL"),
    (65, "CONSTANT"),
    (66, "ZNODE"),
    (67, "FUNC_DECL"),
    (68, "CLOSURE"),
    (69, "METHOD"),
    (70, "CLASS"),
    (71, "ARROW_FUNC"),
    (128, "ARG_LIST"),
    (129, "ARRAY"),
    (130, "ENCAPS_LIST"),
    (131, "EXPR_LIST"),
    (132, "STMT_LIST"),
    (133, "IF"),
    (134, "SWITCH_LIST"),
    (135, "CATCH_LIST"),
    (136, "PARAM_LIST"),
    (137, "CLOSURE_USES"),
    (138, "PROP_DECL"),
    (139, "CONST_DECL"),
    (140, "CLASS_CONST_DECL"),
    (141, "NAME_LIST"),
    (142, "TRAIT_ADAPTATIONS"),
    (143, "USE"),
    (144, "TYPE_UNION"),
    (145, "TYPE_INTERSECTION"),
    (146, "ATTRIBUTE_LIST"),
    (147, "ATTRIBUTE_GROUP"),
    (148, "MATCH_ARM_LIST"),
    (0, "MAGIC_CONST"),
    (1, "TYPE"),
    (2, "CONSTANT_CLASS"),
    (3, "CALLABLE_CONVERT"),
    (256, "VAR"),
    (257, "CONST"),
    (258, "UNPACK"),
    (259, "UNARY_PLUS"),
    (260, "UNARY_MINUS"),
    (261, "CAST"),
    (262, "EMPTY"),
    (263, "ISSET"),
    (264, "SILENCE"),
    (265, "SHELL_EXEC"),
    (266, "CLONE"),
    (267, "EXIT"),
    (268, "PRINT"),
    (269, "INCLUDE_OR_EVAL"),
    (270, "UNARY_OP"),
    (271, "PRE_INC"),
    (272, "PRE_DEC"),
    (273, "POST_INC"),
    (274, "POST_DEC"),
    (275, "YIELD_FROM"),
    (276, "CLASS_NAME"),
    (277, "GLOBAL"),
    (278, "UNSET"),
    (279, "RETURN"),
    (280, "LABEL"),
    (281, "REF"),
    (282, "HALT_COMPILER"),
    (283, "ECHO"),
    (284, "THROW"),
    (285, "GOTO"),
    (286, "BREAK"),
    (287, "CONTINUE"),
    (512, "DIM"),
    (513, "PROP"),
    (514, "NULLSAFE_PROP"),
    (515, "STATIC_PROP"),
    (516, "CALL"),
    (517, "CLASS_CONST"),
    (518, "ASSIGN"),
    (519, "ASSIGN_REF"),
    (520, "ASSIGN_OP"),
    (521, "BINARY_OP"),
    (522, "GREATER"),
    (523, "GREATER_EQUAL"),
    (524, "AND"),
    (525, "OR"),
    (526, "ARRAY_ELEM"),
    (527, "NEW"),
    (528, "INSTANCEOF"),
    (529, "YIELD"),
    (530, "COALESCE"),
    (531, "ASSIGN_COALESCE"),
    (532, "STATIC"),
    (533, "WHILE"),
    (534, "DO_WHILE"),
    (535, "IF_ELEM"),
    (536, "SWITCH"),
    (537, "SWITCH_CASE"),
    (538, "DECLARE"),
    (539, "USE_TRAIT"),
    (540, "TRAIT_PRECEDENCE"),
    (541, "METHOD_REFERENCE"),
    (542, "NAMESPACE"),
    (543, "USE_ELEM"),
    (544, "TRAIT_ALIAS"),
    (545, "GROUP_USE"),
    (546, "CLASS_CONST_GROUP"),
    (547, "ATTRIBUTE"),
    (548, "MATCH"),
    (549, "MATCH_ARM"),
    (550, "NAMED_ARG"),
    (768, "METHOD_CALL"),
    (769, "NULLSAFE_METHOD_CALL"),
    (770, "STATIC_CALL"),
    (771, "CONDITIONAL"),
    (772, "TRY"),
    (773, "CATCH"),
    (774, "PROP_GROUP"),
    (775, "PROP_ELEM"),
    (776, "CONST_ELEM"),
    (777, "CONST_ENUM_INIT"),
    (1024, "FOR"),
    (1025, "FOREACH"),
    (1026, "ENUM_CASE"),
    (1280, "PARAM"),
];

pub(crate) fn ast_kind_name(kind: u16) -> Option<&'static str> {
    AST_KINDS.iter().find(|&&(k, _)| k == kind).map(|&(_, n)| n)
}

pub(crate) fn ast_kind_from_name(name: &[u8]) -> Option<u16> {
    AST_KINDS
        .iter()
        .find(|(_, n)| n.as_bytes() == name)
        .map(|&(k, _)| k)
}

/// `ZEND_LIVE_*` kinds of a live range.
pub(crate) const LIVE_KINDS: &[(u32, &str)] = &[
    (ZEND_LIVE_TMPVAR, "tmpvar"),
    (ZEND_LIVE_LOOP, "loop"),
    (ZEND_LIVE_SILENCE, "silence"),
    (ZEND_LIVE_ROPE, "rope"),
    (ZEND_LIVE_NEW, "new"),
];

/// FNV-1a: opcode names are short, and SipHash dominated the lookup.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

type OpcodeMap = HashMap<&'static [u8], Opcode, std::hash::BuildHasherDefault<Fnv>>;

/// Opcode lookup by short name (`ADD`), built once from [`Opcode::all`].
pub(crate) fn opcode_by_name(name: &[u8]) -> Option<Opcode> {
    static MAP: OnceLock<OpcodeMap> = OnceLock::new();
    let map = MAP.get_or_init(|| {
        Opcode::all()
            .filter_map(|op| op.short_name().map(|n| (n.as_bytes(), op)))
            .collect()
    });
    map.get(name).copied()
}

/// Bytes as comment text: printable ASCII as is, anything else (which could end the comment
/// line or confuse a reader) as `\xHH`.
pub(crate) fn comment_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..=0x7e).contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// A human-readable rendering of a `zend_type`, for comments only.
pub(crate) fn type_to_string(t: &ZendType) -> String {
    use crate::types::*;
    let mut parts: Vec<String> = Vec::new();
    match &t.names {
        TypeNames::None => {}
        TypeNames::Name(n) => parts.push(comment_text(&n.0)),
        TypeNames::List(list) => {
            let sep = if t.type_mask & _ZEND_TYPE_INTERSECTION_BIT != 0 {
                "&"
            } else {
                "|"
            };
            let inner: Vec<String> = list
                .iter()
                .map(|e| {
                    let s = type_to_string(e);
                    if matches!(e.names, TypeNames::List(_)) {
                        format!("({s})")
                    } else {
                        s
                    }
                })
                .collect();
            parts.push(inner.join(sep));
        }
    }
    let m = t.type_mask;
    let any = MayBe::ANY.bits();
    if m & any == any {
        parts.push("mixed".into());
    } else {
        let bit = |code: u8| m & (1u32 << code) != 0;
        for (code, name) in [
            (IS_STATIC, "static"),
            (IS_CALLABLE, "callable"),
            (IS_OBJECT, "object"),
            (IS_ARRAY, "array"),
            (IS_STRING, "string"),
            (IS_LONG, "int"),
            (IS_DOUBLE, "float"),
        ] {
            if bit(code) {
                parts.push(name.into());
            }
        }
        if m & _ZEND_TYPE_ITERABLE_BIT != 0 {
            parts.push("iterable".into());
        }
        match (bit(IS_FALSE), bit(IS_TRUE)) {
            (true, true) => parts.push("bool".into()),
            (true, false) => parts.push("false".into()),
            (false, true) => parts.push("true".into()),
            (false, false) => {}
        }
        for (code, name) in [(IS_VOID, "void"), (IS_NEVER, "never"), (IS_NULL, "null")] {
            if bit(code) {
                parts.push(name.into());
            }
        }
    }
    let mut out = parts.join("|");
    if out.is_empty() {
        out.push_str("(no type)");
    }
    match (m >> _ZEND_SEND_MODE_SHIFT) & 3 {
        1 => out.push_str(" by-ref"),
        2 => out.push_str(" prefer-ref"),
        3 => out.push_str(" send-mode=3"),
        _ => {}
    }
    if m & _ZEND_IS_VARIADIC_BIT != 0 {
        out.push_str(" variadic");
    }
    if m & _ZEND_IS_PROMOTED_BIT != 0 {
        out.push_str(" promoted");
    }
    if m & _ZEND_IS_TENTATIVE_BIT != 0 {
        out.push_str(" tentative");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ast_kinds_sorted_and_match_model() {
        let mut kinds: Vec<u16> = AST_KINDS.iter().map(|&(k, _)| k).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), AST_KINDS.len());
        assert_eq!(ast_kind_name(ZEND_AST_ZVAL), Some("ZVAL"));
        assert_eq!(ast_kind_name(ZEND_AST_CONSTANT), Some("CONSTANT"));
        assert_eq!(ast_kind_from_name(b"BINARY_OP"), Some(521));
    }

    #[test]
    fn opcode_names() {
        assert_eq!(opcode_by_name(b"ADD"), Opcode::from_name("ADD"));
        for op in Opcode::all() {
            assert_eq!(
                opcode_by_name(op.short_name().unwrap().as_bytes()),
                Some(op)
            );
        }
    }
}
