//! Mirrors optimize_func_calls.c (pass 4: call optimisation) and `zend_adjust_fcall_stack_size`
//! of zend_optimizer.c (pass 12).
//!
//! Pass 4 walks the calls of an op_array with a stack of open calls. Where the called
//! function is known (`zend_optimizer_get_called_func`): INIT_FCALL_BY_NAME and
//! INIT_NS_FCALL_BY_NAME become INIT_FCALL with the stack the callee needs and the DO op
//! becomes DO_UCALL/DO_ICALL; argument sends and FUNC_ARG fetches whose mode depended on the
//! callee become the by-value or by-reference form; and, with PASS_16, a call of a function
//! that only returns a constant is replaced by that constant (`zend_try_inline_call`).
//!
//! Guarantees: the op count never changes; an op changes only when the callee's signature
//! makes the new form equivalent.

use smallvec::SmallVec;
use zend_ir::opcode::*;
use zend_ir::{
    Literal, OpArray, OpNum, OpcodeSet, Operand, ZEND_ACC_ABSTRACT, ZEND_ACC_TRAIT_CLONE,
    ZEND_ACC_VARIADIC, ZEND_USER_FUNCTION,
};

use crate::ctx::OptimizerCtx;
use crate::helpers::{
    self, get_called_func, literal_dtor, make_nop, Callee, CalleeRef, ZEND_ACC_HAS_TYPE_HINTS,
    ZEND_ACC_STATIC, ZEND_SEND_BY_REF, ZEND_SEND_PREFER_REF,
};
use crate::level::PASS_16;
use crate::provenance::ChangeKind;

/// One open call whose callee is known: what `optimizer_call_info` keeps. The calls
/// whose callee is unknown are only counted (`run`'s `depth`): nothing in them changes.
#[derive(Clone, Copy)]
struct OpenCall<'s> {
    /// The INIT op.
    init: usize,
    /// How many open calls enclose this one.
    depth: u32,
    /// The callee: found at the INIT, read where the walk needs it (as PHP keeps the
    /// `zend_function*`), so a call costs nothing until an op asks.
    callee: CalleeRef<'s>,
    /// The callee is only a prototype (an overridable method): arguments past its
    /// signature may be by-reference in an override.
    is_prototype: bool,
    try_inline: bool,
    func_arg_num: Option<u32>,
    /// The CHECK_FUNC_ARG whose FUNC_ARG fetches are being rewritten; it becomes a NOP
    /// at the SEND_FUNC_ARG, unless a fetch had to stay (`last_check_func_arg_opline`).
    last_check_func_arg: Option<usize>,
}

impl OpenCall<'_> {
    /// `has_known_send_mode` (8.2.36): the callee, when it decides how argument `arg_num`
    /// (1-based) is sent, which a prototype does only for the arguments of its own
    /// signature. `current` is the op_array being optimized.
    fn known_send_mode<'a>(&self, current: &'a OpArray, arg_num: u32) -> Option<Callee<'a>>
    where
        Self: 'a,
    {
        let f = self.callee.get(current);
        (!self.is_prototype || arg_num <= f.num_args() || f.fn_flags() & ZEND_ACC_VARIADIC != 0)
            .then_some(f)
    }
}

/// `zend_delete_call_instructions`: removes the INIT and the sends of the call ending
/// before op `i` (nested calls are skipped; sent variables are still released).
fn delete_call_instructions(op_array: &mut OpArray, mut i: usize) {
    let mut call = 0i32;
    loop {
        let op = &mut op_array.opcodes[i];
        match op.opcode {
            ZEND_INIT_FCALL_BY_NAME
            | ZEND_INIT_NS_FCALL_BY_NAME
            | ZEND_INIT_STATIC_METHOD_CALL
            | ZEND_INIT_METHOD_CALL
            | ZEND_INIT_FCALL => {
                if call == 0 {
                    make_nop(op);
                    return;
                }
                call -= 1;
            }
            ZEND_NEW | ZEND_INIT_DYNAMIC_CALL | ZEND_INIT_USER_CALL => call -= 1,
            ZEND_DO_FCALL | ZEND_DO_ICALL | ZEND_DO_UCALL | ZEND_DO_FCALL_BY_NAME => call += 1,
            ZEND_SEND_VAL | ZEND_SEND_VAR if call == 0 => match op.op1 {
                Operand::Const(_) => make_nop(op),
                Operand::Cv(_) => {
                    op.opcode = ZEND_CHECK_VAR;
                    op.extended_value = 0;
                    op.result = Operand::Unused(0);
                }
                _ => {
                    op.opcode = ZEND_FREE;
                    op.extended_value = 0;
                    op.result = Operand::Unused(0);
                }
            },
            _ => {}
        }
        if i == 0 {
            return;
        }
        i -= 1;
    }
}

