//! A generated program as a tree of text with marked places for the reducer: statements
//! and declarations that may be cut, and expressions that may be replaced by a literal of
//! the same type. Rendering with a set of [`Edits`] gives the reduced program.

use std::collections::BTreeSet;

/// Identifies a place the reducer may edit.
pub type EditId = u32;

#[derive(Clone, Debug)]
pub enum Node {
    Text(String),
    Seq(Vec<Node>),
    /// A statement or declaration that may be left out.
    Cut {
        id: EditId,
        body: Box<Node>,
    },
    /// An expression that may be replaced by `simple` (a literal of its type).
    Simplify {
        id: EditId,
        full: Box<Node>,
        simple: String,
    },
}

/// What the reducer changed: cut statements and simplified expressions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edits {
    pub cut: BTreeSet<EditId>,
    pub simplified: BTreeSet<EditId>,
}

/// Which kind of edit a place allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditKind {
    Cut,
    Simplify,
}

impl Node {
    pub fn text(s: impl Into<String>) -> Node {
        Node::Text(s.into())
    }

    pub fn render(&self, edits: &Edits, out: &mut String) {
        match self {
            Node::Text(s) => out.push_str(s),
            Node::Seq(nodes) => nodes.iter().for_each(|n| n.render(edits, out)),
            Node::Cut { id, body } => {
                if !edits.cut.contains(id) {
                    body.render(edits, out);
                }
            }
            Node::Simplify { id, full, simple } => {
                if edits.simplified.contains(id) {
                    out.push_str(simple);
                } else {
                    full.render(edits, out);
                }
            }
        }
    }

    /// The editable places still reachable under `edits`, outermost first (pre-order), so
    /// that a reducer trying them in order cuts whole blocks before their statements.
    pub fn places(&self, edits: &Edits, out: &mut Vec<(EditId, EditKind)>) {
        match self {
            Node::Text(_) => {}
            Node::Seq(nodes) => nodes.iter().for_each(|n| n.places(edits, out)),
            Node::Cut { id, body } => {
                if !edits.cut.contains(id) {
                    out.push((*id, EditKind::Cut));
                    body.places(edits, out);
                }
            }
            Node::Simplify { id, full, .. } => {
                if !edits.simplified.contains(id) {
                    out.push((*id, EditKind::Simplify));
                    full.places(edits, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_cut_and_simplify() {
        let tree = Node::Seq(vec![
            Node::text("a"),
            Node::Cut {
                id: 1,
                body: Box::new(Node::Simplify {
                    id: 2,
                    full: Box::new(Node::text("(x+y)")),
                    simple: "0".into(),
                }),
            },
            Node::text(";"),
        ]);
        let mut out = String::new();
        tree.render(&Edits::default(), &mut out);
        assert_eq!(out, "a(x+y);");
        let mut edits = Edits::default();
        edits.simplified.insert(2);
        out.clear();
        tree.render(&edits, &mut out);
        assert_eq!(out, "a0;");
        edits.cut.insert(1);
        out.clear();
        tree.render(&edits, &mut out);
        assert_eq!(out, "a;");
        let mut places = vec![];
        tree.places(&Edits::default(), &mut places);
        assert_eq!(places, vec![(1, EditKind::Cut), (2, EditKind::Simplify)]);
    }
}
