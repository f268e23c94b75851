//! Synchronous copies and fills, and the provenance rules every copy follows:
//! which copy kinds the runtime accepts between which kinds of memory, and
//! which devices a copy may touch. The exports (`aclrtMemcpy`,
//! `aclrtMemset`, the asynchronous and 2-D forms) check their C arguments,
//! translate the kind ([`CopyKind`]) and call these.

use super::table::{MemTable, Region, memory};
use crate::check::{self, Access, Use};

/// A copy direction (`aclrtMemcpyKind`, by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// `ACL_MEMCPY_HOST_TO_HOST`.
    HostToHost,
    /// `ACL_MEMCPY_HOST_TO_DEVICE`.
    HostToDevice,
    /// `ACL_MEMCPY_DEVICE_TO_HOST`.
    DeviceToHost,
    /// `ACL_MEMCPY_DEVICE_TO_DEVICE`.
    DeviceToDevice,
    /// `ACL_MEMCPY_DEFAULT`: the direction the pointers imply.
    Default,
    /// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: host to device through a staging
    /// buffer.
    HostToBufToDevice,
}

impl CopyKind {
    /// The C name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            CopyKind::HostToHost => "ACL_MEMCPY_HOST_TO_HOST",
            CopyKind::HostToDevice => "ACL_MEMCPY_HOST_TO_DEVICE",
            CopyKind::DeviceToHost => "ACL_MEMCPY_DEVICE_TO_HOST",
            CopyKind::DeviceToDevice => "ACL_MEMCPY_DEVICE_TO_DEVICE",
            CopyKind::Default => "ACL_MEMCPY_DEFAULT",
            CopyKind::HostToBufToDevice => "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        }
    }
}

/// Where one end of a copy lies, as the runtime classifies a pointer
/// (`rtMemLocationType`: device, registered/pinned host, unregistered).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Loc {
    Device,
    Pinned,
    Pageable,
}

impl Loc {
    fn of(r: Region) -> Loc {
        match r {
            Region::Device { .. } => Loc::Device,
            Region::Host { .. } => Loc::Pinned,
            Region::Unregistered => Loc::Pageable,
        }
    }
}

/// The copy kind the runtime uses for `kind` between `src` and `dst`
/// (`ApiErrorDecorator::MemcpyKindAutoCorrect` and its table
/// `MemcpyKindReviseMap`, hicann/runtime `src/runtime/api/impl/api_error.cc`):
/// between device and pinned memory (either way, or within one of them) the
/// kind is whatever the locations imply, the kind passed is ignored; with a
/// pageable (unregistered) end only the kinds that end allows are accepted,
/// `ACL_MEMCPY_DEFAULT` taking the first. Kind 5 (`HOST_TO_BUF_TO_DEVICE`)
/// is not corrected.
///
/// # Errors
///
/// A sentence naming the kinds allowed (`RT_ERROR_INVALID_VALUE`, 107000).
fn corrected_kind(
    kind: CopyKind,
    src_region: Region,
    dst_region: Region,
) -> Result<CopyKind, String> {
    use CopyKind::{
        DeviceToDevice as D2D, DeviceToHost as D2H, HostToDevice as H2D, HostToHost as H2H,
    };
    use Loc::{Device, Pageable, Pinned};
    let (src, dst) = (Loc::of(src_region), Loc::of(dst_region));
    if kind == CopyKind::HostToBufToDevice {
        return Ok(kind);
    }
    let allowed: &[CopyKind] = match (src, dst) {
        (Pinned, Device) => return Ok(H2D),
        (Device, Pinned) => return Ok(D2H),
        (Pinned, Pinned) => return Ok(H2H),
        (Device, Device) => return Ok(D2D),
        (Pageable, Device) => &[H2D, D2D],
        (Device, Pageable) => &[D2H, D2D],
        (Pinned, Pageable) => &[H2H, H2D],
        (Pageable, Pinned) => &[H2H, D2H],
        (Pageable, Pageable) => &[H2H, H2D, D2H, D2D],
    };
    if kind == CopyKind::Default {
        return Ok(allowed[0]);
    }
    if allowed.contains(&kind) {
        return Ok(kind);
    }
    let names: Vec<&str> = allowed.iter().map(|k| k.name()).collect();
    Err(format!(
        "{} is invalid from src, {src_region}, to dst, {dst_region}; expected one of {} (or \
         ACL_MEMCPY_DEFAULT)",
        kind.name(),
        names.join(", ")
    ))
}

