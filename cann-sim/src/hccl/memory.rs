//! Memory registration: `HcclCommRegister` and `HcclCommDeregister` (a
//! window of device memory known to the communicator) and
//! `HcclCommExchangeMem` (telling chosen peers about it, and learning
//! theirs); and virtual memory given to a communicator
//! (`HcclCommSetMemoryRange` / `UnsetMemoryRange`: a range from
//! `aclrtReserveMemAddress`; `HcclCommActivateCommMemory` / `Deactivate…`:
//! parts of it mapped with `aclrtMapMem`), checked and recorded the same way.
//!
//! On hardware, registered windows let HCCL move data without staging it
//! in its own buffers. The simulator's collectives read user buffers
//! directly anyway, so a window changes nothing about how data moves; what
//! is simulated is the bookkeeping and its checks (device memory of the
//! communicator's device, handles of this communicator, live memory, peers
//! in range) and the exchange itself, a real message to each listed peer
//! and a wait for its answer within the connect timeout. Each pair of ranks
//! must call `HcclCommExchangeMem` with each other equally often; the k-th
//! calls on both sides pair up.

#![allow(non_snake_case)]

use super::common::{check_injected, fail_with, null, para, tri};
use crate::comm::communicator::{self, Window};
use crate::comm::transport::Fail;
use crate::comm::wire;
use crate::state::{self, Region};
use hccl_sys::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Tag bit of exchange messages (collectives use their sequence number,
/// point-to-point traffic bit 62).
const EXCHANGE: u64 = 1 << 61;

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

/// `HcclCommRegister`: registers `size` bytes of device memory at `addr`
/// with `comm`; `*handle` identifies the window. `flag` is reserved (0).
///
/// # Safety
///
/// `handle` null or writable; `addr` is only checked against the
/// allocation table, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommRegister(
    comm: HcclComm,
    addr: *mut c_void,
    size: u64,
    handle: *mut *mut c_void,
    flag: u32,
) -> HcclResult {
    const F: &str = "HcclCommRegister";
    check_injected!(F);
    if handle.is_null() {
        return null(F, "handle");
    }
    if addr.is_null() {
        return null(F, "addr");
    }
    if size == 0 {
        return para(F, "size is 0");
    }
    if flag != 0 {
        return para(F, format!("flag is {flag}; it is reserved and must be 0"));
    }
    let c = tri!(communicator::lookup(F, comm));
    let region = state::memory()
        .read()
        .check_range(addr as usize, size as usize);
    let alloc = match region {
        Ok(Region::Device { device, id, .. }) if device == c.device => id,
        Ok(Region::Device { device, .. }) => {
            return para(
                F,
                format!(
                    "{addr:p} is memory of device {device}, but this rank of the communicator runs \
                     on device {}",
                    c.device
                ),
            );
        }
        Ok(other) => {
            return para(
                F,
                format!("{addr:p} ({size} bytes) is not device memory: it is {other}"),
            );
        }
        Err(e) => return para(F, e),
    };
    let id = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    c.windows.lock().insert(
        id,
        Window {
            addr: addr as usize,
            size,
            alloc,
            peers: Vec::new(),
        },
    );
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *handle = id as *mut c_void };
    HCCL_SUCCESS
}

/// `HcclCommDeregister`: forgets a window of `comm`.
///
/// # Safety
///
/// Handles are looked up, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeregister(comm: HcclComm, handle: *mut c_void) -> HcclResult {
    const F: &str = "HcclCommDeregister";
    check_injected!(F);
    if handle.is_null() {
        return null(F, "handle");
    }
    let c = tri!(communicator::lookup(F, comm));
    if c.windows.lock().remove(&(handle as u64)).is_none() {
        return para(F, not_a_window(handle));
    }
    HCCL_SUCCESS
}

fn not_a_window(handle: *mut c_void) -> String {
    format!(
        "{handle:p} is not a window HcclCommRegister gave this communicator (or it was \
         deregistered)"
    )
}

