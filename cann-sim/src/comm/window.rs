//! Memory a communicator is told about: windows of device memory registered
//! with it (`HcclCommRegister`) and exchanged with peers
//! (`HcclCommExchangeMem`), and virtual memory given to it
//! (`HcclCommSetMemoryRange`: a range from `aclrtReserveMemAddress`;
//! `HcclCommActivateCommMemory`: parts of it mapped with `aclrtMapMem`).
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
//!
//! Every failure here is [`ErrorKind::Para`], but those of the exchange
//! itself (timeouts, peers gone).

use super::communicator::{Comm, Window};
use super::error::{ErrorKind, Fail};
use super::wire;
use crate::state::{self, Region};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Tag bit of exchange messages (collectives use their sequence number,
/// point-to-point traffic bit 62).
const EXCHANGE: u64 = 1 << 61;

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

fn para(msg: String) -> Fail {
    Fail::new(ErrorKind::Para, msg)
}

fn not_a_window(handle: u64) -> Fail {
    para(format!(
        "{handle:#x} is not a window HcclCommRegister gave this communicator (or it was \
         deregistered)"
    ))
}

impl Comm {
    /// Registers `size` bytes of device memory at `addr` as a window;
    /// returns its handle.
    ///
    /// # Errors
    ///
    /// Memory that is not (live) device memory of this rank's device.
    pub fn register_window(&self, addr: usize, size: u64) -> Result<u64, Fail> {
        let region = state::memory().read().check_range(addr, size as usize);
        let alloc = match region {
            Ok(Region::Device { device, id, .. }) if device == self.device => id,
            Ok(Region::Device { device, .. }) => {
                return Err(para(format!(
                    "{addr:#x} is memory of device {device}, but this rank of the communicator \
                     runs on device {}",
                    self.device
                )));
            }
            Ok(other) => {
                return Err(para(format!(
                    "{addr:#x} ({size} bytes) is not device memory: it is {other}"
                )));
            }
            Err(e) => return Err(para(e)),
        };
        let id = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        self.windows.lock().insert(
            id,
            Window {
                addr,
                size,
                alloc,
                peers: Vec::new(),
            },
        );
        Ok(id)
    }

    /// Forgets window `handle`.
    ///
    /// # Errors
    ///
    /// A handle that is not a window of this communicator.
    pub fn deregister_window(&self, handle: u64) -> Result<(), Fail> {
        match self.windows.lock().remove(&handle) {
            Some(_) => Ok(()),
            None => Err(not_a_window(handle)),
        }
    }

    /// Window `handle`, when its memory is still live.
    ///
    /// # Errors
    ///
    /// A handle that is not a window of this communicator, or whose memory
    /// was freed.
    pub fn live_window(&self, handle: u64) -> Result<Window, Fail> {
        let w = self
            .windows
            .lock()
            .get(&handle)
            .cloned()
            .ok_or_else(|| not_a_window(handle))?;
        let live = state::memory()
            .read()
            .check_range(w.addr, w.size as usize)
            .is_ok_and(|r| r.alloc_id() == Some(w.alloc));
        if !live {
            return Err(para(format!(
                "the window's memory at {:#x} was freed",
                w.addr
            )));
        }
        Ok(w)
    }

    /// Sends window `handle` (`w`, from [`Comm::live_window`]) to every one
    /// of `peers` (distinct other ranks) and records theirs in it.
    ///
    /// # Errors
    ///
    /// A peer that does not answer within the connect timeout
    /// ([`ErrorKind::Timeout`]), is gone, or sends something malformed.
    pub fn exchange_window(&self, handle: u64, w: &Window, peers: &[u32]) -> Result<(), Fail> {
        let got = self.exchange(w, peers)?;
        if let Some(w) = self.windows.lock().get_mut(&handle) {
            w.peers.retain(|(r, _, _)| !peers.contains(r));
            w.peers.extend(got);
        }
        Ok(())
    }

    /// Sends `w` to every one of `peers` and receives their windows.
    fn exchange(&self, w: &Window, peers: &[u32]) -> Result<Vec<(u32, u64, u64)>, Fail> {
        let stop = AtomicBool::new(false);
        let deadline = Some(Instant::now() + wire::connect_timeout());
        let mut msg = (w.addr as u64).to_le_bytes().to_vec();
        msg.extend_from_slice(&w.size.to_le_bytes());
        let tags: Vec<u64> = peers
            .iter()
            .map(|&p| EXCHANGE | self.next_exchange(p))
            .collect();
        for (&p, &tag) in peers.iter().zip(&tags) {
            self.transport
                .send_data(self.mesh(p), self.uid, tag, &msg, deadline, &stop)?;
            // Counted once sent, so that a failed send leaves the pairing
            // with the other peers intact.
            self.exchanged(p);
        }
        let mut out = Vec::with_capacity(peers.len());
        for (&p, &tag) in peers.iter().zip(&tags) {
            let m = self
                .transport
                .recv(
                    self.uid,
                    tag,
                    0,
                    self.mesh(p),
                    &self.members,
                    deadline,
                    &stop,
                )
                .map_err(|mut f| {
                    if f.kind == ErrorKind::Timeout {
                        f.msg = format!(
                            "rank {p} did not call HcclCommExchangeMem with rank {} within the \
                             connect timeout ({:?})",
                            self.rank,
                            wire::connect_timeout()
                        );
                    }
                    f
                })?;
            if m.len() != 16 {
                return Err(Fail::new(
                    ErrorKind::Internal,
                    format!("rank {p} sent a malformed window ({} bytes)", m.len()),
                ));
            }
            out.push((p, wire::u64_at(&m, 0), wire::u64_at(&m, 8)));
        }
        Ok(out)
    }

    /// Gives the communicator `size` bytes of the reservation at `base`.
    ///
    /// # Errors
    ///
    /// `base` that is not a reservation of this rank's device, a size of 0
    /// or beyond the reservation, a range already set.
    pub fn set_memory_range(&self, base: usize, size: usize) -> Result<(), Fail> {
        match crate::rt::vmm::reservation(base) {
            Some((rsize, device)) if device == self.device && size > 0 && size <= rsize => {}
            Some((rsize, device)) => {
                return Err(para(format!(
                    "{base:#x}: {size} bytes of a reservation of {rsize} on device {device} (this \
                     rank runs on device {}); give 1..={rsize} bytes of a reservation of this \
                     rank's device",
                    self.device
                )));
            }
            None => {
                return Err(para(format!(
                    "{base:#x} is not an address aclrtReserveMemAddress returned"
                )));
            }
        }
        let mut vm = self.vm.lock();
        if vm.ranges.contains_key(&base) {
            return Err(para(format!("{base:#x} is already set")));
        }
        vm.ranges.insert(base, size);
        Ok(())
    }

    /// Takes back the range set at `base`.
    ///
    /// # Errors
    ///
    /// No range set there, or parts of it still activated.
    pub fn unset_memory_range(&self, base: usize) -> Result<(), Fail> {
        let mut vm = self.vm.lock();
        let Some(&size) = vm.ranges.get(&base) else {
            return Err(para(format!(
                "{base:#x} is not a range HcclCommSetMemoryRange set"
            )));
        };
        let busy = vm.active.range(base..base + size).count();
        if busy > 0 {
            return Err(para(format!(
                "{busy} activated part(s) of {base:#x} remain; deactivate them with \
                 HcclCommDeactivateCommMemory first"
            )));
        }
        vm.ranges.remove(&base);
        Ok(())
    }

    /// Activates `size` bytes at `addr`, inside a range set with
    /// [`Comm::set_memory_range`] and mapped there to physical memory
    /// `handle`.
    ///
    /// # Errors
    ///
    /// Memory outside the ranges set, not mapped to `handle`, or already
    /// activated.
    pub fn activate_memory(&self, addr: usize, size: usize, handle: u64) -> Result<(), Fail> {
        let mut vm = self.vm.lock();
        let inside = vm
            .ranges
            .range(..=addr)
            .next_back()
            .is_some_and(|(&b, &len)| addr.checked_add(size).is_some_and(|e| e <= b + len));
        if !inside {
            return Err(para(format!(
                "[{addr:#x}, +{size}) is not inside a range HcclCommSetMemoryRange set"
            )));
        }
        if crate::rt::vmm::mapped_handle(addr, size).map(|(h, _)| h) != Some(handle) {
            return Err(para(format!(
                "[{addr:#x}, +{size}) is not mapped to {handle:#x} (map it with aclrtMapMem \
                 first)"
            )));
        }
        if vm.active.contains_key(&addr) {
            return Err(para(format!("{addr:#x} is already activated")));
        }
        vm.active.insert(addr, (size, handle));
        Ok(())
    }

    /// Deactivates the memory activated at `addr`.
    ///
    /// # Errors
    ///
    /// Nothing activated there.
    pub fn deactivate_memory(&self, addr: usize) -> Result<(), Fail> {
        match self.vm.lock().active.remove(&addr) {
            Some(_) => Ok(()),
            None => Err(para(format!(
                "{addr:#x} is not memory HcclCommActivateCommMemory activated"
            ))),
        }
    }
}
