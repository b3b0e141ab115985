//! A small element tree for modelDescription.xml, read by quick-xml's streaming reader: the
//! elements and their attributes, built in one linear pass without recursion. Text, comments,
//! processing instructions and CDATA sections are read by quick-xml and skipped (a
//! description's data is all in attributes), so a 300 000-variable description costs a few
//! bytes per element instead of a full DOM's nodes for every text run (roxmltree keeps the
//! whitespace between elements as text nodes: two thirds of its nodes, and most of the time
//! and memory of `stiction fmu info` on a large FMU).
//!
//! quick-xml tokenizes and checks end tags against start tags (`check_end_names`), comments
//! (`check_comments`), references in text (no `&` without `;`) and attribute syntax and
//! uniqueness (`Attributes::with_checks`); attribute values are unescaped and normalised
//! (predefined and numeric character references; tabs and line breaks to spaces, XML 1.0
//! §3.3.3) by `Attribute::normalized_value`. What a streaming reader leaves to its user is
//! checked here: one root element with nothing but whitespace, comments and processing
//! instructions outside it, every element closed at the end, no DTD (refused, as roxmltree's
//! `allow_dtd: false` does: a DTD is where entity expansion bombs live), only predefined and
//! numeric references in text, no `<` in attribute values, and element and attribute names of
//! a simple character class. Namespace prefixes are not resolved: [`Node::has_tag_name`]
//! compares the local name. `tests/xml_differential.rs` checks that every document roxmltree
//! reads (the samples and thousands of mutants) is read to the same tree.
//!
//! The nesting depth is bounded by the caller ([`crate::description`] checks it first); this
//! reader keeps an explicit stack, so depth costs memory, not the call stack.

use quick_xml::events::attributes::{AttrError, Attributes};
use quick_xml::events::Event;
use quick_xml::reader::Reader;
use quick_xml::XmlVersion;
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

/// Whether `name` may be an XML name: a letter, '_' or ':' first, then letters, digits and
/// `_:-.` (any non-ASCII character is allowed: a looser test than the standard's table).
/// quick-xml takes a name to be whatever runs up to whitespace, `/` or `>`.
fn good_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == ':' || !c.is_ascii())
        && c.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.') || !c.is_ascii())
}

/// Whether a reference `&r;` in text stands for a character: one of the five predefined
/// entities or a character reference (quick-xml resolves the number; `&#0;` is refused).
fn known_reference(r: &quick_xml::events::BytesRef) -> bool {
    matches!(&**r, b"lt" | b"gt" | b"amp" | b"apos" | b"quot") || matches!(r.resolve_char_ref(), Ok(Some(_)))
}

/// What is wrong with an attribute (quick-xml's error, whose positions count from the tag's
/// name) and where, relative to the tag's name.
fn attr_error(e: &AttrError, body: &str) -> (String, usize) {
    let key_at = |p: usize| {
        let rest = body.get(p..).unwrap_or_default();
        rest.split(|c: char| c == '=' || c.is_ascii_whitespace()).next().unwrap_or_default().to_string()
    };
    match *e {
        AttrError::ExpectedEq(p) => ("an attribute without '=' and a value".into(), p),
        AttrError::ExpectedValue(p) => ("an attribute has no value after '='".into(), p),
        AttrError::UnquotedValue(p) => ("an attribute value is not quoted".into(), p),
        AttrError::ExpectedQuote(p, _) => ("an attribute value is not closed".into(), p),
        AttrError::Duplicated(p, _) => (format!("attribute '{}' given twice", key_at(p)), p),
    }
}

