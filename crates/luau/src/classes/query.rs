//! `Instance:QueryDescendants(selector)`: the reference's selector grammar over the tree.
//!
//! A selector list is complex selectors separated by `,`. A complex selector is compound
//! selectors joined by combinators: `>` (a direct child of the previous match) and `>>` (a
//! descendant; also what a bare space means, and what the first compound is relative to the
//! queried instance when no combinator leads). A compound is an optional class name (`IsA`)
//! followed by `.Tag`, `#Name`, `[Property = value]`, `[$Attribute]`, `[$Attribute = value]`,
//! `:not(selector-list)` and `:has(relative-selector-list)`. Values are booleans, numbers or
//! strings (quoted, or bare letters, digits, `_` and `-`); an enum property compares by item
//! name. Matches come back in `GetDescendants` order, each once.

use super::instance::push_list;
use crate::context::ctx;
use crate::methods::MethodTable;
use procmodel_dom::is_a;
use rbx_dom_weak::{Instance, WeakDom};
use rbx_reflection::DataType;
use rbx_types::{Ref, Variant};

pub fn register(m: &mut MethodTable) {
    m.class("Instance");
    m.add_method("QueryDescendants", |lua, this, selector: String| {
        let list = parse(&selector).map_err(|e| {
            mlua::Error::runtime(format!("QueryDescendants: {e} in selector {selector:?}"))
        })?;
        let mut c = ctx(lua)?;
        let mut found = Vec::new();
        let mut first = true;
        procmodel_dom::preorder(&c.dom, &[this.r], |r, _| {
            if !first && matches_list(&c.dom, this.r, r, &list) {
                found.push(r);
            }
            first = false;
            true
        });
        c.note_lookup(this.r, &found, crate::context::Lookup::Subtree);
        push_list(lua, &mut c, &found)
    });
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Combinator {
    Child,
    Descendant,
}

#[derive(Debug)]
enum Value {
    Bool(bool),
    Number(f64),
    Str(String),
}

#[derive(Debug)]
enum Simple {
    Class(String),
    Tag(String),
    Name(String),
    Property(String, Value, PropertyKeys),
    HasAttribute(String),
    Attribute(String, Value),
    Not(Vec<Complex>),
    Has(Vec<Complex>),
}

/// Compounds from left to right, each with the combinator that relates it to the one before
/// (the first one's relates it to the query's root).
#[derive(Debug)]
struct Complex(Vec<(Combinator, Vec<Simple>)>);

// ----- parsing -----

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

fn parse(selector: &str) -> Result<Vec<Complex>, String> {
    let mut p = Parser {
        s: selector.as_bytes(),
        at: 0,
    };
    let list = p.list()?;
    p.space();
    if p.at < p.s.len() {
        return Err(format!("unexpected {:?} at {}", p.rest(), p.at + 1));
    }
    Ok(list)
}

impl Parser<'_> {
    fn rest(&self) -> String {
        String::from_utf8_lossy(&self.s[self.at..])
            .chars()
            .take(12)
            .collect()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn space(&mut self) -> bool {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
        self.at > start
    }

    fn eat(&mut self, text: &str) -> bool {
        if self.s[self.at..].starts_with(text.as_bytes()) {
            self.at += text.len();
            true
        } else {
            false
        }
    }

    /// Complex selectors separated by commas, up to the end or a closing parenthesis.
    fn list(&mut self) -> Result<Vec<Complex>, String> {
        let mut list = vec![self.complex()?];
        loop {
            self.space();
            if !self.eat(",") {
                return Ok(list);
            }
            list.push(self.complex()?);
        }
    }

    fn combinator(&mut self) -> Option<Combinator> {
        if self.eat(">>") {
            Some(Combinator::Descendant)
        } else if self.eat(">") {
            Some(Combinator::Child)
        } else {
            None
        }
    }

    fn complex(&mut self) -> Result<Complex, String> {
        self.space();
        let mut parts = Vec::new();
        let mut comb = self.combinator().unwrap_or(Combinator::Descendant);
        loop {
            self.space();
            let compound = self.compound()?;
            if compound.is_empty() {
                return Err(format!("expected a selector at {}", self.at + 1));
            }
            parts.push((comb, compound));
            let spaced = self.space();
            match self.combinator() {
                Some(c) => comb = c,
                None if spaced && self.peek().is_some_and(|b| !matches!(b, b',' | b')')) => {
                    comb = Combinator::Descendant
                }
                None => return Ok(Complex(parts)),
            }
        }
    }

    fn ident(&mut self) -> String {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b >= 0x80)
        {
            self.at += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.at]).into_owned()
    }

    fn compound(&mut self) -> Result<Vec<Simple>, String> {
        let mut out = Vec::new();
        let class = self.ident();
        if !class.is_empty() {
            out.push(Simple::Class(class));
        }
        loop {
            match self.peek() {
                Some(b'.') => {
                    self.at += 1;
                    out.push(Simple::Tag(self.required("a tag after '.'")?));
                }
                Some(b'#') => {
                    self.at += 1;
                    out.push(Simple::Name(self.required("a name after '#'")?));
                }
                Some(b'[') => {
                    self.at += 1;
                    out.push(self.bracket()?);
                }
                Some(b':') => {
                    if self.eat(":not(") {
                        let inner = self.list()?;
                        self.close()?;
                        out.push(Simple::Not(inner));
                    } else if self.eat(":has(") {
                        let inner = self.list()?;
                        self.close()?;
                        out.push(Simple::Has(inner));
                    } else {
                        return Err(format!(
                            "unknown pseudo-class {:?} (:not and :has are supported)",
                            self.rest()
                        ));
                    }
                }
                _ => return Ok(out),
            }
        }
    }

    fn required(&mut self, what: &str) -> Result<String, String> {
        let id = self.ident();
        if id.is_empty() {
            Err(format!("expected {what} at {}", self.at + 1))
        } else {
            Ok(id)
        }
    }

    fn close(&mut self) -> Result<(), String> {
        self.space();
        if self.eat(")") {
            Ok(())
        } else {
            Err(format!("expected ')' at {}", self.at + 1))
        }
    }

    fn bracket(&mut self) -> Result<Simple, String> {
        self.space();
        let attribute = self.eat("$");
        let name = self.required(if attribute {
            "an attribute name"
        } else {
            "a property name"
        })?;
        self.space();
        if self.eat("]") {
            return if attribute {
                Ok(Simple::HasAttribute(name))
            } else {
                Err(format!("expected '= value' after [{name}"))
            };
        }
        if !self.eat("=") {
            return Err(format!("expected '=' or ']' at {}", self.at + 1));
        }
        self.space();
        let value = self.value()?;
        self.space();
        if !self.eat("]") {
            return Err(format!("expected ']' at {}", self.at + 1));
        }
        Ok(if attribute {
            Simple::Attribute(name, value)
        } else {
            Simple::Property(name, value, PropertyKeys::default())
        })
    }

    fn value(&mut self) -> Result<Value, String> {
        if let Some(q @ (b'"' | b'\'')) = self.peek() {
            self.at += 1;
            let start = self.at;
            while self.peek().is_some_and(|b| b != q) {
                self.at += 1;
            }
            if self.peek() != Some(q) {
                return Err("unterminated string".into());
            }
            let s = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
            self.at += 1;
            return Ok(Value::Str(s));
        }
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            self.at += 1;
        }
        let word = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
        Ok(match word.as_str() {
            "" => return Err(format!("expected a value at {}", self.at + 1)),
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            w => match w.parse::<f64>() {
                Ok(n) => Value::Number(n),
                Err(_) => Value::Str(word),
            },
        })
    }
}

