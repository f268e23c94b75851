//! Borrowed ranges of a [`DeviceBuffer`](super::DeviceBuffer).

use super::track::Allocation;
use super::{DeviceMemory, DeviceMemoryMut, DeviceRepr, sealed};
use crate::error::{Error, Result};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// Resolves `range` against `len`: `(start, end)` with `start <= end <= len`.
pub(crate) fn bounds(
    function: &'static str,
    range: &impl RangeBounds<usize>,
    len: usize,
) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e)),
        (Some(s), Some(e)) if s > e => Err(Error::invalid(
            function,
            format!("the range starts at {s} but ends at {e}"),
        )),
        (_, e) => Err(Error::invalid(
            function,
            format!(
                "the range ends at {} but the memory has {len} elements",
                e.map_or_else(|| "usize::MAX + 1".to_string(), |e| e.to_string())
            ),
        )),
    }
}

/// The length in `U`s of `len` `T`s at `ptr`, if the bytes divide evenly
/// and `ptr` is aligned for `U`.
fn reinterpreted_len<T, U>(
    function: &'static str,
    ptr: *const c_void,
    len: usize,
) -> Result<usize> {
    let (t, u) = (std::mem::size_of::<T>(), std::mem::size_of::<U>());
    let bytes = len * t;
    if u == 0 || !bytes.is_multiple_of(u) {
        return Err(Error::invalid(
            function,
            format!(
                "{len} elements of {t} bytes are {bytes} bytes, not a whole number of {u}-byte \
                 elements"
            ),
        ));
    }
    let align = std::mem::align_of::<U>();
    if !(ptr as usize).is_multiple_of(align) {
        return Err(Error::invalid(
            function,
            format!("the address {ptr:p} is not aligned to {align} bytes"),
        ));
    }
    Ok(bytes / u)
}

fn offset<T>(base: *mut c_void, start: usize) -> *mut c_void {
    if base.is_null() {
        // Only an empty buffer has a null base, and then start == 0.
        return base;
    }
    base.cast::<u8>()
        .wrapping_add(start * std::mem::size_of::<T>())
        .cast()
}

/// A shared view of part of a device buffer.
///
/// `Send + Sync` like the buffer it borrows.
pub struct DeviceSlice<'a, T: DeviceRepr> {
    ptr: *const c_void,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _marker: PhantomData<&'a [T]>,
}

/// A mutable view of part of a device buffer.
///
/// `Send + Sync` like the buffer it borrows.
pub struct DeviceSliceMut<'a, T: DeviceRepr> {
    ptr: *mut c_void,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: device memory, never dereferenced by the host (as DeviceBuffer).
unsafe impl<T: DeviceRepr> Send for DeviceSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: DeviceRepr> Sync for DeviceSlice<'_, T> {}
// SAFETY: as above; exclusive by the borrow it came from.
unsafe impl<T: DeviceRepr> Send for DeviceSliceMut<'_, T> {}
// SAFETY: as above.
unsafe impl<T: DeviceRepr> Sync for DeviceSliceMut<'_, T> {}

impl<'a, T: DeviceRepr> DeviceSlice<'a, T> {
    pub(crate) fn new(alloc: &'a Arc<Allocation>, start: usize, len: usize) -> Self {
        DeviceSlice {
            ptr: offset::<T>(alloc.ptr(), start),
            len,
            alloc,
            _marker: PhantomData,
        }
    }

    /// A narrower view.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is out of bounds or decreasing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'a, T>> {
        let (s, e) = bounds("DeviceSlice::slice", &range, self.len)?;
        Ok(self.sub(s, e - s))
    }

    /// Splits into `[0, mid)` and `[mid, len)`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `mid > len`.
    pub fn split_at(&self, mid: usize) -> Result<(DeviceSlice<'a, T>, DeviceSlice<'a, T>)> {
        let (_, m) = bounds("DeviceSlice::split_at", &(..mid), self.len)?;
        Ok((self.sub(0, m), self.sub(m, self.len - m)))
    }

    /// The same bytes viewed as elements of another plain type `U`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size in bytes is not a multiple
    /// of `U`'s size or the address is not aligned for `U`.
    pub fn reinterpret<U: DeviceRepr>(&self) -> Result<DeviceSlice<'a, U>> {
        let len = reinterpreted_len::<T, U>("DeviceSlice::reinterpret", self.ptr, self.len)?;
        Ok(DeviceSlice {
            ptr: self.ptr,
            len,
            alloc: self.alloc,
            _marker: PhantomData,
        })
    }

    fn sub(&self, start: usize, len: usize) -> DeviceSlice<'a, T> {
        DeviceSlice {
            ptr: offset::<T>(self.ptr.cast_mut(), start),
            len,
            alloc: self.alloc,
            _marker: PhantomData,
        }
    }

    /// Copies the elements into a new `Vec`, waiting for queued work first.
    ///
    /// # Errors
    ///
    /// The runtime's error.
    pub fn to_host_vec(&self) -> Result<Vec<T>> {
        super::copy::dtoh_vec(self)
    }
}