/// A copy that passed [`check_copy`].
#[derive(Debug)]
pub struct CheckedCopy {
    /// The kind the runtime uses (see [`corrected_kind`]).
    pub kind: CopyKind,
    /// When the kind passed was not `ACL_MEMCPY_DEFAULT` and the runtime
    /// corrected it: the check mode's `copy-kind` finding (see
    /// [`report_copy_kind`]).
    pub finding: Option<String>,
}

/// The provenance checks of a copy, as the runtime makes them: the kind
/// corrected from the pointers ([`corrected_kind`]); kind 5 from host to
/// device memory; device ends on the current device, or, between two
/// devices, one of them current with peer access enabled to the other.
///
/// # Errors
///
/// A sentence saying which rule the copy breaks (107000 on the runtime).
pub fn check_copy(
    kind: CopyKind,
    dst: usize,
    dst_region: Region,
    src: usize,
    src_region: Region,
    current: u32,
) -> Result<CheckedCopy, String> {
    let (src_loc, dst_loc) = (Loc::of(src_region), Loc::of(dst_region));
    let effective = corrected_kind(kind, src_region, dst_region)?;
    // The runtime also accepts a kind that names a pageable end as device
    // memory (e.g. ACL_MEMCPY_DEVICE_TO_DEVICE from pageable host memory to
    // the device). The simulator cannot tell pageable host memory from
    // freed device memory (both are in no allocation), so it refuses those:
    // a known difference (FIDELITY.md), which keeps it from touching freed
    // memory.
    let (src_device, dst_device) = match effective {
        CopyKind::DeviceToHost => (true, false),
        CopyKind::HostToDevice => (false, true),
        CopyKind::DeviceToDevice => (true, true),
        _ => (false, false),
    };
    for (role, addr, loc, region, device) in [
        ("dst", dst, dst_loc, dst_region, dst_device),
        ("src", src, src_loc, src_region, src_device),
    ] {
        if device && loc == Loc::Pageable {
            return Err(format!(
                "{role} {addr:#x} is not device memory: it is {region}; {} needs device memory \
                 there",
                effective.name()
            ));
        }
    }
    if kind == CopyKind::HostToBufToDevice {
        if src_loc == Loc::Device {
            return Err(format!(
                "src {src:#x} is {src_region}, but ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE needs host \
                 memory there"
            ));
        }
        if dst_loc != Loc::Device {
            return Err(format!(
                "dst {dst:#x} is not device memory: it is {dst_region}; \
                 ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE needs device memory there"
            ));
        }
    }
    match (dst_region.device(), src_region.device()) {
        (Some(d), Some(s)) if d != s => {
            // Between devices: one end on the current device, the other on a
            // peer that the current device has enabled access to.
            let other = if d == current {
                s
            } else if s == current {
                d
            } else {
                return Err(format!(
                    "dst {dst:#x} is on device {d} and src {src:#x} on device {s}, but the \
                     current device of this thread is {current}"
                ));
            };
            if !crate::state::global()
                .lock()
                .peers
                .contains(&(current, other))
            {
                return Err(format!(
                    "dst {dst:#x} is on device {d} and src {src:#x} on device {s}: peer access \
                     not enabled from device {current} to device {other} (call \
                     aclrtDeviceEnablePeerAccess({other}, 0) on device {current} first)"
                ));
            }
        }
        (d, s) => {
            for (role, addr, device, region) in
                [("dst", dst, d, dst_region), ("src", src, s, src_region)]
            {
                if let Some(device) = device
                    && device != current
                {
                    return Err(format!(
                        "{role} {addr:#x} is {region}, but the current device of this thread is \
                         {current}"
                    ));
                }
            }
        }
    }
    let finding = (kind != CopyKind::Default && effective != kind).then(|| {
        format!(
            "kind {} does not match the pointers (src {src:#x} is {src_region}, dst {dst:#x} is \
             {dst_region}); the runtime ignores it and copies as {}. Pass {} (or \
             ACL_MEMCPY_DEFAULT). The copy was done.",
            kind.name(),
            effective.name(),
            effective.name(),
        )
    });
    Ok(CheckedCopy {
        kind: effective,
        finding,
    })
}

