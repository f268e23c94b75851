//! The `Send`/`Sync` decision of every public type of `hccl`, as its docs
//! state it, checked at compile time: a type that gains or loses either
//! trait breaks this file's build. Every public type of this crate is
//! `Send + Sync`.

use hccl::launch::{Launcher, RankExit};
use hccl::ranktable::{RankTableDevice, RankTableServer};
use hccl::{
    Accelerator, ActiveMemory, BootstrapConfig, BootstrapErrorKind, Comm, CommConfig,
    ConfigCapability, ConfigItem, DataType, Error, ErrorCode, MemoryRange, P2pOp, RankTable,
    ReduceOp, ReleaseError, RootInfo, Window,
};

fn send_sync<T: ?Sized + Send + Sync>() {}

/// Communicators and what borrows them: HCCL lets any thread use a
/// communicator (calls are serialised per communicator).
#[test]
fn communicators_and_their_borrows_are_send_and_sync() {
    send_sync::<Comm>();
    send_sync::<Window<'static>>();
    send_sync::<MemoryRange<'static>>();
    send_sync::<ActiveMemory<'static>>();
    send_sync::<P2pOp<'static>>();
}

/// Plain values: configuration, identities, errors, launcher state.
#[test]
fn plain_values_are_send_and_sync() {
    send_sync::<RootInfo>();
    send_sync::<CommConfig>();
    send_sync::<BootstrapConfig>();
    send_sync::<RankTable>();
    send_sync::<RankTableServer>();
    send_sync::<RankTableDevice>();
    send_sync::<DataType>();
    send_sync::<ReduceOp>();
    send_sync::<Accelerator>();
    send_sync::<ConfigItem>();
    send_sync::<ConfigCapability>();
    send_sync::<Error>();
    send_sync::<ErrorCode>();
    send_sync::<BootstrapErrorKind>();
    send_sync::<ReleaseError>();
    send_sync::<Launcher>();
    send_sync::<RankExit>();
}
