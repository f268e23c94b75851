//! [`Comm`]: one rank's communicator.

use crate::config::CommConfig;
use crate::error::{Error, ErrorCode, Result};
use crate::ranktable::RankTable;
use crate::result::{self, raw};
use crate::root_info::RootInfo;
use acl::Device;
use std::path::Path;
use std::sync::Mutex;

/// One rank's communicator (`HcclComm`): a group of ranks — NPUs in this
/// process, in other processes, on other hosts — that run collectives
/// together.
///
/// Creating one is itself collective: every rank calls a constructor, and
/// each call blocks until all ranks have joined. Collectives are methods
/// (see [`collectives`](crate::collectives)); every rank must call the
/// same collectives, with the same counts, types and ops, in the same order.
///
/// Dropping it destroys it (`HcclCommDestroy`); synchronise the streams
/// that run its collectives first. A failed destroy is logged and kept for
/// [`take_release_errors`](crate::take_release_errors); [`Comm::close`]
/// reports it instead.
///
/// `Send + Sync`: HCCL communicators may be used from any thread; calls
/// on one communicator are serialised by a lock, so that the order in which
/// collectives reach HCCL is the order in which they were issued.
pub struct Comm {
    raw: raw::HcclComm,
    device: Device,
    rank: u32,
    size: u32,
    pub(crate) lock: Mutex<()>,
    /// Streams collectives were queued on: waited for before the
    /// communicator is destroyed (HCCL needs its queued work finished).
    pub(crate) streams: Mutex<Vec<acl::Stream>>,
}

// SAFETY: an HcclComm is an opaque handle the library lets any thread use;
// calls through it are serialised by `lock`.
unsafe impl Send for Comm {}
// SAFETY: as above; `&Comm` methods only pass the handle to HCCL, under `lock`.
unsafe impl Sync for Comm {}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.device.ordinal())
            .finish()
    }
}

/// The communicator's ranks may not share a device; each rank's device is
/// bound on the calling thread before HCCL sees it.
fn bind(device: &Device) -> Result<()> {
    device.bind().map_err(Error::Acl)
}

impl Comm {
    fn wrap(raw: raw::HcclComm, device: &Device) -> Result<Comm> {
        // SAFETY: `raw` is a live communicator.
        let ids = unsafe {
            result::get_rank_id(raw).and_then(|rank| Ok((rank, result::get_rank_size(raw)?)))
        };
        // Wrapped even when a query failed, so that dropping it destroys it.
        let (rank, size) = ids.as_ref().map_or((0, 0), |&ids| ids);
        let comm = Comm {
            raw,
            device: device.clone(),
            rank,
            size,
            lock: Mutex::new(()),
            streams: Mutex::new(Vec::new()),
        };
        ids.map(|_| comm)
    }

    /// Joins the communicator of `root` as `rank` of `size`, on `device`.
    /// Blocks until every rank has joined (up to `HCCL_CONNECT_TIMEOUT`).
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// let rt = acl::Runtime::init()?;
    /// let npu = acl::Device::new(&rt, 0)?;
    /// let root = hccl::RootInfo::for_device(&npu)?;
    /// let comm = hccl::Comm::init_root_info(&npu, &root, 1, 0, &hccl::CommConfig::default())?;
    /// assert_eq!((comm.rank(), comm.size()), (0, 1));
    /// # Ok::<(), hccl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank >= size` or the config is
    /// invalid; [`ErrorCode::TcpConnect`] when the root cannot be reached
    /// (the message names its address), [`ErrorCode::Timeout`] when not
    /// every rank joins in time, [`ErrorCode::Para`] when ranks disagree.
    #[doc(alias = "HcclCommInitRootInfoConfig")]
    #[doc(alias = "HcclCommInitRootInfo")]
    pub fn init_root_info(
        device: &Device,
        root: &RootInfo,
        size: u32,
        rank: u32,
        config: &CommConfig,
    ) -> Result<Comm> {
        if size == 0 || rank >= size {
            return Err(Error::invalid(
                "Comm::init_root_info",
                format!("rank {rank} is not in 0..{size}"),
            ));
        }
        let cfg = config.to_raw()?;
        let raw_root = root.to_raw();
        bind(device)?;
        let raw = result::comm_init_root_info_config(size, &raw_root, rank, &cfg)?;
        Comm::wrap(raw, device)
    }

