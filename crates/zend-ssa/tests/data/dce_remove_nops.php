<?php
// Input of zend-ssa's tests/edit.rs: DCE removes each dead `$unused = ...;`, and the DFA
// pass's NOP compaction then drops the NOPs and the unreachable code, keeping the FREE
// of a switch value in an unreachable block (UNREACHABLE_FREE) and moving the foreach
// jumps (FE_RESET_R op2, FE_FETCH_R extended_value) and the JMPZ.
function sw($x) {
    $unused = 5;
    echo "sw\n";
    switch ($x + 1) {
        case 1: return 1;
        default: return 2;
    }
}
function first($a) {
    $unused = 7;
    foreach ($a as $v) {
        if ($v) { return $v; } else { return 0; }
    }
    return -1;
}
// SCCP finds `$c` always 0: the "never" branch is removed (zend_ssa_remove_block), the
// JMPZ becomes a jump to the next op (a NOP), DCE removes `$c = 0`.
function dead($n) {
    $c = 0;
    if ($c) {
        echo "never\n";
    } else {
        echo "always\n";
    }
    return $n;
}
