//! Root info and communicators: `HcclGetRootInfo(Scalable)`, the
//! initialisations (root infos, rank tables, all devices of the process,
//! sub-communicators), `HcclCommDestroy`, the queries, error strings and
//! suspension.

#![allow(non_snake_case)]

use super::common::{
    HCCL_E_IN_STATUS, arg_fail, check_injected, code, code_name, comm_arg, current_device, env_arg,
    fail_with, null, para, tri,
};
use crate::comm::Fail;
use crate::comm::bootstrap;
use crate::comm::communicator::{self, Comm, Options};
use crate::comm::wire::Root;
use crate::recent_error::fail;
use hccl_sys::*;
use std::ffi::c_char;
use std::sync::atomic::Ordering;

/// The options of a config made by `HcclCommConfigInit` (null: all
/// defaults), read as `CommConfig::Load` and `SetConfigByVersion` do
/// (hicann/hcomm `src/legacy/ascend910/framework/communicator/comm_config.cc`):
///
/// - The header's `configSize` bytes are read (at most the size of the
///   bindings' struct; a smaller, older struct is not read past its end).
/// - Each field counts only from the config version that introduced it:
///   buffer size and determinism from 1, the name from 2, the op expansion
///   mode from 4, the zero-copy flag from 7, the exec timeout from 8. A
///   field newer than the config's `version` is ignored, whatever it holds;
///   a version above the library's is read as far as the library knows.
///
/// # Errors
///
/// `HCCL_E_PARA` for a config whose header was not initialised by
/// `HcclCommConfigInit`, a buffer size below 1 MB, a deterministic value
/// above 2 (`DETERMINISTIC_STRICT`), or 2 on a SoC other than a 910B (A2)
/// part (`SetConfigDeterministic`: "only support A2"), a name without its
/// terminating NUL, or a zero-copy flag above 1. An op expansion mode
/// above 4 is ignored. An exec timeout is checked later, against the SoC,
/// and ignored when out of range (`SetConfigExecTimeout`: a warning, not
/// an error). (The op expansion mode selects the AIV timeout rules; the
/// world rank id, job id and zero-copy flag are accepted but change nothing
/// here: the simulator has one execution engine and no graph capture.)
///
/// # Safety
///
/// `config` is null or points to a readable `HcclCommConfig` header (24
/// bytes) followed by the `configSize` bytes it declares.
unsafe fn read_config(config: *const HcclCommConfig) -> Result<Options, (HcclResult, String)> {
    if config.is_null() {
        return Ok(Options::default());
    }
    const HEADER: usize = 24;
    let full = std::mem::size_of::<HcclCommConfig>();
    let mut header = [0u8; HEADER];
    // SAFETY: the caller's contract: the header is readable.
    unsafe { std::ptr::copy_nonoverlapping(config.cast::<u8>(), header.as_mut_ptr(), HEADER) };
    let word = |at: usize| u32::from_ne_bytes(header[at..at + 4].try_into().unwrap_or_default());
    let magic = word(8);
    if magic != HCCL_COMM_CONFIG_MAGIC_WORD {
        return Err((
            HCCL_E_PARA,
            format!(
                "config: the magic word is {magic:#x}, not {HCCL_COMM_CONFIG_MAGIC_WORD:#x}: \
                 initialise the config with HcclCommConfigInit first"
            ),
        ));
    }
    let declared = u64::from_ne_bytes(header[0..8].try_into().unwrap_or_default());
    let size = usize::try_from(declared).map_or(full, |d| d.clamp(HEADER, full));
    let version = word(12);
    // SAFETY: plain data; all zeroes is a valid value.
    let mut copy: HcclCommConfig = unsafe { std::mem::zeroed() };
    // SAFETY: `size` bytes are readable (the caller's contract) and fit in
    // `copy`; the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(config.cast::<u8>(), (&raw mut copy).cast::<u8>(), size)
    };
    let c = &copy;
    let mut o = Options::default();
    if version >= 1 {
        if c.hcclBufferSize != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET {
            if c.hcclBufferSize == 0 {
                return Err((
                    HCCL_E_PARA,
                    "config: hcclBufferSize is 0 MB; the minimum is 1 MB".to_string(),
                ));
            }
            o.buffer_mib = Some(c.hcclBufferSize);
        }
        if c.hcclDeterministic != HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET {
            let soc = crate::config::get().map_or_else(|_| String::new(), |c| c.soc_name.clone());
            check_deterministic(c.hcclDeterministic, &soc)?;
            o.deterministic = Some(c.hcclDeterministic);
        }
    }
    if version >= 2 {
        let name: Vec<u8> = c.hcclCommName.iter().map(|&b| b as u8).collect();
        let Some(end) = name.iter().position(|&b| b == 0) else {
            return Err((
                HCCL_E_PARA,
                format!(
                    "config: hcclCommName has no terminating NUL within {COMM_NAME_MAX_LENGTH} \
                     bytes"
                ),
            ));
        };
        if end > 0 {
            o.name = Some(String::from_utf8_lossy(&name[..end]).into_owned());
        }
    }
    if version >= 4 {
        // 0 default, 1 host, 2 AI CPU, 3 AIV, 4 AIV only; another value is
        // ignored (the environment's mode applies), as
        // `CommConfig::SetConfigOpExpansionMode` does with a warning.
        if c.hcclOpExpansionMode > 4 {
            crate::recent_error::record(format!(
                "HcclCommConfig: hcclOpExpansionMode {} is ignored (expected 0 default, 1 host, \
                 2 AI CPU, 3 AIV or 4 AIV only); HCCL_OP_EXPANSION_MODE applies",
                c.hcclOpExpansionMode
            ));
        }
        o.aiv = matches!(c.hcclOpExpansionMode, 3 | 4);
    }
    if version >= 7 && c.aclGraphZeroCopyEnable > 1 {
        return Err((
            HCCL_E_PARA,
            format!(
                "config: aclGraphZeroCopyEnable is {}; expected 0 (off) or 1 (on)",
                c.aclGraphZeroCopyEnable
            ),
        ));
    }
    if version >= 8 && c.hcclExecTimeOut != HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET {
        o.exec_timeout_s = Some(c.hcclExecTimeOut);
    }
    Ok(o)
}