/// `zend_try_inline_call`: a call of a user function whose first op after its RECVs
/// returns a constant becomes that constant (or nothing when the result is unused).
fn try_inline_call(op_array: &mut OpArray, fcall: usize, i: usize, callee: CalleeRef) -> bool {
    let init = op_array.opcodes[fcall];
    let passed = init.extended_value;
    // Read before the edits: the callee may be this op_array.
    let ret = {
        let Callee::User(f) = callee.get(op_array) else {
            return false;
        };
        if f.type_ != ZEND_USER_FUNCTION
            || f.fn_flags & (ZEND_ACC_ABSTRACT | ZEND_ACC_HAS_TYPE_HINTS | ZEND_ACC_TRAIT_CLONE)
                != 0
            || passed < f.required_num_args
        {
            return false;
        }
        // The op right after the RECVs, when it is a RETURN of a constant.
        let Some(ret_op) = f
            .opcodes
            .get(f.num_args as usize)
            .filter(|op| op.opcode == ZEND_RETURN)
        else {
            return false;
        };
        let Some(ret) = (match ret_op.op1 {
            Operand::Const(l) => f.literals.get(l.index()),
            _ => None,
        }) else {
            return false;
        };
        if init.opcode == ZEND_INIT_STATIC_METHOD_CALL && f.fn_flags & ZEND_ACC_STATIC == 0 {
            return false;
        }
        // By-reference parameters would need INDIRECT arguments.
        let total = f.num_args + u32::from(f.fn_flags & ZEND_ACC_VARIADIC != 0);
        if (1..=total).any(|a| {
            Callee::User(f).check_arg_send_type(a, ZEND_SEND_BY_REF | ZEND_SEND_PREFER_REF)
        }) {
            return false;
        }
        // A default that is a constant expression is not inlined.
        let default_is_ast = |a: u32| {
            f.opcodes.get(a as usize).is_some_and(|op| match op.op2 {
                Operand::Const(l) => matches!(f.literals.get(l.index()), Some(Literal::Ast(_))),
                _ => false,
            })
        };
        if (passed..f.num_args).any(default_is_ast) {
            return false;
        }
        ret.clone()
    };
    if op_array.opcodes[i].result.is_unused() {
        make_nop(&mut op_array.opcodes[i]);
    } else {
        let lit = helpers::add_literal(op_array, ret);
        let op = &mut op_array.opcodes[i];
        op.opcode = ZEND_QM_ASSIGN;
        op.op1 = Operand::Const(lit);
        op.op2 = helpers::UNUSED;
    }
    if i > 0 {
        delete_call_instructions(op_array, i - 1);
    }
    true
}

/// A DO op (or CALLABLE_CONVERT) `i` ends `call`, whose callee is known: the INIT by name
/// becomes INIT_FCALL, and a call that only returns a constant may be inlined (PASS_16).
fn end_call(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    i: usize,
    opcode: zend_ir::Opcode,
    call: &OpenCall,
    callee: CalleeRef,
) {
    let fcall = call.init;
    let init = op_array.opcodes[fcall];
    if matches!(
        init.opcode,
        ZEND_INIT_FCALL_BY_NAME | ZEND_INIT_NS_FCALL_BY_NAME
    ) {
        if let Operand::Const(l) = init.op2 {
            ctx.note(op_array, OpNum::from(fcall), ChangeKind::Rewritten, || {
                "the callee is known: INIT_FCALL".into()
            });
            literal_dtor(op_array, l);
            if init.opcode == ZEND_INIT_NS_FCALL_BY_NAME {
                literal_dtor(op_array, zend_ir::LiteralId::new(l.as_u32() + 2));
            }
            let f = callee.get(op_array);
            let used_stack = f.used_stack(init.extended_value);
            let call_op = f.call_op();
            let o = &mut op_array.opcodes[fcall];
            o.opcode = ZEND_INIT_FCALL;
            o.op1 = Operand::Unused(used_stack);
            o.op2 = Operand::Const(zend_ir::LiteralId::new(l.as_u32() + 1));
            if opcode != ZEND_CALLABLE_CONVERT {
                op_array.opcodes[i].opcode = call_op;
            }
        }
    }
    if ctx.optimization_level & PASS_16 != 0
        && call.try_inline
        && matches!(callee, CalleeRef::User(_))
        && opcode != ZEND_CALLABLE_CONVERT
    {
        let name = match op_array.opcodes[fcall].op2 {
            Operand::Const(l) if ctx.logging() => {
                format!("{:?}", op_array.literals[l.index()])
            }
            _ => String::new(),
        };
        if try_inline_call(op_array, fcall, i, callee) {
            ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                format!("the call of {name} only returns a constant")
            });
        }
    }
}

