//! A component's JSON object as a light tree that borrows its strings from the file's text:
//! what [`Params`](super::Params) reads. Parsing a component into a `serde_json::Value`
//! (an `IndexMap` with a hashed, allocated key per entry) was most of the load time of a
//! large system; this tree has no hashing and allocates only its arrays and objects.
//!
//! The tree reads exactly what a `Value` reads (the same deserializer, so the same errors),
//! keeps an object's keys in file order with a repeated key taking the place of its first
//! occurrence and the value of its last (as `Value` with `preserve_order` does), and turns
//! into a `Value` on demand, for [`Params::get`](super::Params::get) and error messages.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fmt;

/// A JSON value whose strings borrow from the text when they have no escapes.
#[derive(Debug)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    /// A non-negative integer, as `serde_json::Number` keeps it.
    U64(u64),
    /// A negative integer.
    I64(i64),
    F64(f64),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

/// One key of an object, its value, and the value as a `Value` once asked for.
#[derive(Debug)]
pub struct Entry<'a> {
    pub key: Cow<'a, str>,
    pub value: Json<'a>,
    /// Boxed: rarely made, and the entries stay small.
    converted: OnceCell<Box<Value>>,
}

impl<'a> Entry<'a> {
    /// The value as a `serde_json::Value`, converted on the first call.
    pub fn as_value(&self) -> &Value {
        self.converted.get_or_init(|| Box::new(self.value.to_value()))
    }
}

/// A JSON object: its entries in file order, each key once.
#[derive(Debug, Default)]
pub struct Object<'a>(pub Vec<Entry<'a>>);

impl<'a> Object<'a> {
    /// Parse `text`, which must be a JSON object (`Ok(None)` when it is another value).
    pub fn parse(text: &'a str) -> serde_json::Result<Option<Object<'a>>> {
        Ok(match serde_json::from_str::<Json>(text)? {
            Json::Object(o) => Some(o),
            _ => None,
        })
    }

    /// The tree of an object `Value` (strings borrowed from it), for readers of built values.
    pub fn from_map(map: &'a Map<String, Value>) -> Object<'a> {
        let entries = map.iter().map(|(k, v)| Entry {
            key: Cow::Borrowed(k.as_str()),
            value: Json::from_value(v),
            converted: OnceCell::new(),
        });
        Object(entries.collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The keys in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|e| e.key.as_ref())
    }

    /// The entry of `key`.
    pub fn entry(&self, key: &str) -> Option<&Entry<'a>> {
        self.0.iter().find(|e| e.key == key)
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.entry(key).map(|e| &e.value)
    }

    fn to_map(&self) -> Map<String, Value> {
        self.0.iter().map(|e| (e.key.to_string(), e.value.to_value())).collect()
    }
}

impl<'a> Json<'a> {
    /// The same value as a `serde_json::Value`.
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::U64(u) => Value::Number((*u).into()),
            Json::I64(i) => Value::Number((*i).into()),
            Json::F64(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(s) => Value::String(s.to_string()),
            Json::Array(a) => Value::Array(a.iter().map(Json::to_value).collect()),
            Json::Object(o) => Value::Object(o.to_map()),
        }
    }

    /// The tree of `v` (strings borrowed from it).
    pub fn from_value(v: &'a Value) -> Json<'a> {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Json::U64(u),
                (None, Some(i)) => Json::I64(i),
                _ => Json::F64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Json::Str(Cow::Borrowed(s)),
            Value::Array(a) => Json::Array(a.iter().map(Json::from_value).collect()),
            Value::Object(m) => Json::Object(Object::from_map(m)),
        }
    }

    /// As `Value::as_f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Json::U64(u) => Some(u as f64),
            Json::I64(i) => Some(i as f64),
            Json::F64(f) => Some(f),
            _ => None,
        }
    }

    /// As `Value::as_u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Json::U64(u) => Some(u),
            Json::I64(i) => u64::try_from(i).ok(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Json::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Written as the `Value` it stands for (compact JSON).
impl fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.to_value().fmt(f)
    }
}

/// Objects past this many keys find a repeated key through a hash index.
const LINEAR_KEYS: usize = 16;

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor(std::marker::PhantomData))
    }
}

