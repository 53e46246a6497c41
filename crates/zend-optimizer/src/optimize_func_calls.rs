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
    self, get_called_func, literal_dtor, make_nop, Callee, ZEND_ACC_HAS_TYPE_HINTS,
    ZEND_ACC_STATIC, ZEND_SEND_BY_REF, ZEND_SEND_PREFER_REF,
};
use crate::level::PASS_16;
use crate::provenance::ChangeKind;

/// One open call: what `optimizer_call_info` keeps.
#[derive(Clone, Default)]
struct CallInfo {
    /// The op number of the INIT op while it may still be rewritten.
    init: Option<usize>,
    /// Whether the callee is known (its signature is read again when needed).
    known: bool,
    /// The callee is only a prototype (an overridable method): arguments past its
    /// signature may be by-reference in an override.
    is_prototype: bool,
    try_inline: bool,
    func_arg_num: Option<u32>,
    /// The CHECK_FUNC_ARG whose FUNC_ARG fetches are being rewritten; it becomes a NOP
    /// at the SEND_FUNC_ARG, unless a fetch had to stay (`last_check_func_arg_opline`).
    last_check_func_arg: Option<usize>,
}

impl CallInfo {
    /// `has_known_send_mode` (8.2.36): the callee decides how argument `arg_num` (1-based)
    /// is sent, which a prototype does only for the arguments of its own signature.
    fn has_known_send_mode(&self, facts: Option<&CalleeFacts>, arg_num: u32) -> bool {
        let Some(f) = facts.filter(|_| self.known) else {
            return false;
        };
        !self.is_prototype || arg_num <= f.num_args || f.fn_flags & ZEND_ACC_VARIADIC != 0
    }
}

/// What of the callee the walk needs once the borrow of the script ends.
#[derive(Clone)]
struct CalleeFacts {
    /// The send mode bits of each argument (`ZEND_SEND_BY_REF`, `ZEND_SEND_PREFER_REF`):
    /// few, so kept inline.
    modes: SmallVec<[u8; 16]>,
    num_args: u32,
    fn_flags: u32,
    used_stack_base: Option<(u32, u32, u32)>,
    call_op: zend_ir::Opcode,
    is_user: bool,
    /// Boxed: rare, and the facts are moved with every call the walk opens.
    inline: Option<Box<InlineFacts>>,
}

#[derive(Clone)]
struct InlineFacts {
    required_num_args: u32,
    /// The constant the function returns right after its RECVs.
    ret: Option<Literal>,
    /// Whether RECV_INIT default `i` (from 0) is a constant expression.
    default_is_ast: Vec<bool>,
}

impl CalleeFacts {
    fn of(callee: &Callee) -> CalleeFacts {
        let (num_args, fn_flags) = match callee {
            Callee::User(f) => (f.num_args, f.fn_flags),
            Callee::Internal(f) => (f.num_args, f.flags),
        };
        let total = num_args + u32::from(fn_flags & ZEND_ACC_VARIADIC != 0);
        let modes = (1..=total)
            .map(|a| {
                let mut m = 0;
                if callee.check_arg_send_type(a, ZEND_SEND_BY_REF) {
                    m |= ZEND_SEND_BY_REF;
                }
                if callee.check_arg_send_type(a, ZEND_SEND_PREFER_REF) {
                    m |= ZEND_SEND_PREFER_REF;
                }
                m as u8
            })
            .collect();
        let (used_stack_base, inline) = match callee {
            Callee::User(f) => {
                // The op right after the RECVs, when it is a RETURN.
                let ret_op = f
                    .opcodes
                    .get(f.num_args as usize)
                    .filter(|op| op.opcode == ZEND_RETURN);
                let user = f.type_ == ZEND_USER_FUNCTION;
                let inline = ret_op.filter(|_| user).map(|ret_op| {
                    let ret = match ret_op.op1 {
                        Operand::Const(l) => f.literals.get(l.index()).cloned(),
                        _ => None,
                    };
                    let default_is_ast = (0..f.num_args as usize)
                        .map(|i| {
                            f.opcodes.get(i).is_some_and(|op| match op.op2 {
                                Operand::Const(l) => {
                                    matches!(f.literals.get(l.index()), Some(Literal::Ast(_)))
                                }
                                _ => false,
                            })
                        })
                        .collect();
                    Box::new(InlineFacts {
                        required_num_args: f.required_num_args,
                        ret,
                        default_is_ast,
                    })
                });
                (Some((f.last_var(), f.T, f.num_args)), inline)
            }
            Callee::Internal(_) => (None, None),
        };
        CalleeFacts {
            modes,
            num_args,
            fn_flags,
            used_stack_base,
            call_op: callee.call_op(),
            is_user: matches!(callee, Callee::User(_)),
            inline,
        }
    }