/// `SetConfigDeterministic`: 0 (off), 1 (on), or 2 (strict) on a 910B (A2)
/// part only (`DevType::DEV_TYPE_910B`; the 910_93 parts are A3).
fn check_deterministic(value: u32, soc: &str) -> Result<(), (HcclResult, String)> {
    match value {
        0 | 1 => Ok(()),
        2 => {
            if soc.starts_with("Ascend910B") {
                Ok(())
            } else {
                Err((
                    HCCL_E_PARA,
                    format!(
                        "config: hcclDeterministic is 2 (strict), which only the 910B (A2) parts \
                         support; this SoC is {soc:?}"
                    ),
                ))
            }
        }
        v => Err((
            HCCL_E_PARA,
            format!("config: hcclDeterministic is {v}; expected 0 (off), 1 (on) or 2 (strict)"),
        )),
    }
}

/// The communicator options of `config` (null: the defaults).
///
/// # Safety
///
/// `config` is null or a readable `HcclCommConfig`.
unsafe fn options_arg(f: &str, config: *const HcclCommConfig) -> Result<Options, HcclResult> {
    // SAFETY: the caller's contract.
    unsafe { read_config(config) }.map_err(|(code, msg)| fail(code, format!("{f}: {msg}")))
}

/// Stores the handle of a newly made communicator in `*out`, or reports
/// why it could not be made.
///
/// # Safety
///
/// `out` is non-null and writable.
unsafe fn register_out(f: &str, made: Result<Comm, Fail>, out: *mut HcclComm) -> HcclResult {
    match made {
        Ok(c) => {
            // SAFETY: the caller's contract.
            unsafe { *out = communicator::register(c) as HcclComm };
            HCCL_SUCCESS
        }
        Err(e) => fail_with(f, e),
    }
}

