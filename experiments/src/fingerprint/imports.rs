//! What a harness source file imports, read from its text: the workspace crates it names
//! (`mondrian::...`, `use kernel_core as kc`) and the modules of this crate it names
//! (`crate::kinds::common::clock`, `super::sweep`, `self::x`, and in `use` items a child module
//! it declares). Comments, string and character literals and `#[cfg(test)]` items are skipped;
//! `crate::kinds::mondrian::...` names a module of this crate, not the mondrian crate.

/// The paths a file names, each as its segments (`["crate", "kinds", "common", "clock"]`), and
/// the child modules it declares (`mod x;`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// Paths outside `use` items.
    pub paths: Vec<Vec<String>>,
    /// Paths of `use` items, group members expanded (`use a::{b, c::d}`: `a::b`, `a::c::d`).
    pub uses: Vec<Vec<String>>,
    /// Child modules declared without a body (`mod x;`, `pub mod x;`).
    pub children: Vec<String>,
}

/// A token: an identifier (or keyword, or number) or one punctuation character, with `::` as
/// one token.
fn tokens(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(b, i) {
            i = end;
        } else if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'\'' {
            // A character literal ('a', '\n', '\u{1F600}', b'x' is handled as `b` + this), or a
            // lifetime ('a), which is skipped with its name.
            let close = if b.get(i + 1) == Some(&b'\\') {
                (i + 3..b.len()).find(|&j| b[j] == b'\'')
            } else {
                let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
            };
            match close {
                Some(j) => i = j + 1,
                None => {
                    i += 1;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                }
            }
        } else if ident(c) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            out.push(text[start..i].to_string());
        } else if b[i..].starts_with(b"::") {
            out.push("::".into());
            i += 2;
        } else {
            out.push((c as char).to_string());
            i += 1;
        }
    }
    out
}

/// The end of a raw string literal (`r"..."`, `r#"..."#`, `br"..."`) starting at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    while j < b.len() {
        if b[j..].starts_with(&close) {
            return Some(j + close.len());
        }
        j += 1;
    }
    Some(b.len())
}

/// The tokens without `#[cfg(test)]` items (the attribute, further attributes and the item up
/// to its `;` or its closing brace).
fn without_test_items(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    let is = |i: usize, s: &[&str]| {
        s.iter()
            .enumerate()
            .all(|(k, t)| tokens.get(i + k).is_some_and(|x| x == t))
    };
    while i < tokens.len() {
        if !is(i, &["#", "[", "cfg", "(", "test", ")", "]"]) {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        let mut depth = 0usize;
        while i < tokens.len() {
            match tokens[i].as_str() {
                "{" | "(" | "[" => depth += 1,
                "}" | ")" | "]" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && tokens[i] == "}" {
                        i += 1;
                        break;
                    }
                }
                ";" if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80)
}

/// Keywords after which `::x` starts a global path (`<T as ::x::Y>`, `return ::x::f()`).
const BEFORE_GLOBAL_PATH: &[&str] = &[
    "as", "in", "return", "use", "mut", "ref", "dyn", "impl", "for", "where", "let", "if", "match",
    "else", "move", "break", "while",
];

/// Parses a path tree at `tokens[i..]` (`a::b`, `a::{b, c::*}`, `a as b`), appending each full
/// path to `out`; returns the index after it.
fn tree(tokens: &[String], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    if path.is_empty() && tokens.get(i).is_some_and(|t| t == "::") {
        i += 1; // a global path (`use ::x::y`)
    }
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                while i < tokens.len() && tokens[i] != "}" {
                    i = tree(tokens, i, &path, out);
                    if tokens.get(i).is_some_and(|t| t == ",") {
                        i += 1;
                    } else if tokens.get(i).is_some_and(|t| t != "}") {
                        i += 1; // not a path: skip
                    }
                }
                return i + 1;
            }
            Some("*") => {
                out.push(path);
                return i + 1;
            }
            Some(t) if is_ident(t) && t != "as" => {
                path.push(t.to_string());
                i += 1;
                if tokens.get(i).is_some_and(|t| t == "::") {
                    i += 1;
                    continue;
                }
                if tokens.get(i).is_some_and(|t| t == "as") {
                    i += 2;
                }
                out.push(path);
                return i;
            }
            _ => {
                if path.len() > prefix.len() {
                    out.push(path);
                }
                return i;
            }
        }
    }
}