/// Makes the check mode's `copy-kind` report for `finding` (nothing when
/// the check is off or there is no finding): the runtime corrects a kind
/// between device and pinned memory silently, so the call still succeeds;
/// `CANN_SIM_CHECK=report` counts it, `abort` aborts.
pub fn report_copy_kind(function: &str, finding: Option<String>) {
    if let Some(body) = finding
        && check::enabled()
    {
        check::report(check::Kind::CopyKind, function, &body);
    }
}

/// Why a synchronous copy or fill was refused.
#[derive(Debug)]
pub enum SyncError {
    /// Bad provenance or bounds (107000 on the runtime): the whole message.
    Invalid(String),
    /// The check mode found the host access racing queued work.
    Check(crate::rt::Error),
}

/// A synchronous copy of `count` bytes from `src` to `dst` (`aclrtMemcpy`,
/// after its argument checks), on behalf of `function` with `current` the
/// thread's device. Returns the check mode's `copy-kind` finding, if any
/// (the caller reports it once it has answered).
///
/// Both ranges must be in bounds of the allocation they start in; the kind
/// is corrected from the pointers ([`check_copy`]). Host to host with
/// overlapping ranges fails and clears `dest_max` bytes of `dst`, as
/// securec's `memcpy_s` does in the driver (hicann/runtime
/// `src/runtime/driver/npu_driver_mem.cc` `NpuDriver::MemCopySync` →
/// drvMemcpy; `EOVERLAP_AND_RESET`). The table's read lock is held until
/// the copy is done, so neither end can be freed under it.
///
/// # Errors
///
/// [`SyncError`], with the message to record.
///
/// # Safety
///
/// Ends that are in no allocation must be host memory valid for `count`
/// bytes (reads of `src`, writes of `dst`; `dest_max` bytes of a host `dst`
/// when the host ranges overlap).
pub unsafe fn copy_sync(
    function: &str,
    (dst, dest_max): (usize, usize),
    src: usize,
    count: usize,
    kind: CopyKind,
    current: u32,
) -> Result<Option<String>, SyncError> {
    let f = function;
    let validate = |table: &MemTable| -> Result<(CheckedCopy, Region), SyncError> {
        let invalid = SyncError::Invalid;
        let dst_region = check::range(table, f, "dst", dst, count)
            .map_err(|e| invalid(format!("{f}: dst: {e}")))?;
        let src_region = check::range(table, f, "src", src, count)
            .map_err(|e| invalid(format!("{f}: src: {e}")))?;
        let checked = check_copy(kind, dst, dst_region, src, src_region, current)
            .map_err(|e| invalid(format!("{f} ({}): {e}", kind.name())))?;
        Ok((checked, dst_region))
    };
    if check::enabled() {
        // A valid copy must not race queued work (checked without the
        // table's lock, which the check takes after its own).
        validate(&memory().read())?;
        let ends = [
            Access::new("dst", dst, count, Use::Write),
            Access::new("src", src, count, Use::Read),
        ];
        check::host_access(f, &ends).map_err(SyncError::Check)?;
    }
    let table = memory().read();
    let (checked, dst_region) = validate(&table)?;
    let overlap = dst < src.saturating_add(count) && src < dst.saturating_add(count);
    if checked.kind == CopyKind::HostToHost && overlap {
        let cleared = match dst_region {
            Region::Host { base, size, .. } => dest_max.min(base + size - dst),
            _ => dest_max,
        };
        // SAFETY: dst is host memory valid for destMax bytes by the
        // caller's contract (pinned memory: clamped to its allocation,
        // kept alive by the read lock).
        unsafe { std::ptr::write_bytes(dst as *mut u8, 0, cleared) };
        return Err(SyncError::Invalid(format!(
            "{f}: the host ranges overlap (dst [{dst:#x}, {:#x}), src [{src:#x}, {:#x})); \
             memcpy_s refuses overlapping copies and cleared the {cleared} bytes of dst. Copy \
             with memmove on the host instead",
            dst + count,
            src + count
        )));
    }
    // SAFETY: each end is either inside a live allocation for all `count`
    // bytes (checked above, kept alive by the read lock) or host memory
    // valid for `count` bytes by the caller's contract. `copy` allows
    // overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
    drop(table);
    Ok(checked.finding)
}

