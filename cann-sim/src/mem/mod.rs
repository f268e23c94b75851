//! Memory, the engine side: the allocation table ([`table`]), the host
//! memory behind each block ([`block`]), the synchronous copies and fills
//! ([`copy`]: 1-D and 2-D copies, byte and 32-bit fills, the host copy of an
//! asynchronous copy with a pageable end), IPC sharing ([`ipc`]) and host
//! registration ([`register`]). The exports in `crate::acl` (`memory*.rs`, `ipc.rs`)
//! only check C arguments, call these, and translate the results into codes.

pub mod block;
pub mod copy;
pub mod ipc;
pub mod register;
pub mod table;

pub use block::{MAPPED_BLOCK, SharedFile};
pub use table::{
    ALIGN, AllocError, Allocation, MemKind, MemTable, POISON, Region, check_device_range, memory,
};
