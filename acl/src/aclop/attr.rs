//! [`OpAttr`]: an operator's attributes (`aclopAttr`), one setter per
//! `aclopSetAttr*` kind.

use crate::error::{Error, Result};
use crate::memory::DataType;
use crate::result::{self, raw};
use std::ffi::{CString, c_char};
use std::ptr::NonNull;

/// Operator attributes (`aclopAttr`): named values of the kinds
/// `aclopSetAttr*` takes. Setting a name again replaces its value. Which
/// names and kinds an operator accepts is the operator's business
/// (`ACL_ERROR_OP_ATTR_NOT_MATCH`, 100023, when they do not fit); the
/// setters reject what cannot reach C (a name with a NUL byte, an empty
/// name, a list longer than `i32::MAX`).
///
/// `Send + Sync`: plain host data owned by this value; setters need `&mut self`.
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::aclop::OpAttr;
/// let mut attr = OpAttr::new()?;
/// attr.set_bool("transpose_x1", false)?.set_list_int("axes", &[-1])?;
/// assert!(attr.set_int("bad\0name", 1).is_err());
/// # Ok::<(), acl::Error>(())
/// ```
#[doc(alias = "aclopAttr")]
pub struct OpAttr {
    raw: NonNull<raw::aclopAttr>,
}

// SAFETY: plain host data owned by this value; mutation needs `&mut self`.
unsafe impl Send for OpAttr {}
// SAFETY: shared access only passes the handle to calls that read it.
unsafe impl Sync for OpAttr {}

impl std::fmt::Debug for OpAttr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpAttr").field("raw", &self.raw).finish()
    }
}

/// An attribute name as a C string: on the stack when short (every CANN
/// attribute name is), so setting an attribute allocates nothing.
enum CName {
    Inline([u8; CName::INLINE]),
    Heap(CString),
}

impl CName {
    /// Names shorter than this (with room for the NUL) stay inline.
    const INLINE: usize = 48;

    fn as_ptr(&self) -> *const c_char {
        match self {
            CName::Inline(buf) => buf.as_ptr().cast(),
            CName::Heap(c) => c.as_ptr(),
        }
    }
}

fn name(function: &'static str, name: &str) -> Result<CName> {
    if name.is_empty() {
        return Err(Error::invalid(function, "the attribute name is empty"));
    }
    let nul = || {
        Error::invalid(
            function,
            format!("the attribute name {name:?} contains a NUL byte"),
        )
    };
    if name.len() < CName::INLINE {
        if name.as_bytes().contains(&0) {
            return Err(nul());
        }
        // Zero-filled: the byte after the name is its terminating NUL.
        let mut buf = [0u8; CName::INLINE];
        buf[..name.len()].copy_from_slice(name.as_bytes());
        return Ok(CName::Inline(buf));
    }
    CString::new(name).map(CName::Heap).map_err(|_| nul())
}

fn count(function: &'static str, n: usize) -> Result<i32> {
    i32::try_from(n)
        .map_err(|_| Error::invalid(function, format!("{n} values are more than i32::MAX")))
}

impl OpAttr {
    /// An empty attribute set.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_FAILURE` when the runtime returns no handle.
    #[doc(alias = "aclopCreateAttr")]
    pub fn new() -> Result<OpAttr> {
        let raw = NonNull::new(result::op_create_attr()?)
            .ok_or_else(|| Error::from_code("aclopCreateAttr", raw::ACL_ERROR_FAILURE))?;
        Ok(OpAttr { raw })
    }

