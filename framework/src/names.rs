//! Component names held in one buffer: a network of 10⁵ components keeps 10⁵ names, and a
//! `String` each costs a heap block of at least 32 bytes besides its 24-byte header; here a
//! name costs its bytes and a 4-byte end offset.

use std::ops::Index;

/// A list of names in one string, `ends[i]` the end of name i.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    text: String,
    ends: Vec<u32>,
}

impl Names {
    /// An empty list with room for `names` names of `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> Self {
        Names { text: String::with_capacity(bytes), ends: Vec::with_capacity(names) }
    }

    /// Append `name`. The names of one system stay far below 4 GiB (a system file holds at
    /// most 256 MiB, system/limits.rs); a list that would pass it is a bug of the caller.
    pub fn push(&mut self, name: &str) {
        self.text.push_str(name);
        let end = u32::try_from(self.text.len()).expect("component names total less than 4 GiB");
        self.ends.push(end);
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Name `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.text[start..end])
    }

    /// The names in order.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter { names: self, next: 0 }
    }

    /// The index of the first name equal to `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.iter().position(|n| n == name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }
}

impl Index<usize> for Names {
    type Output = str;

    /// Name `i`; panics past the end, as a slice does.
    #[inline]
    fn index(&self, i: usize) -> &str {
        match self.get(i) {
            Some(s) => s,
            None => panic!("name index {i} out of range for {} names", self.len()),
        }
    }
}

/// The names of a [`Names`] in order.
#[derive(Clone)]
pub struct Iter<'a> {
    names: &'a Names,
    next: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let s = self.names.get(self.next)?;
        self.next += 1;
        Some(s)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.names.len() - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Names {
    type Item = &'a str;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Names {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut names = Names::default();
        for s in iter {
            names.push(s.as_ref());
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_in_order_including_empty_ones() {
        let names: Names = ["m0", "", "spring_12", "c"].into_iter().collect();
        assert_eq!(names.len(), 4);
        assert_eq!(names.iter().collect::<Vec<_>>(), ["m0", "", "spring_12", "c"]);
        assert_eq!((&names[2], names.get(4)), ("spring_12", None));
        assert_eq!((names.position("c"), names.position("m"), names.contains("")), (Some(3), None, true));
    }
}