impl<'a, T: DeviceRepr> DeviceSliceMut<'a, T> {
    pub(crate) fn new(alloc: &'a Arc<Allocation>, start: usize, len: usize) -> Self {
        DeviceSliceMut {
            ptr: offset::<T>(alloc.ptr(), start),
            len,
            alloc,
            _marker: PhantomData,
        }
    }

    /// The same bytes viewed as elements of another plain type `U`.
    ///
    /// # Errors
    ///
    /// As [`DeviceSlice::reinterpret`].
    pub fn reinterpret<U: DeviceRepr>(self) -> Result<DeviceSliceMut<'a, U>> {
        let len = reinterpreted_len::<T, U>("DeviceSliceMut::reinterpret", self.ptr, self.len)?;
        Ok(DeviceSliceMut {
            ptr: self.ptr,
            len,
            alloc: self.alloc,
            _marker: PhantomData,
        })
    }

    /// A narrower mutable view (reborrowing this one).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is out of bounds or decreasing.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (s, e) = bounds("DeviceSliceMut::slice_mut", &range, self.len)?;
        Ok(DeviceSliceMut {
            ptr: offset::<T>(self.ptr, s),
            len: e - s,
            alloc: self.alloc,
            _marker: PhantomData,
        })
    }

    /// Splits into two disjoint mutable views, `[0, mid)` and `[mid, len)`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `mid > len`.
    pub fn split_at_mut(
        self,
        mid: usize,
    ) -> Result<(DeviceSliceMut<'a, T>, DeviceSliceMut<'a, T>)> {
        let (_, m) = bounds("DeviceSliceMut::split_at_mut", &(..mid), self.len)?;
        let part = |start: usize, len: usize| DeviceSliceMut {
            ptr: offset::<T>(self.ptr, start),
            len,
            alloc: self.alloc,
            _marker: PhantomData,
        };
        Ok((part(0, m), part(m, self.len - m)))
    }

    /// A shared view of the same range.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: self.ptr,
            len: self.len,
            alloc: self.alloc,
            _marker: PhantomData,
        }
    }

    /// Copies `data` in; the lengths must be equal. Synchronous.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length mismatch; the runtime's error.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        super::copy::htod_sync("DeviceSliceMut::copy_from_host", data, self)
    }
}

impl<T: DeviceRepr> std::fmt::Debug for DeviceSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceSlice")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: DeviceRepr> std::fmt::Debug for DeviceSliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceSliceMut")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: DeviceRepr> sealed::Sealed for DeviceSlice<'_, T> {}
impl<T: DeviceRepr> sealed::Sealed for DeviceSliceMut<'_, T> {}

impl<T: DeviceRepr> DeviceMemory<T> for DeviceSlice<'_, T> {
    fn device_ptr(&self) -> *const c_void {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn allocation(&self) -> &Arc<Allocation> {
        self.alloc
    }
}

impl<T: DeviceRepr> DeviceMemory<T> for DeviceSliceMut<'_, T> {
    fn device_ptr(&self) -> *const c_void {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn allocation(&self) -> &Arc<Allocation> {
        self.alloc
    }
}

impl<T: DeviceRepr> DeviceMemoryMut<T> for DeviceSliceMut<'_, T> {
    fn device_ptr_mut(&mut self) -> *mut c_void {
        self.ptr
    }
}

#[cfg(test)]
mod tests {
    use super::bounds;

    #[test]
    fn bounds_resolve_every_range_form() {
        assert_eq!(bounds("t", &(..), 10).unwrap(), (0, 10));
        assert_eq!(bounds("t", &(2..5), 10).unwrap(), (2, 5));
        assert_eq!(bounds("t", &(2..=5), 10).unwrap(), (2, 6));
        assert_eq!(bounds("t", &(..=9), 10).unwrap(), (0, 10));
        assert_eq!(bounds("t", &(10..), 10).unwrap(), (10, 10));
    }

    #[test]
    fn out_of_bounds_and_decreasing_ranges_are_errors() {
        assert_eq!(
            bounds("t", &(0..11), 10).unwrap_err().to_string(),
            "t: the range ends at 11 but the memory has 10 elements"
        );
        #[allow(clippy::reversed_empty_ranges)]
        let r = 5..3;
        assert_eq!(
            bounds("t", &r, 10).unwrap_err().to_string(),
            "t: the range starts at 5 but ends at 3"
        );
        assert!(bounds("t", &(..=usize::MAX), 10).is_err());
        assert!(bounds("t", &(11..), 10).is_err());
    }
}