/// The body of a query export: the injected fault, a null `out`, the
/// communicator, then `*out = get(comm)`.
///
/// # Safety
///
/// `out` is null or writable.
unsafe fn query<T>(
    f: &str,
    comm: HcclComm,
    out: *mut T,
    what: &str,
    get: impl FnOnce(&Comm) -> T,
) -> HcclResult {
    check_injected!(f);
    if out.is_null() {
        return null(f, what);
    }
    let c = tri!(comm_arg(f, comm));
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *out = get(&c) };
    HCCL_SUCCESS
}

/// Sets or clears a communicator's suspension (`HcclCommSuspend`,
/// `HcclCommResume`).
fn set_suspended(f: &str, comm: HcclComm, suspended: bool) -> HcclResult {
    check_injected!(f);
    let c = tri!(comm_arg(f, comm));
    c.suspended.store(suspended, Ordering::Release);
    HCCL_SUCCESS
}

/// `HcclGetRootInfo`: starts this process's root server (see
/// `bootstrap`) and describes it in `rootInfo`.
///
/// # Safety
///
/// `rootInfo` is null or valid for writing an `HcclRootInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfo(rootInfo: *mut HcclRootInfo) -> HcclResult {
    // SAFETY: forwarded.
    unsafe { get_root_info("HcclGetRootInfo", rootInfo) }
}

/// The body of `HcclGetRootInfo` and `HcclGetRootInfoScalable`, in HCCL's
/// order (hicann/hcomm `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
/// `HcclGetRootInfo`): the current device (`hrtGetDeviceRefresh`:
/// `HCCL_E_RUNTIME` without one), the pointer, the environment
/// (`InitExternalInput`: `HCCL_E_PARA` for a bad variable), then the root
/// server on the device's port.
unsafe fn get_root_info(F: &str, rootInfo: *mut HcclRootInfo) -> HcclResult {
    check_injected!(F);
    let device = tri!(current_device(F));
    if rootInfo.is_null() {
        return null(F, "rootInfo");
    }
    tri!(env_arg(F));
    match bootstrap::start_root_server(device) {
        Ok(root) => {
            let mut blob = [0u8; HCCL_ROOT_INFO_BYTES as usize];
            root.encode(&mut blob);
            // SAFETY: checked non-null; the caller's contract.
            let info = unsafe { &mut *rootInfo };
            for (c, b) in info.internal.iter_mut().zip(blob) {
                *c = b as c_char;
            }
            HCCL_SUCCESS
        }
        Err(f) => fail_with(F, f),
    }
}

/// `HcclCommInitRootInfo`: joins the communicator of `rootInfo`; blocks
/// until every rank has.
///
/// # Safety
///
/// `rootInfo` is null or a readable `HcclRootInfo`; `comm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    nRanks: u32,
    rootInfo: *const HcclRootInfo,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_root_info(
            "HcclCommInitRootInfo",
            nRanks,
            rootInfo,
            rank,
            std::ptr::null(),
            comm,
        )
    }
}

/// `HcclCommInitRootInfoConfig`: as `HcclCommInitRootInfo`, with options.
///
/// # Safety
///
/// As `HcclCommInitRootInfo`; `config` null or a readable `HcclCommConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    nRanks: u32,
    rootInfo: *const HcclRootInfo,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_root_info(
            "HcclCommInitRootInfoConfig",
            nRanks,
            rootInfo,
            rank,
            config,
            comm,
        )
    }
}

unsafe fn init_root_info(
    f: &str,
    n: u32,
    root: *const HcclRootInfo,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded; one root info.
    unsafe { init_root_infos(f, n, root, 1, rank, config, comm) }
}

