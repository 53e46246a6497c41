//! Bugs of PHP 8.2's own optimizer, which zopt fixes and can reproduce: wrong code, and
//! op_arrays that name what they do not have.
//!
//! zopt's output is judged against PHP without OPcache, so by default its optimizer is
//! correct where PHP 8.2's is not, and its dumps then differ from PHP's at these places
//! only. A caller that needs PHP's exact op_arrays (byte-identical dumps, or an engine that
//! must behave as OPcache does) turns a bug back on with [`Options::php_bugs`]. Conformance
//! uses that to tell such a deviation from a bug of ours: an op_array whose dump differs from
//! PHP's, but not once the bug is reproduced, deviates for that bug's cause and nothing else.
//!
//! Each bug is described, with its reduced program, in fixtures/README.md.
//!
//! [`Options::php_bugs`]: crate::Options::php_bugs

use std::fmt;

/// A set of PHP 8.2 optimizer bugs to reproduce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PhpBugs(u16);

impl PhpBugs {
    /// Reproduce none: zopt's default, the program behaves as without OPcache.
    pub const NONE: PhpBugs = PhpBugs(0);

    /// The block pass turns `BOOL_NOT` of `IS_SMALLER` (`IS_SMALLER_OR_EQUAL`) into the
    /// opposite comparison with its operands swapped: `!(a < b)` becomes `b <= a`, which is
    /// not the negation when an operand is NAN (php-src GH-15773, bugs.php.net #80701; open,
    /// unchanged in later branches).
    pub const NEGATED_ORDERED_COMPARISON: PhpBugs = PhpBugs(1 << 0);

    /// SCCP appends the integer-keyed elements of `ADD_ARRAY_UNPACK`'s spread to a partial
    /// array from index 0, although the partial array's next index is unknown:
    /// `[$x, ...[5]][0]` folds to `5` (unchanged in later branches).
    pub const UNPACK_INTO_PARTIAL_ARRAY: PhpBugs = PhpBugs(1 << 1);

    /// The DFA pass's compaction leaves a SWITCH/MATCH jump table entry that SCCP proved
    /// infeasible naming its removed target, past the end of the op_array when that was
    /// the last code. Never taken, so the program's output is the same; but a CFG built
    /// from such an op_array reads past its end (php-src GH-20733, GH-21404, open).
    pub const DANGLING_JUMP_TABLE_ENTRY: PhpBugs = PhpBugs(1 << 2);

    /// The block pass merges two ECHOs of constants in a row into one, and so one write:
    /// an output buffer with a chunk size (`ob_start($handler, 3)`) flushes after each write
    /// that fills a chunk, so its handler sees other pieces (php-src GH-16408).
    pub const MERGED_ECHOS: PhpBugs = PhpBugs(1 << 3);

    /// DCE removes an op whose result is dead although its array key may be a float with a
    /// fractional part, whose conversion PHP 8.1+ reports as deprecated when the op runs
    /// (`$unused[1.5] = 1;`: an error handler sees it; php-src GH-16396).
    pub const REMOVED_FLOAT_KEY_DEPRECATION: PhpBugs = PhpBugs(1 << 4);

    /// The DFA pass turns `$x + 0.0` (`0.0 + $x`, `$x - -0.0`, and `$x + 0` once the 0 is
    /// made a double) of a double into a copy of `$x`, which is not the sum when `$x` is
    /// -0.0: -0.0 + 0.0 is 0.0 (fuzz seed 14384).
    pub const SIGNED_ZERO_ADDITION: PhpBugs = PhpBugs(1 << 5);

    /// `zend_redo_pass_two_ex` picks type-specialised handlers from the types inference
    /// gives after `ZEND_OPTIMIZER_NARROW_TO_DOUBLE`'s narrowing, which types an integer
    /// assigned to a CV, and what it flows into, as doubles. When SCCP has propagated the
    /// integer itself into its uses, nothing makes it a double, and a handler for doubles
    /// reads an integer's bits as a double: `$b = 0; (int) (0.3 + ($t + $b))` of `$t = true`
    /// gives 0, not 1 (fuzz seed 17664; unchanged in later branches).
    pub const NARROWED_LONG_HANDLERS: PhpBugs = PhpBugs(1 << 6);