    /// The raw handle, for C APIs. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut raw::aclopAttr {
        self.raw.as_ptr()
    }

    /// A `bool` attribute.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty name or one with a NUL byte;
    /// the runtime's error.
    #[doc(alias = "aclopSetAttrBool")]
    pub fn set_bool(&mut self, attr: &str, value: bool) -> Result<&mut Self> {
        let n = name("OpAttr::set_bool", attr)?;
        // SAFETY: live handle, NUL-terminated name.
        unsafe { result::op_set_attr_bool(self.as_raw(), n.as_ptr(), u8::from(value)) }?;
        Ok(self)
    }

    /// An `int` (64-bit) attribute.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_bool`].
    #[doc(alias = "aclopSetAttrInt")]
    pub fn set_int(&mut self, attr: &str, value: i64) -> Result<&mut Self> {
        let n = name("OpAttr::set_int", attr)?;
        // SAFETY: live handle, NUL-terminated name.
        unsafe { result::op_set_attr_int(self.as_raw(), n.as_ptr(), value) }?;
        Ok(self)
    }

    /// A `float` attribute.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_bool`].
    #[doc(alias = "aclopSetAttrFloat")]
    pub fn set_float(&mut self, attr: &str, value: f32) -> Result<&mut Self> {
        let n = name("OpAttr::set_float", attr)?;
        // SAFETY: live handle, NUL-terminated name.
        unsafe { result::op_set_attr_float(self.as_raw(), n.as_ptr(), value) }?;
        Ok(self)
    }

    /// A string attribute.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_bool`], and for a value with a NUL byte.
    #[doc(alias = "aclopSetAttrString")]
    pub fn set_str(&mut self, attr: &str, value: &str) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_str";
        let n = name(F, attr)?;
        let v = CString::new(value)
            .map_err(|_| Error::invalid(F, format!("the value {value:?} contains a NUL byte")))?;
        // SAFETY: live handle, NUL-terminated strings.
        unsafe { result::op_set_attr_string(self.as_raw(), n.as_ptr(), v.as_ptr()) }?;
        Ok(self)
    }

    /// A data-type attribute (e.g. Cast's `dst_type` as a type).
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_bool`].
    #[doc(alias = "aclopSetAttrDataType")]
    pub fn set_data_type(&mut self, attr: &str, value: DataType) -> Result<&mut Self> {
        let n = name("OpAttr::set_data_type", attr)?;
        // SAFETY: live handle, NUL-terminated name.
        unsafe { result::op_set_attr_data_type(self.as_raw(), n.as_ptr(), value.to_raw()) }?;
        Ok(self)
    }

    /// A list of `bool`.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_bool`], and for more than `i32::MAX` values.
    #[doc(alias = "aclopSetAttrListBool")]
    pub fn set_list_bool(&mut self, attr: &str, values: &[bool]) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_list_bool";
        let n = name(F, attr)?;
        let num = count(F, values.len())?;
        let bytes: Vec<u8> = values.iter().map(|&b| u8::from(b)).collect();
        // SAFETY: live handle, NUL-terminated name, `bytes` valid for `num`.
        unsafe { result::op_set_attr_list_bool(self.as_raw(), n.as_ptr(), num, bytes.as_ptr()) }?;
        Ok(self)
    }

    /// A list of `int` (e.g. `axes`, `perm`).
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_list_bool`].
    #[doc(alias = "aclopSetAttrListInt")]
    pub fn set_list_int(&mut self, attr: &str, values: &[i64]) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_list_int";
        let n = name(F, attr)?;
        let num = count(F, values.len())?;
        // SAFETY: live handle, NUL-terminated name, `values` valid for `num`.
        unsafe { result::op_set_attr_list_int(self.as_raw(), n.as_ptr(), num, values.as_ptr()) }?;
        Ok(self)
    }

    /// A list of `float`.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_list_bool`].
    #[doc(alias = "aclopSetAttrListFloat")]
    pub fn set_list_float(&mut self, attr: &str, values: &[f32]) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_list_float";
        let n = name(F, attr)?;
        let num = count(F, values.len())?;
        // SAFETY: live handle, NUL-terminated name, `values` valid for `num`.
        unsafe { result::op_set_attr_list_float(self.as_raw(), n.as_ptr(), num, values.as_ptr()) }?;
        Ok(self)
    }

    /// A list of strings.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_list_bool`], and for a value with a NUL byte.
    #[doc(alias = "aclopSetAttrListString")]
    pub fn set_list_str(&mut self, attr: &str, values: &[&str]) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_list_str";
        let n = name(F, attr)?;
        let num = count(F, values.len())?;
        let owned = values
            .iter()
            .map(|v| {
                CString::new(*v)
                    .map_err(|_| Error::invalid(F, format!("the value {v:?} contains a NUL byte")))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        // SAFETY: live handle, NUL-terminated strings that outlive the call,
        // `ptrs` valid for `num`.
        unsafe {
            result::op_set_attr_list_string(self.as_raw(), n.as_ptr(), num, ptrs.as_mut_ptr())
        }?;
        Ok(self)
    }

    /// A list of data types.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_list_bool`].
    #[doc(alias = "aclopSetAttrListDataType")]
    pub fn set_list_data_type(&mut self, attr: &str, values: &[DataType]) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_list_data_type";
        let n = name(F, attr)?;
        let num = count(F, values.len())?;
        let raw: Vec<raw::aclDataType> = values.iter().map(|d| d.to_raw()).collect();
        // SAFETY: live handle, NUL-terminated name, `raw` valid for `num`.
        unsafe {
            result::op_set_attr_list_data_type(self.as_raw(), n.as_ptr(), num, raw.as_ptr())
        }?;
        Ok(self)
    }

    /// A list of lists of `int`.
    ///
    /// # Errors
    ///
    /// As [`OpAttr::set_list_bool`] (for the outer and each inner list).
    #[doc(alias = "aclopSetAttrListListInt")]
    pub fn set_list_list_int(&mut self, attr: &str, values: &[&[i64]]) -> Result<&mut Self> {
        const F: &str = "OpAttr::set_list_list_int";
        let n = name(F, attr)?;
        let num = count(F, values.len())?;
        let counts = values
            .iter()
            .map(|v| count(F, v.len()))
            .collect::<Result<Vec<i32>>>()?;
        let ptrs: Vec<*const i64> = values.iter().map(|v| v.as_ptr()).collect();
        // SAFETY: live handle, NUL-terminated name; `counts` and `ptrs` valid
        // for `num`, each list valid for its count.
        unsafe {
            result::op_set_attr_list_list_int(
                self.as_raw(),
                n.as_ptr(),
                num,
                counts.as_ptr(),
                ptrs.as_ptr(),
            )
        }?;
        Ok(self)
    }
}