    /// Joins the communicator of several root infos (from
    /// [`RootInfo::new_scalable`], the same list in the same order on every
    /// rank) as `rank` of `size`: large jobs spread the rendezvous over
    /// several roots.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `rank >= size`, the list is empty or
    /// longer than `size`; otherwise as [`Comm::init_root_info`].
    #[doc(alias = "HcclCommInitRootInfoScalable")]
    pub fn init_root_infos(
        device: &Device,
        roots: &[RootInfo],
        size: u32,
        rank: u32,
        config: &CommConfig,
    ) -> Result<Comm> {
        const F: &str = "Comm::init_root_infos";
        if size == 0 || rank >= size {
            return Err(Error::invalid(
                F,
                format!("rank {rank} is not in 0..{size}"),
            ));
        }
        if roots.is_empty() || roots.len() > size as usize {
            return Err(Error::invalid(
                F,
                format!(
                    "{} root infos for {size} ranks: give 1..={size}",
                    roots.len()
                ),
            ));
        }
        let cfg = config.to_raw()?;
        let raw_roots: Vec<raw::HcclRootInfo> = roots.iter().map(RootInfo::to_raw).collect();
        bind(device)?;
        let raw = result::comm_init_root_info_scalable(size, &raw_roots, rank, 0, &cfg)?;
        Comm::wrap(raw, device)
    }

    /// Joins the communicator a rank-table file describes, as `rank`, on
    /// `device`. The file is validated first ([`RankTable`]), so a malformed
    /// table is reported with its problem rather than as an HCCL code.
    ///
    /// # Errors
    ///
    /// [`Error::RankTable`] for a malformed table or a `rank` not in it;
    /// HCCL's errors as for [`Comm::init_root_info`].
    #[doc(alias = "HcclCommInitClusterInfoConfig")]
    #[doc(alias = "HcclCommInitClusterInfo")]
    pub fn init_cluster_info(
        device: &Device,
        rank_table: &Path,
        rank: u32,
        config: &CommConfig,
    ) -> Result<Comm> {
        let table = RankTable::from_file(rank_table)?;
        if rank >= table.rank_count() {
            return Err(Error::RankTable {
                source_name: rank_table.display().to_string(),
                reason: format!(
                    "rank {rank} is not in the table ({} ranks)",
                    table.rank_count()
                ),
            });
        }
        let path =
            std::ffi::CString::new(rank_table.as_os_str().as_encoded_bytes()).map_err(|_| {
                Error::invalid("Comm::init_cluster_info", "the path contains a NUL byte")
            })?;
        let mut cfg = config.to_raw()?;
        bind(device)?;
        let raw = result::comm_init_cluster_info_config(&path, rank, &mut cfg)?;
        Comm::wrap(raw, device)
    }