    /// The block pass keeps only the loop variable's FREE of an unreachable block that frees
    /// it (*unreachable_free*) at the start of each of its rounds, and assembles such blocks
    /// whole: a block that becomes unreachable_free in the last round keeps its dead code,
    /// and its jumps are not retargeted (they keep their offset from the op, so they point
    /// into unrelated code or past the end, where PHP reads out of bounds; fuzz seed 50099).
    /// Reproduced where the jumps stay inside the op_array; later php-src keeps only the
    /// FREE when assembling.
    pub const UNREACHABLE_FREE_KEPT_WHOLE: PhpBugs = PhpBugs(1 << 7);

    /// SCCP meets the values of a phi with `zend_is_identical`, for which `0.0 === -0.0`:
    /// a phi of the two zeros (and a partial array's element that is one zero on one path
    /// and the other on the other) becomes the constant that came first, so
    /// `fdiv($x, $p ? 0.0 : -0.0)` is folded to one sign (fuzz seeds 53246, 61295).
    pub const SIGNED_ZERO_PHI: PhpBugs = PhpBugs(1 << 8);

    /// SCCP evaluates internal functions that turn a float into a string at compile time
    /// (`implode`, `array_unique`, `str_replace`, `trim`, ... of a float, `serialize`), with
    /// the `precision` and `serialize_precision` of the compiling process, although both
    /// are run-time settings (PHP's own casts refuse to fold a float to a string for that
    /// reason): after `ini_set('precision', '17')`, `implode(',', [0.1])` prints
    /// `0.10000000000000001` without OPcache and `0.1` with it. SCCP's concatenations and
    /// the constant substitution into a concatenation, a rope or a name do the same with a
    /// float (`$f = 0.1; return "x" . $f;`). Reproduced with the defaults, 14 and -1.
    pub const FLOAT_TO_STRING_FOLDED: PhpBugs = PhpBugs(1 << 9);

    /// Pass 1, substituting a constant for the subject of a `match` (a class constant, a
    /// folded call), stops at the MATCH_ERROR, which it takes for the subject's last use:
    /// the FREE that ends the match stays, reading a temporary nothing writes any more, and
    /// freeing whatever that slot held (a crash when it held a pointer; php-src GH-17106,
    /// fixed in 8.3 by keeping the subject alive past MATCH_ERROR).
    pub const FREE_AFTER_MATCH_ERROR_KEPT: PhpBugs = PhpBugs(1 << 10);

    /// The DFA pass, folding `$x = $x - 1` into one op, makes it `--$x` of a value that may
    /// be null (or undefined): `null - 1` is -1, but decrementing null leaves null, so
    /// `function f(?int $a) { $a = $a - 1; return $a; }` returns null for null. PHP 8.2
    /// tests null for the compound `$x -= 1` only (php-src's opt/assign_op_002.phpt);
    /// unchanged in later branches.
    pub const DECREMENTED_NULL: PhpBugs = PhpBugs(1 << 11);

    /// Pass 1 converts the constant operand of `$x .= c` to a string at compile time, as
    /// the compiler does for `$x . c`; but `.=` converts it when the op runs: a float with
    /// the `precision` of that moment (`$a .= 0.1` after `ini_set('precision', '17')`
    /// appends `0.1`), an array to "Array" with the "Array to string conversion" warning
    /// then (OPcache warns once, while compiling, so an error handler never sees it;
    /// php-src's Zend/tests/compound_assign_failure.phpt). Unchanged in later branches.
    pub const COMPOUND_CONCAT_CONVERTED: PhpBugs = PhpBugs(1 << 12);

    /// Every bug PHP 8.2 has: the optimizer as the 8.2 binary runs it.
    pub const PHP_8_2: PhpBugs = PhpBugs(
        Self::NEGATED_ORDERED_COMPARISON.0
            | Self::UNPACK_INTO_PARTIAL_ARRAY.0
            | Self::DANGLING_JUMP_TABLE_ENTRY.0
            | Self::MERGED_ECHOS.0
            | Self::REMOVED_FLOAT_KEY_DEPRECATION.0
            | Self::SIGNED_ZERO_ADDITION.0
            | Self::NARROWED_LONG_HANDLERS.0
            | Self::UNREACHABLE_FREE_KEPT_WHOLE.0
            | Self::SIGNED_ZERO_PHI.0
            | Self::FLOAT_TO_STRING_FOLDED.0
            | Self::FREE_AFTER_MATCH_ERROR_KEPT.0
            | Self::DECREMENTED_NULL.0
            | Self::COMPOUND_CONCAT_CONVERTED.0,
    );