/// The opcodes `run` looks at (its match's arms): the other ops, most of them, are skipped
/// by one table test instead of the match's indirect jump.
static HANDLED: OpcodeSet = zend_ir::opcode_set_where!(handled);

/// The ops that open or end a call: all `run` looks at while the innermost open call's
/// callee is unknown (or no call is open), when the arguments, their fetches and checks
/// change nothing (no callee decides their send mode, and no such call is inlined).
static CALL_BOUNDARIES: OpcodeSet = zend_ir::opcode_set_where!(call_boundary);

const fn call_boundary(opcode: Opcode) -> bool {
    matches!(
        opcode,
        ZEND_INIT_FCALL_BY_NAME
            | ZEND_INIT_NS_FCALL_BY_NAME
            | ZEND_INIT_STATIC_METHOD_CALL
            | ZEND_INIT_METHOD_CALL
            | ZEND_INIT_FCALL
            | ZEND_NEW
            | ZEND_INIT_DYNAMIC_CALL
            | ZEND_INIT_USER_CALL
            | ZEND_DO_FCALL
            | ZEND_DO_ICALL
            | ZEND_DO_UCALL
            | ZEND_DO_FCALL_BY_NAME
            | ZEND_CALLABLE_CONVERT
    )
}

/// [`call_boundary`], the arguments, and their fetches and checks.
const fn handled(opcode: Opcode) -> bool {
    call_boundary(opcode)
        || matches!(
            opcode,
            ZEND_FETCH_FUNC_ARG
                | ZEND_FETCH_STATIC_PROP_FUNC_ARG
                | ZEND_FETCH_OBJ_FUNC_ARG
                | ZEND_FETCH_DIM_FUNC_ARG
                | ZEND_SEND_VAL_EX
                | ZEND_CHECK_FUNC_ARG
                | ZEND_SEND_VAR_EX
                | ZEND_SEND_FUNC_ARG
                | ZEND_SEND_VAR_NO_REF_EX
                | ZEND_SEND_VAL
                | ZEND_SEND_VAR
                | ZEND_SEND_REF
                | ZEND_SEND_UNPACK
                | ZEND_SEND_USER
                | ZEND_SEND_ARRAY
        )
}

