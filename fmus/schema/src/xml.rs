//! A small XML reader for modelDescription.xml: a tree of elements and their attributes,
//! built in one linear pass without recursion. Text, comments, processing instructions and
//! CDATA sections are checked and skipped (a description's data is all in attributes), so a
//! 300 000-variable description costs a few bytes per element instead of a full DOM's nodes
//! for every text run (roxmltree keeps the whitespace between elements as text nodes: two
//! thirds of its nodes, and most of the time and memory of `stiction fmu info` on a large
//! FMU).
//!
//! Well-formedness is checked as far as the tree needs it: one root element, matching end
//! tags, attributes `name="value"` or `name='value'` separated by whitespace and not given
//! twice, no `<` in attribute values, only the predefined and numeric character references,
//! no DTD (refused, as roxmltree's `allow_dtd: false` does), and nothing but whitespace,
//! comments and processing instructions outside the root. Attribute values are unescaped and
//! their tabs and line breaks normalised to spaces (XML 1.0 §3.3.3). Namespace prefixes are
//! not resolved: [`Node::has_tag_name`] compares the local name. Looser than a conforming
//! parser: the XML declaration and processing instructions are skipped unchecked, and names
//! are checked against a simpler character class. `tests/xml_differential.rs` checks that
//! every document roxmltree reads (the samples and thousands of mutants) is read to the same
//! tree.
//!
//! The nesting depth is bounded by the caller ([`crate::description`] checks it first); this
//! reader keeps an explicit stack, so depth costs memory, not the call stack.

use std::borrow::Cow;
use std::ops::Range;

const NONE: u32 = u32::MAX;

/// One element: where its start tag begins, its qualified name, its attributes (a range of
/// [`Document::attrs`]) and its first child and next sibling (element ids, or [`NONE`]).
struct Elem<'a> {
    start: usize,
    name: &'a str,
    attrs: Range<u32>,
    first_child: u32,
    next_sibling: u32,
}

/// A parsed document: its elements in document order (the root first).
pub struct Document<'a> {
    elems: Vec<Elem<'a>>,
    attrs: Vec<(&'a str, Cow<'a, str>)>,
}

/// An element of a [`Document`].
#[derive(Clone, Copy)]
pub struct Node<'d, 'a> {
    doc: &'d Document<'a>,
    id: u32,
}

/// An element's name, as [`Node::tag_name`] gives it.
pub struct TagName<'a>(&'a str);

impl<'a> TagName<'a> {
    /// The local name (after a namespace prefix, if any).
    pub fn name(&self) -> &'a str {
        self.0.rsplit_once(':').map_or(self.0, |(_, n)| n)
    }
}

impl<'d, 'a> Node<'d, 'a> {
    fn elem(&self) -> &'d Elem<'a> {
        &self.doc.elems[self.id as usize]
    }

    pub fn tag_name(&self) -> TagName<'a> {
        TagName(self.elem().name)
    }

    /// Whether the element's local name is `name`.
    pub fn has_tag_name(&self, name: &str) -> bool {
        self.tag_name().name() == name
    }

    /// Always true: the tree holds elements only (kept for the callers' filters).
    pub fn is_element(&self) -> bool {
        true
    }

    /// The (unescaped, normalised) value of attribute `name`.
    pub fn attribute(&self, name: &str) -> Option<&'d str> {
        let r = &self.elem().attrs;
        self.doc.attrs[r.start as usize..r.end as usize].iter().find(|a| a.0 == name).map(|a| a.1.as_ref())
    }

    /// The child elements, in document order.
    pub fn children(&self) -> impl Iterator<Item = Node<'d, 'a>> + 'd {
        let doc = self.doc;
        let mut next = self.elem().first_child;
        std::iter::from_fn(move || {
            (next != NONE).then(|| {
                let n = Node { doc, id: next };
                next = doc.elems[next as usize].next_sibling;
                n
            })
        })
    }

    /// The byte range of the element's start tag's `<` (only its start is meaningful).
    pub fn range(&self) -> Range<usize> {
        let s = self.elem().start;
        s..s + 1
    }
}