/// A synchronous fill of `count` bytes at `addr` with `value`
/// (`aclrtMemset`, after its argument checks). Device memory must be the
/// current device's; pinned host memory is bounds-checked; other (pageable)
/// host memory is filled as a host memset, as the driver does
/// (hicann/runtime `src/runtime/driver/npu_driver_mem.cc`
/// `NpuDriver::MemSetSync` → drvMemsetD8).
///
/// # Errors
///
/// [`SyncError`], with the message to record.
///
/// # Safety
///
/// A range in no allocation must be host memory valid for `count` bytes.
pub unsafe fn fill_sync(
    function: &str,
    addr: usize,
    count: usize,
    value: u8,
    current: u32,
) -> Result<(), SyncError> {
    let f = function;
    let validate = |table: &MemTable| -> Result<(), SyncError> {
        match check::range(table, f, "devPtr", addr, count) {
            Ok(Region::Device { device, .. }) if device == current => Ok(()),
            Ok(Region::Device { device, .. }) => Err(SyncError::Invalid(format!(
                "{f}: devPtr {addr:#x} is on device {device}, but the current device of this \
                 thread is {current}"
            ))),
            Ok(Region::Host { .. } | Region::Unregistered) => Ok(()),
            Err(e) => Err(SyncError::Invalid(format!("{f}: devPtr: {e}"))),
        }
    };
    if check::enabled() {
        validate(&memory().read())?;
        let range = [Access::new("devPtr", addr, count, Use::Write)];
        check::host_access(f, &range).map_err(SyncError::Check)?;
    }
    let table = memory().read();
    validate(&table)?;
    // SAFETY: `[addr, addr + count)` lies inside a live device or pinned
    // host allocation, kept alive by the read lock, or in pageable host
    // memory valid for `count` bytes by the caller's contract.
    unsafe { std::ptr::write_bytes(addr as *mut u8, value, count) };
    drop(table);
    Ok(())
}

/// A pageable end's copy of `aclrtMemcpyAsync`, done on the host once the
/// stream has drained (the caller waited): checked against queued work of
/// other streams, validated again under the table's lock (the wait held
/// none), then copied.
///
/// # Errors
///
/// [`SyncError`], with the message to record.
///
/// # Safety
///
/// As [`copy_sync`]: ends in no allocation are host memory valid for
/// `count` bytes.
pub unsafe fn copy_now(
    function: &str,
    dst: usize,
    src: usize,
    count: usize,
    kind: CopyKind,
    current: u32,
) -> Result<(), SyncError> {
    let ends = [
        Access::new("dst", dst, count, Use::Write),
        Access::new("src", src, count, Use::Read),
    ];
    check::host_access(function, &ends).map_err(SyncError::Check)?;
    let table = memory().read();
    table
        .check_range(dst, count)
        .and_then(|d| Ok((d, table.check_range(src, count)?)))
        .and_then(|(d, s)| check_copy(kind, dst, d, src, s, current).map(|_| ()))
        .map_err(|e| SyncError::Invalid(format!("{function} ({}): {e}", kind.name())))?;
    // SAFETY: allocation ends lie in live allocations (validated, kept alive
    // by the read lock); pageable host ends are valid for `count` bytes by
    // the caller's contract. `copy` allows overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
    drop(table);
    Ok(())
}

/// A 2-D copy: `height` rows of `width` bytes, row `i` from
/// `src + i·spitch` to `dst + i·dpitch` (`aclrtMemcpy2d[Async]`).
#[derive(Debug, Clone, Copy)]
pub struct Rows {
    /// Destination and its pitch.
    pub dst: (usize, usize),
    /// Source and its pitch.
    pub src: (usize, usize),
    /// Bytes per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

impl Rows {
    /// The bytes each end spans, `(height − 1) · pitch + width`; `None` on
    /// overflow.
    pub fn spans(&self) -> Option<(usize, usize)> {
        let span = |pitch: usize| {
            (self.height.checked_sub(1)?)
                .checked_mul(pitch)?
                .checked_add(self.width)
        };
        Some((span(self.dst.1)?, span(self.src.1)?))
    }