struct JsonVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for JsonVisitor<'a> {
    type Value = Json<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'a>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'a>, E> {
        // As `serde_json::Number::from(i64)`: a non-negative value is a u64.
        Ok(u64::try_from(v).map_or(Json::I64(v), Json::U64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'a>, E> {
        Ok(Json::U64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json<'a>, E> {
        Ok(Json::F64(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'a>, E> {
        Ok(Json::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'a>, E> {
        Ok(Json::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'a>, E> {
        Ok(Json::Str(Cow::Owned(v)))
    }
    fn visit_none<E>(self) -> Result<Json<'a>, E> {
        Ok(Json::Null)
    }
    fn visit_unit<E>(self) -> Result<Json<'a>, E> {
        Ok(Json::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'a>, D::Error> {
        Json::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'a>, A::Error> {
        // Room for a 3-vector from the start (serde_json gives no length).
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(3).min(4096));
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Json<'a>, M::Error> {
        // Room for a typical component from the start (no growth by doubling).
        let mut out: Vec<Entry<'a>> = Vec::with_capacity(8);
        // Position of each key, kept only for large objects.
        let mut index: Option<HashMap<Cow<'a, str>, usize>> = None;
        while let Some(Key(key)) = m.next_key()? {
            let value: Json<'a> = m.next_value()?;
            let at = match &mut index {
                Some(ix) => ix.get(key.as_ref()).copied(),
                None => out.iter().position(|e| e.key == key),
            };
            match at {
                Some(i) => out[i].value = value,
                None => {
                    if let Some(ix) = &mut index {
                        ix.insert(key.clone(), out.len());
                    }
                    out.push(Entry { key, value, converted: OnceCell::new() });
                    if index.is_none() && out.len() > LINEAR_KEYS {
                        index = Some(out.iter().enumerate().map(|(i, e)| (e.key.clone(), i)).collect());
                    }
                }
            }
        }
        Ok(Json::Object(Object(out)))
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Json::deserialize(d)? {
            Json::Str(s) => Ok(Key(s)),
            _ => Err(serde::de::Error::custom("an object key must be a string")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree reads as `Value` does: same values, same key order, a repeated key where it
    /// first stood with its last value, same errors.
    #[test]
    fn reads_as_value_does() {
        let texts = [
            r#"{"type": "x", "a": [1, -2, 3.5, 1e300, -0.0], "b": {"c": "d\u00e9", "e": null, "f": true}}"#,
            r#"{"k": 1, "j": 2, "k": {"z": [[]]}}"#,
            r#"{"n": 18446744073709551615, "m": -9223372036854775808, "f": 0.1}"#,
        ];
        for t in texts {
            let v: Value = serde_json::from_str(t).unwrap();
            let o = Object::parse(t).unwrap().unwrap();
            assert_eq!(Value::Object(o.to_map()), v, "{t}");
            assert_eq!(o.keys().collect::<Vec<_>>(), v.as_object().unwrap().keys().collect::<Vec<_>>());
            assert_eq!(Json::Object(o).to_string(), v.to_string());
        }
        for bad in [r#"{"a": 1e999}"#, r#"{"a": [1,]}"#, r#"{"a": "\ud800"}"#, "{\"a\": 1} x"] {
            let want = serde_json::from_str::<Value>(bad).unwrap_err().to_string();
            let got = Object::parse(bad).unwrap_err().to_string();
            assert_eq!(got, want, "{bad}");
        }
        assert!(Object::parse("[1]").unwrap().is_none());
    }

    /// A large object with repeated keys keeps the first position and the last value.
    #[test]
    fn many_keys() {
        let mut t = String::from("{");
        for i in 0..100 {
            t += &format!("\"k{}\": {i},", i % 40);
        }
        t += "\"end\": 0}";
        let v: Value = serde_json::from_str(&t).unwrap();
        let o = Object::parse(&t).unwrap().unwrap();
        assert_eq!(o.len(), 41);
        assert_eq!(Value::Object(o.to_map()), v);
        assert_eq!(o.keys().collect::<Vec<_>>(), v.as_object().unwrap().keys().collect::<Vec<_>>());
    }
}
