//! `zopt dump --format json`: the analyses of every op_array as PHP's DFA pass computes them
//! ([`zend_optimizer::analysis`]), in a versioned JSON form for tools.
//!
//! Schema, version 1 (`"format": "zopt-analysis", "version": 1`; a field is never removed or
//! changes meaning within a version, new fields may appear):
//!
//! - `optimization_level`: the level analysed at, as `"0x60"`.
//! - `functions`: every op_array in `zend_foreach_op_array` order, each with `index`, `name`
//!   (`$_main`, `f`, `Class::method`, `{closure}`) and either `refused` (why PHP's DFA pass
//!   does not analyse it; no other analysis field) or:
//!   - `blocks`: `id`, `start` and `len` (op numbers), `reachable`, `successors`,
//!     `predecessors` (block ids, PHP's order), `idom` (null for the entry and unreachable
//!     blocks), `loop_header` (null or a block id);
//!   - `vars`: SSA variables by number: `id`, `name` (`CV0($a)` or `X3`, as PHP's SSA dump),
//!     `definition` (op number or null), `phi` (whether a phi or pi defines it), `type`
//!     (PHP's type dump text, `long, double`), `mask` (the MAY_BE bits), `class` (null or
//!     `{"name", "instanceof"}`), `range` (null or `{"min", "max", "underflow", "overflow"}`),
//!     `no_val`, `escape` (`unknown`, `no_escape`, `function_escape`, `global_escape`);
//!   - `phis`: `var` (the SSA variable it defines), `block`, `pi` (whether a pi, for the edge
//!     from which block: null for a phi), `sources` (SSA variable ids or null);
//!   - `return`: null or `{"type", "mask", "class", "range"}` as for variables;
//!   - `calls`: call sites: `init`, `args`, `call` (op numbers; `call` null when the `DO_*`
//!     is missing), `callee` (index of the called op_array, or null).

use serde_json::{json, Value};
use zend_inference::ClassInfo;
use zend_ir::dump::SsaRange;
use zend_ir::Script;
use zend_optimizer::analysis::{analyze_script, type_name, FuncAnalysis};
use zend_ssa::EscapeState;

/// The format's name and version, in every document.
pub const FORMAT: &str = "zopt-analysis";
pub const VERSION: u32 = 1;

fn range(has: bool, r: &SsaRange) -> Value {
    if !has {
        return Value::Null;
    }
    json!({"min": r.min, "max": r.max, "underflow": r.underflow, "overflow": r.overflow})
}

fn class(ce: &Option<ClassInfo>, instanceof: bool) -> Value {
    match ce {
        None => Value::Null,
        Some(c) => json!({"name": String::from_utf8_lossy(&c.name), "instanceof": instanceof}),
    }
}

fn escape(e: EscapeState) -> &'static str {
    match e {
        EscapeState::Unknown => "unknown",
        EscapeState::NoEscape => "no_escape",
        EscapeState::FunctionEscape => "function_escape",
        EscapeState::GlobalEscape => "global_escape",
    }
}

fn analysed(op_array: &zend_ir::OpArray, f: &FuncAnalysis) -> (Value, Value, Value, Value) {
    let blocks: Vec<Value> = f
        .cfg
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let id = zend_cfg::BlockId::new(i as u32);
            let ids = |s: &[zend_cfg::BlockId]| s.iter().map(|b| b.as_u32()).collect::<Vec<_>>();
            json!({
                "id": i,
                "start": b.start,
                "len": b.len,
                "reachable": b.is_reachable(),
                "successors": ids(f.cfg.successors(id)),
                "predecessors": ids(f.cfg.predecessors(id)),
                "idom": b.idom.map(|d| d.as_u32()),
                "loop_header": b.loop_header.map(|h| h.as_u32()),
            })
        })
        .collect();
    let vars: Vec<Value> = f
        .ssa
        .vars
        .iter()
        .zip(&f.inference.vars)
        .enumerate()
        .map(|(i, (v, info))| {
            let name = match op_array.vars.get(v.var as usize) {
                Some(cv) => format!("CV{}(${cv})", v.var),
                None => format!("X{}", v.var),
            };
            json!({
                "id": i,
                "name": name,
                "definition": v.definition.map(|d| d.as_u32()),
                "phi": v.definition_phi.is_some(),
                "type": type_name(info.type_),
                "mask": info.type_,
                "class": class(&info.ce, info.is_instanceof),
                "range": range(info.has_range, &info.range),
                "no_val": v.no_val,
                "escape": escape(v.escape_state),
            })
        })
        .collect();
    let phis: Vec<Value> = f
        .ssa
        .phis
        .iter()
        .map(|p| {
            json!({
                "var": p.ssa_var.as_u32(),
                "block": p.block.as_u32(),
                "pi": p.pi.map(|b| b.as_u32()),
                "sources": p.sources.iter().map(|s| s.map(|s| s.as_u32())).collect::<Vec<_>>(),
            })
        })
        .collect();
    let ret = match &f.inference.return_info {
        None => Value::Null,
        Some(r) => json!({
            "type": type_name(r.type_),
            "mask": r.type_,
            "class": class(&r.ce, r.is_instanceof),
            "range": range(r.has_range, &r.range),
        }),
    };
    (blocks.into(), vars.into(), phis.into(), ret)
}

/// The JSON document for `script` analysed at `optimization_level`.
pub fn analysis(script: &Script, optimization_level: u32) -> Value {
    let analysis = analyze_script(script, optimization_level);
    let functions: Vec<Value> = analysis
        .functions()
        .map(|function| {
            let mut entry = json!({"index": function.index, "name": function.name});
            let obj = entry.as_object_mut().expect("an object");
            match function.analysis {
                Err(reason) => {
                    obj.insert("refused".into(), reason.to_string().into());
                }
                Ok(f) => {
                    let (blocks, vars, phis, ret) = analysed(function.op_array, f);
                    obj.insert("blocks".into(), blocks);
                    obj.insert("vars".into(), vars);
                    obj.insert("phis".into(), phis);
                    obj.insert("return".into(), ret);
                    let calls: Vec<Value> = function
                        .calls()
                        .iter()
                        .map(|c| {
                            json!({
                                "init": c.init.as_u32(),
                                "args": c.args.iter().map(|a| a.as_u32()).collect::<Vec<_>>(),
                                "call": c.call.map(|c| c.as_u32()),
                                "callee": c.callee.map(|f| f.0),
                            })
                        })
                        .collect();
                    obj.insert("calls".into(), calls.into());
                }
            }
            entry
        })
        .collect();
    json!({
        "format": FORMAT,
        "version": VERSION,
        "optimization_level": format!("{optimization_level:#x}"),
        "functions": functions,
    })
}
