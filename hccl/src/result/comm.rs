//! Communicator lifecycle: root infos, the ways to create a communicator,
//! what it knows about itself, suspend/resume and destroy.

use super::forward;
use crate::error::Result;
use hccl_sys as sys;
use std::ffi::CStr;

/// `HcclGetRootInfo`: a new root info naming a communicator whose root is
/// this process (on the calling thread's current device).
#[doc(alias = "HcclGetRootInfo")]
pub fn get_root_info() -> Result<sys::HcclRootInfo> {
    let mut root = sys::HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    unsafe { call!(HcclGetRootInfo(&mut root)) }?;
    Ok(root)
}

/// `HcclGetRootInfoScalable`: a root info for the scalable init
/// ([`comm_init_root_info_scalable`]).
#[doc(alias = "HcclGetRootInfoScalable")]
pub fn get_root_info_scalable() -> Result<sys::HcclRootInfo> {
    let mut root = sys::HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    unsafe { call!(HcclGetRootInfoScalable(&mut root)) }?;
    Ok(root)
}

/// `HcclCommInitRootInfoConfig`: joins the communicator of `root` as `rank`
/// of `n_ranks`, on the calling thread's current device; blocks until every
/// rank has joined.
#[doc(alias = "HcclCommInitRootInfoConfig")]
pub fn comm_init_root_info_config(
    n_ranks: u32,
    root: &sys::HcclRootInfo,
    rank: u32,
    config: &sys::HcclCommConfig,
) -> Result<sys::HcclComm> {
    let mut comm = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; HCCL copies what it keeps.
    unsafe {
        call!(HcclCommInitRootInfoConfig(
            n_ranks, root, rank, config, &mut comm
        ))
    }?;
    Ok(comm)
}

/// `HcclCommInitRootInfoScalable`: joins the communicator of several root
/// infos (the same list on every rank) as `rank` of `n_ranks`.
#[doc(alias = "HcclCommInitRootInfoScalable")]
pub fn comm_init_root_info_scalable(
    n_ranks: u32,
    roots: &[sys::HcclRootInfo],
    rank: u32,
    n_ext_root: u32,
    config: &sys::HcclCommConfig,
) -> Result<sys::HcclComm> {
    let mut comm = std::ptr::null_mut();
    // SAFETY: `roots` holds `len` root infos; the other pointers are valid
    // for the call; HCCL copies what it keeps.
    unsafe {
        call!(HcclCommInitRootInfoScalable(
            n_ranks,
            roots.len() as u32,
            roots.as_ptr(),
            rank,
            n_ext_root,
            config,
            &mut comm,
        ))
    }?;
    Ok(comm)
}

/// `HcclCommInitClusterInfoConfig`: joins the communicator a rank-table
/// file describes, as `rank`.
#[doc(alias = "HcclCommInitClusterInfoConfig")]
pub fn comm_init_cluster_info_config(
    cluster_info: &CStr,
    rank: u32,
    config: &mut sys::HcclCommConfig,
) -> Result<sys::HcclComm> {
    let mut comm = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path, a valid config and out-pointer.
    unsafe {
        call!(HcclCommInitClusterInfoConfig(
            cluster_info.as_ptr(),
            rank,
            config,
            &mut comm
        ))
    }?;
    Ok(comm)
}

/// `HcclCommInitAll`: one communicator per device of `devices`, in order.
#[doc(alias = "HcclCommInitAll")]
pub fn comm_init_all(devices: &mut [i32]) -> Result<Vec<sys::HcclComm>> {
    let mut comms: Vec<sys::HcclComm> = vec![std::ptr::null_mut(); devices.len()];
    // SAFETY: `devices` and `comms` hold `len` elements each.
    unsafe {
        call!(HcclCommInitAll(
            devices.len() as u32,
            devices.as_mut_ptr(),
            comms.as_mut_ptr()
        ))
    }?;
    Ok(comms)
}

/// `HcclCreateSubCommConfig`: the sub-communicator `sub_comm_id` of the
/// ranks `rank_ids` of `comm`, this rank being `sub_comm_rank_id` in it.
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclCreateSubCommConfig")]
pub unsafe fn create_sub_comm_config(
    comm: sys::HcclComm,
    rank_ids: &mut [u32],
    sub_comm_id: u64,
    sub_comm_rank_id: u32,
    config: &mut sys::HcclCommConfig,
) -> Result<sys::HcclComm> {
    let mut parent = comm;
    let mut sub = std::ptr::null_mut();
    // SAFETY: the caller's contract; `rank_ids` holds `len` ranks; the other
    // pointers are valid for the call.
    unsafe {
        call!(HcclCreateSubCommConfig(
            &mut parent,
            rank_ids.len() as u32,
            rank_ids.as_mut_ptr(),
            sub_comm_id,
            sub_comm_rank_id,
            config,
            &mut sub,
        ))
    }?;
    Ok(sub)
}

/// `HcclGetRankId`: this rank of `comm`.
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclGetRankId")]
pub unsafe fn get_rank_id(comm: sys::HcclComm) -> Result<u32> {
    let mut rank = 0u32;
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(HcclGetRankId(comm, &mut rank)) }?;
    Ok(rank)
}

/// `HcclGetRankSize`: the number of ranks of `comm`.
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclGetRankSize")]
pub unsafe fn get_rank_size(comm: sys::HcclComm) -> Result<u32> {
    let mut size = 0u32;
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(HcclGetRankSize(comm, &mut size)) }?;
    Ok(size)
}

/// `HcclGetCommName`: the name of `comm` (read up to its NUL, lossily as
/// UTF-8).
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclGetCommName")]
pub unsafe fn get_comm_name(comm: sys::HcclComm) -> Result<String> {
    let mut buf = [0 as std::ffi::c_char; sys::COMM_NAME_MAX_LENGTH as usize];
    // SAFETY: the caller's contract; a buffer of COMM_NAME_MAX_LENGTH bytes.
    unsafe { call!(HcclGetCommName(comm, buf.as_mut_ptr())) }?;
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `HcclGetCommAsyncError`: the asynchronous error HCCL saw on `comm`, as
/// a raw `HcclResult` (`HCCL_SUCCESS` when none).
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclGetCommAsyncError")]
pub unsafe fn get_comm_async_error(comm: sys::HcclComm) -> Result<sys::HcclResult> {
    let mut code = sys::HCCL_SUCCESS;
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(HcclGetCommAsyncError(comm, &mut code)) }?;
    Ok(code)
}

forward! {
    /// `HcclCommSuspend`: collectives on `comm` fail until it is resumed.
    #[doc(alias = "HcclCommSuspend")]
    comm_suspend = HcclCommSuspend(comm: sys::HcclComm);
    /// `HcclCommResume`: resumes a suspended `comm`.
    #[doc(alias = "HcclCommResume")]
    comm_resume = HcclCommResume(comm: sys::HcclComm);
    /// `HcclCommDestroy`: destroys `comm` (once; its queued collectives
    /// must have run, and it is not used afterwards).
    #[doc(alias = "HcclCommDestroy")]
    comm_destroy = HcclCommDestroy(comm: sys::HcclComm);
}