    /// `zend_check_arg_send_type`.
    fn arg_mode(&self, arg_num: u32, mask: u32) -> bool {
        let i = arg_num.wrapping_sub(1);
        let i = if i >= self.num_args {
            if self.fn_flags & ZEND_ACC_VARIADIC == 0 {
                return false;
            }
            self.num_args
        } else {
            i
        };
        self.modes
            .get(i as usize)
            .is_some_and(|&m| u32::from(m) & mask != 0)
    }

    fn used_stack(&self, num_args: u32) -> u32 {
        let mut slots = helpers::ZEND_CALL_FRAME_SLOT + num_args;
        if let Some((last_var, t, f_num_args)) = self.used_stack_base {
            slots = (slots + last_var + t).saturating_sub(f_num_args.min(num_args));
        }
        slots * 16
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
fn try_inline_call(op_array: &mut OpArray, fcall: usize, i: usize, facts: &CalleeFacts) -> bool {
    let Some(inl) = &facts.inline else {
        return false;
    };
    let init = &op_array.opcodes[fcall];
    let passed = init.extended_value;
    if facts.fn_flags & (ZEND_ACC_ABSTRACT | ZEND_ACC_HAS_TYPE_HINTS | ZEND_ACC_TRAIT_CLONE) != 0
        || passed < inl.required_num_args
    {
        return false;
    }
    let Some(ret) = &inl.ret else {
        return false;
    };
    if init.opcode == ZEND_INIT_STATIC_METHOD_CALL && facts.fn_flags & ZEND_ACC_STATIC == 0 {
        return false;
    }
    // By-reference parameters would need INDIRECT arguments.
    if facts.modes.iter().any(|&m| m != 0) {
        return false;
    }
    if passed < facts.num_args && (passed..facts.num_args).any(|a| inl.default_is_ast[a as usize]) {
        return false;
    }
    if op_array.opcodes[i].result.is_unused() {
        make_nop(&mut op_array.opcodes[i]);
    } else {
        let lit = helpers::add_literal(op_array, ret.clone());
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

/// A DO op (or CALLABLE_CONVERT) `i` ends the call whose known callee `f` was found at INIT
/// op `fcall`: the INIT by name becomes INIT_FCALL, and a call that only returns a
/// constant may be inlined (PASS_16).
fn end_call(
    op_array: &mut OpArray,
    ctx: &mut OptimizerCtx,
    i: usize,
    opcode: zend_ir::Opcode,
    fcall: usize,
    call: &CallInfo,
    f: &CalleeFacts,
) {
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
            let o = &mut op_array.opcodes[fcall];
            o.opcode = ZEND_INIT_FCALL;
            o.op1 = Operand::Unused(f.used_stack(init.extended_value));
            o.op2 = Operand::Const(zend_ir::LiteralId::new(l.as_u32() + 1));
            if opcode != ZEND_CALLABLE_CONVERT {
                op_array.opcodes[i].opcode = f.call_op;
            }
        }
    }
    if ctx.optimization_level & PASS_16 != 0
        && call.try_inline
        && f.is_user
        && opcode != ZEND_CALLABLE_CONVERT
    {
        let name = match op_array.opcodes[fcall].op2 {
            Operand::Const(l) if ctx.logging() => {
                format!("{:?}", op_array.literals[l.index()])
            }
            _ => String::new(),
        };
        if try_inline_call(op_array, fcall, i, f) {
            ctx.note(op_array, OpNum::from(i), ChangeKind::Folded, || {
                format!("the call of {name} only returns a constant")
            });
        }
    }
}

/// The opcodes `run` looks at (its match's arms): the other ops, most of them, are skipped
/// by one table test instead of the match's indirect jump.
static HANDLED: OpcodeSet = OpcodeSet::of(&[
    ZEND_INIT_FCALL_BY_NAME,
    ZEND_INIT_NS_FCALL_BY_NAME,
    ZEND_INIT_STATIC_METHOD_CALL,
    ZEND_INIT_METHOD_CALL,
    ZEND_INIT_FCALL,
    ZEND_NEW,
    ZEND_INIT_DYNAMIC_CALL,
    ZEND_INIT_USER_CALL,
    ZEND_DO_FCALL,
    ZEND_DO_ICALL,
    ZEND_DO_UCALL,
    ZEND_DO_FCALL_BY_NAME,
    ZEND_CALLABLE_CONVERT,
    ZEND_FETCH_FUNC_ARG,
    ZEND_FETCH_STATIC_PROP_FUNC_ARG,
    ZEND_FETCH_OBJ_FUNC_ARG,
    ZEND_FETCH_DIM_FUNC_ARG,
    ZEND_SEND_VAL_EX,
    ZEND_CHECK_FUNC_ARG,
    ZEND_SEND_VAR_EX,
    ZEND_SEND_FUNC_ARG,
    ZEND_SEND_VAR_NO_REF_EX,
    ZEND_SEND_VAL,
    ZEND_SEND_VAR,
    ZEND_SEND_REF,
    ZEND_SEND_UNPACK,
    ZEND_SEND_USER,
    ZEND_SEND_ARRAY,
]);

/// `zend_optimize_func_calls`.
pub fn run(op_array: &mut OpArray, ctx: &mut OptimizerCtx) {
    let n = op_array.opcodes.len();
    if n < 2 {
        return;
    }
    // Calls nest shallowly: the open ones are kept inline.
    let mut stack: SmallVec<[CallInfo; 8]> = SmallVec::new();
    // Callee facts per open call (parallel to `stack`).
    let mut facts: SmallVec<[Option<CalleeFacts>; 8]> = SmallVec::new();
    for i in 0..n {
        let op = &op_array.opcodes[i];
        if !HANDLED.contains(op.opcode) {
            continue;
        }
        match op.opcode {
            ZEND_INIT_FCALL_BY_NAME
            | ZEND_INIT_NS_FCALL_BY_NAME
            | ZEND_INIT_STATIC_METHOD_CALL
            | ZEND_INIT_METHOD_CALL
            | ZEND_INIT_FCALL
            | ZEND_NEW => {
                let found = get_called_func(ctx, op_array, op)
                    .map(|(callee, proto)| (CalleeFacts::of(&callee), proto));
                let try_inline =
                    found.as_ref().is_some_and(|(_, proto)| !proto) && op.opcode != ZEND_NEW;
                stack.push(CallInfo {
                    init: Some(i),
                    known: found.is_some(),
                    is_prototype: found.as_ref().is_some_and(|(_, proto)| *proto),
                    try_inline,
                    func_arg_num: None,
                    last_check_func_arg: None,
                });
                facts.push(found.map(|(f, _)| f));
            }
            ZEND_INIT_DYNAMIC_CALL | ZEND_INIT_USER_CALL => {
                stack.push(CallInfo {
                    init: Some(i),
                    ..CallInfo::default()
                });
                facts.push(None);
            }
            // CALLABLE_CONVERT (`f(...)`) ends its call as a DO op does.
            ZEND_DO_FCALL
            | ZEND_DO_ICALL
            | ZEND_DO_UCALL
            | ZEND_DO_FCALL_BY_NAME
            | ZEND_CALLABLE_CONVERT => {
                // The callee's facts are read in place, then dropped with the call.
                let call = stack.pop();
                if let (Some(call), Some(Some(f))) = (call, facts.last()) {
                    if let (Some(fcall), true) = (call.init, call.known) {
                        end_call(op_array, ctx, i, op.opcode, fcall, &call, f);
                    }
                }
                facts.pop();
            }
            ZEND_FETCH_FUNC_ARG
            | ZEND_FETCH_STATIC_PROP_FUNC_ARG
            | ZEND_FETCH_OBJ_FUNC_ARG
            | ZEND_FETCH_DIM_FUNC_ARG => {
                let (Some(call), Some(f)) = (stack.last_mut(), facts.last()) else {
                    continue;
                };
                let Some(arg) = call.func_arg_num else {
                    continue;
                };
                if !call.has_known_send_mode(f.as_ref(), arg) {
                    continue;
                }
                let Some(f) = f else { continue };
                let o = &mut op_array.opcodes[i];
                if f.arg_mode(arg, ZEND_SEND_BY_REF | ZEND_SEND_PREFER_REF) {
                    // FETCH_OBJ_W / FETCH_DIM_W have no TMP container handler: the fetch
                    // stays, and with it the CHECK_FUNC_ARG (the error is raised at run
                    // time by the FUNC_ARG form).
                    if matches!(o.opcode, ZEND_FETCH_OBJ_FUNC_ARG | ZEND_FETCH_DIM_FUNC_ARG)
                        && (matches!(o.op1, Operand::TmpVar(_))
                            || call.last_check_func_arg.is_none())
                    {
                        call.last_check_func_arg = None;
                        continue;
                    }
                    o.opcode = if o.opcode == ZEND_FETCH_STATIC_PROP_FUNC_ARG {
                        ZEND_FETCH_STATIC_PROP_W
                    } else {
                        zend_ir::Opcode(o.opcode.0 - 9)
                    };
                } else {
                    if o.opcode == ZEND_FETCH_DIM_FUNC_ARG && o.op2.is_unused() {
                        // FETCH_DIM_R has no unused op2 form.
                        call.try_inline = false;
                        continue;
                    }
                    o.opcode = if o.opcode == ZEND_FETCH_STATIC_PROP_FUNC_ARG {
                        ZEND_FETCH_STATIC_PROP_R
                    } else {
                        zend_ir::Opcode(o.opcode.0 - 12)
                    };
                }
            }
            ZEND_SEND_VAL_EX => {
                let (Some(call), Some(f)) = (stack.last_mut(), facts.last()) else {
                    continue;
                };
                if matches!(op.op2, Operand::Const(_)) {
                    call.try_inline = false;
                    continue;
                }
                let Operand::Unused(arg) = op.op2 else {
                    continue;
                };
                if !call.has_known_send_mode(f.as_ref(), arg) {
                    continue;
                }
                // A value sent by reference stays SEND_VAL_EX: its error belongs to run
                // time (8.2 still turns the call into INIT_FCALL).
                if !f
                    .as_ref()
                    .is_some_and(|f| f.arg_mode(arg, ZEND_SEND_BY_REF))
                {
                    op_array.opcodes[i].opcode = ZEND_SEND_VAL;
                }
            }
            ZEND_CHECK_FUNC_ARG => {
                let (Some(call), Some(f)) = (stack.last_mut(), facts.last()) else {
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
                if call.has_known_send_mode(f.as_ref(), arg) {
                    call.func_arg_num = Some(arg);
                    call.last_check_func_arg = Some(i);
                }
            }
            ZEND_SEND_VAR_EX | ZEND_SEND_FUNC_ARG => {
                let op = *op;
                let (Some(call), Some(f)) = (stack.last_mut(), facts.last()) else {
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
                if !call.has_known_send_mode(f.as_ref(), arg) {
                    continue;
                }
                let Some(f) = f else { continue };
                call.func_arg_num = None;
                op_array.opcodes[i].opcode =
                    if f.arg_mode(arg, ZEND_SEND_BY_REF | ZEND_SEND_PREFER_REF) {
                        ZEND_SEND_REF
                    } else {
                        ZEND_SEND_VAR
                    };
            }
            ZEND_SEND_VAR_NO_REF_EX => {
                let (Some(call), Some(f)) = (stack.last_mut(), facts.last()) else {
                    continue;
                };
                if matches!(op.op2, Operand::Const(_)) {
                    call.try_inline = false;
                    continue;
                }
                let Operand::Unused(arg) = op.op2 else {
                    continue;
                };
                if !call.has_known_send_mode(f.as_ref(), arg) {
                    continue;
                }
                let Some(f) = f else { continue };
                op_array.opcodes[i].opcode = if f.arg_mode(arg, ZEND_SEND_BY_REF) {
                    ZEND_SEND_VAR_NO_REF
                } else if f.arg_mode(arg, ZEND_SEND_PREFER_REF) {
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
        let op = &op_array.opcodes[i];
        if op.opcode != ZEND_INIT_FCALL {
            continue;
        }
        let Operand::Const(l) = op.op2 else { continue };
        let Some(Literal::String(name)) = op_array.literals.get(l.index()) else {
            continue;
        };
        let Some(func) = ctx.function(op_array, name.as_bytes()) else {
            continue;
        };
        let used = Callee::User(func).used_stack(op.extended_value);
        op_array.opcodes[i].op1 = Operand::Unused(used);
    }
}