/// `zend_optimize_func_calls`.
pub fn run<'s>(op_array: &mut OpArray, ctx: &mut OptimizerCtx<'s>) {
    if op_array.opcodes.len() < 2 {
        return;
    }
    // Calls nest shallowly: the open ones with a known callee are kept inline.
    let mut stack: SmallVec<[OpenCall<'s>; 8]> = SmallVec::new();
    // How many calls are open.
    let mut depth = 0u32;
    let n = op_array.opcodes.len();
    let mut next = 0;
    // Whether the innermost open call's callee is known (it is then `stack`'s last): only
    // then are its arguments looked at.
    let mut known = false;
    loop {
        // Most ops are none of the calls': a tight scan skips them, one table test each
        // (two scans, each with its table at a fixed address).
        let ops = &op_array.opcodes[..n];
        let mut i = next;
        if known {
            while i < n && !HANDLED.contains(ops[i].opcode) {
                i += 1;
            }
        } else {
            while i < n && !CALL_BOUNDARIES.contains(ops[i].opcode) {
                i += 1;
            }
        }
        if i == n {
            break;
        }
        next = i + 1;
        let op = ops[i];
        match op.opcode {
            ZEND_INIT_FCALL_BY_NAME
            | ZEND_INIT_NS_FCALL_BY_NAME
            | ZEND_INIT_STATIC_METHOD_CALL
            | ZEND_INIT_METHOD_CALL
            | ZEND_INIT_FCALL
            | ZEND_NEW => {
                let found = get_called_func(ctx, op_array, &op);
                known = found.is_some();
                if let Some((callee, is_prototype)) = found {
                    stack.push(OpenCall {
                        init: i,
                        depth,
                        callee,
                        is_prototype,
                        try_inline: !is_prototype && op.opcode != ZEND_NEW,
                        func_arg_num: None,
                        last_check_func_arg: None,
                    });
                }
                depth += 1;
            }
            ZEND_INIT_DYNAMIC_CALL | ZEND_INIT_USER_CALL => {
                known = false;
                depth += 1;
            }
            // CALLABLE_CONVERT (`f(...)`) ends its call as a DO op does.
            ZEND_DO_FCALL
            | ZEND_DO_ICALL
            | ZEND_DO_UCALL
            | ZEND_DO_FCALL_BY_NAME
            | ZEND_CALLABLE_CONVERT => {
                let Some(d) = depth.checked_sub(1) else {
                    continue;
                };
                depth = d;
                if stack.last().is_some_and(|call| call.depth == d) {
                    if let Some(call) = stack.pop() {
                        end_call(op_array, ctx, i, op.opcode, &call, call.callee);
                    }
                }
                known = stack.last().is_some_and(|call| call.depth + 1 == d);
            }
            ZEND_FETCH_FUNC_ARG
            | ZEND_FETCH_STATIC_PROP_FUNC_ARG
            | ZEND_FETCH_OBJ_FUNC_ARG
            | ZEND_FETCH_DIM_FUNC_ARG => {
                let Some(call) = stack.last_mut() else {
                    continue;
                };
                let Some(arg) = call.func_arg_num else {
                    continue;
                };
                let Some(f) = call.known_send_mode(op_array, arg) else {
                    continue;
                };
                let opcode = if f.check_arg_send_type(arg, ZEND_SEND_BY_REF | ZEND_SEND_PREFER_REF)
                {
                    // FETCH_OBJ_W / FETCH_DIM_W have no TMP container handler: the fetch
                    // stays, and with it the CHECK_FUNC_ARG (the error is raised at run
                    // time by the FUNC_ARG form).
                    if matches!(op.opcode, ZEND_FETCH_OBJ_FUNC_ARG | ZEND_FETCH_DIM_FUNC_ARG)
                        && (matches!(op.op1, Operand::TmpVar(_))
                            || call.last_check_func_arg.is_none())
                    {
                        call.last_check_func_arg = None;
                        continue;
                    }
                    if op.opcode == ZEND_FETCH_STATIC_PROP_FUNC_ARG {
                        ZEND_FETCH_STATIC_PROP_W
                    } else {
                        zend_ir::Opcode(op.opcode.0 - 9)
                    }
                } else {
                    if op.opcode == ZEND_FETCH_DIM_FUNC_ARG && op.op2.is_unused() {
                        // FETCH_DIM_R has no unused op2 form.
                        call.try_inline = false;
                        continue;
                    }
                    if op.opcode == ZEND_FETCH_STATIC_PROP_FUNC_ARG {
                        ZEND_FETCH_STATIC_PROP_R
                    } else {
                        zend_ir::Opcode(op.opcode.0 - 12)
                    }
                };
                op_array.opcodes[i].opcode = opcode;
            }
            ZEND_SEND_VAL_EX => {
                let Some(call) = stack.last_mut() else {
                    continue;
                };
                if matches!(op.op2, Operand::Const(_)) {
                    call.try_inline = false;
                    continue;
                }
                let Operand::Unused(arg) = op.op2 else {
                    continue;
                };
                let Some(f) = call.known_send_mode(op_array, arg) else {
                    continue;
                };
                // A value sent by reference stays SEND_VAL_EX: its error belongs to run
                // time (8.2 still turns the call into INIT_FCALL).
                if !f.check_arg_send_type(arg, ZEND_SEND_BY_REF) {
                    op_array.opcodes[i].opcode = ZEND_SEND_VAL;
                }
            }
            ZEND_CHECK_FUNC_ARG => {
                let Some(call) = stack.last_mut() else {
                    continue;
                };
                if matches!(op.op2, Operand::Const(_)) {
                    call.try_inline = false;
                    call.func_arg_num = None;
                    continue;
                }
                let Operand::Unused(arg) = op.op2 else {
                    continue;
                };
                if call.known_send_mode(op_array, arg).is_some() {
                    call.func_arg_num = Some(arg);
                    call.last_check_func_arg = Some(i);
                }
            }
            ZEND_SEND_VAR_EX | ZEND_SEND_FUNC_ARG => {
                let Some(call) = stack.last_mut() else {
                    continue;
                };
                if op.opcode == ZEND_SEND_FUNC_ARG {
                    // Only once every fetch of the argument was rewritten does the send
                    // lose its FUNC_ARG form, and the CHECK_FUNC_ARG become a NOP.
                    let Some(check) = call.last_check_func_arg.take() else {
                        if matches!(op.op2, Operand::Const(_)) {
                            call.try_inline = false;
                        }
                        continue;
                    };
                    make_nop(&mut op_array.opcodes[check]);
                }
                if matches!(op.op2, Operand::Const(_)) {
                    call.try_inline = false;
                    continue;
                }
                let Operand::Unused(arg) = op.op2 else {
                    continue;
                };
                let Some(f) = call.known_send_mode(op_array, arg) else {
                    continue;
                };
                call.func_arg_num = None;
                op_array.opcodes[i].opcode =
                    if f.check_arg_send_type(arg, ZEND_SEND_BY_REF | ZEND_SEND_PREFER_REF) {
                        ZEND_SEND_REF
                    } else {
                        ZEND_SEND_VAR
                    };
            }
            ZEND_SEND_VAR_NO_REF_EX => {
                let Some(call) = stack.last_mut() else {
                    continue;
                };
                if matches!(op.op2, Operand::Const(_)) {
                    call.try_inline = false;
                    continue;
                }
                let Operand::Unused(arg) = op.op2 else {
                    continue;
                };
                let Some(f) = call.known_send_mode(op_array, arg) else {
                    continue;
                };
                op_array.opcodes[i].opcode = if f.check_arg_send_type(arg, ZEND_SEND_BY_REF) {
                    ZEND_SEND_VAR_NO_REF
                } else if f.check_arg_send_type(arg, ZEND_SEND_PREFER_REF) {
                    ZEND_SEND_VAL
                } else {
                    ZEND_SEND_VAR
                };
            }
            ZEND_SEND_VAL | ZEND_SEND_VAR | ZEND_SEND_REF => {
                if matches!(op.op2, Operand::Const(_)) {
                    if let Some(call) = stack.last_mut() {
                        call.try_inline = false;
                    }
                }
            }
            ZEND_SEND_UNPACK | ZEND_SEND_USER | ZEND_SEND_ARRAY => {
                if let Some(call) = stack.last_mut() {
                    call.try_inline = false;
                }
            }
            _ => debug_assert!(false, "HANDLED lists {:?}, which no arm takes", op.opcode),
        }
    }
}

/// `zend_adjust_fcall_stack_size`: each INIT_FCALL of a function of this script reserves the
/// stack the callee needs (`zend_vm_calc_used_stack`) with its final variable counts.
pub fn adjust_fcall_stack_size(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    for i in 0..op_array.opcodes.len() {
        adjust_init_fcall(op_array, ctx, i);
    }
}

/// `zend_adjust_fcall_stack_size_graph`: [`adjust_fcall_stack_size`] for an op_array with
/// function info, whose calls of the script's functions are among its `callee_info` (the
/// DFA pass kept their ops' numbers up to date): only those ops are looked at, not every
/// op of the op_array.
pub fn adjust_fcall_stack_size_graph(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    callee_info: &[zend_call_graph::CallSite],
) {
    for site in callee_info {
        // A call of an internal function (no callee among the script's op_arrays) already
        // reserves the stack it needs.
        if site.callee.is_some() {
            adjust_init_fcall(op_array, ctx, site.init.index());
        }
    }
}

/// Op `i`, when it is an INIT_FCALL of a function of this script, reserves the stack the
/// callee needs.
#[inline]
fn adjust_init_fcall(op_array: &mut OpArray, ctx: &mut OptimizerCtx, i: usize) {
    let op = &op_array.opcodes[i];
    if op.opcode != ZEND_INIT_FCALL {
        return;
    }
    let Operand::Const(l) = op.op2 else { return };
    let Some(Literal::String(name)) = op_array.literals.get(l.index()) else {
        return;
    };
    let Some(func) = ctx.function(op_array, name.as_bytes()) else {
        return;
    };
    let used = Callee::User(func).used_stack(op.extended_value);
    op_array.opcodes[i].op1 = Operand::Unused(used);
}