/// The paths and child modules `text` names (see the module docs).
pub fn names(text: &str) -> Names {
    let t = without_test_items(tokens(text));
    let mut names = Names::default();
    let mut i = 0;
    while i < t.len() {
        let token = t[i].as_str();
        let after_path = i > 0 && t[i - 1] == "::";
        if token == "use" && !after_path {
            i = tree(&t, i + 1, &[], &mut names.uses).max(i + 1);
        } else if token == "mod"
            && t.get(i + 2).is_some_and(|s| s == ";")
            && t.get(i + 1).is_some_and(|s| is_ident(s))
        {
            names.children.push(t[i + 1].clone());
            i += 3;
        } else if is_ident(token)
            && !after_path
            && !BEFORE_GLOBAL_PATH.contains(&token)
            && t.get(i + 1).is_some_and(|s| s == "::")
        {
            i = tree(&t, i, &[], &mut names.paths).max(i + 1);
        } else if token == "::"
            && t.get(i + 1).is_some_and(|s| is_ident(s))
            && (i == 0
                || BEFORE_GLOBAL_PATH.contains(&t[i - 1].as_str())
                || !(is_ident(&t[i - 1]) || [">", ")", "]"].contains(&t[i - 1].as_str())))
        {
            // A global path (`::mondrian::x`).
            i = tree(&t, i + 1, &[], &mut names.paths).max(i + 1);
        } else {
            i += 1;
        }
    }
    names
}

/// Whether a file holds nothing but module declarations and re-exports (besides comments and
/// attributes): it changes no number.
pub fn declarations_only(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| {
        l.is_empty()
            || l.starts_with("//")
            || l.starts_with("#[")
            || is_module_declaration(l)
            || l.starts_with("pub use ")
    })
}

/// Whether a (trimmed) line declares a child module without a body (`mod x;`, `pub mod x;`,
/// `pub(crate) mod x;`).
pub fn is_module_declaration(line: &str) -> bool {
    let rest = line
        .strip_prefix("pub(crate) ")
        .or_else(|| line.strip_prefix("pub "))
        .unwrap_or(line);
    rest.strip_prefix("mod ")
        .and_then(|r| r.strip_suffix(';'))
        .is_some_and(|name| {
            !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(paths: &[Vec<String>]) -> Vec<String> {
        paths.iter().map(|p| p.join("::")).collect()
    }

    #[test]
    fn paths_uses_and_children() {
        let text = r##"
            //! Uses `fastfood::x` in a comment only.
            use std::sync::Arc;
            use crate::kinds::{common::{clock::Clock, params}, mondrian::sweep::{self, Sweep}};
            use super::training as t;
            pub use child::Thing;
            use kernel_core as kc;
            pub mod child;
            mod other;
            /* streamrak::x /* nested */ random_features::y */
            fn f() -> f64 {
                let s = "isolation_kernel::z"; let r = r#"random_tessellation::w"#;
                let c = '"'; let q = '\''; let l: &'static str = "";
                mondrian::tree::draw(<T as ::datasets::X>::y()) + Vec::<u8>::new().len() as f64
            }
            #[cfg(test)]
            mod tests { use fastfood::Fit; fn g() { streamrak::x(); } }
            fn h() { crate::data::DataView::Points; }
        "##;
        let n = names(text);
        assert_eq!(
            joined(&n.uses),
            [
                "std::sync::Arc",
                "crate::kinds::common::clock::Clock",
                "crate::kinds::common::params",
                "crate::kinds::mondrian::sweep::self",
                "crate::kinds::mondrian::sweep::Sweep",
                "super::training",
                "child::Thing",
                "kernel_core",
            ]
        );
        assert_eq!(
            joined(&n.paths),
            [
                "mondrian::tree::draw",
                "datasets::X",
                "Vec",
                "crate::data::DataView::Points"
            ]
        );
        assert_eq!(n.children, ["child", "other"]);
    }

    #[test]
    fn declarations() {
        assert!(declarations_only(
            "//! doc\n\npub mod a;\nmod b;\npub(crate) mod c;\npub use a::X;\n#[doc(hidden)]\n"
        ));
        assert!(!declarations_only("pub mod a;\nfn f() {}\n"));
        assert!(!declarations_only("pub mod a { fn f() {} }\n"));
        assert!(is_module_declaration("pub mod a_b;"));
        assert!(!is_module_declaration("mod a { }"));
    }
}