impl Drop for OpAttr {
    fn drop(&mut self) {
        // SAFETY: ours, destroyed once; the runtime keeps no reference after
        // the calls that used it returned.
        let _ = unsafe { result::op_destroy_attr(self.as_raw()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(n: &CName) -> &CStr {
        // SAFETY: `name` always returns a NUL-terminated string.
        unsafe { CStr::from_ptr(n.as_ptr()) }
    }

    #[test]
    fn attribute_names_short_or_long_reach_c_intact_and_nul_bytes_are_refused() {
        let short = name("t", "transpose_x1").unwrap();
        assert!(matches!(short, CName::Inline(_)));
        assert_eq!(text(&short), c"transpose_x1");
        let edge = "a".repeat(CName::INLINE - 1);
        assert_eq!(text(&name("t", &edge).unwrap()).to_bytes(), edge.as_bytes());
        let long = "b".repeat(CName::INLINE + 10);
        let l = name("t", &long).unwrap();
        assert!(matches!(l, CName::Heap(_)));
        assert_eq!(text(&l).to_bytes(), long.as_bytes());
        for bad in ["a\0b".to_string(), format!("{long}\0")] {
            let Err(Error::InvalidArgument { reason, .. }) = name("t", &bad) else {
                panic!("{bad:?} accepted");
            };
            assert_eq!(
                reason,
                format!("the attribute name {bad:?} contains a NUL byte")
            );
        }
        assert!(name("t", "").is_err());
    }
}