/// A well-formedness error: what is wrong and where (1-based line and column).
#[derive(Debug)]
pub struct XmlError(pub String);

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn at(text: &str, pos: usize) -> String {
    let pos = pos.min(text.len());
    let before = &text.as_bytes()[..pos];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let col = pos - memchr::memrchr(b'\n', before).map_or(0, |p| p + 1) + 1;
    format!("{line}:{col}")
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The end of a name starting at `i` (bytes up to whitespace or one of `/>=<'"`).
fn name_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && !is_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=' | b'<' | b'"' | b'\'') {
        i += 1;
    }
    i
}

/// Whether `name` may be an XML name: a letter, '_' or ':' first, then letters, digits and
/// `_:-.` (any non-ASCII character is allowed: a looser test than the standard's table).
fn good_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == ':' || !c.is_ascii())
        && c.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.') || !c.is_ascii())
}

/// The character a reference `&...;` (without `&` and `;`) stands for.
fn reference(r: &str) -> Option<char> {
    match r {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "apos" => Some('\''),
        "quot" => Some('"'),
        _ => {
            let n = if let Some(h) = r.strip_prefix("#x") {
                u32::from_str_radix(h, 16).ok()?
            } else {
                r.strip_prefix('#')?.parse::<u32>().ok()?
            };
            char::from_u32(n).filter(|&c| c != '\0')
        }
    }
}

/// Check the references in `text[s]` (text content, or an attribute value if `value`) and, for
/// an attribute value, unescape them and normalise tabs and line breaks to spaces.
fn unescape<'a>(text: &'a str, s: Range<usize>, value: bool) -> Result<Cow<'a, str>, XmlError> {
    let v = &text[s.clone()];
    let spaces = value && v.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r'));
    let plain = !v.contains('&') && !spaces;
    if plain {
        return Ok(Cow::Borrowed(v));
    }
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(p) = rest.find(['&', '\t', '\n', '\r']) {
        out.push_str(&rest[..p]);
        if rest.as_bytes()[p] != b'&' {
            out.push(' ');
            rest = &rest[p + 1..];
            continue;
        }
        let Some(e) = rest[p..].find(';') else {
            return Err(XmlError(format!("an '&' without ';' at {}", at(text, s.start + (v.len() - rest.len()) + p))));
        };
        let Some(c) = reference(&rest[p + 1..p + e]) else {
            return Err(XmlError(format!(
                "unknown reference '{}' at {}",
                &rest[p..p + e + 1].chars().take(40).collect::<String>(),
                at(text, s.start + (v.len() - rest.len()) + p)
            )));
        };
        out.push(c);
        rest = &rest[p + e + 1..];
    }
    out.push_str(rest);
    Ok(if value { Cow::Owned(out) } else { Cow::Borrowed(v) })
}