// ----- matching -----

fn matches_list(dom: &WeakDom, root: Ref, r: Ref, list: &[Complex]) -> bool {
    list.iter().any(|c| matches_complex(dom, root, r, c))
}

/// Whether `r` matches `complex`, its first compound related to `root` by its combinator.
fn matches_complex(dom: &WeakDom, root: Ref, r: Ref, complex: &Complex) -> bool {
    match_from(dom, root, r, &complex.0)
}

/// Matches `parts` right to left: `r` matches the last compound, and something related to it
/// by that compound's combinator matches the rest (or is the root, for the first compound).
fn match_from(dom: &WeakDom, root: Ref, r: Ref, parts: &[(Combinator, Vec<Simple>)]) -> bool {
    let Some(((comb, compound), before)) = parts.split_last() else {
        return false;
    };
    let Some(inst) = dom.get_by_ref(r) else {
        return false;
    };
    if r == root
        || !compound
            .iter()
            .all(|s| matches_simple(dom, root, r, inst, s))
    {
        return false;
    }
    let target = |candidate: Ref| {
        if before.is_empty() {
            candidate == root
        } else {
            match_from(dom, root, candidate, before)
        }
    };
    match comb {
        Combinator::Child => target(inst.parent()),
        Combinator::Descendant => {
            let mut up = inst.parent();
            while let Some(i) = dom.get_by_ref(up) {
                if target(up) {
                    return true;
                }
                if up == root {
                    return false;
                }
                up = i.parent();
            }
            false
        }
    }
}

