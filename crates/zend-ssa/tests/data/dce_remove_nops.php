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