impl<'a> Document<'a> {
    /// The root element.
    pub fn root_element<'d>(&'d self) -> Node<'d, 'a> {
        Node { doc: self, id: 0 }
    }

    /// Parse `text`, building at most `max_nodes` elements.
    pub fn parse(text: &'a str, max_nodes: u32) -> Result<Document<'a>, XmlError> {
        // About one element and one attribute per 40 bytes in a description: reserved (not
        // touched) up front, which saves the copies of growing vectors.
        let guess = (text.len() / 40).min(max_nodes as usize);
        let mut doc = Document { elems: Vec::with_capacity(guess), attrs: Vec::with_capacity(guess) };
        // quick-xml skips a byte order mark and counts its positions after it.
        let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let mut reader = Reader::from_str(text);
        let config = reader.config_mut();
        config.enable_all_checks(true);
        config.allow_unmatched_ends = false;
        config.allow_dangling_amp = false;
        config.expand_empty_elements = false;
        config.trim_text(false);
        // Open elements and, for each, its last child so far.
        let mut stack: Vec<(u32, u32)> = Vec::new();
        let mut root_done = false;
        let fail = |msg: &str, pos: usize| Err(XmlError(format!("{msg} at {}", at(text, pos))));
        loop {
            let before = reader.buffer_position() as usize + bom;
            let event = match reader.read_event() {
                Ok(e) => e,
                Err(e) => return fail(&e.to_string(), reader.error_position() as usize + bom),
            };
            let after = reader.buffer_position() as usize + bom;
            let empty = matches!(event, Event::Empty(_));
            match event {
                Event::Start(tag) | Event::Empty(tag) => {
                    // The tag's text between '<' and '>' (or '/>'), as a slice of `text`, so
                    // that names and borrowed values live as long as the document.
                    let len = tag.len();
                    let lt = after.checked_sub(len + if empty { 3 } else { 2 });
                    let body = lt.filter(|&lt| text.as_bytes().get(lt) == Some(&b'<'));
                    let Some((lt, body)) = body.and_then(|lt| Some((lt, text.get(lt + 1..lt + 1 + len)?))) else {
                        return fail("a start tag the reader could not place", before);
                    };
                    if root_done && stack.is_empty() {
                        return fail("a second root element", lt);
                    }
                    let name_len = tag.name().as_ref().len();
                    let name = body.get(..name_len).unwrap_or_default();
                    if !good_name(name) {
                        return fail("a malformed start tag", lt);
                    }
                    if doc.elems.len() as u64 >= u64::from(max_nodes) {
                        return fail(&format!("more than {max_nodes} elements"), lt);
                    }
                    let first_attr = doc.attrs.len() as u32;
                    if body.len() > name_len && !body.as_bytes()[name_len].is_ascii_whitespace() {
                        return fail(&format!("a malformed attribute in <{name}>"), lt);
                    }
                    for a in Attributes::new(body, name_len) {
                        let a = match a {
                            Ok(a) => a,
                            Err(e) => {
                                let (msg, p) = attr_error(&e, body);
                                return fail(&format!("{msg} in <{name}>"), lt + 1 + p);
                            }
                        };
                        // quick-xml reads `x='1'y='2'`; XML wants whitespace between attributes.
                        let Cow::Borrowed(raw) = a.value else {
                            return fail("an attribute the reader could not place", lt);
                        };
                        // The value is a slice of `body` (Attributes::new borrows it): its offset there.
                        let value_end =
                            (raw.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize).wrapping_add(raw.len());
                        if body.as_bytes().get(value_end.wrapping_add(1)).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return fail(
                                &format!("a malformed attribute in <{name}>"),
                                lt.saturating_add(2).saturating_add(value_end),
                            );
                        }
                        let aname = std::str::from_utf8(a.key.0).unwrap_or_default();
                        if !good_name(aname) {
                            return fail(&format!("a malformed attribute in <{name}>"), lt);
                        }
                        if a.value.contains(&b'<') {
                            return fail(&format!("'<' in the value of attribute '{aname}'"), lt);
                        }
                        let value = match a.normalized_value(XmlVersion::Implicit1_0) {
                            Ok(v) => v,
                            Err(e) => return fail(&format!("attribute '{aname}' of <{name}>: {e}"), lt),
                        };
                        doc.attrs.push((aname, value));
                    }
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
                        root_done |= stack.is_empty();
                    } else {
                        stack.push((id, NONE));
                    }
                }
                Event::End(_) => {
                    // quick-xml has matched the name against the open element.
                    if stack.pop().is_none() {
                        return fail("an end tag without a start tag", before);
                    }
                    root_done |= stack.is_empty();
                }
                Event::Text(t) => {
                    if stack.is_empty() && !t.iter().all(u8::is_ascii_whitespace) {
                        return fail("text outside the root element", before);
                    }
                }
                Event::GeneralRef(r) => {
                    if stack.is_empty() {
                        return fail("text outside the root element", before);
                    }
                    if !known_reference(&r) {
                        let r = String::from_utf8_lossy(&r).chars().take(40).collect::<String>();
                        return fail(&format!("unknown reference '&{r};'"), before);
                    }
                }
                Event::CData(_) if stack.is_empty() => {
                    return fail("a CDATA section outside the root element", before);
                }
                Event::Decl(_) if before > bom => {
                    return fail("an XML declaration not at the start", before);
                }
                Event::DocType(_) => return fail("a DTD (<!DOCTYPE>), which is not allowed", before),
                Event::CData(_) | Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
                Event::Eof => break,
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
    fn attribute_values_are_normalised_as_xml_1_0_says() {
        // §3.3.3: a literal CR LF is one line break (§2.11), hence one space; a referenced
        // CR or LF stays itself.
        let doc = Document::parse("<a v='x\r\ny\tz&#10;&#x9;&lt;'/>", 10).unwrap();
        assert_eq!(doc.root_element().attribute("v"), Some("x y z\n\t<"));
    }

    #[test]
    fn every_truncation_and_every_byte_dropped_is_read_or_refused() {
        let text = "\u{feff}<?xml version='1.0'?><!--c--><a x='1 &amp;' y=\"&#x41;\"><b/>t&lt;<![CDATA[<]]><?p?></a>";
        for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
            let _ = Document::parse(&text[..end], 100);
            if end < text.len() && text.is_char_boundary(end + 1) {
                let _ = Document::parse(&format!("{}{}", &text[..end], &text[end + 1..]), 100);
            }
        }
    }

    #[test]
    fn malformed_documents_are_errors() {
        for (text, needle) in [
            ("<a>", "not closed"),
            ("<a></b>", "expected `</a>`, but `</b>` was found"),
            ("<a/><b/>", "second root"),
            ("<a x=1/>", "not quoted in <a> at 1:6"),
            ("<a x='1' x='2'/>", "twice"),
            ("<a x='<'/>", "'<' in the value"),
            ("<a x='&foo;'/>", "unrecognized entity `foo`"),
            ("<a x='1' y='2/>", "not closed"),
            ("<a x='&#0;'/>", "attribute 'x'"),
            ("<a>&#0;</a>", "unknown reference"),
            ("<a x='1' y='2'z='3'/>", "malformed attribute in <a> at 1:15"),
            ("<a><!-- x -- y --></a>", "`--`"),
            ("<a/>\n<?xml version='1.0'?>", "declaration not at the start"),
            ("<a>&bar;</a>", "unknown reference"),
            ("<!DOCTYPE a><a/>", "DTD"),
            ("text<a/>", "outside the root"),
            ("", "no root"),
            ("<a x='1'y='2'/>", "malformed attribute"),
            ("<a><!-- open", "comment not closed"),
            ("<a x", "tag not closed"),
            ("<a x y='1'/>", "an attribute without '=' and a value in <a> at 1:6"),
            ("</a>", "does not match any open tag"),
        ] {
            match Document::parse(text, 100) {
                Ok(_) => panic!("{text:?} parsed"),
                Err(e) => assert!(e.0.contains(needle), "{text:?}: {e}"),
            }
        }
        assert!(Document::parse("<a><b/><b/></a>", 2).err().is_some_and(|e| e.0.contains("more than 2 elements")));
    }
}