/// The common body of the root-info initialisations: `roots` points to
/// `nroots` root infos.
unsafe fn init_root_infos(
    f: &str,
    n: u32,
    roots: *const HcclRootInfo,
    nroots: u32,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    check_injected!(f);
    if roots.is_null() {
        return null(
            f,
            if nroots == 1 {
                "rootInfo"
            } else {
                "rootInfoList"
            },
        );
    }
    if comm.is_null() {
        return null(f, "comm");
    }
    if n == 0 {
        return para(f, "nRanks is 0");
    }
    if rank >= n {
        return para(f, format!("rank {rank} is out of range for nRanks {n}"));
    }
    if nroots == 0 || nroots > n {
        return para(f, format!("nRoot {nroots} is not in 1..={n} (nRanks)"));
    }
    // SAFETY: the caller's contract.
    let options = tri!(unsafe { options_arg(f, config) });
    let device = tri!(current_device(f));
    tri!(env_arg(f));
    let mut decoded = Vec::with_capacity(nroots as usize);
    for k in 0..nroots as usize {
        // SAFETY: checked non-null; the caller's contract: `nroots` root infos.
        let info = unsafe { &*roots.add(k) };
        let blob: Vec<u8> = info.internal.iter().map(|&c| c as u8).collect();
        match Root::decode(&blob) {
            Ok(r) if decoded.iter().any(|d: &Root| d.uid == r.uid) => {
                return para(f, format!("root info {k} repeats an earlier one"));
            }
            Ok(r) => decoded.push(r),
            Err(e) if nroots == 1 => return para(f, format!("rootInfo: {e}")),
            Err(e) => return para(f, format!("rootInfoList[{k}]: {e}")),
        }
    }
    let made = bootstrap::init_roots(n, &decoded, rank, device, options);
    // SAFETY: checked non-null.
    unsafe { register_out(f, made, comm) }
}

/// `HcclGetRootInfoScalable`: a root info for [`HcclCommInitRootInfoScalable`]
/// (each call starts another root server, as `HcclGetRootInfo` does).
///
/// # Safety
///
/// `rootInfo` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfoScalable(rootInfo: *mut HcclRootInfo) -> HcclResult {
    // SAFETY: forwarded.
    unsafe { get_root_info("HcclGetRootInfoScalable", rootInfo) }
}

/// `HcclCommInitRootInfoScalable`: joins the communicator of `nRoot` root
/// infos (identical on every rank); `nExtRoot` is reserved and must be 0.
///
/// # Safety
///
/// `rootInfoList` null or `nRoot` readable root infos; `config` null or a
/// readable `HcclCommConfig`; `comm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoScalable(
    nRanks: u32,
    nRoot: u32,
    rootInfoList: *const HcclRootInfo,
    rank: u32,
    nExtRoot: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    const F: &str = "HcclCommInitRootInfoScalable";
    if nExtRoot != 0 {
        return para(
            F,
            format!("nExtRoot is {nExtRoot}; it is reserved and must be 0"),
        );
    }
    // SAFETY: forwarded.
    unsafe { init_root_infos(F, nRanks, rootInfoList, nRoot, rank, config, comm) }
}

/// `HcclCommInitClusterInfo`: joins the communicator of a rank table file.
///
/// # Safety
///
/// `clusterInfo` is null or a NUL-terminated path; `comm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfo(
    clusterInfo: *const c_char,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_cluster(
            "HcclCommInitClusterInfo",
            clusterInfo,
            rank,
            std::ptr::null(),
            comm,
        )
    }
}

/// `HcclCommInitClusterInfoConfig`: as `HcclCommInitClusterInfo`, with options.
///
/// # Safety
///
/// As `HcclCommInitClusterInfo`; `config` null or a readable `HcclCommConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfoConfig(
    clusterInfo: *const c_char,
    rank: u32,
    config: *mut HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_cluster(
            "HcclCommInitClusterInfoConfig",
            clusterInfo,
            rank,
            config,
            comm,
        )
    }
}