/// `HcclCommExchangeMem`: sends the window's address and size to each of
/// `peerRanks` and waits for theirs.
///
/// # Safety
///
/// `peerRanks` null or `peerRankNum` readable ranks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommExchangeMem(
    comm: HcclComm,
    windowHandle: *mut c_void,
    peerRanks: *mut u32,
    peerRankNum: u32,
) -> HcclResult {
    const F: &str = "HcclCommExchangeMem";
    check_injected!(F);
    if windowHandle.is_null() {
        return null(F, "windowHandle");
    }
    if peerRankNum > 0 && peerRanks.is_null() {
        return null(F, "peerRanks");
    }
    let c = tri!(communicator::lookup(F, comm));
    let peers: Vec<u32> = if peerRankNum == 0 {
        Vec::new()
    } else {
        // SAFETY: checked non-null; the caller's contract: `peerRankNum` ranks.
        unsafe { std::slice::from_raw_parts(peerRanks, peerRankNum as usize) }.to_vec()
    };
    for (i, &p) in peers.iter().enumerate() {
        if p >= c.nranks || p == c.rank || peers[..i].contains(&p) {
            return para(
                F,
                format!(
                    "peer rank {p} is out of range (0..{}), this rank, or repeated",
                    c.nranks
                ),
            );
        }
    }
    let key = windowHandle as u64;
    let Some(w) = c.windows.lock().get(&key).cloned() else {
        return para(F, not_a_window(windowHandle));
    };
    let live = state::memory()
        .read()
        .check_range(w.addr, w.size as usize)
        .is_ok_and(|r| r.alloc_id() == Some(w.alloc));
    if !live {
        return para(F, format!("the window's memory at {:#x} was freed", w.addr));
    }
    let got = match exchange(&c, &w, &peers) {
        Ok(v) => v,
        Err(f) => return fail_with(F, f),
    };
    if let Some(w) = c.windows.lock().get_mut(&key) {
        w.peers.retain(|(r, _, _)| !peers.contains(r));
        w.peers.extend(got);
    }
    HCCL_SUCCESS
}

/// Sends `w` to every one of `peers` and receives their windows.
fn exchange(
    c: &communicator::Comm,
    w: &Window,
    peers: &[u32],
) -> Result<Vec<(u32, u64, u64)>, Fail> {
    let stop = AtomicBool::new(false);
    let deadline = Some(Instant::now() + wire::connect_timeout());
    let mut msg = (w.addr as u64).to_le_bytes().to_vec();
    msg.extend_from_slice(&w.size.to_le_bytes());
    let tags: Vec<u64> = peers
        .iter()
        .map(|&p| EXCHANGE | c.next_exchange(p))
        .collect();
    for (&p, &tag) in peers.iter().zip(&tags) {
        c.transport
            .send_data(c.mesh(p), c.uid, tag, &msg, deadline, &stop)?;
        // Counted once sent, so that a failed send leaves the pairing with
        // the other peers intact.
        c.exchanged(p);
    }
    let mut out = Vec::with_capacity(peers.len());
    for (&p, &tag) in peers.iter().zip(&tags) {
        let m = c
            .transport
            .recv(c.uid, tag, 0, c.mesh(p), &c.members, deadline, &stop)
            .map_err(|mut f| {
                if f.code == HCCL_E_TIMEOUT {
                    f.msg = format!(
                        "rank {p} did not call HcclCommExchangeMem with rank {} within the connect \
                         timeout ({:?})",
                        c.rank,
                        wire::connect_timeout()
                    );
                }
                f
            })?;
        if m.len() != 16 {
            return Err(Fail::new(
                HCCL_E_INTERNAL,
                format!("rank {p} sent a malformed window ({} bytes)", m.len()),
            ));
        }
        out.push((p, wire::u64_at(&m, 0), wire::u64_at(&m, 8)));
    }
    Ok(out)
}

/// `HcclCommSetMemoryRange`: gives the communicator a range reserved with
/// `aclrtReserveMemAddress` on its device (`alignment` and `flags` must be
/// 0); parts of it mapped with `aclrtMapMem` can then be activated.
///
/// # Safety
///
/// None: addresses are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSetMemoryRange(
    comm: HcclComm,
    baseVirPtr: *mut c_void,
    size: usize,
    alignment: usize,
    flags: u64,
) -> HcclResult {
    const F: &str = "HcclCommSetMemoryRange";
    check_injected!(F);
    if baseVirPtr.is_null() {
        return null(F, "baseVirPtr");
    }
    if alignment != 0 || flags != 0 {
        return para(F, "alignment and flags must be 0");
    }
    let c = tri!(communicator::lookup(F, comm));
    let base = baseVirPtr as usize;
    match crate::acl::vmm::reservation(base) {
        Some((rsize, device)) if device == c.device && size > 0 && size <= rsize => {}
        Some((rsize, device)) => {
            return para(
                F,
                format!(
                    "{baseVirPtr:p}: {size} bytes of a reservation of {rsize} on device {device} \
                     (this rank runs on device {}); give 1..={rsize} bytes of a reservation of \
                     this rank's device",
                    c.device
                ),
            );
        }
        None => {
            return para(
                F,
                format!("{baseVirPtr:p} is not an address aclrtReserveMemAddress returned"),
            );
        }
    }
    let mut vm = c.vm.lock();
    if vm.ranges.contains_key(&base) {
        return para(F, format!("{baseVirPtr:p} is already set"));
    }
    vm.ranges.insert(base, size);
    HCCL_SUCCESS
}

