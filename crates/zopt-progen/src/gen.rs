//! The generator: typed expressions over a scope of typed variables, statements of every
//! control-flow kind, functions, classes, enums and generators (see the crate docs for what
//! every program guarantees).

use crate::rng::Rng;
use crate::tree::{EditId, EditKind, Edits, Node};

/// Relative weights of what the generator chooses (0 turns a feature off).
#[derive(Clone, Debug)]
pub struct Weights {
    /// Integer and float arithmetic, overflow, division edge cases.
    pub arith: u32,
    /// Bitwise operators and shifts.
    pub bitwise: u32,
    /// String functions, concatenation, interpolation.
    pub strings: u32,
    /// Loose and strict comparisons, type juggling.
    pub compare: u32,
    /// Array literals, functions and statements (packed and hash).
    pub arrays: u32,
    /// Calls of the program's own functions (defaults, named args, variadics, by-ref).
    pub calls: u32,
    /// Calls of internal functions.
    pub internal: u32,
    /// Expressions PHP can fold at compile time (constant operands, internal functions of
    /// literal arguments).
    pub fold: u32,
    /// Objects, methods, static members, enums, nullsafe.
    pub objects: u32,
    /// Closures, arrow functions, first-class callables.
    pub closures: u32,
    /// Assignments and compound assignments.
    pub assign: u32,
    /// Digest output.
    pub echo: u32,
    /// if/elseif/else.
    pub branch: u32,
    /// for, while, do-while, foreach (with break/continue N).
    pub loops: u32,
    /// switch and match.
    pub switch: u32,
    /// try/catch/finally and throwing.
    pub exceptions: u32,
    /// References (=&, by-ref foreach and parameters) and copy-on-write copies.
    pub refs: u32,
    /// goto (forward, and bounded backward).
    pub goto: u32,
    /// Generators and yield from.
    pub generators: u32,
    /// global, static, $GLOBALS, variable variables, compact.
    pub scopes: u32,
    /// Less common constructs: destructuring, anonymous classes, dynamic calls and class
    /// names, conditional declarations, string offsets, stdClass, static properties (by
    /// reference, read-write, isset, unset), nested dimensions and properties read-written
    /// and unset, return by reference, `@`, assert (they reach more of PHP's opcodes).
    pub extras: u32,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            arith: 10,
            bitwise: 5,
            strings: 8,
            compare: 8,
            arrays: 8,
            calls: 8,
            internal: 6,
            fold: 5,
            objects: 5,
            closures: 4,
            assign: 14,
            echo: 10,
            branch: 6,
            loops: 7,
            switch: 4,
            exceptions: 4,
            refs: 3,
            goto: 1,
            generators: 3,
            scopes: 3,
            extras: 5,
        }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Config {
    pub weights: Weights,
    /// Statements of the main script (min, max).
    pub main_statements: (usize, usize),
    /// Plain functions (min, max); generators, recursive, by-ref and variadic functions
    /// come on top, each with its weight.
    pub functions: (usize, usize),
    /// Statements per function body (min, max).
    pub function_statements: (usize, usize),
    /// Nesting of blocks.
    pub max_block_depth: usize,
    /// Nesting of expressions.
    pub max_expr_depth: u32,
    /// `declare(strict_types=1)`: `None` for half the seeds.
    pub strict_types: Option<bool>,
    /// Classes, interfaces, traits and enums.
    pub classes: bool,
    /// Steps `step_ok()` allows before it returns false.
    pub step_budget: u32,
    /// Chance of `namespace Fz;` (unqualified calls of internal functions then compile
    /// to namespace-fallback calls PHP cannot evaluate at compile time).
    pub namespace: f64,
    /// Chance of `declare(ticks=1);`.
    pub ticks: f64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            weights: Weights::default(),
            main_statements: (6, 18),
            functions: (1, 4),
            function_statements: (1, 5),
            max_block_depth: 3,
            max_expr_depth: 3,
            strict_types: None,
            classes: true,
            step_budget: 20_000,
            namespace: 0.3,
            ticks: 0.05,
        }
    }
}

/// A generated program.
#[derive(Clone, Debug)]
pub struct Program {
    pub seed: u64,
    pub strict_types: bool,
    pub root: Node,
}

impl Program {
    /// The PHP source.
    pub fn source(&self) -> String {
        self.source_with(&Edits::default())
    }

    /// The PHP source with the reducer's edits applied.
    pub fn source_with(&self, edits: &Edits) -> String {
        let mut out = String::new();
        self.root.render(edits, &mut out);
        out
    }

    /// The places the reducer may still edit.
    pub fn places(&self, edits: &Edits) -> Vec<(EditId, EditKind)> {
        let mut out = Vec::new();
        self.root.places(edits, &mut out);
        out
    }
}

/// Generates the program of `seed`.
pub fn generate(seed: u64, config: &Config) -> Program {
    let mut rng = Rng::new(seed);
    let strict = config.strict_types.unwrap_or_else(|| rng.chance(0.5));
    let mut gen = Gen {
        rng,
        cfg: config,
        next_id: 0,
        strict,
        vars: Vec::new(),
        funcs: Vec::new(),
        consts: Vec::new(),
        breakables: Vec::new(),
        loops: 0,
        in_try: 0,
        in_finally: false,
        in_function: false,
        throws: false,
        calls: 0,
        fresh: 0,
        indent: 0,
        block_depth: 0,
        classes: false,
        generators: Vec::new(),
        ret: None,
        namespace: false,
        nevers: Vec::new(),
    };
    let root = gen.program();
    Program {
        seed,
        strict_types: strict,
        root,
    }
}

/// What an expression is guaranteed to evaluate to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Float,
    /// int or float.
    Num,
    Bool,
    Str,
    /// Any of the above, or null.
    Scalar,
    /// An array whose values are scalars.
    Arr,
    /// An instance of K1 (the final class of the hierarchy).
    Obj,
    /// K1 or null.
    NullObj,
}

impl Ty {
    fn is_sub(self, of: Ty) -> bool {
        self == of
            || (of == Ty::Num && matches!(self, Ty::Int | Ty::Float))
            || (of == Ty::Scalar
                && matches!(self, Ty::Int | Ty::Float | Ty::Num | Ty::Bool | Ty::Str))
            || (of == Ty::NullObj && self == Ty::Obj)
    }

    /// The literal the reducer puts in place of an expression of this type.
    fn simple(self) -> Option<&'static str> {
        Some(match self {
            Ty::Int | Ty::Num => "0",
            Ty::Float => "0.0",
            Ty::Bool => "false",
            Ty::Str => "''",
            Ty::Scalar => "null",
            Ty::Arr => "[]",
            Ty::Obj | Ty::NullObj => return None,
        })
    }

    /// A PHP type declaration admitting exactly the values of this type.
    fn decl(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Float => "float",
            Ty::Num => "int|float",
            Ty::Bool => "bool",
            Ty::Str => "string",
            Ty::Scalar => "mixed",
            Ty::Arr => "array",
            Ty::Obj => "K1",
            Ty::NullObj => "?K1",
        }
    }
}

const SCALAR_TYS: [Ty; 5] = [Ty::Int, Ty::Float, Ty::Num, Ty::Bool, Ty::Str];
const VALUE_TYS: [Ty; 7] = [
    Ty::Int,
    Ty::Float,
    Ty::Num,
    Ty::Bool,
    Ty::Str,
    Ty::Scalar,
    Ty::Arr,
];

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    writable: bool,
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    ty: Ty,
    by_ref: bool,
    default: Option<String>,
}

#[derive(Clone, Debug)]
struct Func {
    name: String,
    params: Vec<Param>,
    /// Untyped `...$rest` after the params.
    variadic: bool,
    ret: Ty,
    /// May throw a RuntimeException: only called inside a try.
    throws: bool,
}

const INT_LITS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "10",
    "42",
    "-5",
    "255",
    "1000",
    "0x7f",
    "0b101",
    "017",
    "1_000",
    "PHP_INT_MAX",
    "PHP_INT_MIN",
    "PHP_INT_SIZE",
    "2147483647",
    "-2147483648",
    "4611686018427387904",
];
const FLOAT_LITS: &[&str] = &[
    "0.0",
    "1.5",
    "-0.0",
    "0.1",
    "1e100",
    "-2.5",
    "1.0E+25",
    "NAN",
    "INF",
    "-INF",
    "3.0",
    "PHP_FLOAT_EPSILON",
    "0.30000000000000004",
    "9.2233720368547758E+18",
];
const STR_LITS: &[&str] = &[
    "''",
    "'0'",
    "'1'",
    "'12'",
    "'1.5'",
    "' 12'",
    "'12 '",
    "'1e3'",
    "'abc'",
    "'0x1A'",
    "'00'",
    "'-0'",
    "'INF'",
    "' '",
    "\"a\\nb\"",
    "'123abc'",
    "'A'",
    "'zz'",
    "'9'",
    "'a9'",
    "'-12.5e-1'",
    "'.5'",
    "'PHP'",
    "'1000'",
];
/// Numeric strings (arithmetic on them never throws or warns).
const NUM_STR_LITS: &[&str] = &[
    "'12'",
    "' 12'",
    "'12 '",
    "'1.5'",
    "'1e3'",
    "'-0'",
    "'.5'",
    "'00'",
    "'-12.5e-1'",
    "'9'",
];
/// Integral numeric strings (coerced to int parameters without a notice).
const INT_STR_LITS: &[&str] = &["'12'", "' 7'", "'-3'", "'0'", "'1000'"];
const KEY_STRS: &[&str] = &["'a'", "'b'", "'x'", "'k'", "'0'", "'12'", "''"];

/// Concatenates nodes.
macro_rules! cat {
    ($($part:expr),* $(,)?) => {
        Node::Seq(vec![$(Node::from($part)),*])
    };
}

impl From<&str> for Node {
    fn from(s: &str) -> Node {
        Node::Text(s.to_string())
    }
}

impl From<String> for Node {
    fn from(s: String) -> Node {
        Node::Text(s)
    }
}

impl From<&String> for Node {
    fn from(s: &String) -> Node {
        Node::Text(s.clone())
    }
}

/// The generator state of an enclosing function while a nested one is generated.
struct Saved {
    vars: Vec<Var>,
    breakables: Vec<bool>,
    loops: usize,
    in_function: bool,
    throws: bool,
    in_try: usize,
    in_finally: bool,
    ret: Option<Ty>,
}

struct Gen<'c> {
    rng: Rng,
    cfg: &'c Config,
    next_id: EditId,
    strict: bool,
    /// Variables of the current scope.
    vars: Vec<Var>,
    /// Functions callable from here (declared before the one being generated).
    funcs: Vec<Func>,
    consts: Vec<(String, Ty)>,
    /// Enclosing break targets of the current function: true for a loop, false for a
    /// switch (which `break` counts but `continue` must not target).
    breakables: Vec<bool>,
    /// Enclosing loops of the current function (names their counters).
    loops: usize,
    in_try: usize,
    in_finally: bool,
    in_function: bool,
    /// The function being generated calls something that may throw.
    throws: bool,
    /// Calls generated so far (to tell whether a loop body calls).
    calls: usize,
    fresh: usize,
    indent: usize,
    block_depth: usize,
    classes: bool,
    /// Generator functions (each takes one int).
    generators: Vec<String>,
    /// Return type of the function being generated (early returns).
    ret: Option<Ty>,
    /// The program is in `namespace Fz`.
    namespace: bool,
    /// Functions returning `never` (they always throw a RuntimeException).
    nevers: Vec<String>,
}