fn matches_simple(dom: &WeakDom, root: Ref, r: Ref, inst: &Instance, s: &Simple) -> bool {
    match s {
        Simple::Class(c) => is_a(&inst.class, c),
        Simple::Tag(t) => matches!(
            inst.properties.get(&crate::keys::KEYS.tags),
            Some(Variant::Tags(tags)) if tags.iter().any(|x| x == t)
        ),
        Simple::Name(n) => inst.name == *n,
        Simple::HasAttribute(a) => attribute(inst, a).is_some(),
        Simple::Attribute(a, v) => attribute(inst, a).is_some_and(|x| equal(x, v, None)),
        Simple::Property(p, v, keys) => property_equals(inst, p, v, keys),
        Simple::Not(list) => !matches_list(dom, root, r, list),
        Simple::Has(list) => {
            let mut found = false;
            procmodel_dom::preorder(dom, inst.children(), |d, _| {
                found = found || matches_list(dom, r, d, list);
                !found
            });
            found
        }
    }
}

fn attribute<'a>(inst: &'a Instance, name: &str) -> Option<&'a Variant> {
    match inst.properties.get(&crate::keys::KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.get(name),
        _ => None,
    }
}

/// Per class, where a `[Property = value]` selector finds its value: the canonical key, the
/// class default and the enum the value names an item of (None: no such property). Worked
/// out once per class in a query, not once per instance.
type PropertyKeys = std::cell::RefCell<
    rustc_hash::FxHashMap<
        rbx_dom_weak::Ustr,
        Option<(
            rbx_dom_weak::Ustr,
            Option<&'static Variant>,
            Option<&'static str>,
        )>,
    >,
>;

fn property_equals(inst: &Instance, name: &str, v: &Value, keys: &PropertyKeys) -> bool {
    let resolved = *keys.borrow_mut().entry(inst.class).or_insert_with(|| {
        procmodel_dom::find_property(&inst.class, name).map(|info| {
            let enum_name = match info.data_type {
                DataType::Enum(e) => Some(*e),
                _ => None,
            };
            let default = procmodel_dom::db_default(&inst.class, info.canonical);
            (rbx_dom_weak::Ustr::from(info.canonical), default, enum_name)
        })
    });
    let Some((key, default, enum_name)) = resolved else {
        return false;
    };
    inst.properties
        .get(&key)
        .or(default)
        .is_some_and(|x| equal(x, v, enum_name))
}

fn equal(x: &Variant, v: &Value, enum_name: Option<&str>) -> bool {
    match (x, v) {
        (Variant::Bool(a), Value::Bool(b)) => a == b,
        (Variant::Float32(a), Value::Number(b)) => f64::from(*a) == *b,
        (Variant::Float64(a), Value::Number(b)) => a == b,
        (Variant::Int32(a), Value::Number(b)) => f64::from(*a) == *b,
        (Variant::Int64(a), Value::Number(b)) => *a as f64 == *b,
        (Variant::String(a), Value::Str(b)) => a == b,
        (Variant::String(a), Value::Number(b)) => a.parse::<f64>().is_ok_and(|n| n == *b),
        (Variant::BinaryString(a), Value::Str(b)) => AsRef::<[u8]>::as_ref(a) == b.as_bytes(),
        (Variant::Enum(e), Value::Str(b)) => enum_name.is_some_and(|n| {
            procmodel_luau_types::enums::EnumItem::from_value(n, e.to_u32())
                .is_some_and(|item| item.name == b)
        }),
        (Variant::Enum(e), Value::Number(b)) => f64::from(e.to_u32()) == *b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_parses_the_references_examples() {
        for s in [
            "MeshPart",
            ".Fruit",
            "#RedTree",
            "[CanCollide = false]",
            "[$FuelCapacity]",
            "[$FuelCapacity = 75]",
            "Model.Apple[$Variety = Fuji][$Flavor = 4]",
            "Model > .SwordPart",
            "> Part.Apple",
            "Model >> [$OnFire = true]",
            "MeshPart.SwordPart, MeshPart[$OnFire = true]",
            ":not(SpotLight, PointLight)",
            ":not(Model > .SwordPart)",
            "MeshPart:has(> :not(SurfaceAppearance, Texture))",
            "[Name = 'a b']",
        ] {
            assert!(parse(s).is_ok(), "{s}: {:?}", parse(s));
        }
        for bad in [
            "", "Model >", "[Size]", ":hover", "[$A = ]", "Part,", "(Part)",
        ] {
            assert!(parse(bad).is_err(), "{bad} parsed");
        }
    }
}