/// `HcclCommUnsetMemoryRange`: takes back a range with nothing activated.
///
/// # Safety
///
/// None: addresses are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommUnsetMemoryRange(
    comm: HcclComm,
    baseVirPtr: *mut c_void,
) -> HcclResult {
    const F: &str = "HcclCommUnsetMemoryRange";
    check_injected!(F);
    if baseVirPtr.is_null() {
        return null(F, "baseVirPtr");
    }
    let c = tri!(communicator::lookup(F, comm));
    let base = baseVirPtr as usize;
    let mut vm = c.vm.lock();
    let Some(&size) = vm.ranges.get(&base) else {
        return para(
            F,
            format!("{baseVirPtr:p} is not a range HcclCommSetMemoryRange set"),
        );
    };
    let busy = vm.active.range(base..base + size).count();
    if busy > 0 {
        return para(
            F,
            format!(
                "{busy} activated part(s) of {baseVirPtr:p} remain; deactivate them with \
                 HcclCommDeactivateCommMemory first"
            ),
        );
    }
    vm.ranges.remove(&base);
    HCCL_SUCCESS
}

/// `HcclCommActivateCommMemory`: activates `size` bytes at `virPtr`, inside
/// a range set with `HcclCommSetMemoryRange` and mapped there with
/// `aclrtMapMem` to `handle` (`offset` and `flags` must be 0).
///
/// # Safety
///
/// None: addresses and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: HcclComm,
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: acl_sys::aclrtDrvMemHandle,
    flags: u64,
) -> HcclResult {
    const F: &str = "HcclCommActivateCommMemory";
    check_injected!(F);
    if virPtr.is_null() {
        return null(F, "virPtr");
    }
    if handle.is_null() {
        return null(F, "handle");
    }
    if offset != 0 || flags != 0 {
        return para(F, "offset and flags must be 0");
    }
    let c = tri!(communicator::lookup(F, comm));
    let addr = virPtr as usize;
    let mut vm = c.vm.lock();
    let inside = vm
        .ranges
        .range(..=addr)
        .next_back()
        .is_some_and(|(&b, &len)| addr.checked_add(size).is_some_and(|e| e <= b + len));
    if !inside {
        return para(
            F,
            format!("[{virPtr:p}, +{size}) is not inside a range HcclCommSetMemoryRange set"),
        );
    }
    if crate::acl::vmm::mapped_handle(addr, size).map(|(h, _)| h) != Some(handle as u64) {
        return para(
            F,
            format!(
                "[{virPtr:p}, +{size}) is not mapped to {handle:p} (map it with aclrtMapMem first)"
            ),
        );
    }
    if vm.active.contains_key(&addr) {
        return para(F, format!("{virPtr:p} is already activated"));
    }
    vm.active.insert(addr, (size, handle as u64));
    HCCL_SUCCESS
}

/// `HcclCommDeactivateCommMemory`: deactivates memory activated at `virPtr`.
///
/// # Safety
///
/// None: addresses are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(
    comm: HcclComm,
    virPtr: *mut c_void,
) -> HcclResult {
    const F: &str = "HcclCommDeactivateCommMemory";
    check_injected!(F);
    if virPtr.is_null() {
        return null(F, "virPtr");
    }
    let c = tri!(communicator::lookup(F, comm));
    if c.vm.lock().active.remove(&(virPtr as usize)).is_none() {
        return para(
            F,
            format!("{virPtr:p} is not memory HcclCommActivateCommMemory activated"),
        );
    }
    HCCL_SUCCESS
}