    /// One communicator per device of this process (`devices[0]` is rank 0),
    /// in order.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for no devices or a device listed twice;
    /// HCCL's error otherwise.
    #[doc(alias = "HcclCommInitAll")]
    pub fn init_all(devices: &[Device]) -> Result<Vec<Comm>> {
        const F: &str = "Comm::init_all";
        if devices.is_empty() {
            return Err(Error::invalid(F, "no devices"));
        }
        let mut ids: Vec<i32> = Vec::with_capacity(devices.len());
        for d in devices {
            let o = d.ordinal() as i32;
            if ids.contains(&o) {
                return Err(Error::invalid(F, format!("device {o} is listed twice")));
            }
            ids.push(o);
        }
        bind(&devices[0])?;
        let raws = result::comm_init_all(&mut ids)?;
        let mut out = Vec::with_capacity(devices.len());
        let mut first_err = None;
        for (raw, d) in raws.into_iter().zip(devices) {
            match Comm::wrap(raw, d) {
                Ok(c) => out.push(c),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// A sub-communicator of the ranks `ranks` (ranks of this communicator,
    /// this one among them), numbered `id` (the same on every member, unique
    /// among this communicator's sub-communicators). Only the members call it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when this rank is not in `ranks`, a rank
    /// is out of range or repeated; HCCL's error otherwise.
    #[doc(alias = "HcclCreateSubCommConfig")]
    pub fn sub_comm(&self, ranks: &[u32], id: u64, config: &CommConfig) -> Result<Comm> {
        const F: &str = "Comm::sub_comm";
        let Some(sub_rank) = ranks.iter().position(|&r| r == self.rank) else {
            return Err(Error::invalid(
                F,
                format!("this rank ({}) is not in {ranks:?}", self.rank),
            ));
        };
        for (i, &r) in ranks.iter().enumerate() {
            if r >= self.size || ranks[..i].contains(&r) {
                return Err(Error::invalid(
                    F,
                    format!("rank {r} is out of range (0..{}) or repeated", self.size),
                ));
            }
        }
        let mut ids = ranks.to_vec();
        let mut cfg = config.to_raw()?;
        bind(&self.device)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: a live communicator.
        let raw = unsafe {
            result::create_sub_comm_config(self.raw, &mut ids, id, sub_rank as u32, &mut cfg)
        }?;
        Comm::wrap(raw, &self.device)
    }

    /// This rank.
    #[doc(alias = "HcclGetRankId")]
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks.
    #[doc(alias = "HcclGetRankSize")]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The device this rank runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for C APIs.
    pub fn as_raw(&self) -> raw::HcclComm {
        self.raw
    }

    /// The communicator's name (from [`CommConfig::name`] or HCCL's default).
    ///
    /// # Errors
    ///
    /// HCCL's error.
    #[doc(alias = "HcclGetCommName")]
    pub fn name(&self) -> Result<String> {
        // SAFETY: a live communicator.
        unsafe { result::get_comm_name(self.raw) }
    }

    /// An asynchronous failure HCCL saw on the communicator, if any: what a
    /// watchdog polls. HCCL reports only `Some(ErrorCode::Remote)` (an
    /// error CQE: a peer failed or died) and `Some(ErrorCode::Para)` (ranks
    /// called different operations); a timed-out collective is reported by
    /// the stream's synchronisation (507048), not here (hicann/hcomm
    /// `docs/en/api_ref/comm_mgr_c/HcclGetCommAsyncError.md`). Nothing in
    /// this crate depends on what it returns.
    ///
    /// # Errors
    ///
    /// HCCL's error from the query itself.
    #[doc(alias = "HcclGetCommAsyncError")]
    pub fn async_error(&self) -> Result<Option<ErrorCode>> {
        // SAFETY: a live communicator.
        let code = unsafe { result::get_comm_async_error(self.raw) }?;
        Ok((code != raw::HCCL_SUCCESS).then(|| ErrorCode::from_raw(code)))
    }

    /// Suspends the communicator: collectives fail with
    /// [`ErrorCode::Suspending`] until [`Comm::resume`].
    ///
    /// # Errors
    ///
    /// HCCL's error (`NotSupport` on libraries without it).
    #[doc(alias = "HcclCommSuspend")]
    pub fn suspend(&self) -> Result<()> {
        // SAFETY: a live communicator.
        unsafe { result::comm_suspend(self.raw) }
    }

    /// Resumes a suspended communicator.
    ///
    /// # Errors
    ///
    /// HCCL's error.
    #[doc(alias = "HcclCommResume")]
    pub fn resume(&self) -> Result<()> {
        // SAFETY: a live communicator.
        unsafe { result::comm_resume(self.raw) }
    }

    /// Destroys the communicator now, reporting a failure.
    ///
    /// # Errors
    ///
    /// HCCL's error from `HcclCommDestroy`.
    #[doc(alias = "HcclCommDestroy")]
    pub fn close(mut self) -> Result<()> {
        if crate::collectives::defer_destroy(&mut self) {
            // A group open on this thread still queues work through it: it
            // is destroyed at the group's end (a failure is recorded then).
            return Ok(());
        }
        let out = self.destroy();
        self.raw = std::ptr::null_mut();
        out
    }

    /// The communicator moved out into a new handle; this one is left
    /// empty (its drop does nothing).
    pub(crate) fn take(&mut self) -> Comm {
        let streams = std::mem::take(&mut *self.streams.lock().unwrap_or_else(|p| p.into_inner()));
        Comm {
            raw: std::mem::replace(&mut self.raw, std::ptr::null_mut()),
            device: self.device.clone(),
            rank: self.rank,
            size: self.size,
            lock: Mutex::new(()),
            streams: Mutex::new(streams),
        }
    }

    fn destroy(&self) -> Result<()> {
        // Queued collectives use the communicator until they have run.
        let streams = std::mem::take(&mut *self.streams.lock().unwrap_or_else(|p| p.into_inner()));
        let mut waited = Ok(());
        for s in &streams {
            if let Err(e) = s.synchronize() {
                waited = waited.and(Err(Error::Acl(e)));
            }
        }
        let _ = self.device.bind();
        // SAFETY: the communicator is live and destroyed only here.
        let destroyed = unsafe { result::comm_destroy(self.raw) };
        waited.and(destroyed)
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if self.raw.is_null() || crate::collectives::defer_destroy(self) {
            return;
        }
        if let Err(e) = self.destroy() {
            crate::release::record("Comm", e);
        }
    }
}