    /// Each bug alone, with its name.
    pub const EACH: [(PhpBugs, &'static str); 13] = [
        (
            Self::NEGATED_ORDERED_COMPARISON,
            "negated-ordered-comparison",
        ),
        (Self::UNPACK_INTO_PARTIAL_ARRAY, "unpack-into-partial-array"),
        (Self::DANGLING_JUMP_TABLE_ENTRY, "dangling-jump-table-entry"),
        (Self::MERGED_ECHOS, "merged-echos"),
        (
            Self::REMOVED_FLOAT_KEY_DEPRECATION,
            "removed-float-key-deprecation",
        ),
        (Self::SIGNED_ZERO_ADDITION, "signed-zero-addition"),
        (Self::NARROWED_LONG_HANDLERS, "narrowed-long-handlers"),
        (
            Self::UNREACHABLE_FREE_KEPT_WHOLE,
            "unreachable-free-kept-whole",
        ),
        (Self::SIGNED_ZERO_PHI, "signed-zero-phi"),
        (Self::FLOAT_TO_STRING_FOLDED, "float-to-string-folded"),
        (
            Self::FREE_AFTER_MATCH_ERROR_KEPT,
            "free-after-match-error-kept",
        ),
        (Self::DECREMENTED_NULL, "decremented-null"),
        (Self::COMPOUND_CONCAT_CONVERTED, "compound-concat-converted"),
    ];

    pub fn contains(self, bug: PhpBugs) -> bool {
        self.0 & bug.0 == bug.0 && bug.0 != 0
    }

    /// Whether the optimizer may convert the constant `val` to a string: anything but a
    /// float, whose string form depends on the `precision` the program runs with, unless
    /// [`Self::FLOAT_TO_STRING_FOLDED`] is reproduced.
    pub fn converts_to_string(self, val: &zend_ir::Literal) -> bool {
        !matches!(val, zend_ir::Literal::Double(_)) || self.contains(Self::FLOAT_TO_STRING_FOLDED)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The bug of this name (as [`PhpBugs::EACH`] and [`fmt::Display`] spell it), `all`
    /// for [`PhpBugs::PHP_8_2`], `none` for [`PhpBugs::NONE`].
    pub fn parse(name: &str) -> Option<PhpBugs> {
        match name {
            "all" => Some(Self::PHP_8_2),
            "none" => Some(Self::NONE),
            _ => Self::EACH
                .iter()
                .find(|(_, n)| *n == name)
                .map(|&(bug, _)| bug),
        }
    }
}

impl std::ops::BitOr for PhpBugs {
    type Output = PhpBugs;
    fn bitor(self, rhs: PhpBugs) -> PhpBugs {
        PhpBugs(self.0 | rhs.0)
    }
}

impl fmt::Display for PhpBugs {
    /// The names of the bugs in the set, comma-separated; `none` for the empty set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let mut first = true;
        for (bug, name) in Self::EACH {
            if self.contains(bug) {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (bug, name) in PhpBugs::EACH {
            assert_eq!(PhpBugs::parse(name), Some(bug));
            assert_eq!(bug.to_string(), name);
            assert!(PhpBugs::PHP_8_2.contains(bug));
            assert!(!PhpBugs::NONE.contains(bug));
        }
        assert_eq!(PhpBugs::parse("all"), Some(PhpBugs::PHP_8_2));
        assert_eq!(PhpBugs::parse("nan"), None);
        assert_eq!(PhpBugs::NONE.to_string(), "none");
        assert_eq!(
            PhpBugs::PHP_8_2.to_string(),
            "negated-ordered-comparison,unpack-into-partial-array,dangling-jump-table-entry,\
             merged-echos,removed-float-key-deprecation,signed-zero-addition,\
             narrowed-long-handlers,unreachable-free-kept-whole,signed-zero-phi,\
             float-to-string-folded,free-after-match-error-kept,decremented-null,\
             compound-concat-converted"
        );
    }
}