impl<'a> Document<'a> {
    /// The root element.
    pub fn root_element<'d>(&'d self) -> Node<'d, 'a> {
        Node { doc: self, id: 0 }
    }

    /// Parse `text`, building at most `max_nodes` elements.
    pub fn parse(text: &'a str, max_nodes: u32) -> Result<Document<'a>, XmlError> {
        let b = text.as_bytes();
        // About one element and one attribute per 40 bytes in a description: reserved (not
        // touched) up front, which saves the copies of growing vectors.
        let guess = (text.len() / 40).min(max_nodes as usize);
        let mut doc = Document { elems: Vec::with_capacity(guess), attrs: Vec::with_capacity(guess) };
        // Open elements and, for each, its last child so far.
        let mut stack: Vec<(u32, u32)> = Vec::new();
        let mut root_done = false;
        let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let fail = |msg: &str, pos: usize| Err(XmlError(format!("{msg} at {}", at(text, pos))));
        let find = |from: usize, pat: &[u8]| memchr::memmem::find(&b[from.min(b.len())..], pat).map(|p| from + p);
        while i < b.len() {
            let lt = memchr::memchr(b'<', &b[i..]).map_or(b.len(), |p| i + p);
            // Text up to the next tag.
            if lt > i {
                if stack.is_empty() {
                    if let Some(p) = b[i..lt].iter().position(|&c| !is_space(c)) {
                        return fail("text outside the root element", i + p);
                    }
                } else if b[i..lt].contains(&b'&') {
                    unescape(text, i..lt, false)?;
                }
            }
            if lt >= b.len() {
                break;
            }
            let rest = &b[lt..];
            if rest.starts_with(b"<?") {
                let Some(e) = find(lt + 2, b"?>") else { return fail("an unclosed processing instruction", lt) };
                i = e + 2;
            } else if rest.starts_with(b"<!--") {
                let Some(e) = find(lt + 4, b"-->") else { return fail("an unclosed comment", lt) };
                i = e + 3;
            } else if rest.starts_with(b"<![CDATA[") {
                if stack.is_empty() {
                    return fail("a CDATA section outside the root element", lt);
                }
                let Some(e) = find(lt + 9, b"]]>") else { return fail("an unclosed CDATA section", lt) };
                i = e + 3;
            } else if rest.starts_with(b"<!DOCTYPE") {
                return fail("a DTD (<!DOCTYPE>), which is not allowed", lt);
            } else if rest.starts_with(b"<!") {
                return fail("an unknown markup declaration", lt);
            } else if rest.starts_with(b"</") {
                let ne = name_end(b, lt + 2);
                let name = &text[lt + 2..ne];
                let mut j = ne;
                while j < b.len() && is_space(b[j]) {
                    j += 1;
                }
                if j >= b.len() || b[j] != b'>' {
                    return fail(&format!("a malformed end tag </{name}"), lt);
                }
                let Some((open, _)) = stack.pop() else {
                    return fail(&format!("an end tag </{name}> without a start tag"), lt);
                };
                let open_name = doc.elems[open as usize].name;
                if open_name != name {
                    return fail(
                        &format!(
                            "the end tag </{name}> does not match <{open_name}> (line {})",
                            at(text, doc.elems[open as usize].start)
                        ),
                        lt,
                    );
                }
                if stack.is_empty() {
                    root_done = true;
                }
                i = j + 1;
            } else {
                // A start tag.
                if root_done && stack.is_empty() {
                    return fail("a second root element", lt);
                }
                let ne = name_end(b, lt + 1);
                let name = &text[lt + 1..ne];
                if !good_name(name) {
                    return fail("a malformed start tag", lt);
                }
                if doc.elems.len() as u64 >= u64::from(max_nodes) {
                    return fail(&format!("more than {max_nodes} elements"), lt);
                }
                let first_attr = doc.attrs.len() as u32;
                let mut j = ne;
                let empty = loop {
                    let ws = j;
                    while j < b.len() && is_space(b[j]) {
                        j += 1;
                    }
                    match b.get(j) {
                        None => return fail(&format!("the start tag <{name} is not closed"), lt),
                        Some(b'>') => break false,
                        Some(b'/') if b.get(j + 1) == Some(&b'>') => {
                            j += 1;
                            break true;
                        }
                        Some(_) if ws == j => return fail(&format!("a malformed attribute in <{name}>"), j),
                        Some(_) => {}
                    }
                    // An attribute: name, '=', quoted value.
                    let an = name_end(b, j);
                    let aname = &text[j..an];
                    if !good_name(aname) {
                        return fail(&format!("a malformed attribute in <{name}>"), j);
                    }
                    let mut k = an;
                    while k < b.len() && is_space(b[k]) {
                        k += 1;
                    }
                    if b.get(k) != Some(&b'=') {
                        return fail(&format!("attribute '{aname}' of <{name}> has no value"), j);
                    }
                    k += 1;
                    while k < b.len() && is_space(b[k]) {
                        k += 1;
                    }
                    let q = match b.get(k) {
                        Some(&q @ (b'"' | b'\'')) => q,
                        _ => return fail(&format!("the value of attribute '{aname}' is not quoted"), k),
                    };
                    let Some(end) = memchr::memchr(q, &b[k + 1..]).map(|p| k + 1 + p) else {
                        return fail(&format!("the value of attribute '{aname}' is not closed"), k);
                    };
                    if b[k + 1..end].contains(&b'<') {
                        return fail(&format!("'<' in the value of attribute '{aname}'"), k);
                    }
                    let value = unescape(text, k + 1..end, true)?;
                    if doc.attrs[first_attr as usize..].iter().any(|a| a.0 == aname) {
                        return fail(&format!("attribute '{aname}' given twice in <{name}>"), j);
                    }
                    doc.attrs.push((aname, value));
                    j = end + 1;
                };
                let id = doc.elems.len() as u32;
                doc.elems.push(Elem {
                    start: lt,
                    name,
                    attrs: first_attr..doc.attrs.len() as u32,
                    first_child: NONE,
                    next_sibling: NONE,
                });
                if let Some((parent, last)) = stack.last_mut() {
                    if *last == NONE {
                        doc.elems[*parent as usize].first_child = id;
                    } else {
                        doc.elems[*last as usize].next_sibling = id;
                    }
                    *last = id;
                }
                if empty {
                    if stack.is_empty() {
                        root_done = true;
                    }
                } else {
                    stack.push((id, NONE));
                }
                i = j + 1;
            }
        }
        if let Some(&(open, _)) = stack.last() {
            let e = &doc.elems[open as usize];
            return fail(&format!("the element <{}> is not closed (unexpected end of text)", e.name), e.start);
        }
        if doc.elems.is_empty() {
            return fail("no root element", 0);
        }
        Ok(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_attributes_and_children() {
        let text = "\u{feff}<?xml version=\"1.0\"?>\n<!-- c --><a x=\"1\" y='a &amp; b&#x41;\tc'>text &lt; <b/><![CDATA[<x>]]><c z=\"2\"><d/></c><?pi?></a>\n";
        let doc = Document::parse(text, 100).unwrap();
        let a = doc.root_element();
        assert!(a.has_tag_name("a") && a.attribute("x") == Some("1") && a.attribute("y") == Some("a & bA c"));
        let names: Vec<&str> = a.children().map(|n| n.tag_name().name()).collect();
        assert_eq!(names, ["b", "c"]);
        let c = a.children().nth(1).unwrap();
        assert_eq!(c.attribute("z"), Some("2"));
        assert_eq!(c.children().next().unwrap().tag_name().name(), "d");
        assert_eq!(&text[c.range().start..c.range().start + 2], "<c");
    }

    #[test]
    fn malformed_documents_are_errors() {
        for (text, needle) in [
            ("<a>", "not closed"),
            ("<a></b>", "does not match"),
            ("<a/><b/>", "second root"),
            ("<a x=1/>", "not quoted"),
            ("<a x='1' x='2'/>", "twice"),
            ("<a x='<'/>", "'<' in the value"),
            ("<a x='&foo;'/>", "unknown reference"),
            ("<a>&bar;</a>", "unknown reference"),
            ("<!DOCTYPE a><a/>", "DTD"),
            ("text<a/>", "outside the root"),
            ("", "no root"),
            ("<a x='1'y='2'/>", "malformed attribute"),
            ("<a><!-- open", "unclosed comment"),
            ("<a x", "has no value"),
            ("</a>", "without a start tag"),
        ] {
            match Document::parse(text, 100) {
                Ok(_) => panic!("{text:?} parsed"),
                Err(e) => assert!(e.0.contains(needle), "{text:?}: {e}"),
            }
        }
        assert!(Document::parse("<a><b/><b/></a>", 2).err().is_some_and(|e| e.0.contains("more than 2 elements")));
    }
}