unsafe fn init_cluster(
    f: &str,
    path: *const c_char,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    check_injected!(f);
    // HCCL's order (hicann/hcomm
    // `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
    // `HcclCommInitClusterInfo(Config)`): the device, the pointers, the
    // environment, the config, then the file.
    let device = tri!(current_device(f));
    if path.is_null() {
        return null(f, "clusterInfo");
    }
    if comm.is_null() {
        return null(f, "comm");
    }
    tri!(env_arg(f));
    // SAFETY: the caller's contract.
    let options = tri!(unsafe { options_arg(f, config) });
    // SAFETY: the caller's contract: a NUL-terminated path.
    let path = unsafe { std::ffi::CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned();
    let (ranks, fp) = match crate::comm::ranktable::load(&path) {
        Ok(t) => t,
        Err(e) => return arg_fail(f, e),
    };
    if rank as usize >= ranks.len() {
        return para(
            f,
            format!(
                "rank {rank} is not in the rank table {path} ({} ranks)",
                ranks.len()
            ),
        );
    }
    let made = bootstrap::init_table(&ranks, fp, rank, device, options);
    // SAFETY: checked non-null.
    unsafe { register_out(f, made, comm) }
}

/// `HcclCommInitAll`: one communicator per device of this process,
/// `devices[0]` being rank 0.
///
/// # Safety
///
/// `devices` null or valid for `ndev` reads; `comms` null or for `ndev` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitAll(
    ndev: u32,
    devices: *mut i32,
    comms: *mut HcclComm,
) -> HcclResult {
    const F: &str = "HcclCommInitAll";
    check_injected!(F);
    if devices.is_null() {
        return null(F, "devices");
    }
    if comms.is_null() {
        return null(F, "comms");
    }
    if ndev == 0 {
        return para(F, "ndev is 0");
    }
    // SAFETY: the caller's contract.
    let devs = unsafe { std::slice::from_raw_parts(devices, ndev as usize) }.to_vec();
    let count = crate::config::get().map_or(0, |c| c.device_count());
    for (i, &d) in devs.iter().enumerate() {
        if d < 0 || d as u32 >= count {
            return para(
                F,
                format!("devices[{i}] = {d} is not a device (0..{count})"),
            );
        }
        if devs[..i].contains(&d) {
            return para(F, format!("device {d} appears twice in devices"));
        }
    }
    tri!(env_arg(F));
    let devs: Vec<u32> = devs.iter().map(|&d| d as u32).collect();
    let made = match bootstrap::init_all(&devs) {
        Ok(m) => m,
        Err(e) => return fail_with(F, e),
    };
    for (i, c) in made.into_iter().enumerate() {
        // SAFETY: `comms` is valid for `ndev` writes (the caller's contract).
        unsafe { *comms.add(i) = communicator::register(c) as HcclComm };
    }
    HCCL_SUCCESS
}

/// `HcclCreateSubCommConfig`: a communicator of some ranks of `*comm`.
///
/// # Safety
///
/// `comm` null or a readable handle pointer; `rankIds` null or valid for
/// `rankNum` reads; `config` null or readable; `subComm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCreateSubCommConfig(
    comm: *mut HcclComm,
    rankNum: u32,
    rankIds: *mut u32,
    subCommId: u64,
    subCommRankId: u32,
    config: *mut HcclCommConfig,
    subComm: *mut HcclComm,
) -> HcclResult {
    const F: &str = "HcclCreateSubCommConfig";
    check_injected!(F);
    if comm.is_null() {
        return null(F, "comm");
    }
    if rankIds.is_null() {
        return null(F, "rankIds");
    }
    if subComm.is_null() {
        return null(F, "subComm");
    }
    // SAFETY: checked non-null; the caller's contract.
    let parent = tri!(comm_arg(F, unsafe { *comm }));
    if rankNum == 0 || rankNum > parent.nranks {
        return para(
            F,
            format!(
                "rankNum {rankNum} must be 1..={} (the parent's size)",
                parent.nranks
            ),
        );
    }
    if subCommRankId >= rankNum {
        return para(
            F,
            format!("subCommRankId {subCommRankId} is not below rankNum {rankNum}"),
        );
    }
    // SAFETY: the caller's contract.
    let ids = unsafe { std::slice::from_raw_parts(rankIds, rankNum as usize) }.to_vec();
    for (i, &r) in ids.iter().enumerate() {
        if r >= parent.nranks {
            return para(F, format!("rankIds[{i}] = {r} is not a rank of the parent"));
        }
        if ids[..i].contains(&r) {
            return para(F, format!("rank {r} appears twice in rankIds"));
        }
    }
    if ids[subCommRankId as usize] != parent.rank {
        return para(
            F,
            format!(
                "rankIds[subCommRankId = {subCommRankId}] is {}, but this is rank {} of the parent",
                ids[subCommRankId as usize], parent.rank
            ),
        );
    }
    // SAFETY: the caller's contract.
    let options = tri!(unsafe { options_arg(F, config) });
    parent.next_sub();
    let made = bootstrap::sub_comm(&parent, &ids, subCommId, subCommRankId, options);
    // SAFETY: checked non-null.
    unsafe { register_out(F, made, subComm) }
}

