//! Operator attributes ([`AttrValue`], [`Attrs`]) and the typed getters the
//! kernels read them with.

use super::{Op, OpError};
use std::collections::BTreeMap;

/// An operator attribute value (the `aclopSetAttr*` kinds).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// `aclopSetAttrBool`.
    Bool(bool),
    /// `aclopSetAttrInt`.
    Int(i64),
    /// `aclopSetAttrFloat`.
    Float(f32),
    /// `aclopSetAttrString`.
    String(String),
    /// `aclopSetAttrDataType`.
    DataType(i32),
    /// `aclopSetAttrListBool`.
    ListBool(Vec<bool>),
    /// `aclopSetAttrListInt`.
    ListInt(Vec<i64>),
    /// `aclopSetAttrListFloat`.
    ListFloat(Vec<f32>),
    /// `aclopSetAttrListString`.
    ListString(Vec<String>),
    /// `aclopSetAttrListDataType`.
    ListDataType(Vec<i32>),
    /// `aclopSetAttrListListInt`.
    ListListInt(Vec<Vec<i64>>),
}

/// Attributes by name.
pub type Attrs = BTreeMap<String, AttrValue>;

fn attr_type_error(op: Op, name: &str, want: &str, got: &AttrValue) -> OpError {
    OpError::Attr(format!(
        "{}: attribute {name} must be {want}, got {got:?}",
        op.name()
    ))
}

/// An optional bool attribute.
pub(crate) fn attr_bool(op: Op, attrs: &Attrs, name: &str, default: bool) -> Result<bool, OpError> {
    match attrs.get(name) {
        None => Ok(default),
        Some(AttrValue::Bool(b)) => Ok(*b),
        Some(other) => Err(attr_type_error(op, name, "a bool", other)),
    }
}

/// An optional float attribute.
pub(crate) fn attr_float(op: Op, attrs: &Attrs, name: &str, default: f32) -> Result<f32, OpError> {
    match attrs.get(name) {
        None => Ok(default),
        Some(AttrValue::Float(f)) => Ok(*f),
        Some(other) => Err(attr_type_error(op, name, "a float", other)),
    }
}

/// An optional list-of-int attribute.
pub(crate) fn attr_list_int(
    op: Op,
    attrs: &Attrs,
    name: &str,
    default: &[i64],
) -> Result<Vec<i64>, OpError> {
    match attrs.get(name) {
        None => Ok(default.to_vec()),
        Some(AttrValue::ListInt(v)) => Ok(v.clone()),
        Some(other) => Err(attr_type_error(op, name, "a list of ints", other)),
    }
}

/// A required int attribute (`aclopSetAttrInt` or `aclopSetAttrDataType`).
pub(crate) fn attr_int_required(op: Op, attrs: &Attrs, name: &str) -> Result<i64, OpError> {
    match attrs.get(name) {
        None => Err(OpError::Attr(format!(
            "{}: required attribute {name} is missing",
            op.name()
        ))),
        Some(AttrValue::Int(v)) => Ok(*v),
        Some(AttrValue::DataType(v)) => Ok(i64::from(*v)),
        Some(other) => Err(attr_type_error(op, name, "an int", other)),
    }
}