impl Gen<'_> {
    fn id(&mut self) -> EditId {
        self.next_id += 1;
        self.next_id
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn line(&self, s: impl AsRef<str>) -> Node {
        Node::Text(format!("{}{}\n", "    ".repeat(self.indent), s.as_ref()))
    }

    fn ind(&self) -> String {
        "    ".repeat(self.indent)
    }

    /// A statement the reducer may cut.
    fn cut(&mut self, body: Node) -> Node {
        Node::Cut {
            id: self.id(),
            body: Box::new(body),
        }
    }

    fn simplifiable(&mut self, full: Node, ty: Ty) -> Node {
        match ty.simple() {
            Some(simple) => Node::Simplify {
                id: self.id(),
                full: Box::new(full),
                simple: simple.to_string(),
            },
            None => full,
        }
    }

    fn w(&self) -> &Weights {
        &self.cfg.weights
    }

    fn vars_of(&self, ty: Ty, writable: bool) -> Vec<Var> {
        self.vars
            .iter()
            .filter(|v| v.ty.is_sub(ty) && (!writable || v.writable))
            .cloned()
            .collect()
    }

    fn exact_vars(&self, ty: Ty) -> Vec<Var> {
        self.vars
            .iter()
            .filter(|v| v.ty == ty && v.writable)
            .cloned()
            .collect()
    }

    // ---------------------------------------------------------------- program

    fn program(&mut self) -> Node {
        let mut parts = vec![Node::from("<?php\n")];
        if self.strict {
            parts.push("declare(strict_types=1);\n".into());
        }
        if self.rng.chance(self.cfg.namespace) {
            parts.push("namespace Fz;\n".into());
            self.namespace = true;
        }
        if self.rng.chance(self.cfg.ticks) {
            parts.push("declare(ticks=1);\n".into());
        }
        parts.push(
            "\nset_error_handler(static function (int $no, string $msg): bool {\n    echo \"E$no: $msg\\n\";\n    return true;\n});\n\n"
                .into(),
        );
        parts.push(
            format!(
                "function step_ok(): bool\n{{\n    static $steps = 0;\n    return ++$steps <= {};\n}}\n\n",
                self.cfg.step_budget
            )
            .into(),
        );
        // Constants: compile-time `const` and run-time define().
        for i in 0..self.rng.range(0, 3) {
            let ty = *self.rng.pick(&[Ty::Int, Ty::Str, Ty::Float, Ty::Bool]);
            let value = self.const_expr(ty);
            let name = format!("C{i}");
            let decl = cat!(format!("const {name} = "), value, ";\n");
            parts.push(self.cut(decl));
            self.consts.push((name, ty));
        }
        if self.cfg.classes && self.w().objects > 0 {
            self.classes = true;
            parts.push(self.class_decls());
        }
        // Functions, each calling only those declared before it.
        let plain = self.rng.range(self.cfg.functions.0, self.cfg.functions.1);
        let mut kinds: Vec<u8> = (0..plain).map(|_| 0).collect();
        if self.w().calls > 0 {
            if self.rng.chance(0.6) {
                kinds.push(1); // recursive
            }
            if self.w().refs > 0 && self.rng.chance(0.5) {
                kinds.push(2); // by-ref
            }
            if self.rng.chance(0.5) {
                kinds.push(3); // variadic
            }
            if self.w().exceptions > 0 && self.rng.chance(0.5) {
                kinds.push(4); // throwing
            }
        }
        if self.w().generators > 0 && self.rng.chance(0.6) {
            kinds.push(5);
        }
        let n = kinds.len();
        for i in 0..n {
            let j = self.rng.below(n);
            kinds.swap(i, j);
        }
        for (i, kind) in kinds.into_iter().enumerate() {
            let f = match kind {
                0 => self.plain_function(i),
                1 => self.recursive_function(i),
                2 => self.by_ref_function(i),
                3 => self.variadic_function(i),
                4 => self.throwing_function(i),
                _ => self.generator_function(i),
            };
            parts.push(f);
        }
        parts.push(self.main());
        Node::Seq(parts)
    }

    /// A constant expression (`const` initialisers allow operators on literals and
    /// earlier constants).
    fn const_expr(&mut self, ty: Ty) -> Node {
        let earlier: Vec<String> = self
            .consts
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n.clone())
            .collect();
        let lit = |g: &mut Gen, ty: Ty| -> String {
            if !earlier.is_empty() && g.rng.chance(0.3) {
                return g.rng.pick(&earlier).clone();
            }
            g.literal(ty)
        };
        match ty {
            Ty::Int => {
                let (a, b) = (lit(self, ty), lit(self, ty));
                match self.rng.below(4) {
                    0 => format!("{a} | ({b} << 2)").into(),
                    1 => format!("({a} & 0xffff) * 3 - ({b} & 0xff)").into(),
                    2 => format!("{a} % 7 + PHP_INT_SIZE").into(),
                    _ => a.into(),
                }
            }
            Ty::Str => {
                let (a, b) = (lit(self, ty), lit(self, ty));
                format!("{a} . '-' . {b}").into()
            }
            Ty::Float => {
                let (a, b) = (lit(self, Ty::Float), lit(self, Ty::Int));
                format!("{a} * 2 + {b} / 4").into()
            }
            _ => {
                let (a, b) = (lit(self, Ty::Int), lit(self, Ty::Int));
                format!("{a} < {b} || PHP_INT_SIZE === 8").into()
            }
        }
    }

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Int => {
                let l = *self.rng.pick(INT_LITS);
                if l.starts_with('-') {
                    format!("({l})")
                } else {
                    l.to_string()
                }
            }
            Ty::Float => {
                let l = *self.rng.pick(FLOAT_LITS);
                if l.starts_with('-') {
                    format!("({l})")
                } else {
                    l.to_string()
                }
            }
            Ty::Num => {
                let t = if self.rng.chance(0.6) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                self.literal(t)
            }
            Ty::Bool => self.rng.pick(&["true", "false"]).to_string(),
            Ty::Str => self.rng.pick(STR_LITS).to_string(),
            Ty::Scalar => {
                if self.rng.chance(0.15) {
                    "null".into()
                } else {
                    let t = *self.rng.pick(&SCALAR_TYS);
                    self.literal(t)
                }
            }
            Ty::Arr => {
                let n = self.rng.range(0, 4);
                let items: Vec<String> = (0..n)
                    .map(|i| {
                        let v = self.literal(Ty::Scalar);
                        match self.rng.below(3) {
                            0 => v,
                            1 => format!("{} => {v}", self.rng.pick(KEY_STRS)),
                            _ => format!("{} => {v}", (n - i) * 2),
                        }
                    })
                    .collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Obj | Ty::NullObj => "new K1(1)".into(),
        }
    }

    // ---------------------------------------------------------------- classes

    fn class_decls(&mut self) -> Node {
        let sides = self.literal(Ty::Int);
        let label = self.literal(Ty::Str);
        let c = self.const_expr(Ty::Int);
        let mut parts = vec![
            cat!("class FuzzException extends \\RuntimeException\n{\n}\n\n"),
            cat!(
                "interface I0\n{\n    const SIDES = ",
                sides,
                ";\n    public function area(): float;\n}\n\n"
            ),
            cat!(
                "trait T0\n{\n    public string $label = ",
                label,
                ";\n\n    public function describe(): string\n    {\n        return static::class . '/' . $this->label . '/' . $this->getName();\n    }\n\n    public static function kind(): string\n    {\n        return self::class . '<' . get_called_class();\n    }\n}\n\n"
            ),
        ];
        // K0: abstract base with a promoted readonly property and a generated method.
        self.indent = 1;
        let vars = vec![
            Var {
                name: "$x".into(),
                ty: Ty::Int,
                writable: true,
            },
            Var {
                name: "$this->id".into(),
                ty: Ty::Int,
                writable: false,
            },
            Var {
                name: "$this->name".into(),
                ty: Ty::Str,
                writable: true,
            },
            Var {
                name: "self::C".into(),
                ty: Ty::Int,
                writable: false,
            },
        ];
        let saved = self.enter_function(vars, Some(Ty::Int));
        let n = self.rng.range(0, 3);
        let body = self.block(n);
        let ret = self.expr(Ty::Int, 2);
        self.vars.retain(|v| v.name != "$x");
        let area = self.expr(Ty::Num, 2);
        self.leave_function(saved);
        self.indent = 0;
        parts.push(cat!(
            "abstract class K0 implements I0\n{\n    use T0;\n\n    public const C = ",
            c,
            ";\n    public static int $count = 0;\n    public static $bag = [1, 2];\n\n    public function __construct(public readonly int $id, protected string $name = 'k')\n    {\n        static::$count = (static::$count + 1) & 0xffff;\n    }\n\n    public function m(int $x): int\n    {\n",
            body,
            "        return ",
            ret,
            ";\n    }\n\n    public static function make(int $id): static\n    {\n        return new static($id);\n    }\n\n    public function getName(): string\n    {\n        return $this->name;\n    }\n\n    public function area(): float\n    {\n        return ",
            area,
            ";\n    }\n}\n\n"
        ));
        parts.push(cat!(
            "final class K1 extends K0\n{\n    public array $items = [];\n\n    public function m(int $x): int\n    {\n        return (parent::m($x) ^ self::C) & 0xffffff;\n    }\n\n    public function add(mixed $v): static\n    {\n        if (count($this->items) < 16) {\n            $this->items[] = $v;\n        }\n        return $this;\n    }\n\n    public function __toString(): string\n    {\n        return 'K1#' . $this->id;\n    }\n}\n\n"
        ));
        parts.push(cat!(
            "class K2 extends K0\n{\n    public function area(): float\n    {\n        return M_PI * $this->id ** 2;\n    }\n}\n\n"
        ));
        let (h, s) = (self.literal(Ty::Str), self.literal(Ty::Str));
        let (h, s) = if h == s {
            ("'h'".to_string(), "'s'".to_string())
        } else {
            (h, s)
        };
        parts.push(cat!(
            format!("enum E0: string\n{{\n    case H = {h};\n    case S = {s};\n    const WILD = self::S;\n\n"),
            "    public function color(): string\n    {\n        return match ($this) {\n            self::H => 'Red',\n            self::S => 'Black',\n        };\n    }\n\n    public static function pick(string $c): self\n    {\n        return self::tryFrom($c) ?? self::WILD;\n    }\n}\n\n",
            "enum E1\n{\n    case Up;\n    case Down;\n}\n\n"
        ));
        Node::Seq(parts)
    }

    // ---------------------------------------------------------------- functions

    fn enter_function(&mut self, vars: Vec<Var>, ret: Option<Ty>) -> Saved {
        let saved = Saved {
            vars: std::mem::replace(&mut self.vars, vars),
            breakables: std::mem::take(&mut self.breakables),
            loops: std::mem::replace(&mut self.loops, 0),
            in_function: std::mem::replace(&mut self.in_function, true),
            throws: std::mem::replace(&mut self.throws, false),
            in_try: std::mem::replace(&mut self.in_try, 0),
            in_finally: std::mem::replace(&mut self.in_finally, false),
            ret: std::mem::replace(&mut self.ret, ret),
        };
        self.indent += 1;
        saved
    }

    /// Back to the enclosing scope; whether the function may throw.
    fn leave_function(&mut self, saved: Saved) -> bool {
        self.indent -= 1;
        let throws = self.throws;
        self.vars = saved.vars;
        self.breakables = saved.breakables;
        self.loops = saved.loops;
        self.in_function = saved.in_function;
        self.throws = saved.throws;
        self.in_try = saved.in_try;
        self.in_finally = saved.in_finally;
        self.ret = saved.ret;
        throws
    }

    fn has_objects(&self) -> bool {
        self.vars.iter().any(|v| v.name == "$o0")
    }

    /// Local variables initialised at the top of a function body.
    fn locals(&mut self, n: usize) -> Vec<Node> {
        let mut out = Vec::new();
        for i in 0..n {
            let ty = *self.rng.pick(&VALUE_TYS);
            let init = self.expr(ty, 1);
            out.push(cat!(self.ind(), format!("$l{i} = "), init, ";\n"));
            self.vars.push(Var {
                name: format!("$l{i}"),
                ty,
                writable: true,
            });
        }
        out
    }

    fn param_list(params: &[Param], variadic: bool) -> String {
        let mut list: Vec<String> = params
            .iter()
            .map(|p| {
                let r = if p.by_ref { "&" } else { "" };
                let ty = if p.ty == Ty::Scalar { "" } else { p.ty.decl() };
                let sp = if ty.is_empty() { "" } else { " " };
                match &p.default {
                    Some(d) => format!("{ty}{sp}{r}{} = {d}", p.name),
                    None => format!("{ty}{sp}{r}{}", p.name),
                }
            })
            .collect();
        if variadic {
            list.push("...$rest".into());
        }
        list.join(", ")
    }

    fn plain_function(&mut self, i: usize) -> Node {
        let name = format!("f{i}");
        let nparams = self.rng.range(0, 3);
        let mut params = Vec::new();
        for p in 0..nparams {
            let ty = *self.rng.pick(&[
                Ty::Int,
                Ty::Int,
                Ty::Float,
                Ty::Str,
                Ty::Bool,
                Ty::Arr,
                Ty::Scalar,
            ]);
            // Defaults only on a suffix, so every call can leave them out.
            let default = (p > 0 && (params.last().is_some_and(|q: &Param| q.default.is_some()))
                || self.rng.chance(0.3))
            .then(|| self.literal(ty));
            let default = default.map(|d| {
                if ty == Ty::Float && !d.contains('.') && !d.chars().any(|c| c.is_alphabetic()) {
                    format!("{d}.0")
                } else {
                    d
                }
            });
            params.push(Param {
                name: format!("$p{p}"),
                ty,
                by_ref: false,
                default,
            });
        }
        let ret = *self.rng.pick(&VALUE_TYS);
        let vars = params
            .iter()
            .map(|p| Var {
                name: p.name.clone(),
                ty: p.ty,
                writable: true,
            })
            .collect();
        let saved = self.enter_function(vars, Some(ret));
        let mut body = Vec::new();
        let calls_before = self.calls;
        let nloc = self.rng.range(0, 3);
        body.extend(self.locals(nloc));
        if self.w().scopes > 0 && self.rng.chance(0.3) {
            body.push(self.line("static $calls = 0;"));
            body.push(self.line("$calls++;"));
            self.vars.push(Var {
                name: "$calls".into(),
                ty: Ty::Num,
                writable: true,
            });
        }
        if self.w().scopes > 0 && self.rng.chance(0.3) {
            // global: a main variable of a known type (declared in main's preamble).
            let g = self.rng.below(MAIN_VARS.len());
            body.push(self.line(format!("global $v{g};")));
            self.vars.push(Var {
                name: format!("$v{g}"),
                ty: MAIN_VARS[g],
                writable: true,
            });
        }
        let n = self.rng.range(
            self.cfg.function_statements.0,
            self.cfg.function_statements.1,
        );
        let stmts = self.block(n);
        body.push(stmts);
        let r = self.expr(ret, self.cfg.max_expr_depth);
        body.push(cat!(self.ind(), "return ", r, ";\n"));
        let calls = self.calls > calls_before;
        let throws = self.leave_function(saved);
        let budget = if calls {
            format!(
                "    if (!step_ok()) {{\n        return {};\n    }}\n",
                self.literal(ret)
            )
        } else {
            String::new()
        };
        let func = Func {
            name: name.clone(),
            params: params.clone(),
            variadic: false,
            ret,
            throws,
        };
        self.funcs.push(func);
        let decl = format!(
            "function {name}({}): {}\n{{\n{budget}",
            Self::param_list(&params, false),
            ret.decl()
        );
        let node = cat!(decl, Node::Seq(body), "}\n\n");
        self.cut(node)
    }

    fn recursive_function(&mut self, i: usize) -> Node {
        let name = format!("rec{i}");
        let ty = *self.rng.pick(&[Ty::Int, Ty::Str, Ty::Arr, Ty::Float]);
        let vars = vec![
            Var {
                name: "$d".into(),
                ty: Ty::Int,
                writable: false,
            },
            Var {
                name: "$acc".into(),
                ty,
                writable: true,
            },
        ];
        let saved = self.enter_function(vars, None);
        let step = self.expr(ty, 2);
        let step = match ty {
            Ty::Str => cat!("substr(", step, ", 0, 40)"),
            Ty::Arr => cat!("array_slice(", step, ", 0, 12)"),
            _ => step,
        };
        let twice = self.rng.chance(0.3);
        let throws = self.leave_function(saved);
        let call = if twice && ty == Ty::Int {
            cat!(
                format!("({name}($d - 1, "),
                step,
                format!(") ^ {name}($d - 2, $acc ^ 1)) & 0xffffff")
            )
        } else {
            cat!(format!("{name}($d - 1, "), step, ")")
        };
        self.funcs.push(Func {
            name: name.clone(),
            params: vec![
                Param {
                    name: "$d".into(),
                    ty: Ty::Int,
                    by_ref: false,
                    default: None,
                },
                Param {
                    name: "$acc".into(),
                    ty,
                    by_ref: false,
                    default: None,
                },
            ],
            variadic: false,
            ret: ty,
            throws,
        });
        let node = cat!(
            format!(
                "function {name}(int $d, {} $acc): {}\n{{\n    if ($d <= 0 || !step_ok()) {{\n        return $acc;\n    }}\n    return ",
                ty.decl(),
                ty.decl()
            ),
            call,
            ";\n}\n\n"
        );
        self.cut(node)
    }

    fn by_ref_function(&mut self, i: usize) -> Node {
        let name = format!("byref{i}");
        let t = *self.rng.pick(&[Ty::Int, Ty::Str, Ty::Float, Ty::Num]);
        let vars = vec![
            Var {
                name: "$a".into(),
                ty: Ty::Arr,
                writable: true,
            },
            Var {
                name: "$x".into(),
                ty: t,
                writable: true,
            },
        ];
        let saved = self.enter_function(vars, None);
        let n = self.rng.range(1, 3);
        let body = self.block(n);
        let throws = self.leave_function(saved);
        self.funcs.push(Func {
            name: name.clone(),
            params: vec![
                Param {
                    name: "$a".into(),
                    ty: Ty::Arr,
                    by_ref: true,
                    default: None,
                },
                Param {
                    name: "$x".into(),
                    ty: t,
                    by_ref: true,
                    default: None,
                },
            ],
            variadic: false,
            ret: Ty::Int,
            throws,
        });
        let node = cat!(
            format!(
                "function {name}(array &$a, {} &$x): int\n{{\n    if (count($a) > 24) {{\n        $a = array_slice($a, 0, 24);\n    }}\n",
                t.decl()
            ),
            body,
            "    return count($a);\n}\n\n"
        );
        self.cut(node)
    }

    fn variadic_function(&mut self, i: usize) -> Node {
        let name = format!("va{i}");
        self.funcs.push(Func {
            name: name.clone(),
            params: vec![Param {
                name: "$head".into(),
                ty: Ty::Scalar,
                by_ref: false,
                default: Some("0".into()),
            }],
            variadic: true,
            ret: Ty::Str,
            throws: false,
        });
        let node = cat!(format!(
            "function {name}($head = 0, ...$rest): string\n{{\n    $out = var_export($head, true) . ':' . count($rest);\n    foreach ($rest as $k => $v) {{\n        $out .= ',' . $k . '=' . var_export($v, true);\n    }}\n    return $out . '/' . func_num_args() . '/' . count(func_get_args());\n}}\n\n"
        ));
        self.cut(node)
    }

    fn throwing_function(&mut self, i: usize) -> Node {
        let name = format!("thr{i}");
        let vars = vec![Var {
            name: "$x".into(),
            ty: Ty::Int,
            writable: true,
        }];
        let saved = self.enter_function(vars, None);
        let cond = self.expr(Ty::Bool, 2);
        let ret = self.expr(Ty::Int, 2);
        self.leave_function(saved);
        let class = if self.classes && self.rng.chance(0.5) {
            "FuzzException"
        } else {
            "\\RuntimeException"
        };
        self.funcs.push(Func {
            name: name.clone(),
            params: vec![Param {
                name: "$x".into(),
                ty: Ty::Int,
                by_ref: false,
                default: None,
            }],
            variadic: false,
            ret: Ty::Int,
            throws: true,
        });
        let never = if self.rng.chance(0.4) {
            let n = format!("never{i}");
            self.nevers.push(n.clone());
            format!(
                "function {n}(string $why): never\n{{\n    throw new \\RuntimeException('{n}: ' . $why);\n}}\n\n"
            )
        } else {
            String::new()
        };
        let node = cat!(
            never,
            format!("function {name}(int $x): int\n{{\n    if ("),
            cond,
            format!(
                ") {{\n        throw new {class}('{name}:' . $x, $x & 0xff);\n    }}\n    return "
            ),
            ret,
            ";\n}\n\n"
        );
        self.cut(node)
    }

    fn generator_function(&mut self, i: usize) -> Node {
        let name = format!("gen{i}");
        let vars = vec![
            Var {
                name: "$n".into(),
                ty: Ty::Int,
                writable: false,
            },
            Var {
                name: "$i".into(),
                ty: Ty::Int,
                writable: false,
            },
        ];
        let saved = self.enter_function(vars, None);
        self.indent += 1;
        let value = self.expr(Ty::Scalar, 2);
        self.indent -= 1;
        let from = self.literal(Ty::Arr);
        let ret = self.expr(Ty::Scalar, 1);
        let throws = self.leave_function(saved);
        let keyed = self.rng.chance(0.5);
        let inner = self
            .generators
            .last()
            .filter(|_| self.rng.chance(0.5))
            .map(|g| format!("    yield from {g}($n - 1);\n"))
            .unwrap_or_default();
        self.generators.push(name.clone());
        let node = cat!(
            format!(
                "function {name}(int $n): \\Generator\n{{\n    for ($i = 0; $i < ($n & 7); $i++) {{\n        $got = yield {}",
                if keyed { "'k' . $i => " } else { "" }
            ),
            value,
            ";\n        if ($got !== null) {\n            echo 'got ', var_export($got, true), \"\\n\";\n        }\n    }\n",
            format!(
                "{}    yield from {from};\n",
                if self.rng.chance(0.3) {
                    "    $none = yield;\n    echo var_export($none, true), \"\\n\";\n"
                } else {
                    ""
                }
            ),
            inner,
            "    return ",
            ret,
            ";\n}\n\n"
        );
        // A generator's body may call throwing functions only inside a try.
        let _ = throws;
        self.cut(node)
    }

    // ---------------------------------------------------------------- main

    fn main(&mut self) -> Node {
        let mut parts = vec![Node::from("// main\n")];
        self.vars.clear();
        for (i, &ty) in MAIN_VARS.iter().enumerate() {
            // Literals only: an expression could call a function reading a global that is
            // not assigned yet.
            let init = self.literal(ty);
            parts.push(format!("$v{i} = {init};\n").into());
            self.vars.push(Var {
                name: format!("$v{i}"),
                ty,
                writable: true,
            });
        }
        if self.w().refs > 0 && self.rng.chance(0.6) {
            let target = self.rng.below(MAIN_VARS.len());
            parts.push(format!("$r0 = &$v{target};\n").into());
            self.vars.push(Var {
                name: "$r0".into(),
                ty: MAIN_VARS[target],
                writable: true,
            });
        }
        for i in 0..self.rng.range(0, 2) {
            let ty = *self.rng.pick(&[Ty::Int, Ty::Str, Ty::Float]);
            let value = self.literal(ty);
            parts.push(format!("define('D{i}', {value});\n").into());
            self.consts.push((format!("D{i}"), ty));
        }
        if self.classes {
            let (a, b) = (self.literal(Ty::Int), self.literal(Ty::Int));
            parts.push(format!("$o0 = new K1({a}, 'o0');\n$o1 = K2::make({b});\n").into());
            let c = self.literal(Ty::Bool);
            parts.push(format!("$on = {c} ? $o0 : null;\n").into());
            self.vars.push(Var {
                name: "$o0".into(),
                ty: Ty::Obj,
                writable: false,
            });
            self.vars.push(Var {
                name: "$on".into(),
                ty: Ty::NullObj,
                writable: false,
            });
        }
        parts.push("\n".into());
        let n = self
            .rng
            .range(self.cfg.main_statements.0, self.cfg.main_statements.1);
        for _ in 0..n {
            let s = self.statement();
            parts.push(s);
            if self.w().echo > 0 && self.rng.chance(0.3) {
                let d = self.digest();
                parts.push(d);
            }
        }
        let all: Vec<String> = self
            .vars
            .iter()
            .filter(|v| v.name.starts_with("$v"))
            .map(|v| v.name.clone())
            .collect();
        parts.push(format!("\necho var_export([{}], true), \"\\n\";\n", all.join(", ")).into());
        if self.classes {
            parts.push("echo var_export([$o0, $o1, K0::$count], true), \"\\n\";\n".into());
        }
        if self.rng.chance(0.2) {
            parts.push("exit(0);\n".into());
        }
        Node::Seq(parts)
    }

    /// `echo` of one value's var_export.
    fn digest(&mut self) -> Node {
        let ty = *self.rng.pick(&VALUE_TYS);
        let e = self.expr(ty, 2);
        let tag = self.fresh("#");
        let node = cat!(
            self.ind(),
            format!("echo '{tag} ', var_export("),
            e,
            ", true), \"\\n\";\n"
        );
        self.cut(node)
    }

    // ---------------------------------------------------------------- statements

    fn block(&mut self, n: usize) -> Node {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(self.statement());
        }
        Node::Seq(out)
    }

    /// A nested block at one more indentation level.
    fn nested(&mut self, n: usize) -> Node {
        self.indent += 1;
        self.block_depth += 1;
        let b = self.block(n);
        self.block_depth -= 1;
        self.indent -= 1;
        b
    }

    fn statement(&mut self) -> Node {
        let deep = self.block_depth >= self.cfg.max_block_depth;
        let w = self.w().clone();
        let weights = [
            w.assign,
            w.echo,
            if deep { 0 } else { w.branch },
            if deep { 0 } else { w.loops },
            if deep { 0 } else { w.switch },
            if deep { 0 } else { w.exceptions },
            w.arrays,
            w.calls,
            w.refs,
            if deep || self.in_finally { 0 } else { w.goto },
            if deep { 0 } else { w.closures },
            w.generators * (!self.generators.is_empty()) as u32,
            if self.has_objects() { w.objects } else { 0 },
            w.scopes,
            w.extras,
            if self.breakables.is_empty() || self.in_finally {
                0
            } else {
                3
            },
            if self.ret.is_some() { 2 } else { 0 },
        ];
        let s = match self.rng.weighted(&weights) {
            0 => self.assign_stmt(),
            1 => return self.digest(),
            2 => self.if_stmt(),
            3 => self.loop_stmt(),
            4 => self.switch_stmt(),
            5 => self.try_stmt(),
            6 => self.array_stmt(),
            7 => self.call_stmt(),
            8 => self.ref_stmt(),
            9 => self.goto_stmt(),
            10 => self.closure_stmt(),
            11 => self.generator_stmt(),
            12 => self.object_stmt(),
            13 => self.scope_stmt(),
            14 => self.extra_stmt(),
            15 => self.jump_stmt(),
            _ => self.return_stmt(),
        };
        self.cut(s)
    }

    fn assign_stmt(&mut self) -> Node {
        let vars = self.vars_of(Ty::Scalar, true);
        let arrs = self.exact_vars(Ty::Arr);
        let all: Vec<Var> = vars.into_iter().chain(arrs).collect();
        if all.is_empty() {
            return self.digest();
        }
        let v = self.rng.pick(&all).clone();
        let d = self.cfg.max_expr_depth;
        let ind = self.ind();
        if self.rng.chance(0.4) {
            // Compound assignments that keep the variable's type.
            let node = match v.ty {
                Ty::Int => {
                    let e = self.expr(Ty::Int, d - 1);
                    match self.rng.below(5) {
                        0 => cat!(format!("{}{} &= ", ind, v.name), e),
                        1 => cat!(format!("{}{} |= ", ind, v.name), e),
                        2 => cat!(format!("{}{} ^= ", ind, v.name), e),
                        3 => cat!(format!("{}{} <<= (", ind, v.name), e, ") & 7"),
                        _ => cat!(format!("{}{} %= ((", ind, v.name), e, ") & 255) | 1"),
                    }
                }
                Ty::Float => {
                    let e = self.expr(Ty::Num, d - 1);
                    match self.rng.below(5) {
                        0 => cat!(format!("{}{} += ", ind, v.name), e),
                        1 => cat!(format!("{}{} -= ", ind, v.name), e),
                        2 => cat!(format!("{}{} *= ", ind, v.name), e),
                        3 => cat!(format!("{}{} /= (", ind, v.name), e, " ?: 1)"),
                        _ => cat!(format!("{}{} **= 2", ind, v.name)),
                    }
                }
                Ty::Num => {
                    let e = self.expr(Ty::Num, d - 1);
                    match self.rng.below(5) {
                        0 => cat!(format!("{}{} += ", ind, v.name), e),
                        1 => cat!(format!("{}{} -= ", ind, v.name), e),
                        2 => cat!(format!("{}{} *= ", ind, v.name), e),
                        3 => cat!(format!("{}{}++", ind, v.name)),
                        _ => cat!(format!("{}--{}", ind, v.name)),
                    }
                }
                Ty::Str => {
                    let e = self.expr(Ty::Scalar, d - 1);
                    cat!(
                        format!("{ind}if (strlen({}) < 200) {{ {} .= ", v.name, v.name),
                        e,
                        "; }"
                    )
                }
                Ty::Scalar => {
                    let e = self.expr(Ty::Scalar, d - 1);
                    match self.rng.below(3) {
                        0 => cat!(format!("{}{} ??= ", ind, v.name), e),
                        1 => cat!(format!("{}{}++", ind, v.name)),
                        _ => cat!(format!("{}{}--", ind, v.name)),
                    }
                }
                Ty::Bool => cat!(format!("{}{} = !{}", ind, v.name, v.name)),
                _ => {
                    // A union with an array built from the variable itself
                    // (`$a += str_split(implode(',', $a))`) more than doubles it on every
                    // iteration of a loop: only a bounded slice of a computed array is added.
                    let e = self.expr(Ty::Arr, d - 1);
                    let e = match e {
                        Node::Text(_) => e,
                        _ => cat!("array_slice(", e, ", 0, 16)"),
                    };
                    cat!(format!("{}{} += ", ind, v.name), e)
                }
            };
            return cat!(node, ";\n");
        }
        let e = self.expr(v.ty, d);
        let leaf = matches!(e, Node::Text(_));
        let e = match v.ty {
            Ty::Str if !leaf => cat!("substr(", e, ", 0, 48)"),
            Ty::Arr if !leaf => cat!("array_slice(", e, ", 0, 16)"),
            _ => e,
        };
        let cap = if v.ty == Ty::Scalar && !leaf {
            string_cap(&ind, &v.name)
        } else {
            String::new()
        };
        cat!(format!("{}{} = ", ind, v.name), e, ";\n", cap)
    }

    fn if_stmt(&mut self) -> Node {
        let c = self.expr(Ty::Bool, 2);
        let n = self.rng.range(1, 3);
        let then = self.nested(n);
        let mut node = vec![cat!(self.ind(), "if (", c, ") {\n", then)];
        if self.rng.chance(0.3) {
            let c = self.expr(Ty::Bool, 2);
            let n = self.rng.range(1, 2);
            let b = self.nested(n);
            node.push(cat!(self.ind(), "} elseif (", c, ") {\n", b));
        }
        if self.rng.chance(0.5) {
            let n = self.rng.range(1, 2);
            let b = self.nested(n);
            node.push(cat!(self.ind(), "} else {\n", b));
        }
        node.push(self.line("}"));
        Node::Seq(node)
    }

    /// A loop body: the loop is a break target while it is generated.
    fn loop_body(&mut self, n: usize) -> (Node, bool) {
        let calls = self.calls;
        self.breakables.push(true);
        self.loops += 1;
        let b = self.nested(n);
        self.loops -= 1;
        self.breakables.pop();
        (b, self.calls > calls)
    }

    fn loop_stmt(&mut self) -> Node {
        let i = format!("$i{}", self.loops);
        let bound = self.rng.range(0, 5);
        let n = self.rng.range(1, 3);
        let arrs = self.vars_of(Ty::Arr, false);
        let kind = self.rng.below(if arrs.is_empty() { 3 } else { 6 });
        let ind = self.ind();
        let budget = |calls: bool| if calls { " && step_ok()" } else { "" };
        match kind {
            0 => {
                let (b, calls) = self.loop_body(n);
                let op = self.rng.pick(&["<", "<=", "!="]);
                cat!(
                    format!(
                        "{ind}for ({i} = 0; {i} {op} {bound}{}; {i}++) {{\n",
                        budget(calls)
                    ),
                    b,
                    format!("{ind}}}\n")
                )
            }
            1 => {
                let (b, calls) = self.loop_body(n);
                cat!(
                    format!(
                        "{ind}{i} = 0;\n{ind}while ({i} < {bound}{}) {{\n{ind}    {i}++;\n",
                        budget(calls)
                    ),
                    b,
                    format!("{ind}}}\n")
                )
            }
            2 => {
                let (b, calls) = self.loop_body(n);
                cat!(
                    format!("{ind}{i} = 0;\n{ind}do {{\n{ind}    {i}++;\n"),
                    b,
                    format!("{ind}}} while ({i} < {bound}{});\n", budget(calls))
                )
            }
            3 | 4 => {
                // foreach by value, with keys: the element and key are scalars.
                let a = self.expr(Ty::Arr, 1);
                let (k, e) = (format!("$k{}", self.loops), format!("$e{}", self.loops));
                self.vars.push(Var {
                    name: e.clone(),
                    ty: Ty::Scalar,
                    writable: true,
                });
                let keyed = kind == 3;
                if keyed {
                    self.vars.push(Var {
                        name: k.clone(),
                        ty: Ty::Scalar,
                        writable: false,
                    });
                }
                let (b, _) = self.loop_body(n);
                self.vars.truncate(self.vars.len() - 1 - keyed as usize);
                let kv = if kind == 3 { format!("{k} => {e}") } else { e };
                cat!(
                    format!("{ind}foreach ("),
                    a,
                    format!(" as {kv}) {{\n"),
                    b,
                    format!("{ind}}}\n")
                )
            }
            _ => {
                // foreach by reference over a writable array, then unset the reference.
                let writable = self.exact_vars(Ty::Arr);
                let Some(a) = (!writable.is_empty()).then(|| self.rng.pick(&writable).clone())
                else {
                    return self.digest();
                };
                let e = format!("$e{}", self.loops);
                let ind1 = format!("{ind}    ");
                let val = self.expr(Ty::Scalar, 2);
                self.vars.push(Var {
                    name: e.clone(),
                    ty: Ty::Scalar,
                    writable: false,
                });
                let (b, _) = self.loop_body(n.min(1));
                self.vars.pop();
                // Over a private copy: a by-reference foreach sees writes to the array it
                // iterates, and the body could write the variable (directly, through a
                // reference or a global), which could make the loop endless.
                let t = self.fresh("$each");
                cat!(
                    format!(
                        "{ind}{t} = {};\n{ind}foreach ({t} as &{e}) {{\n{ind1}{e} = ",
                        a.name
                    ),
                    val,
                    ";\n",
                    b,
                    format!("{ind}}}\n{ind}unset({e});\n{ind}{} = {t};\n", a.name)
                )
            }
        }
    }

    fn jump_stmt(&mut self) -> Node {
        let c = self.expr(Ty::Bool, 1);
        let depth = self.breakables.len();
        let k = self.rng.range(1, depth.min(3));
        let target_is_loop = self.breakables[depth - k];
        let kw = if target_is_loop && self.rng.chance(0.5) {
            "continue"
        } else {
            "break"
        };
        let n = if k > 1 {
            format!(" {k}")
        } else {
            String::new()
        };
        cat!(
            self.ind(),
            "if (",
            c,
            format!(") {{\n{}    {kw}{n};\n{}}}\n", self.ind(), self.ind())
        )
    }

    fn return_stmt(&mut self) -> Node {
        let ret = self.ret.unwrap_or(Ty::Scalar);
        let c = self.expr(Ty::Bool, 1);
        let r = self.expr(ret, 2);
        let ind = self.ind();
        cat!(
            format!("{ind}if ("),
            c,
            format!(") {{\n{ind}    return "),
            r,
            format!(";\n{ind}}}\n")
        )
    }

    fn switch_stmt(&mut self) -> Node {
        let ind = self.ind();
        if self.rng.chance(0.15) {
            // match (true) with conditions as arms.
            let mut node = vec![Node::from(format!(
                "{ind}echo var_export(match (true) {{\n"
            ))];
            for _ in 0..self.rng.range(1, 3) {
                let c = self.expr(Ty::Bool, 1);
                let v = self.expr(Ty::Scalar, 1);
                node.push(cat!(format!("{ind}    "), c, " => ", v, ",\n"));
            }
            let v = self.expr(Ty::Scalar, 1);
            node.push(cat!(format!("{ind}    default => "), v, ",\n"));
            node.push(format!("{ind}}}, true), \"\\n\";\n").into());
            return Node::Seq(node);
        }
        if self.rng.chance(0.4) {
            // match: always with a default arm (or exhaustive over an enum).
            let (subject, arms) = if self.rng.chance(0.5) {
                let s = self.expr(Ty::Int, 2);
                let mut arms = Vec::new();
                for _ in 0..self.rng.range(1, 3) {
                    let a = self.literal(Ty::Int);
                    let b = self.literal(Ty::Scalar);
                    arms.push(format!("{a}, {b}"));
                }
                (cat!("(", s, ") & 3"), arms)
            } else {
                let s = self.expr(Ty::Str, 2);
                let arms = (0..self.rng.range(1, 3))
                    .map(|_| self.literal(Ty::Str))
                    .collect();
                (s, arms)
            };
            let mut node = vec![cat!(
                format!("{ind}echo var_export(match ("),
                subject,
                ") {\n"
            )];
            for a in arms {
                let v = self.expr(Ty::Scalar, 1);
                node.push(cat!(format!("{ind}    {a} => "), v, ",\n"));
            }
            let v = self.expr(Ty::Scalar, 1);
            node.push(cat!(format!("{ind}    default => "), v, ",\n"));
            node.push(format!("{ind}}}, true), \"\\n\";\n").into());
            return Node::Seq(node);
        }
        let int = self.rng.chance(0.5);
        let subject = self.expr(if int { Ty::Int } else { Ty::Str }, 2);
        let mut node = vec![cat!(format!("{ind}switch ("), subject, ") {\n")];
        self.breakables.push(false);
        let mut seen = Vec::new();
        let dynamic_cases = self.rng.chance(0.2);
        for _ in 0..self.rng.range(1, 7) {
            let lit = if dynamic_cases && self.rng.chance(0.5) {
                let vars = self.vars_of(if int { Ty::Int } else { Ty::Str }, false);
                if vars.is_empty() {
                    continue;
                }
                self.rng.pick(&vars).name.clone()
            } else if int {
                self.literal(Ty::Int)
            } else {
                self.literal(Ty::Str)
            };
            if seen.contains(&lit) {
                continue;
            }
            seen.push(lit.clone());
            self.indent += 1;
            let n = self.rng.range(0, 2);
            let b = self.nested(n);
            let brk = if self.rng.chance(0.8) {
                format!("{}    break;\n", self.ind())
            } else {
                String::new()
            };
            self.indent -= 1;
            node.push(cat!(format!("{ind}    case {lit}:\n"), b, brk));
        }
        if self.rng.chance(0.6) {
            self.indent += 1;
            let b = self.nested(1);
            self.indent -= 1;
            node.push(cat!(format!("{ind}    default:\n"), b));
        }
        self.breakables.pop();
        node.push(format!("{ind}}}\n").into());
        Node::Seq(node)
    }

    fn try_stmt(&mut self) -> Node {
        let ind = self.ind();
        let kind = self.rng.below(3);
        if kind == 0 {
            // Operations that throw on some operands: division, modulo, juggling.
            let (a, b) = (self.expr(Ty::Scalar, 1), self.expr(Ty::Scalar, 1));
            let (x, y) = (self.expr(Ty::Int, 1), self.expr(Ty::Int, 1));
            let op = *self.rng.pick(&["/", "%", "+", "*", "-", "**", ".", "<=>"]);
            // Int operands where a float operand would only give a deprecation notice.
            let body = match self.rng.below(3) {
                0 => cat!("var_export(intdiv(", x, ", ", y, "), true)"),
                1 if op == "%" || self.rng.chance(0.5) => {
                    cat!("var_export(", x, format!(" {op} "), y, ", true)")
                }
                1 => cat!("var_export(", a, format!(" {op} "), b, ", true)"),
                _ => cat!("var_export(", x, " << ", y, ", true)"),
            };
            return cat!(
                format!("{ind}try {{\n{ind}    echo "),
                body,
                format!(", \"\\n\";\n{ind}}} catch (\\Throwable $t) {{\n{ind}    echo get_class($t), ': ', $t->getMessage(), \"\\n\";\n{ind}}}\n")
            );
        }
        self.in_try += 1;
        let n = self.rng.range(1, 3);
        let mut body = vec![self.nested(n)];
        if !self.nevers.is_empty() && self.rng.chance(0.4) {
            let f = self.rng.pick(&self.nevers.clone()).clone();
            let c = self.expr(Ty::Bool, 1);
            let m = self.expr(Ty::Str, 1);
            body.push(cat!(
                format!("{ind}    if ("),
                c,
                format!(") {{\n{ind}        {f}("),
                m,
                format!(");\n{ind}    }}\n")
            ));
        }
        if self.rng.chance(0.6) {
            let c = self.expr(Ty::Bool, 1);
            let m = self.expr(Ty::Str, 1);
            let class = if self.classes && self.rng.chance(0.5) {
                "FuzzException"
            } else {
                "\\RuntimeException"
            };
            body.push(cat!(
                format!("{ind}    if ("),
                c,
                format!(") {{\n{ind}        throw new {class}("),
                m,
                format!(");\n{ind}    }}\n")
            ));
        }
        self.in_try -= 1;
        let var = self.fresh("$ex");
        let mut node = vec![Node::from(format!("{ind}try {{\n")), Node::Seq(body)];
        if self.classes && self.rng.chance(0.4) {
            node.push(
                format!("{ind}}} catch (FuzzException | \\LogicException {var}) {{\n{ind}    echo 'fuzz ', {var}->getMessage(), \"\\n\";\n").into(),
            );
        }
        node.push(
            format!("{ind}}} catch (\\RuntimeException {var}) {{\n{ind}    echo get_class({var}), ' ', {var}->getMessage(), ' ', {var}->getCode(), \"\\n\";\n").into(),
        );
        let n = self.rng.range(0, 1);
        let handler = self.nested(n);
        node.push(handler);
        if self.rng.chance(0.5) {
            node.push(format!("{ind}}} finally {{\n{ind}    echo \"finally\\n\";\n").into());
            let saved = std::mem::replace(&mut self.in_finally, true);
            let saved_b = std::mem::take(&mut self.breakables);
            let n = self.rng.range(0, 1);
            let f = self.nested(n);
            self.breakables = saved_b;
            self.in_finally = saved;
            node.push(f);
        }
        node.push(format!("{ind}}}\n").into());
        Node::Seq(node)
    }

    fn array_stmt(&mut self) -> Node {
        let arrs = self.exact_vars(Ty::Arr);
        if arrs.is_empty() {
            return self.digest();
        }
        let a = self.rng.pick(&arrs).name.clone();
        let ind = self.ind();
        match self.rng.below(9) {
            0 => {
                // The element is capped like a string variable: a value computed from the
                // array itself (`va0(...$a)` exports every element) would otherwise double
                // the array's size with each push (seed 130067 ran out of memory).
                let v = self.expr(Ty::Scalar, 2);
                let last = format!("{a}[array_key_last({a})]");
                cat!(
                    format!("{ind}if (count({a}) < 32) {{\n{ind}    {a}[] = "),
                    v,
                    format!(";\n{}{ind}}}\n", string_cap(&format!("{ind}    "), &last))
                )
            }
            1 => {
                let k = self.key();
                let v = self.expr(Ty::Scalar, 2);
                cat!(format!("{ind}{a}["), k, "] = ", v, ";\n")
            }
            2 => {
                let k = self.key();
                cat!(format!("{ind}unset({a}["), k, "]);\n")
            }
            3 => {
                let f = self
                    .rng
                    .pick(&["sort", "rsort", "ksort", "krsort", "asort", "arsort"]);
                format!("{ind}{f}({a});\n").into()
            }
            4 => {
                let v = self.expr(Ty::Scalar, 1);
                let f = self.rng.pick(&["array_push", "array_unshift"]);
                cat!(
                    format!("{ind}if (count({a}) < 32) {{\n{ind}    {f}({a}, "),
                    v,
                    format!(");\n{ind}}}\n")
                )
            }
            5 => {
                let f = self.rng.pick(&["array_pop", "array_shift"]);
                format!("{ind}echo var_export({f}({a}), true), \"\\n\";\n").into()
            }
            6 => {
                let k = self.key();
                let k2 = k.clone();
                cat!(
                    format!("{ind}if (isset({a}["),
                    k,
                    format!("]) && is_int({a}["),
                    k2,
                    "])) {\n",
                    format!("{ind}    echo 'int elem', \"\\n\";\n{ind}}}\n")
                )
            }
            7 => {
                // usort with a closure: stable in PHP 8.
                format!("{ind}usort({a}, static fn($p, $q) => $p <=> $q);\n").into()
            }
            _ => {
                // Copy-on-write: copy, change the copy, show both.
                let t = self.fresh("$copy");
                let v = self.expr(Ty::Scalar, 1);
                cat!(
                    format!("{ind}{t} = {a};\n{ind}{t}[] = "),
                    v,
                    format!(";\n{ind}echo count({a}), ' ', count({t}), \"\\n\";\n")
                )
            }
        }
    }

    fn key(&mut self) -> Node {
        if self.rng.chance(0.5) {
            self.rng.pick(KEY_STRS).to_string().into()
        } else if self.rng.chance(0.6) {
            self.rng.range(0, 5).to_string().into()
        } else {
            // Bounded: a key near PHP_INT_MAX leaves no next index, and a later `$a[] = v`
            // is a fatal error (seed 919).
            cat!("(", self.expr(Ty::Int, 1), ") % 1000")
        }
    }

    fn call_stmt(&mut self) -> Node {
        let e = if self.rng.chance(0.5) {
            let t = *self.rng.pick(&VALUE_TYS);
            self.call_expr(t)
        } else {
            None
        };
        match e {
            Some(e) => cat!(self.ind(), "echo var_export(", e, ", true), \"\\n\";\n"),
            None => {
                // By-ref and variadic calls.
                let byref: Vec<Func> = self
                    .funcs
                    .iter()
                    .filter(|f| f.params.iter().any(|p| p.by_ref) && (!f.throws || self.in_try > 0))
                    .cloned()
                    .collect();
                if let Some(f) = (!byref.is_empty()).then(|| self.rng.pick(&byref).clone()) {
                    let a = self.exact_vars(Ty::Arr);
                    let x = self.exact_vars(f.params[1].ty);
                    if !a.is_empty() && !x.is_empty() {
                        let a = self.rng.pick(&a).name.clone();
                        let x = self.rng.pick(&x).name.clone();
                        self.calls += 1;
                        return format!(
                            "{}echo {}({a}, {x}), ' ', var_export({x}, true), \"\\n\";\n",
                            self.ind(),
                            f.name
                        )
                        .into();
                    }
                }
                self.digest()
            }
        }
    }

    fn ref_stmt(&mut self) -> Node {
        let ind = self.ind();
        let vars = self.vars_of(Ty::Scalar, true);
        if vars.is_empty() {
            return self.digest();
        }
        let v = self.rng.pick(&vars).clone();
        let r = self.fresh("$ref");
        let e = self.expr(v.ty, 1);
        let cap = if matches!(e, Node::Text(_)) {
            String::new()
        } else {
            string_cap(&ind, &r)
        };
        // A reference, a write through it, and both names shown.
        cat!(
            format!("{ind}{r} = &{};\n{ind}{r} = ", v.name),
            e,
            format!(";\n{cap}{ind}echo var_export({}, true), ' ', var_export({r}, true), \"\\n\";\n{ind}unset({r});\n", v.name)
        )
    }

    fn goto_stmt(&mut self) -> Node {
        let ind = self.ind();
        let label = self.fresh("L");
        let n = self.rng.range(1, 2);
        self.block_depth += 1;
        let node = self.goto_body(&ind, &label, n);
        self.block_depth -= 1;
        node
    }

    fn goto_body(&mut self, ind: &str, label: &str, n: usize) -> Node {
        if self.rng.chance(0.5) {
            let c = self.expr(Ty::Bool, 1);
            let b = self.block(n);
            cat!(
                format!("{ind}if ("),
                c,
                format!(") {{\n{ind}    goto {label};\n{ind}}}\n"),
                b,
                format!("{ind}{label}:\n{ind}echo '{label}', \"\\n\";\n")
            )
        } else {
            let g = format!("$g{}", &label[1..]);
            let b = self.block(n);
            cat!(
                format!("{ind}{g} = 0;\n{ind}{label}:\n{ind}{g}++;\n"),
                b,
                format!("{ind}if ({g} < 3) {{\n{ind}    goto {label};\n{ind}}}\n")
            )
        }
    }

    fn closure_stmt(&mut self) -> Node {
        let ind = self.ind();
        let c = self.fresh("$fn");
        match self.rng.below(4) {
            0 => {
                // A closure with by-value and by-reference captures.
                let pty = *self.rng.pick(&[Ty::Int, Ty::Str, Ty::Float, Ty::Scalar]);
                let ret = *self.rng.pick(&VALUE_TYS);
                let outer = self.vars_of(Ty::Scalar, true);
                let outer: Vec<Var> = outer
                    .into_iter()
                    .filter(|v| v.name.starts_with("$v") || v.name.starts_with("$l"))
                    .collect();
                let mut uses = Vec::new();
                let mut inner = vec![Var {
                    name: "$x".into(),
                    ty: pty,
                    writable: true,
                }];
                for _ in 0..self.rng.range(0, 2) {
                    if outer.is_empty() {
                        break;
                    }
                    let v = self.rng.pick(&outer).clone();
                    if uses.iter().any(|u: &String| u.ends_with(&v.name)) {
                        continue;
                    }
                    uses.push(if self.rng.chance(0.4) {
                        format!("&{}", v.name)
                    } else {
                        v.name.clone()
                    });
                    inner.push(v);
                }
                let saved = self.enter_function(inner, Some(ret));
                self.indent += 1;
                let n = self.rng.range(0, 2);
                let body = self.block(n);
                let r = self.expr(ret, 2);
                let rind = self.ind();
                self.indent -= 1;
                let throws = self.leave_function(saved);
                let arg = self.expr(pty, 1);
                let use_clause = if uses.is_empty() {
                    String::new()
                } else {
                    format!(" use ({})", uses.join(", "))
                };
                let call = if throws && self.in_try == 0 {
                    "'skipped'".to_string()
                } else {
                    self.calls += 1;
                    format!("{c}(")
                };
                let call_node = if call.ends_with('(') {
                    cat!(call, arg, ")")
                } else {
                    Node::from(call)
                };
                cat!(
                    format!(
                        "{ind}{c} = function ({}{}$x){use_clause}: {} {{\n",
                        if pty == Ty::Scalar { "" } else { pty.decl() },
                        if pty == Ty::Scalar { "" } else { " " },
                        ret.decl()
                    ),
                    body,
                    format!("{rind}return "),
                    r,
                    format!(";\n{ind}}};\n{ind}echo var_export("),
                    call_node,
                    ", true), \"\\n\";\n"
                )
            }
            1 => {
                // Arrow function: captures by value.
                let saved_len = self.vars.len();
                self.vars.push(Var {
                    name: "$y".into(),
                    ty: Ty::Int,
                    writable: false,
                });
                let body = self.expr(Ty::Int, 2);
                self.vars.truncate(saved_len);
                let arg = self.expr(Ty::Int, 1);
                self.calls += 1;
                cat!(
                    format!("{ind}{c} = fn(int $y): int => "),
                    body,
                    format!(";\n{ind}echo {c}("),
                    arg,
                    "), \"\\n\";\n"
                )
            }
            2 => {
                // First-class callables of internal and user functions.
                let s = self.expr(Ty::Str, 1);
                let f = self
                    .rng
                    .pick(&["strlen", "strtoupper", "strrev", "ucfirst", "md5"]);
                cat!(
                    format!("{ind}{c} = {f}(...);\n{ind}echo var_export({c}("),
                    s,
                    "), true), \"\\n\";\n"
                )
            }
            _ => {
                let s = self.expr(Ty::Arr, 1);
                let saved_len = self.vars.len();
                self.vars.push(Var {
                    name: "$z".into(),
                    ty: Ty::Scalar,
                    writable: false,
                });
                let body = self.expr(Ty::Scalar, 2);
                self.vars.truncate(saved_len);
                cat!(
                    format!("{ind}echo var_export(array_map(fn($z) => "),
                    body,
                    ", ",
                    s,
                    "), true), \"\\n\";\n"
                )
            }
        }
    }

    fn generator_stmt(&mut self) -> Node {
        let ind = self.ind();
        let g = self.rng.pick(&self.generators.clone()).clone();
        let n = self.expr(Ty::Int, 1);
        let v = self.fresh("$gv");
        let gen = self.fresh("$gen");
        match self.rng.below(3) {
            0 => cat!(
                format!("{ind}foreach ({g}("),
                n,
                format!(") as $gk => {v}) {{\n{ind}    echo var_export($gk, true), '=', var_export({v}, true), \"\\n\";\n{ind}}}\n")
            ),
            1 => cat!(
                format!("{ind}{gen} = {g}("),
                n,
                format!(");\n{ind}foreach ({gen} as {v}) {{\n{ind}    echo var_export({v}, true), \"\\n\";\n{ind}}}\n{ind}echo var_export({gen}->getReturn(), true), \"\\n\";\n")
            ),
            _ => {
                let s = self.expr(Ty::Scalar, 1);
                cat!(
                    format!("{ind}{gen} = {g}("),
                    n,
                    format!(");\n{ind}if ({gen}->valid()) {{\n{ind}    echo var_export({gen}->current(), true), \"\\n\";\n{ind}    echo var_export({gen}->send("),
                    s,
                    format!("), true), \"\\n\";\n{ind}}}\n{ind}echo count(iterator_to_array({g}(3), false)), \"\\n\";\n")
                )
            }
        }
    }

    fn object_stmt(&mut self) -> Node {
        let ind = self.ind();
        match self.rng.below(7) {
            0 => {
                let s = self.expr(Ty::Str, 1);
                cat!(format!("{ind}$o0->label = "), s, format!(";\n{ind}echo $o0->describe(), \"\\n\";\n"))
            }
            1 => {
                let i = self.expr(Ty::Int, 1);
                cat!(format!("{ind}try {{\n{ind}    $o0->id = "), i, format!(";\n{ind}}} catch (\\Error $err) {{\n{ind}    echo get_class($err), ': ', $err->getMessage(), \"\\n\";\n{ind}}}\n"))
            }
            2 => {
                let v = self.expr(Ty::Scalar, 1);
                let w = self.expr(Ty::Scalar, 1);
                cat!(format!("{ind}$o0->add("), v, ")->add(", w, format!(");\n{ind}echo count($o0->items), ' ', var_export($o0 instanceof I0, true), \"\\n\";\n"))
            }
            3 => format!("{ind}echo var_export($on?->describe(), true), ' ', $on?->m(3) ?? 'none', \"\\n\";\n").into(),
            4 => {
                let s = self.expr(Ty::Str, 1);
                cat!(format!("{ind}$c = E0::pick("), s, format!(");\n{ind}echo $c->name, ' ', $c->value, ' ', $c->color(), ' ', count(E0::cases()), ' ', var_export($c === E0::WILD, true), \"\\n\";\n"))
            }
            5 => {
                let b = self.expr(Ty::Bool, 1);
                cat!(format!("{ind}$dir = "), b, format!(" ? E1::Up : E1::Down;\n{ind}echo match ($dir) {{ E1::Up => 'up', E1::Down => 'down' }}, ' ', var_export($dir instanceof \\UnitEnum, true), \"\\n\";\n"))
            }
            _ => {
                let i = self.expr(Ty::Int, 1);
                cat!(format!("{ind}$cl = clone $o0;\n{ind}$cl->label = 'clone';\n{ind}echo $cl->describe(), ' ', $o0->describe(), ' ', K1::kind(), ' ', I0::SIDES, ' ', $cl->m("), i, format!("), ' ', K0::$count, \"\\n\";\n"))
            }
        }
    }

    /// A PHP string literal naming a function of the program (in its namespace).
    fn qualified(&self, name: &str) -> String {
        if self.namespace {
            format!("'Fz\\\\{name}'")
        } else {
            format!("'{name}'")
        }
    }

    fn extra_stmt(&mut self) -> Node {
        let ind = self.ind();
        let t = self.fresh("$x");
        let objects = self.has_objects();
        let arrs = self.exact_vars(Ty::Arr);
        let strs = self.vars_of(Ty::Str, false);
        match self.rng.below(27) {
            26 => {
                // Assertions (ASSERT_CHECK jumps over the call when they are off: PHP's own
                // php.ini compiles them away): two that hold, one that fails and is caught.
                let b = self.expr(Ty::Bool, 1);
                let i = self.expr(Ty::Int, 1);
                let j = self.expr(Ty::Int, 1);
                cat!(
                    format!("{ind}assert("),
                    b,
                    format!(" || true);\n{ind}assert(is_int("),
                    i,
                    format!("), 'an int');\n{ind}try {{\n{ind}    assert(("),
                    j,
                    format!(") < PHP_INT_MIN, 'below the minimum');\n{ind}    echo \"assertions off\\n\";\n{ind}}} catch (\\AssertionError $e) {{\n{ind}    echo get_class($e), ': ', $e->getMessage(), \"\\n\";\n{ind}}}\n")
                )
            }
            21 if objects => {
                // Static property fetches of every kind: by reference, for write, read-write,
                // isset, unset and a dynamic call's argument; post increments; unset of the
                // property itself (an Error).
                let i = self.expr(Ty::Int, 1);
                cat!(
                    format!("{ind}{t}old = K0::$bag;\n{ind}{t}r = ["),
                    i,
                    format!(", 2];\n{ind}K0::$bag = &{t}r;\n{ind}K0::$bag[] = 'w';\n{ind}K0::$bag[1] += 3;\n{ind}{t}f = 'count';\n{ind}echo var_export([isset(K0::$bag[0]), K0::$bag[7] ?? 'none', {t}f(K0::$bag), {t}r], true), \"\\n\";\n{ind}unset(K0::$bag[0]);\n{ind}{t}z = K0::$count++;\n{ind}{t}z += K0::$count--;\n{ind}try {{\n{ind}    unset(K0::$bag);\n{ind}}} catch (\\Error $err) {{\n{ind}    echo get_class($err), ': ', $err->getMessage(), \"\\n\";\n{ind}}}\n{ind}K0::$bag = {t}old;\n{ind}echo var_export([{t}z, {t}r, K0::$bag], true), \"\\n\";\n")
                )
            }
            22 => {
                // Nested dimensions read-written and unset, and a memoized `??=` key.
                let i = self.expr(Ty::Int, 1);
                let s = self.expr(Ty::Str, 1);
                cat!(
                    format!("{ind}{t} = [[1, "),
                    i,
                    format!("], 'k' => [2, 3]];\n{ind}{t}[0][1] += 3;\n{ind}{t}y = {t}[0][0]++;\n{ind}unset({t}['k'][0]);\n{ind}{t}[substr("),
                    s,
                    format!(", 0, 2) . 'x'] ??= 5;\n{ind}echo var_export([{t}, {t}y], true), \"\\n\";\n")
                )
            }
            23 => {
                // Property increments and read-write fetches, a two-part interpolation.
                let i = self.expr(Ty::Int, 1);
                cat!(
                    format!("{ind}{t} = new \\stdClass();\n{ind}{t}->c = "),
                    i,
                    format!(";\n{ind}{t}->a = [1];\n{ind}{t}->a[0] += 2;\n{ind}{t}z = {t}->c++;\n{ind}{t}z2 = {t}->c--;\n{ind}--{t}->c;\n{ind}echo \"c{{{t}z2}}\", ' ', var_export([{t}z, {t}], true), \"\\n\";\n")
                )
            }
            24 => {
                // A function returning by reference, its result passed by reference to a
                // function known at compile time (SEND_VAR_NO_REF; a reference, so no
                // notice), isset($this) in a closure.
                let v = self.expr(Ty::Scalar, 1);
                let name = self.fresh("rf");
                cat!(
                    format!("{ind}if (!function_exists({})) {{\n", self.qualified(&name)),
                    format!("{ind}    function &{name}(array &$a): array\n{ind}    {{\n{ind}        $a['r'] = [1, 2];\n{ind}        return $a['r'];\n{ind}    }}\n{ind}}}\n{ind}{t} = ["),
                    v,
                    format!("];\n{ind}{t}r = &{name}({t});\n{ind}{t}r[] = 'changed';\n{ind}echo var_export([{t}, \\end({name}({t})), (function () {{\n{ind}    return isset($this);\n{ind}}})()], true), \"\\n\";\n")
                )
            }
            25 if !self.in_function => {
                // Unset through a variable variable (main only: it keeps functions' SSA).
                let name = t[1..].to_string();
                format!("{ind}{t} = ['k' => [1, 2], 'j' => 3];\n{ind}{t}n = '{name}';\n{ind}unset(${t}n['k']);\n{ind}echo var_export({t}, true), \"\\n\";\n").into()
            }
            16 => {
                // Variable variables written, read and unset; $GLOBALS as a whole.
                let v = self.expr(Ty::Scalar, 1);
                let name = t[1..].to_string();
                cat!(
                    format!("{ind}{t}n = '{name}';\n{ind}${t}n = "),
                    v,
                    format!(";\n{ind}${t}n .= 'v';\n{ind}echo var_export([{t}, isset(${t}n), array_key_exists('{name}', get_defined_vars())], true), \"\\n\";\n{ind}unset(${t}n);\n{ind}echo var_export([isset({t}), is_array($GLOBALS)], true), \"\\n\";\n")
                )
            }
            17 => {
                // List assignment by reference and object property references.
                let (a, b) = (self.expr(Ty::Scalar, 1), self.expr(Ty::Scalar, 1));
                cat!(
                    format!("{ind}{t} = ["),
                    a,
                    ", ",
                    b,
                    format!("];\n{ind}[{t}a, &{t}b] = {t};\n{ind}{t}b = 'changed';\n{ind}{t}o = new \\stdClass();\n{ind}{t}o->r = &{t}a;\n{ind}{t}a = 'via ref';\n{ind}echo var_export([{t}, {t}o->r], true), \"\\n\";\n{ind}unset({t}o->r, {t}b);\n{ind}echo var_export(isset({t}o->r), true), \"\\n\";\n")
                )
            }
            18 => {
                // return from inside finally discards the exception.
                let v = self.expr(Ty::Int, 1);
                let name = self.fresh("fin");
                cat!(
                    format!("{ind}if (!function_exists({})) {{\n", self.qualified(&name)),
                    format!("{ind}    function {name}(int $x): int\n{ind}    {{\n{ind}        try {{\n{ind}            throw new \\RuntimeException('lost');\n{ind}        }} finally {{\n{ind}            return $x & 0xff;\n{ind}        }}\n{ind}    }}\n{ind}}}\n{ind}echo {name}("),
                    v,
                    "), \"\\n\";\n"
                )
            }
            19 => {
                let i = self.literal(Ty::Int);
                format!("{ind}echo var_export(eval('return {i} % 7 + strlen(\"ab\");'), true), \"\\n\";\n").into()
            }
            20 => {
                let s = self.expr(Ty::Str, 1);
                cat!(
                    format!("{ind}echo var_export([strlen("),
                    s,
                    format!("), \\count([1, 2]), \\is_int(1), \\gettype(1.5), \\in_array(2, [1, 2], true), \\call_user_func('strrev', 'ab'), \\call_user_func_array('max', [3, 4])], true), \"\\n\";\n")
                )
            }
            0 => {
                let i = self.expr(Ty::Int, 1);
                cat!(format!("{ind}{t} = @intdiv("), i, format!(", 1);\n{ind}echo var_export({t}, true), \"\\n\";\n"))
            }
            1 => {
                let (a, b, c) = (
                    self.expr(Ty::Scalar, 1),
                    self.expr(Ty::Scalar, 1),
                    self.expr(Ty::Scalar, 1),
                );
                if self.rng.chance(0.5) {
                    cat!(format!("{ind}[{t}a, [{t}b, {t}c]] = ["), a, ", [", b, ", ", c, format!("]];\n{ind}echo var_export([{t}a, {t}b, {t}c], true), \"\\n\";\n"))
                } else {
                    cat!(format!("{ind}['x' => {t}a, 'y' => {t}b] = ['y' => "), a, ", 'x' => ", b, ", 'z' => ", c, format!("];\n{ind}list({t}c, , {t}d) = [1, 2, 3];\n{ind}echo var_export([{t}a, {t}b, {t}c, {t}d], true), \"\\n\";\n"))
                }
            }
            2 if objects => {
                let v = self.expr(Ty::Scalar, 1);
                cat!(
                    format!("{ind}if (count($o0->items) < 16) {{\n{ind}    $o0->items[] = "),
                    v,
                    format!(";\n{ind}}}\n{ind}$o0->items[0] ??= 'first';\n{ind}if (strlen($o0->label) < 100) {{\n{ind}    $o0->label .= 'x';\n{ind}}}\n{ind}echo var_export([$o0->items[0] ?? null, isset($o0->items[1]), $o0->label], true), \"\\n\";\n{ind}unset($o0->items[1]);\n")
                )
            }
            3 if objects => format!(
                "{ind}K0::$count += 1;\n{ind}K0::$count++;\n{ind}++K0::$count;\n{ind}--K0::$count;\n{ind}echo K0::$count, ' ', var_export(isset(K0::$count), true), ' ', $o0::C, ' ', $o0::kind(), \"\\n\";\n"
            )
            .into(),
            4 if objects => {
                let i = self.literal(Ty::Int);
                format!(
                    "{ind}{t}c = K1::class;\n{ind}{t} = new {t}c({i});\n{ind}echo {t}->describe(), ' ', var_export({t} instanceof {t}c, true), ' ', var_export($o0 instanceof {t}c, true), \"\\n\";\n{ind}foreach ({t} as {t}k => {t}v) {{\n{ind}    echo {t}k, ' ';\n{ind}}}\n{ind}echo \"\\n\";\n"
                )
                .into()
            }
            5 if objects => {
                let i = self.expr(Ty::Int, 1);
                let j = self.expr(Ty::Int, 1);
                cat!(
                    format!("{ind}{t} = $o0->m(...);\n{ind}echo {t}("),
                    i,
                    "), ' ', call_user_func([$o0, 'm'], ",
                    j,
                    "), ' ', call_user_func_array('strrev', ['abc']), ' ', [$o0, 'describe'](), \"\\n\";\n"
                )
            }
            6 => {
                let i = self.literal(Ty::Int);
                let s = self.expr(Ty::Str, 1);
                cat!(
                    format!("{ind}{t} = new class ({i}) {{\n{ind}    public function __construct(public int $v)\n{ind}    {{\n{ind}    }}\n\n{ind}    public function get(string $s): string\n{ind}    {{\n{ind}        return $s . ($this->v & 0xff);\n{ind}    }}\n{ind}}};\n{ind}echo {t}->get("),
                    s,
                    "), \"\\n\";\n"
                )
            }
            7 => {
                let s = self.expr(Ty::Str, 1);
                let f = self.rng.pick(&["strtoupper", "strrev", "ucfirst", "trim"]);
                cat!(
                    format!("{ind}{t} = '{f}';\n{ind}echo {t}("),
                    s,
                    format!("), ' ', var_export(call_user_func({}), true), ' ', \\Closure::fromCallable('strlen')('abc'), \"\\n\";\n", self.qualified("step_ok"))
                )
            }
            8 => {
                let name = self.fresh("cf");
                let i = self.expr(Ty::Int, 1);
                cat!(
                    format!("{ind}if (!function_exists({})) {{\n", self.qualified(&name)),
                    format!("{ind}    function {name}(int $x): int\n{ind}    {{\n{ind}        return ($x & 0xffff) * 3;\n{ind}    }}\n{ind}}}\n{ind}echo {name}("),
                    i,
                    "), \"\\n\";\n"
                )
            }
            9 => {
                let b = self.expr(Ty::Bool, 1);
                cat!(format!("{ind}assert("), b, format!(" || true);\n{ind}echo 'asserted', \"\\n\";\n"))
            }
            10 if !strs.is_empty() => {
                let v = self.rng.pick(&strs).name.clone();
                format!("{ind}echo var_export([{v}[0] ?? '-', {v}[-1] ?? '-', isset({v}[2]), empty({v}[1])], true), \"\\n\";\n").into()
            }
            11 => {
                let v = self.expr(Ty::Scalar, 1);
                cat!(
                    format!("{ind}{t} = (object) ['a' => "),
                    v,
                    format!(", 'b' => 2];\n{ind}{t}->c = 3;\n{ind}{t}->b++;\n{ind}echo var_export({t}->a, true), ' ', count((array) {t}), ' ', var_export(isset({t}->z), true), ' ', var_export({t}, true), \"\\n\";\n")
                )
            }
            12 if !arrs.is_empty() => {
                let a = self.rng.pick(&arrs).name.clone();
                let k = self.key();
                let k2 = self.key();
                let v = self.expr(Ty::Scalar, 1);
                cat!(
                    format!("{ind}{a}["),
                    k,
                    "] ??= ",
                    v,
                    format!(";\n{ind}if (isset({a}["),
                    k2.clone(),
                    format!("]) && strlen((string) {a}["),
                    k2.clone(),
                    "]) < 64) {\n",
                    format!("{ind}    {a}["),
                    k2,
                    format!("] .= 'x';\n{ind}}}\n")
                )
            }
            13 => {
                let (a, b) = (self.expr(Ty::Scalar, 1), self.expr(Ty::Scalar, 1));
                cat!(
                    format!("{ind}{t} = [["),
                    a,
                    "], ['k' => [",
                    b,
                    format!("]]];\n{ind}{t}[0][] = 'n';\n{ind}{t}[1]['k'][0] = 7;\n{ind}{t}[1]['k'][] = {t}[0][0] ?? null;\n{ind}foreach ([{t}[0], [8, 9]] as [{t}p]) {{\n{ind}    echo var_export({t}p, true), ' ';\n{ind}}}\n{ind}echo var_export({t}, true), \"\\n\";\n")
                )
            }
            14 if !self.in_function => {
                let g = self.rng.below(MAIN_VARS.len());
                let lit = self.literal(MAIN_VARS[g]);
                let name = format!("v{g}");
                format!("{ind}$GLOBALS['{name}'] = {lit};\n{ind}$vn = '{name}';\n{ind}echo var_export([isset($$vn), empty($$vn), $GLOBALS['{name}']], true), \"\\n\";\n").into()
            }
            _ => {
                let s = self.expr(Ty::Str, 1);
                cat!(
                    format!("{ind}print "),
                    s,
                    format!(" . \"\\n\";\n{ind}echo str_pad(string: 'x', length: 4, pad_type: STR_PAD_LEFT), \"\\n\";\n")
                )
            }
        }
    }

    fn scope_stmt(&mut self) -> Node {
        let ind = self.ind();
        let scalars: Vec<Var> = self
            .vars_of(Ty::Scalar, false)
            .into_iter()
            .filter(|v| {
                v.name.starts_with("$v") || v.name.starts_with("$l") || v.name.starts_with("$p")
            })
            .collect();
        match self.rng.below(4) {
            0 if !scalars.is_empty() => {
                // Variable variables and compact (indirect variable access).
                let v = self.rng.pick(&scalars).name[1..].to_string();
                let w = self.rng.pick(&scalars).name[1..].to_string();
                format!("{ind}$name = '{v}';\n{ind}echo var_export($$name, true), ' ', var_export(compact('{v}', '{w}'), true), \"\\n\";\n").into()
            }
            1 if !self.in_function => {
                let g = self.rng.below(MAIN_VARS.len());
                format!("{ind}echo var_export($GLOBALS['v{g}'] ?? 'unset', true), \"\\n\";\n")
                    .into()
            }
            2 => {
                // isset/empty/?? on what may not exist.
                let t = self.fresh("$t");
                let v = self.expr(Ty::Scalar, 1);
                cat!(
                    format!("{ind}{t} = "),
                    v,
                    format!(";\n{ind}echo var_export([isset({t}), empty({t}), {t} ?? 'dflt'], true), \"\\n\";\n{ind}unset({t});\n{ind}echo var_export([isset({t}), empty({t}), {t} ?? 'gone', $undefined ?? 'undef'], true), \"\\n\";\n")
                )
            }
            _ => {
                let c: Vec<(String, Ty)> = self.consts.clone();
                if c.is_empty() {
                    return format!("{ind}echo var_export([defined('C0'), defined('D0'), PHP_INT_SIZE, M_PI], true), \"\\n\";\n").into();
                }
                let (n, _) = self.rng.pick(&c).clone();
                // `const` declares in the namespace, define() globally.
                let q = if self.namespace && n.starts_with('C') {
                    format!("Fz\\\\{n}")
                } else {
                    n.clone()
                };
                format!("{ind}echo var_export([{n}, constant('{q}'), defined('{q}')], true), \"\\n\";\n").into()
            }
        }
    }

    // ---------------------------------------------------------------- expressions

    fn expr(&mut self, ty: Ty, d: u32) -> Node {
        if d == 0 || self.rng.chance(0.25) {
            return self.leaf(ty);
        }
        let e = match ty {
            Ty::Int => self.int_expr(d),
            Ty::Float => self.float_expr(d),
            Ty::Num => self.num_expr(d),
            Ty::Bool => self.bool_expr(d),
            Ty::Str => self.str_expr(d),
            Ty::Scalar => self.scalar_expr(d),
            Ty::Arr => self.arr_expr(d),
            Ty::Obj | Ty::NullObj => return self.leaf(ty),
        };
        self.simplifiable(e, ty)
    }

    fn leaf(&mut self, ty: Ty) -> Node {
        let vars = self.vars_of(ty, false);
        let consts: Vec<String> = self
            .consts
            .iter()
            .filter(|(_, t)| t.is_sub(ty))
            .map(|(n, _)| n.clone())
            .collect();
        if !vars.is_empty() && self.rng.chance(0.6) {
            return self.rng.pick(&vars).name.clone().into();
        }
        if !consts.is_empty() && self.rng.chance(0.2) {
            return self.rng.pick(&consts).clone().into();
        }
        self.literal(ty).into()
    }

    /// A call of one of the program's functions returning `ty`, if there is one.
    fn call_expr(&mut self, ty: Ty) -> Option<Node> {
        let funcs: Vec<Func> = self
            .funcs
            .iter()
            .filter(|f| {
                f.ret.is_sub(ty)
                    && !f.params.iter().any(|p| p.by_ref)
                    && (!f.throws || self.in_try > 0)
            })
            .cloned()
            .collect();
        if funcs.is_empty() {
            return None;
        }
        let f = self.rng.pick(&funcs).clone();
        self.calls += 1;
        if f.throws {
            self.throws = true;
        }
        let mut args = Vec::new();
        let named = self.rng.chance(0.3);
        for (i, p) in f.params.iter().enumerate() {
            if p.default.is_some() && self.rng.chance(0.4) {
                // Leave it out (positional only while nothing after it is given).
                if named {
                    continue;
                }
                break;
            }
            let arg = if f.name.starts_with("rec") && i == 0 {
                let d = self.expr(Ty::Int, 1);
                cat!("(", d, ") & 7")
            } else {
                self.arg(p.ty)
            };
            if named && i > 0 {
                args.push(cat!(format!("{}: ", &p.name[1..]), arg));
            } else {
                args.push(arg);
            }
        }
        if f.variadic {
            if self.rng.chance(0.4) {
                // Values only: string keys would become named arguments.
                let a = self.expr(Ty::Arr, 1);
                args.push(cat!("...array_values(", a, ")"));
            } else {
                for _ in 0..self.rng.range(0, 3) {
                    let a = self.expr(Ty::Scalar, 1);
                    args.push(a);
                }
            }
        }
        // Named arguments after the first go in a shuffled order.
        if named && !f.variadic && args.len() > 2 {
            let n = args.len();
            for i in 1..n {
                let j = 1 + self.rng.below(n - 1);
                args.swap(i, j);
            }
        }
        let callee = if self.rng.chance(0.15) {
            // A dynamic call: INIT_DYNAMIC_CALL, arguments sent with the _EX opcodes.
            format!("({})(", self.qualified(&f.name))
        } else {
            format!("{}(", f.name)
        };
        let mut parts = vec![Node::from(callee)];
        for (i, a) in args.into_iter().enumerate() {
            if i > 0 {
                parts.push(", ".into());
            }
            parts.push(a);
        }
        parts.push(")".into());
        Some(Node::Seq(parts))
    }

    /// An argument for a parameter of type `ty`: exact in strict mode, juggled sometimes
    /// in coercive mode (integral numeric strings to int, ints to float and string).
    fn arg(&mut self, ty: Ty) -> Node {
        if !self.strict && self.w().compare > 0 && self.rng.chance(0.25) {
            match ty {
                Ty::Int => return self.rng.pick(INT_STR_LITS).to_string().into(),
                Ty::Float => {
                    return if self.rng.chance(0.5) {
                        self.rng.pick(NUM_STR_LITS).to_string().into()
                    } else {
                        self.expr(Ty::Int, 1)
                    }
                }
                Ty::Str => return self.expr(Ty::Num, 1),
                Ty::Bool => return self.expr(Ty::Int, 1),
                _ => {}
            }
        }
        let d = self.cfg.max_expr_depth - 1;
        match ty {
            Ty::Float => self.expr(Ty::Num, d),
            _ => self.expr(ty, d),
        }
    }

    /// One of `items` (constant expressions, many foldable at compile time), parenthesised.
    fn fold(&mut self, items: &[&str]) -> Node {
        format!("({})", self.rng.pick(items)).into()
    }

    fn pick_kind(&mut self, options: &[(u32, u8)]) -> u8 {
        let w: Vec<u32> = options.iter().map(|o| o.0).collect();
        options[self.rng.weighted(&w)].1
    }

    fn int_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (w.bitwise, 0),
            (w.bitwise, 1),
            (w.arith, 2),
            (w.arith, 3),
            (w.internal, 4),
            (w.compare, 5),
            (w.branch, 6),
            (w.calls, 7),
            (if self.has_objects() { w.objects } else { 0 }, 8),
            (w.fold, 9),
            (w.arrays, 10),
            (w.closures, 11),
            (w.switch, 12),
        ]);
        let d = d - 1;
        match k {
            0 => {
                let (a, b) = (self.expr(Ty::Int, d), self.expr(Ty::Int, d));
                let op = self.rng.pick(&["&", "|", "^"]);
                cat!("(", a, format!(" {op} "), b, ")")
            }
            1 => {
                let (a, b) = (self.expr(Ty::Int, d), self.expr(Ty::Int, d));
                match self.rng.below(3) {
                    0 => cat!("(~", a, ")"),
                    1 => cat!("(", a, " << (", b, " & 63))"),
                    _ => cat!("(", a, " >> (", b, " & 63))"),
                }
            }
            2 => {
                // Arithmetic that may overflow to float, cast back.
                let (a, b) = (self.expr(Ty::Num, d), self.expr(Ty::Num, d));
                let op = self.rng.pick(&["+", "-", "*"]);
                cat!("((int) (", a, format!(" {op} "), b, "))")
            }
            3 => {
                let (a, b) = (self.expr(Ty::Int, d), self.expr(Ty::Int, d));
                if self.rng.chance(0.5) {
                    cat!("intdiv(", a, ", (", b, " & 255) | 1)")
                } else {
                    cat!("(", a, " % ((", b, " & 255) | 1))")
                }
            }
            4 => match self.rng.below(6) {
                0 => {
                    let s = self.expr(Ty::Str, d);
                    cat!("strlen(", s, ")")
                }
                5 => {
                    // Functions of extensions PHP's php.ini loads (mbstring, ctype), behind
                    // the checks real code makes, which the optimizer folds when it knows
                    // the process has them; the other branch is what runs under -n.
                    let (s, t) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                    match self.rng.below(3) {
                        0 => cat!(
                            "(function_exists('mb_strlen') ? mb_strlen(",
                            s,
                            ") : strlen(",
                            t,
                            "))"
                        ),
                        1 => cat!(
                            "(extension_loaded('ctype') && ctype_digit(",
                            s,
                            ") ? 1 : strlen(",
                            t,
                            "))"
                        ),
                        _ => cat!(
                            "(\\function_exists('mb_substr_count') ? \\mb_substr_count(",
                            s,
                            ", 'a') : substr_count(",
                            t,
                            ", 'a'))"
                        ),
                    }
                }
                1 => {
                    let a = self.expr(Ty::Arr, d);
                    cat!("count(", a, ")")
                }
                2 => {
                    let s = self.expr(Ty::Scalar, d);
                    cat!("intval(", s, ")")
                }
                3 => {
                    let (a, b) = (self.expr(Ty::Int, d), self.expr(Ty::Int, d));
                    let f = self.rng.pick(&["max", "min"]);
                    cat!(format!("{f}("), a, ", ", b, ")")
                }
                _ => {
                    let s = self.expr(Ty::Str, d);
                    cat!("crc32(", s, ")")
                }
            },
            5 => {
                let (a, b) = (self.expr(Ty::Scalar, d), self.expr(Ty::Scalar, d));
                cat!("(", a, " <=> ", b, ")")
            }
            6 => {
                let c = self.expr(Ty::Bool, d);
                let (a, b) = (self.expr(Ty::Int, d), self.expr(Ty::Int, d));
                cat!("(", c, " ? ", a, " : ", b, ")")
            }
            7 => match self.call_expr(Ty::Int) {
                Some(c) => c,
                None => self.leaf(Ty::Int),
            },
            8 => {
                let x = self.expr(Ty::Int, d);
                match self.rng.below(4) {
                    0 => cat!("$o0->m(", x, ")"),
                    1 => "$o0->id".into(),
                    2 => "K1::C".into(),
                    _ => "($on?->id ?? -1)".into(),
                }
            }
            9 => self.fold(&[
                "strlen('abcdef')",
                "(1 + 2) * 3",
                "ord('A')",
                "count([1, 2, 3])",
                "intdiv(17, 5)",
                "PHP_INT_SIZE * 8",
                "strlen(str_repeat('ab', 3))",
                "max(3, 9)",
                "abs(-4)",
                "(int) '12abc'",
                "array_sum([1, 2, 3])",
                "7 % 3",
                "-7 % 3",
                "1 << 3",
                "PHP_INT_MAX >> 62",
                "strpos('hello', 'l')",
                "count(['a' => 1, 'b' => 2])",
                "(int) (0.1 + 0.7) * 10",
                "'5' + 3",
                "true + 1",
                "null ?? 4",
                "__LINE__",
                "~0",
                "-PHP_INT_MAX - 1",
                "(int) 1e19",
                "ord(chr(300))",
            ]),
            10 => {
                let a = self.expr(Ty::Arr, d);
                let k = self.key();
                cat!("((int) (", a, "[", k, "] ?? 0))")
            }
            11 => {
                let saved = self.vars.len();
                self.vars.push(Var {
                    name: "$w".into(),
                    ty: Ty::Int,
                    writable: false,
                });
                let body = self.expr(Ty::Int, d);
                self.vars.truncate(saved);
                let arg = self.expr(Ty::Int, d);
                self.calls += 1;
                cat!("(fn(int $w): int => ", body, ")(", arg, ")")
            }
            _ => {
                let s = self.expr(Ty::Int, d);
                let (a, b, c) = (
                    self.expr(Ty::Int, d),
                    self.expr(Ty::Int, d),
                    self.expr(Ty::Int, d),
                );
                cat!(
                    "match ((",
                    s,
                    ") & 3) { 0 => ",
                    a,
                    ", 1, 2 => ",
                    b,
                    ", default => ",
                    c,
                    " }"
                )
            }
        }
    }

    fn float_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (w.arith, 0),
            (w.arith, 1),
            (w.internal, 2),
            (w.internal, 3),
            (w.fold, 4),
            (w.branch, 5),
            (w.calls, 6),
            (if self.has_objects() { w.objects } else { 0 }, 7),
        ]);
        let d = d - 1;
        match k {
            0 => {
                let (a, b) = (self.expr(Ty::Float, d), self.expr(Ty::Num, d));
                let op = self.rng.pick(&["+", "-", "*"]);
                if self.rng.chance(0.5) {
                    cat!("(", a, format!(" {op} "), b, ")")
                } else {
                    cat!("(", b, format!(" {op} "), a, ")")
                }
            }
            1 => {
                let (a, b) = (self.expr(Ty::Float, d), self.expr(Ty::Num, d));
                match self.rng.below(3) {
                    0 => cat!("(", a, " / (", b, " ?: 1))"),
                    1 => cat!("fdiv(", b, ", ", a, ")"),
                    _ => cat!("(", a, " ** 2)"),
                }
            }
            2 => {
                let s = self.expr(Ty::Scalar, d);
                if self.rng.chance(0.5) {
                    cat!("((float) ", s, ")")
                } else {
                    cat!("floatval(", s, ")")
                }
            }
            3 => {
                let a = self.expr(Ty::Num, d);
                let f = self
                    .rng
                    .pick(&["sqrt", "floor", "ceil", "round", "exp", "sin", "log1p"]);
                let b = self.expr(Ty::Num, d);
                match self.rng.below(3) {
                    0 => cat!(format!("{f}("), a, ")"),
                    1 => cat!("round(", a, ", 2)"),
                    _ => cat!("fmod(", a, ", ", b, ")"),
                }
            }
            4 => self.fold(&[
                "0.1 + 0.2",
                "1.5 * 2",
                "1 / 3",
                "10 / 4",
                "2 ** -1",
                "PHP_FLOAT_MAX * 2",
                "sqrt(16)",
                "round(2.5)",
                "(float) '1e3'",
                "M_PI / 2",
                "floor(-0.5)",
                "fdiv(1, 0)",
                "fdiv(0, 0)",
                "2 ** 64",
                "PHP_INT_MAX + 1",
                "-PHP_INT_MIN",
                "0.1 * 3",
                "1e308 * 10",
            ]),
            5 => {
                let c = self.expr(Ty::Bool, d);
                let (a, b) = (self.expr(Ty::Float, d), self.expr(Ty::Float, d));
                cat!("(", c, " ? ", a, " : ", b, ")")
            }
            6 => match self.call_expr(Ty::Float) {
                Some(c) => c,
                None => self.leaf(Ty::Float),
            },
            _ => "$o0->area()".into(),
        }
    }

    fn num_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (w.arith, 0),
            (w.arith, 1),
            (w.arith, 2),
            (w.compare, 3),
            (w.internal, 4),
            (w.arith / 2, 5),
            (w.arith / 2, 6),
        ]);
        let d1 = d - 1;
        match k {
            0 => {
                let (a, b) = (self.expr(Ty::Num, d1), self.expr(Ty::Num, d1));
                let op = self.rng.pick(&["+", "-", "*"]);
                cat!("(", a, format!(" {op} "), b, ")")
            }
            1 => {
                let (a, b) = (self.expr(Ty::Num, d1), self.expr(Ty::Num, d1));
                match self.rng.below(3) {
                    0 => cat!("(", a, " / (", b, " ?: 1))"),
                    1 => {
                        let e = self.rng.range(0, 5);
                        cat!("(", a, format!(" ** {e})"))
                    }
                    _ => cat!("(-(", a, "))"),
                }
            }
            2 => {
                let t = if self.rng.chance(0.5) {
                    Ty::Int
                } else {
                    Ty::Float
                };
                self.expr(t, d)
            }
            3 => {
                // Type juggling that never throws: numeric strings, bools, null.
                let a = self.expr(Ty::Num, d1);
                let s = self.rng.pick(NUM_STR_LITS).to_string();
                match self.rng.below(4) {
                    0 => cat!(format!("({s} + "), a, ")"),
                    1 => cat!(format!("({s} * "), a, ")"),
                    2 => {
                        let b = self.expr(Ty::Bool, d1);
                        cat!("(", b, " + ", a, ")")
                    }
                    _ => cat!(format!("(+{s})")),
                }
            }
            4 => {
                let (a, b) = (self.expr(Ty::Num, d1), self.expr(Ty::Num, d1));
                match self.rng.below(3) {
                    0 => cat!("abs(", a, ")"),
                    1 => cat!("max(", a, ", ", b, ")"),
                    _ => cat!("min(", a, ", ", b, ")"),
                }
            }
            5 => {
                let nums = self.exact_vars(Ty::Num);
                if nums.is_empty() {
                    return self.leaf(Ty::Num);
                }
                let v = self.rng.pick(&nums).name.clone();
                self.rng
                    .pick(&[
                        format!("{v}++"),
                        format!("++{v}"),
                        format!("{v}--"),
                        format!("--{v}"),
                    ])
                    .clone()
                    .into()
            }
            _ => match self.call_expr(Ty::Num) {
                Some(c) => c,
                None => self.leaf(Ty::Num),
            },
        }
    }

    fn bool_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (w.compare * 2, 0),
            (w.branch, 1),
            (w.arrays, 2),
            (w.internal, 3),
            (w.fold, 4),
            (w.compare, 5),
            (w.calls, 6),
            (if self.has_objects() { w.objects } else { 0 }, 7),
            (w.strings, 8),
        ]);
        let d = d - 1;
        match k {
            0 => {
                let (a, b) = (self.expr(Ty::Scalar, d), self.expr(Ty::Scalar, d));
                let op = self
                    .rng
                    .pick(&["==", "!=", "===", "!==", "<", "<=", ">", ">=", "<>"]);
                cat!("(", a, format!(" {op} "), b, ")")
            }
            1 => {
                let (a, b) = (self.expr(Ty::Bool, d), self.expr(Ty::Bool, d));
                match self.rng.below(5) {
                    0 => cat!("!", a),
                    1 => cat!("(", a, " && ", b, ")"),
                    2 => cat!("(", a, " || ", b, ")"),
                    3 => cat!("(", a, " xor ", b, ")"),
                    _ => cat!("(", a, " and ", b, ")"),
                }
            }
            2 => {
                let a = self.expr(Ty::Arr, d);
                let k = self.key();
                match self.rng.below(4) {
                    0 => cat!("isset(", a, "[", k, "])"),
                    1 => cat!("empty(", a, "[", k, "])"),
                    2 => cat!("array_key_exists(", k, ", ", a, ")"),
                    _ => {
                        let v = self.expr(Ty::Scalar, d);
                        let strict = if self.rng.chance(0.5) { ", true" } else { "" };
                        cat!("in_array(", v, ", ", a, format!("{strict})"))
                    }
                }
            }
            3 => {
                let s = self.expr(Ty::Scalar, d);
                let f = self.rng.pick(&[
                    "is_int",
                    "is_float",
                    "is_string",
                    "is_bool",
                    "is_null",
                    "is_numeric",
                    "is_scalar",
                    "is_array",
                    "boolval",
                ]);
                cat!(format!("{f}("), s, ")")
            }
            4 => self.fold(&[
                "(1 < 2)",
                "('abc' == 'ABC')",
                "('1e3' == '1000')",
                "('abc' == 0)",
                "(null == false)",
                "('1' == '01')",
                "('10' == '1e1')",
                "(100 == '1e2')",
                "in_array(2, [1, 2])",
                "is_int(5)",
                "defined('PHP_VERSION')",
                "function_exists('strlen')",
                "str_contains('abc', 'b')",
                "(NAN == NAN)",
                "(INF > PHP_INT_MAX)",
                "('' == null)",
                "([] == false)",
                "(0.1 + 0.2 == 0.3)",
                "('0' == false)",
                "(' 1' == 1)",
                "('1 ' == 1)",
                "is_numeric('1e5')",
                "(bool) '0.0'",
            ]),
            5 => {
                let s = self.expr(Ty::Scalar, d);
                if self.rng.chance(0.5) {
                    cat!("((bool) ", s, ")")
                } else {
                    cat!("!", s)
                }
            }
            6 => match self.call_expr(Ty::Bool) {
                Some(c) => c,
                None => self.leaf(Ty::Bool),
            },
            7 => match self.rng.below(3) {
                0 => "($on instanceof K0)".into(),
                1 => "isset($on->label)".into(),
                _ => "($o0 instanceof I0)".into(),
            },
            _ => {
                let (a, b) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                let f = self
                    .rng
                    .pick(&["str_contains", "str_starts_with", "str_ends_with"]);
                if self.rng.chance(0.3) {
                    cat!("is_numeric(", a, ")")
                } else {
                    cat!(format!("{f}("), a, ", ", b, ")")
                }
            }
        }
    }

    fn str_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (w.strings, 0),
            (w.strings, 1),
            (w.internal, 2),
            (w.internal, 3),
            (w.internal, 4),
            (w.fold, 5),
            (w.branch, 6),
            (w.calls, 7),
            (if self.has_objects() { w.objects } else { 0 }, 8),
            (w.switch, 9),
        ]);
        let d = d - 1;
        match k {
            0 => {
                let (a, b) = (self.expr(Ty::Scalar, d), self.expr(Ty::Scalar, d));
                cat!("(", a, " . ", b, ")")
            }
            1 => {
                // Interpolation of simple variables (and a heredoc now and then).
                let vars: Vec<Var> = self
                    .vars_of(Ty::Scalar, false)
                    .into_iter()
                    .filter(|v| !v.name.contains("::") && !v.name.contains("->"))
                    .collect();
                if vars.is_empty() {
                    return self.literal(Ty::Str).into();
                }
                let a = self.rng.pick(&vars).name.clone();
                let b = self.rng.pick(&vars).name.clone();
                match self.rng.below(3) {
                    0 => format!("\"<{a}>\"").into(),
                    1 => format!("\"[{{{a}}}|{{{b}}}]\"").into(),
                    _ => format!("<<<TXT\n  h {a} {{{b}}}\n  TXT").into(),
                }
            }
            2 => {
                let s = self.expr(Ty::Str, d);
                let f = self.rng.pick(&[
                    "strtoupper",
                    "strtolower",
                    "strrev",
                    "trim",
                    "ucfirst",
                    "lcfirst",
                    "bin2hex",
                    "md5",
                    "addslashes",
                    "nl2br",
                ]);
                cat!(format!("{f}("), s, ")")
            }
            3 => {
                let s = self.expr(Ty::Str, d);
                let i = self.expr(Ty::Int, d);
                match self.rng.below(5) {
                    4 => {
                        // mbstring's, when the process has it (see int_expr).
                        let t = self.expr(Ty::Str, d);
                        if self.rng.chance(0.5) {
                            cat!(
                                "(extension_loaded('mbstring') ? mb_strtoupper(",
                                s,
                                ") : strtoupper(",
                                t,
                                "))"
                            )
                        } else {
                            // mb_substr() refuses PHP_INT_MIN for both (a ValueError);
                            // `% 64` keeps the sign.
                            let j = self.expr(Ty::Int, d);
                            cat!(
                                "(function_exists('mb_substr') ? mb_substr(",
                                s,
                                ", (",
                                i,
                                ") % 64, (",
                                j,
                                ") % 64) : ",
                                t,
                                ")"
                            )
                        }
                    }
                    0 => cat!("str_repeat(", s, ", ", i, " & 3)"),
                    1 => {
                        let j = self.expr(Ty::Int, d);
                        cat!("substr(", s, ", ", i, ", ", j, ")")
                    }
                    2 => cat!("str_pad(", s, ", ", i, " & 15, '-', STR_PAD_BOTH)"),
                    _ => {
                        let t = self.expr(Ty::Str, d);
                        cat!("str_replace(", t, ", ", s, ", 'a-b-c')")
                    }
                }
            }
            4 => match self.rng.below(6) {
                0 => {
                    let s = self.expr(Ty::Scalar, d);
                    if self.rng.chance(0.5) {
                        cat!("((string) ", s, ")")
                    } else {
                        cat!("strval(", s, ")")
                    }
                }
                1 => {
                    let a = self.expr(Ty::Arr, d);
                    cat!("implode(',', ", a, ")")
                }
                2 => {
                    let (i, s, n) = (
                        self.expr(Ty::Int, d),
                        self.expr(Ty::Str, d),
                        self.expr(Ty::Num, d),
                    );
                    cat!(
                        "sprintf('%d|%s|%.3F|%05.1f', ",
                        i,
                        ", ",
                        s,
                        ", ",
                        n,
                        ", 2.25)"
                    )
                }
                3 => {
                    let s = self.expr(Ty::Scalar, d);
                    let f = self.rng.pick(&["gettype", "get_debug_type", "json_encode"]);
                    if *f == "json_encode" {
                        cat!("(string) json_encode(", s, ")")
                    } else {
                        cat!(format!("{f}("), s, ")")
                    }
                }
                4 => {
                    let v = self.expr(Ty::Arr, d);
                    cat!("var_export(", v, ", true)")
                }
                _ => {
                    let i = self.expr(Ty::Int, d);
                    let f = self.rng.pick(&["chr", "dechex", "decbin", "strval"]);
                    cat!(format!("{f}("), i, ")")
                }
            },
            5 => self.fold(&[
                "'a' . 'b'",
                "strtoupper('abc')",
                "str_repeat('-', 3)",
                "implode(',', [1, 2, 3])",
                "'x' . 1 . 2.5",
                "sprintf('%05d', 42)",
                "substr('hello', 1, 3)",
                "strrev('abc')",
                "trim(' x ')",
                "chr(65)",
                "dechex(255)",
                "bin2hex('ab')",
                "str_pad('7', 3, '0', STR_PAD_LEFT)",
                "ucfirst('php')",
                "__FUNCTION__",
                "gettype(1.0)",
                "PHP_EOL",
                "(string) 0.1",
                "(string) 1e25",
                "(string) -0.0",
                "'' . PHP_INT_MAX",
                "var_export(1.0, true)",
                "serialize([1, 'a' => true])",
                "str_replace('l', 'L', 'hello')",
                "\"tab\\tnl\\x41\\u{1F600}\"",
            ]),
            6 => {
                let c = self.expr(Ty::Bool, d);
                let (a, b) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                if self.rng.chance(0.5) {
                    cat!("(", c, " ? ", a, " : ", b, ")")
                } else {
                    let s = self.expr(Ty::Scalar, d);
                    cat!("((string) (", s, " ?: ", a, "))")
                }
            }
            7 => match self.call_expr(Ty::Str) {
                Some(c) => c,
                None => self.leaf(Ty::Str),
            },
            8 => self.fold(&[
                "$o0->describe()",
                "$o0->getName()",
                "K1::kind()",
                "E0::H->name",
                "E0::WILD->value",
                "get_class($o0)",
                "$o0::class",
                "(string) $o0",
                "($on?->getName() ?? 'none')",
                "E1::Up->name",
            ]),
            _ => {
                let s = self.expr(Ty::Str, d);
                let (l1, l2) = (self.literal(Ty::Str), self.literal(Ty::Str));
                let (a, b) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                if l1 == l2 {
                    cat!(
                        "match (",
                        s,
                        format!(") {{ {l1} => "),
                        a,
                        ", default => ",
                        b,
                        " }"
                    )
                } else {
                    cat!(
                        "match (",
                        s,
                        format!(") {{ {l1}, {l2} => "),
                        a,
                        ", default => ",
                        b,
                        " }"
                    )
                }
            }
        }
    }

    fn scalar_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (20, 0),
            (w.arrays, 1),
            (w.compare, 2),
            (w.calls, 3),
            (w.internal, 4),
            (if self.has_objects() { w.objects } else { 0 }, 5),
        ]);
        let d1 = d - 1;
        match k {
            0 => {
                let t = *self.rng.pick(&SCALAR_TYS);
                self.expr(t, d)
            }
            1 => {
                let a = self.expr(Ty::Arr, d1);
                let k = self.key();
                let dflt = self.expr(Ty::Scalar, d1);
                cat!("(", a, "[", k, "] ?? ", dflt, ")")
            }
            2 => {
                let dflt = self.expr(Ty::Scalar, d1);
                let vars = self.vars_of(Ty::Scalar, false);
                if !vars.is_empty() && self.rng.chance(0.5) {
                    let v = self.rng.pick(&vars).name.clone();
                    cat!(format!("({v} ?? "), dflt, ")")
                } else {
                    cat!("($nosuch ?? ", dflt, ")")
                }
            }
            3 => match self.call_expr(Ty::Scalar) {
                Some(c) => c,
                None => self.leaf(Ty::Scalar),
            },
            4 => {
                let a = self.expr(Ty::Arr, d1);
                let f = self
                    .rng
                    .pick(&["array_key_first", "array_key_last", "current", "end_of"]);
                if *f == "end_of" {
                    let v = self.expr(Ty::Scalar, d1);
                    cat!("array_search(", v, ", ", a, ")")
                } else {
                    cat!(format!("{f}("), a, ")")
                }
            }
            _ => {
                let s = self.expr(Ty::Str, d1);
                cat!("E0::tryFrom(", s, ")?->value")
            }
        }
    }

    fn arr_expr(&mut self, d: u32) -> Node {
        let w = self.w().clone();
        let k = self.pick_kind(&[
            (w.arrays * 2, 0),
            (w.internal, 1),
            (w.internal, 2),
            (w.closures, 3),
            (w.fold, 4),
            (w.calls, 5),
            (w.generators * (!self.generators.is_empty()) as u32, 6),
            (w.scopes, 7),
        ]);
        let d = d - 1;
        match k {
            0 => {
                // Literal with computed elements: packed, hash or mixed keys, spreads.
                let n = self.rng.range(0, 4);
                let hash = self.rng.below(3);
                let mut parts = vec![Node::from("[")];
                for i in 0..n {
                    if i > 0 {
                        parts.push(", ".into());
                    }
                    let v = self.expr(Ty::Scalar, d);
                    match hash {
                        0 => parts.push(v),
                        1 => {
                            let k = self.key();
                            parts.push(cat!(k, " => ", v));
                        }
                        _ => {
                            if self.rng.chance(0.3) {
                                let a = self.expr(Ty::Arr, d);
                                parts.push(cat!("...", a));
                            } else {
                                parts.push(v);
                            }
                        }
                    }
                }
                parts.push("]".into());
                Node::Seq(parts)
            }
            1 => {
                let (a, b) = (self.expr(Ty::Arr, d), self.expr(Ty::Arr, d));
                match self.rng.below(8) {
                    0 => cat!("array_merge(", a, ", ", b, ")"),
                    1 => cat!("array_reverse(", a, ", true)"),
                    2 => cat!("array_values(", a, ")"),
                    3 => cat!("array_keys(", a, ")"),
                    4 => cat!("(", a, " + ", b, ")"),
                    5 => cat!("array_unique(", a, ")"),
                    6 => cat!("array_filter(", a, ")"),
                    _ => cat!("array_diff_key(", a, ", ", b, ")"),
                }
            }
            2 => {
                let i = self.expr(Ty::Int, d);
                let s = self.expr(Ty::Str, d);
                match self.rng.below(5) {
                    0 => cat!("range(0, ", i, " & 7)"),
                    1 => cat!("str_split(", s, ")"),
                    2 => cat!("explode(',', ", s, ")"),
                    3 => cat!("array_fill(0, ", i, " & 7, ", s, ")"),
                    _ => {
                        let a = self.expr(Ty::Arr, d);
                        cat!("array_slice(", a, ", ", i, " & 3)")
                    }
                }
            }
            3 => {
                let a = self.expr(Ty::Arr, d);
                let saved = self.vars.len();
                self.vars.push(Var {
                    name: "$q".into(),
                    ty: Ty::Scalar,
                    writable: false,
                });
                let body = self.expr(Ty::Scalar, d);
                self.vars.truncate(saved);
                if self.rng.chance(0.5) {
                    cat!("array_map(fn($q) => ", body, ", ", a, ")")
                } else {
                    let b = self.expr(Ty::Bool, d.min(1));
                    let _ = body;
                    cat!("array_filter(", a, ", fn($q) => ", b, ")")
                }
            }
            4 => self.fold(&[
                "[1, 2, 3]",
                "['a' => 1, 'b' => 2]",
                "array_merge([1], [2, 3])",
                "array_keys(['x' => 1, 'y' => 2])",
                "range('a', 'e')",
                "explode(',', 'a,b,,c')",
                "array_flip(['p', 'q'])",
                "str_split('abc')",
                "array_fill_keys(['k', 'l'], 0)",
                "[...[1, 2], ...['z' => 3]]",
                "array_count_values(['a', 'b', 'a'])",
                "array_combine(['u', 'v'], [1, 2])",
                "[3 => 'c', 1 => 'a']",
                "array_pad([], 2, null)",
            ]),
            5 => match self.call_expr(Ty::Arr) {
                Some(c) => c,
                None => self.leaf(Ty::Arr),
            },
            6 => {
                let g = self.rng.pick(&self.generators.clone()).clone();
                let n = self.expr(Ty::Int, d);
                cat!(format!("iterator_to_array({g}("), n, "), false)")
            }
            _ => {
                let scalars: Vec<String> = self
                    .vars
                    .iter()
                    .filter(|v| {
                        v.ty.is_sub(Ty::Scalar)
                            && (v.name.starts_with("$v") || v.name.starts_with("$l"))
                    })
                    .map(|v| format!("'{}'", &v.name[1..]))
                    .collect();
                // Inside an arrow function (whose parameter is $q, $w, $y or $z) only the
                // variables it names are captured: compact would not see the others.
                let in_arrow = self
                    .vars
                    .iter()
                    .any(|v| matches!(v.name.as_str(), "$q" | "$w" | "$y" | "$z"));
                if scalars.is_empty() || in_arrow {
                    return self.leaf(Ty::Arr);
                }
                let a = self.rng.pick(&scalars).clone();
                let b = self.rng.pick(&scalars).clone();
                format!("compact({a}, {b})").into()
            }
        }
    }
}

/// The variables of the main script, by type (`$v0`, `$v1`, ...).
const MAIN_VARS: [Ty; 11] = [
    Ty::Int,
    Ty::Int,
    Ty::Float,
    Ty::Num,
    Ty::Bool,
    Ty::Str,
    Ty::Str,
    Ty::Scalar,
    Ty::Scalar,
    Ty::Arr,
    Ty::Arr,
];

/// Caps a scalar that may hold a string built from itself: written in a loop (or through a
/// reference to a variable that feeds its own new value, as `var_export` escaping does), it
/// would otherwise double, or worse, on every iteration and exhaust PHP's memory limit.
fn string_cap(ind: &str, name: &str) -> String {
    format!("{ind}if (is_string({name}) && strlen({name}) > 64) {{\n{ind}    {name} = substr({name}, 0, 64);\n{ind}}}\n")
}