/// `HcclCommDestroy`, in HCCL's order (hicann/hcomm
/// `src/legacy/ascend910/framework/op_base/src/op_base.cc`): the current
/// device (`HcclDeviceRefresh`: `HCCL_E_RUNTIME` without one); a null
/// communicator is success ("An empty comm given, skip destroy"); one
/// another thread is calling into is `HCCL_E_AGAIN`; an unknown one
/// `HCCL_E_PARA` ("comm is not exist"). Queued collectives still run: the
/// connections close after the last.
///
/// # Safety
///
/// Any value may be passed; handles are looked up, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDestroy(comm: HcclComm) -> HcclResult {
    const F: &str = "HcclCommDestroy";
    check_injected!(F);
    tri!(current_device(F));
    if comm.is_null() {
        return HCCL_SUCCESS;
    }
    if let Err(e) = communicator::destroy(comm as usize) {
        return arg_fail(F, e);
    }
    HCCL_SUCCESS
}

/// `HcclGetRankId`.
///
/// # Safety
///
/// `rank` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult {
    // SAFETY: the caller's contract.
    unsafe { query("HcclGetRankId", comm, rank, "rank", |c| c.rank) }
}

/// `HcclGetRankSize`.
///
/// # Safety
///
/// `rankSize` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankSize(comm: HcclComm, rankSize: *mut u32) -> HcclResult {
    // SAFETY: the caller's contract.
    unsafe { query("HcclGetRankSize", comm, rankSize, "rankSize", |c| c.nranks) }
}

/// `HcclGetCommName`: the name, NUL-terminated, into a buffer of
/// `COMM_NAME_MAX_LENGTH` (128) bytes.
///
/// # Safety
///
/// `commName` null or writable for 128 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommName(comm: HcclComm, commName: *mut c_char) -> HcclResult {
    const F: &str = "HcclGetCommName";
    check_injected!(F);
    if commName.is_null() {
        return null(F, "commName");
    }
    let c = tri!(comm_arg(F, comm));
    let bytes = c.name.as_bytes();
    let n = bytes.len().min(COMM_NAME_MAX_LENGTH as usize - 1);
    // SAFETY: the caller's contract: 128 writable bytes; n + 1 <= 128.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), commName, n);
        *commName.add(n) = 0;
    }
    HCCL_SUCCESS
}

/// `HcclGetCommAsyncError`: `HCCL_SUCCESS` in `asyncError`, or
/// `HCCL_E_REMOTE` for a peer that failed or is gone, `HCCL_E_PARA` for a
/// collective the ranks called differently (see [`Comm::async_error`]);
/// timeouts are reported by the stream's synchronisation only.
///
/// # Safety
///
/// `asyncError` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommAsyncError(
    comm: HcclComm,
    asyncError: *mut HcclResult,
) -> HcclResult {
    const F: &str = "HcclGetCommAsyncError";
    // SAFETY: the caller's contract.
    unsafe {
        query(F, comm, asyncError, "asyncError", |c| {
            let e = c.async_error();
            if let Some(f) = &e {
                crate::recent_error::record(format!(
                    "{F}: the communicator failed: {}: {}",
                    code_name(code(f.kind)),
                    f.msg
                ));
            }
            e.map_or(HCCL_SUCCESS, |f| code(f.kind))
        })
    }
}