    /// Where the two spans lie, checked for `kind` under `table`'s lock.
    ///
    /// # Errors
    ///
    /// The sentence to record (107000 on the runtime).
    pub fn regions(
        &self,
        function: &str,
        table: &MemTable,
        kind: CopyKind,
        current: u32,
    ) -> Result<(Region, Region), String> {
        let (dspan, sspan) = self
            .spans()
            .ok_or_else(|| format!("{function}: the spans overflow"))?;
        let (dst, src) = (self.dst.0, self.src.0);
        check::range(table, function, "dst", dst, dspan)
            .and_then(|d| Ok((d, check::range(table, function, "src", src, sspan)?)))
            .and_then(|(d, s)| check_copy(kind, dst, d, src, s, current).map(|_| (d, s)))
            .map_err(|e| format!("{function} ({}): {e}", kind.name()))
    }

    /// The check mode's view of the copy done on the host now: it writes
    /// the destination rows and reads the source rows (not the gaps).
    fn host_access(&self, function: &str) -> Result<(), crate::rt::Error> {
        if !check::enabled() {
            return Ok(());
        }
        let mut rows = Vec::with_capacity(2 * self.height);
        for i in 0..self.height {
            rows.push(Access::new(
                "dst",
                self.dst.0 + i * self.dst.1,
                self.width,
                Use::Write,
            ));
            rows.push(Access::new(
                "src",
                self.src.0 + i * self.src.1,
                self.width,
                Use::Read,
            ));
        }
        check::host_access(function, &rows)
    }
}

/// A synchronous 2-D copy (`aclrtMemcpy2d`, and `aclrtMemcpy2dAsync` with a
/// pageable end once its stream drained): checked against queued work,
/// validated, and copied under one read lock of the table.
///
/// # Errors
///
/// [`SyncError`], with the message to record.
///
/// # Safety
///
/// Ends in no allocation are host memory valid for their spans.
pub unsafe fn copy_2d_sync(
    function: &str,
    rows: Rows,
    kind: CopyKind,
    current: u32,
) -> Result<(), SyncError> {
    if check::enabled() {
        rows.regions(function, &memory().read(), kind, current)
            .map_err(SyncError::Invalid)?;
        rows.host_access(function).map_err(SyncError::Check)?;
    }
    let table = memory().read();
    rows.regions(function, &table, kind, current)
        .map_err(SyncError::Invalid)?;
    for i in 0..rows.height {
        // SAFETY: row `i` lies inside both spans, validated under `table`'s
        // lock (still held) or valid host memory by the caller's contract;
        // `copy` allows overlap.
        unsafe {
            std::ptr::copy(
                (rows.src.0 + i * rows.src.1) as *const u8,
                (rows.dst.0 + i * rows.dst.1) as *mut u8,
                rows.width,
            )
        };
    }
    drop(table);
    Ok(())
}

/// A synchronous fill of `n` 32-bit `value`s at `addr` (`aclrtMemsetD32`):
/// device memory of the `current` device or pinned host memory.
///
/// # Errors
///
/// [`SyncError`], with the message to record.
pub fn fill_d32_sync(
    function: &str,
    addr: usize,
    n: usize,
    value: u32,
    current: u32,
) -> Result<(), SyncError> {
    let f = function;
    let bytes = n
        .checked_mul(4)
        .ok_or_else(|| SyncError::Invalid(format!("{f}: {n} elements overflow")))?;
    let validate = |table: &MemTable| -> Result<(), SyncError> {
        match check::range(table, f, "ptr", addr, bytes) {
            Ok(Region::Device { device, .. }) if device == current => Ok(()),
            Ok(Region::Host { .. }) => Ok(()),
            Ok(other) => Err(SyncError::Invalid(format!(
                "{f}: {addr:#x} is neither device memory of device {current} nor pinned host \
                 memory ({other})"
            ))),
            Err(e) => Err(SyncError::Invalid(format!("{f}: ptr: {e}"))),
        }
    };
    if check::enabled() {
        validate(&memory().read())?;
        let range = [Access::new("ptr", addr, bytes, Use::Write)];
        check::host_access(f, &range).map_err(SyncError::Check)?;
    }
    let table = memory().read();
    validate(&table)?;
    let v = value.to_ne_bytes();
    for i in 0..n {
        // SAFETY: element `i` lies inside `[addr, addr + bytes)`, a live
        // allocation (checked, kept alive by the read lock); unaligned-safe.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), (addr + i * 4) as *mut u8, 4) };
    }
    drop(table);
    Ok(())
}