/// `HcclGetErrorString`: the code's description (a static string).
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetErrorString(code: HcclResult) -> *const c_char {
    let s: &'static std::ffi::CStr = match code {
        HCCL_SUCCESS => c"success",
        HCCL_E_PARA => c"parameter error",
        HCCL_E_PTR => c"empty pointer",
        HCCL_E_MEMORY => c"memory error",
        HCCL_E_INTERNAL => c"internal error",
        HCCL_E_NOT_SUPPORT => c"not support feature",
        HCCL_E_NOT_FOUND => c"not found specific resource",
        HCCL_E_UNAVAIL => c"resource unavailable",
        HCCL_E_SYSCALL => c"call system interface error",
        HCCL_E_TIMEOUT => c"timeout",
        HCCL_E_OPEN_FILE_FAILURE => c"open file fail",
        HCCL_E_TCP_CONNECT => c"tcp connect fail",
        HCCL_E_ROCE_CONNECT => c"roce connect fail",
        HCCL_E_TCP_TRANSFER => c"tcp transfer fail",
        HCCL_E_ROCE_TRANSFER => c"roce transfer fail",
        HCCL_E_RUNTIME => c"call runtime api fail",
        HCCL_E_DRV => c"call driver api fail",
        HCCL_E_PROFILING => c"call profiling api fail",
        HCCL_E_CCE => c"call cce api fail",
        HCCL_E_NETWORK => c"call network api fail",
        HCCL_E_AGAIN => c"try again",
        HCCL_E_REMOTE => c"error cqe",
        HCCL_E_SUSPENDING => c"error communicator suspending",
        HCCL_E_OPRETRY_FAIL => c"retry constraint",
        HCCL_E_OOM => c"out of memory",
        HCCL_E_IN_STATUS => c"The error information is in the status.",
        _ => c"unknown error",
    };
    s.as_ptr()
}

/// `HcclCommSuspend`: collectives are refused (`HCCL_E_SUSPENDING`) until
/// `HcclCommResume`.
///
/// # Safety
///
/// Any value may be passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSuspend(comm: HcclComm) -> HcclResult {
    set_suspended("HcclCommSuspend", comm, true)
}

/// `HcclCommResume`.
///
/// # Safety
///
/// Any value may be passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommResume(comm: HcclComm) -> HcclResult {
    set_suspended("HcclCommResume", comm, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(version: u32) -> HcclCommConfig {
        let mut c = HcclCommConfig::default();
        hccl_sys::comm_config_init(&mut c);
        for (d, s) in c.reserved[12..16].iter_mut().zip(version.to_ne_bytes()) {
            *d = s as c_char;
        }
        c
    }

    fn read(c: &HcclCommConfig) -> Result<Options, HcclResult> {
        // SAFETY: a whole config.
        unsafe { read_config(c) }.map_err(|(code, _)| code)
    }

    #[test]
    fn a_field_newer_than_the_config_version_is_ignored() {
        let mut c = config(1);
        c.aclGraphZeroCopyEnable = 5;
        c.hcclExecTimeOut = 77;
        c.hcclCommName = [b'x' as c_char; 128];
        let o = read(&c).unwrap();
        assert_eq!((o.exec_timeout_s, o.name), (None, None));
        let mut c = config(7);
        c.aclGraphZeroCopyEnable = 5;
        assert_eq!(read(&c).unwrap_err(), HCCL_E_PARA);
        c.aclGraphZeroCopyEnable = 1;
        c.hcclExecTimeOut = 77;
        assert_eq!(
            read(&c).unwrap().exec_timeout_s,
            None,
            "exec timeout is version 8"
        );
        let mut c = config(8);
        c.hcclExecTimeOut = 77;
        assert_eq!(read(&c).unwrap().exec_timeout_s, Some(77));
    }

    #[test]
    fn bytes_past_the_declared_size_are_not_read() {
        let mut c = config(10);
        // Only the header and the two version-1 fields.
        for (d, s) in c.reserved[0..8].iter_mut().zip(32u64.to_ne_bytes()) {
            *d = s as c_char;
        }
        c.hcclDeterministic = 1;
        c.hcclCommName = [b'x' as c_char; 128];
        let o = read(&c).unwrap();
        assert_eq!((o.deterministic, o.name), (Some(1), None));
    }

    #[test]
    fn strict_determinism_is_valid_on_910b_parts_only() {
        assert!(check_deterministic(2, "Ascend910B3").is_ok());
        assert!(check_deterministic(2, "Ascend910B4-1").is_ok());
        assert_eq!(
            check_deterministic(2, "Ascend910_9391").unwrap_err().0,
            HCCL_E_PARA
        );
        assert_eq!(
            check_deterministic(3, "Ascend910B3").unwrap_err().0,
            HCCL_E_PARA
        );
        assert!(check_deterministic(1, "Ascend910_9391").is_ok());
    }
}
