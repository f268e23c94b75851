//! The collectives for communicators whose ranks all share one host and are
//! linked directly ([`super::local`]): every rank *pulls* what it needs
//! straight from its peers' device memory instead of passing pieces around
//! a ring of sockets.
//!
//! Each rank's signature carries its [`Ext`]: where its send and receive
//! buffers are (address, and the memory file and offset behind them), and
//! for all-to-all where its block for the receiver starts. After the
//! signature exchange every rank knows where to read. A peer's buffer is
//! read, in order of preference:
//!
//! 1. through a read-only mapping of its memory file (device buffers of at
//!    least `MAPPED_BLOCK` (2 MiB) bytes in another process): plain
//!    loads, no copy through the kernel; the mapping is kept for the next
//!    collective while it keeps using the buffer;
//! 2. directly, when the peer is a thread of this process (checked against
//!    the allocation table, like every device access);
//! 3. with `process_vm_readv` (smaller buffers of other processes).
//!
//! | collective | what each rank does |
//! |---|---|
//! | all-reduce | reduces its own block of everyone's input, says so, copies every other block of the result from its owner as soon as that owner says so |
//! | reduce-scatter(-v) | reduces its own block of everyone's input |
//! | all-gather(-v) | copies every rank's input into its block |
//! | broadcast, scatter | copies its part from the root |
//! | reduce | the root reduces everyone's input |
//! | all-to-all(-v, -vc) | copies from every rank the block that rank addressed to it |
//!
//! Every collective ends with a *sync* (each rank tells every other that it
//! is done and waits for theirs), so that no rank returns, and lets its
//! caller free or overwrite its buffers, while a peer may still read them.
//! Each block is reduced once, by its owner, and copied from there, so every
//! rank ends with the same bits; the owner takes the inputs in the order the
//! ring over TCP does (the next rank's first, its own last), so that the
//! bits do not depend on the path either.

use super::algo::{Coll, Ctx, pieces_of};
use super::error::{ErrorKind, Fail};
use super::local::{self, Mapping};
use super::mem::Mem;
use super::reduce::{DataType, ReduceOp, reduce};
use super::wire::u64_at;
use crate::state::{self, Region};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Bytes reduced at a time (two such buffers stay in cache).
const CHUNK: usize = 256 << 10;
/// A sync message.
const DONE: u8 = 0x5A;
/// Bytes copied into device memory per locked step.
const PULL: usize = 4 << 20;
/// Bytes of a [`Buf`] and of an [`Ext`] on the wire.
pub(super) const BUF: usize = 32;
const EXT: usize = 16 + 2 * BUF;

/// Where one of a rank's buffers is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Buf {
    /// Its address in its process.
    pub addr: u64,
    /// The descriptor of its memory file there (`-1`: none).
    pub fd: i32,
    /// The memory file's inode.
    pub ino: u64,
    /// The buffer's offset in the file.
    pub file_off: u64,
}

impl Buf {
    /// Where `m` is.
    pub(super) fn of(m: &Mem) -> Buf {
        let shared = (m.len > 0)
            .then(|| state::memory().read().shared_file(m.addr))
            .flatten();
        match shared {
            Some((f, off)) => Buf {
                addr: m.addr as u64,
                fd: f.fd,
                ino: f.ino,
                file_off: off as u64,
            },
            None => Buf {
                addr: m.addr as u64,
                fd: -1,
                ..Buf::default()
            },
        }
    }

    pub(super) fn put(&self, b: &mut [u8]) {
        b[..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..16].copy_from_slice(&i64::from(self.fd).to_le_bytes());
        b[16..24].copy_from_slice(&self.ino.to_le_bytes());
        b[24..32].copy_from_slice(&self.file_off.to_le_bytes());
    }

    pub(super) fn get(b: &[u8]) -> Buf {
        let q = |i: usize| u64_at(b, i);
        Buf {
            addr: q(0),
            fd: i32::try_from(q(8) as i64).unwrap_or(-1),
            ino: q(16),
            file_off: q(24),
        }
    }
}

/// What a rank adds to its signature for the direct algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ext {
    /// Whether this rank is linked directly to every rank of the communicator.
    pub linked: bool,
    /// Its send buffer (the buffer, for broadcast).
    pub send: Buf,
    /// Its receive buffer.
    pub recv: Buf,
    /// All-to-all: the offset in its send buffer of the block for the
    /// receiver of this signature.
    pub off: u64,
}

impl Ext {
    /// Little-endian bytes.
    pub fn bytes(&self) -> [u8; EXT] {
        let mut b = [0u8; EXT];
        b[..8].copy_from_slice(&u64::from(self.linked).to_le_bytes());
        b[8..16].copy_from_slice(&self.off.to_le_bytes());
        self.send.put(&mut b[16..16 + BUF]);
        self.recv.put(&mut b[16 + BUF..]);
        b
    }

    /// Parses [`Ext::bytes`].
    pub fn parse(b: &[u8]) -> Option<Ext> {
        if b.len() != EXT {
            return None;
        }
        Some(Ext {
            linked: b[0] == 1,
            off: u64_at(b, 8),
            send: Buf::get(&b[16..16 + BUF]),
            recv: Buf::get(&b[16 + BUF..]),
        })
    }
}

impl Coll {
    /// Whether this rank's buffers allow the direct algorithms: they pull
    /// into the receive buffer while peers may still read the send buffer,
    /// so the two may overlap only in the in-place layouts where what this
    /// rank writes is never what a peer reads (all-reduce `send == recv`,
    /// all-gather with `send` at this rank's block of `recv`,
    /// reduce-scatter with `recv` at this rank's block of `send`, reduce
    /// `send == recv`, scatter with `recv` at this rank's block of `send`).
    /// Any other overlap sends the whole collective over TCP, which sends
    /// everything before it writes.
    pub(super) fn direct_safe(&self, me: usize, n: u32) -> bool {
        let at = |base: &Mem, off: usize, other: &Mem| other.addr == base.addr + off;
        match self {
            Coll::AllReduce { .. } | Coll::Broadcast { .. } | Coll::Barrier => true,
            Coll::AllGather { send, recv, .. } | Coll::AllGatherV { send, recv, .. } => {
                !send.overlaps(recv) || at(recv, self.blocks(n)[me].0, send)
            }
            Coll::ReduceScatter { send, recv, .. } | Coll::ReduceScatterV { send, recv, .. } => {
                !send.overlaps(recv) || at(send, self.blocks(n)[me].0, recv)
            }
            Coll::Reduce { send, recv, .. } => !send.overlaps(recv) || send.addr == recv.addr,
            Coll::Scatter { send, recv, .. } => {
                !send.overlaps(recv) || at(send, me * self.count_bytes(), recv)
            }
            Coll::AlltoAll { send, recv, .. } | Coll::AlltoAllV { send, recv, .. } => {
                !send.overlaps(recv)
            }
        }
    }

    /// Whether rank `me` reads rank `p`'s send and receive buffers.
    fn reads(&self, me: u32, p: u32) -> [bool; 2] {
        match self {
            Coll::AllReduce { .. } => [true, true],
            Coll::AllGather { .. }
            | Coll::AllGatherV { .. }
            | Coll::ReduceScatter { .. }
            | Coll::ReduceScatterV { .. }
            | Coll::AlltoAll { .. }
            | Coll::AlltoAllV { .. } => [true, false],
            Coll::Broadcast { root, .. } | Coll::Scatter { root, .. } => [p == *root, false],
            Coll::Reduce { root, .. } => [me == *root, false],
            Coll::Barrier => [false, false],
        }
    }

    /// This rank's [`Ext`] as told to `peer`.
    pub(super) fn ext(&self, peer: usize, linked: bool) -> Ext {
        let e = |send: &Mem, recv: &Mem, off: usize| Ext {
            linked,
            send: Buf::of(send),
            recv: Buf::of(recv),
            off: off as u64,
        };
        match self {
            Coll::AllReduce { send, recv, .. }
            | Coll::Reduce { send, recv, .. }
            | Coll::AllGather { send, recv, .. }
            | Coll::AllGatherV { send, recv, .. }
            | Coll::ReduceScatter { send, recv, .. }
            | Coll::ReduceScatterV { send, recv, .. }
            | Coll::Scatter { send, recv, .. } => e(send, recv, 0),
            Coll::Broadcast { buf, .. } => e(buf, buf, 0),
            Coll::AlltoAll {
                send,
                recv,
                send_count,
                ..
            } => e(send, recv, peer * *send_count as usize * self.elem_size()),
            Coll::AlltoAllV {
                send,
                recv,
                sdispls,
                ..
            } => e(
                send,
                recv,
                sdispls
                    .get(peer)
                    .map_or(0, |&d| d as usize * self.elem_size()),
            ),
            Coll::Barrier => Ext {
                linked,
                send: Buf::default(),
                recv: Buf::default(),
                off: 0,
            },
        }
    }
}

/// Which of a peer's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Send,
    Recv,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Send => "sendBuf",
            Which::Recv => "recvBuf",
        }
    }
}

/// How this rank reads one of a peer's buffers.
#[derive(Debug, Clone)]
pub(super) enum Src {
    /// A thread of this process: its address, checked in the table.
    Local(usize),
    /// A mapping of its memory file, and the buffer's offset in it.
    Mapped(Arc<Mapping>, usize),
    /// Another process: `process_vm_readv` at this address.
    Remote(usize),
}

/// `len` bytes of `v` (which has 8 more) starting at an 8-byte aligned
/// address, so that reductions run on typed elements.
fn aligned(v: &mut [u8], len: usize) -> &mut [u8] {
    let at = v.as_ptr().align_offset(8).min(v.len() - len);
    &mut v[at..at + len]
}

/// How to read a buffer `b` of process `pid`: directly in this process,
/// through a mapping of its memory file (from `maps`, or made and added;
/// recorded in `used`) when `needed`, else with `process_vm_readv`.
pub(super) fn source(
    maps: &mut std::collections::HashMap<(u32, u64), Arc<Mapping>>,
    used: &mut HashSet<(u32, u64)>,
    pid: u32,
    b: &Buf,
    needed: bool,
) -> Src {
    if pid == std::process::id() {
        return Src::Local(b.addr as usize);
    }
    if needed && b.fd >= 0 {
        let key = (pid, b.ino);
        let map = match maps.get(&key) {
            Some(m) => Some(m.clone()),
            None => Mapping::open(pid, b.fd, b.ino).ok().map(|m| {
                let m = Arc::new(m);
                maps.insert(key, m.clone());
                m
            }),
        };
        if let Some(m) = map {
            used.insert(key);
            return Src::Mapped(m, b.file_off as usize);
        }
    }
    Src::Remote(b.addr as usize)
}

/// Copies `len` bytes at `off` of the buffer `src` (of process `pid`) into
/// `dst` at its offset; `unreadable(why)` and `os_error` make the failures.
pub(super) fn copy_piece(
    src: &Src,
    pid: u32,
    (dst, dst_off): (&Mem, usize),
    off: usize,
    len: usize,
    unreadable: impl FnOnce(&str) -> Fail,
    os_error: impl FnOnce(std::io::Error) -> Fail,
) -> Result<(), Fail> {
    match src {
        Src::Local(addr) => dst.copy_from_device(dst_off, addr + off, len, unreadable),
        Src::Mapped(m, base) => match m.bytes(base + off, len) {
            Some(bytes) => dst.write_stream(dst_off, bytes),
            None => Err(unreadable("past the end of its memory file")),
        },
        Src::Remote(addr) => dst.pull(dst_off, len, pid, addr + off, os_error),
    }
}

/// A collective running on direct links.
struct Direct<'a, 'c> {
    ctx: &'a Ctx<'c>,
    pids: Vec<u32>,
    /// Per rank, its send and receive buffers as this rank reads them.
    srcs: Vec<[Src; 2]>,
    /// The mappings this collective uses (by process and inode).
    used: HashSet<(u32, u64)>,
}

impl<'a, 'c> Direct<'a, 'c> {
    fn new(ctx: &'a Ctx<'c>, coll: &Coll, exts: &[Ext]) -> Direct<'a, 'c> {
        let pids: Vec<u32> = (0..ctx.n()).map(|r| ctx.c.pid(r).unwrap_or(0)).collect();
        let mut used = HashSet::new();
        let mut maps = ctx.c.maps.lock();
        let mut src =
            |pid: u32, b: &Buf, needed: bool| source(&mut maps, &mut used, pid, b, needed);
        let rank = ctx.me();
        let srcs = exts
            .iter()
            .zip(&pids)
            .enumerate()
            .map(|(p, (e, &pid))| {
                let [s, r] = coll.reads(rank, p as u32);
                [src(pid, &e.send, s), src(pid, &e.recv, r)]
            })
            .collect();
        drop(maps);
        Direct {
            ctx,
            pids,
            srcs,
            used,
        }
    }

    fn me(&self) -> usize {
        self.ctx.me() as usize
    }

    fn others(&self) -> impl Iterator<Item = usize> + use<> {
        let me = self.me();
        (0..self.ctx.n() as usize).filter(move |&p| p != me)
    }

    /// The other ranks from the next one round to the previous one: the
    /// order in which the ring (and the chain of `HcclReduce`) reduce into
    /// this rank's block, so that both paths give the same bits.
    fn ring_order(&self) -> impl Iterator<Item = usize> + use<> {
        let (me, n) = (self.me(), self.ctx.n() as usize);
        (1..n).map(move |k| (me + k) % n)
    }

    fn stopped(&self) -> Result<(), Fail> {
        if self.ctx.stop.load(Ordering::Relaxed) {
            return Err(Fail::new(
                ErrorKind::Internal,
                "the stream was destroyed while the collective ran",
            ));
        }
        Ok(())
    }

    fn src(&self, p: usize, which: Which) -> &Src {
        &self.srcs[p][which as usize]
    }

    /// The failure for an unreadable range of rank `p`.
    fn unreadable(&self, p: usize, which: Which, why: &str) -> Fail {
        Fail::new(
            ErrorKind::Remote,
            format!(
                "rank {} cannot read rank {p}'s {} (process {}) in collective #{}: {why}; rank \
                 {p} freed it before the collective finished",
                self.me(),
                which.name(),
                self.pids[p],
                self.ctx.seq
            ),
        )
    }

    fn os_error(&self, p: usize, which: Which) -> impl FnOnce(std::io::Error) -> Fail {
        move |e| {
            if e.raw_os_error() == Some(libc::ESRCH) {
                Fail::new(
                    ErrorKind::Remote,
                    format!(
                        "rank {p} (process {}) exited during collective #{}",
                        self.pids[p], self.ctx.seq
                    ),
                )
            } else {
                self.unreadable(p, which, &e.to_string())
            }
        }
    }

    /// Runs `f` on `len` bytes at `off` in rank `p`'s buffer (read into
    /// `tmp` first when the peer is only reachable through the kernel).
    fn with_bytes(
        &self,
        p: usize,
        which: Which,
        off: usize,
        len: usize,
        tmp: &mut [u8],
        f: impl FnOnce(&[u8]),
    ) -> Result<(), Fail> {
        match self.src(p, which) {
            Src::Local(addr) => {
                let table = state::memory().read();
                match table.check_range(addr + off, len) {
                    Ok(Region::Device { .. }) => {
                        // SAFETY: a live device range of `len` bytes (checked,
                        // kept alive by the read lock), only read here.
                        f(unsafe { std::slice::from_raw_parts((addr + off) as *const u8, len) });
                        Ok(())
                    }
                    _ => Err(self.unreadable(p, which, "it is no longer device memory")),
                }
            }
            Src::Mapped(m, base) => {
                let bytes = m
                    .bytes(base + off, len)
                    .ok_or_else(|| self.unreadable(p, which, "past the end of its memory file"))?;
                f(bytes);
                Ok(())
            }
            Src::Remote(addr) => {
                let tmp = &mut tmp[..len];
                local::read(self.pids[p], addr + off, tmp).map_err(self.os_error(p, which))?;
                f(tmp);
                Ok(())
            }
        }
    }

    /// Copies `len` bytes at `off` in rank `p`'s buffer into `dst` at
    /// `dst_off`.
    fn pull(
        &self,
        dst: &Mem,
        dst_off: usize,
        p: usize,
        which: Which,
        off: usize,
        len: usize,
    ) -> Result<(), Fail> {
        for (o, l) in pieces_of(len, PULL) {
            self.stopped()?;
            copy_piece(
                self.src(p, which),
                self.pids[p],
                (dst, dst_off + o),
                off + o,
                l,
                |why| self.unreadable(p, which, why),
                self.os_error(p, which),
            )?;
        }
        Ok(())
    }

    /// Reduces `len` bytes of every rank's send buffer at `off` (the other
    /// ranks' in [`Direct::ring_order`], then this rank's at `mine_off` in
    /// `mine`) into `out` at `out_off`.
    #[allow(clippy::too_many_arguments)]
    fn reduce_block(
        &self,
        mine: &Mem,
        mine_off: usize,
        off: usize,
        len: usize,
        dt: DataType,
        op: ReduceOp,
        out: &Mem,
        out_off: usize,
    ) -> Result<(), Fail> {
        // 8-byte aligned, so that reductions run on typed elements.
        let room = CHUNK.min(len);
        let mut acc_bytes = vec![0u8; room + 8];
        // Staging for peers only reachable through the kernel.
        let remote = self.srcs.iter().any(|s| matches!(s[0], Src::Remote(_)));
        let mut tmp_bytes = vec![0u8; if remote { room + 8 } else { 0 }];
        let acc = aligned(&mut acc_bytes, room);
        let tmp = aligned(&mut tmp_bytes, if remote { room } else { 0 });
        for (co, cl) in pieces_of(len, CHUNK) {
            self.stopped()?;
            for (k, p) in self.ring_order().enumerate() {
                let acc = &mut acc[..cl];
                self.with_bytes(p, Which::Send, off + co, cl, tmp, |x| {
                    if k == 0 {
                        acc.copy_from_slice(x);
                    } else {
                        reduce(dt, op, acc, x);
                    }
                })?;
            }
            mine.reduce_into(mine_off + co, &mut acc[..cl], dt, op)?;
            out.write_stream(out_off + co, &acc[..cl])?;
        }
        Ok(())
    }

    /// Tells every other rank this one is done with the current phase.
    fn tell_all(&self) -> Result<(), Fail> {
        for p in self.others() {
            self.ctx.send(p as u32, &[DONE])?;
        }
        Ok(())
    }

    /// Waits until one of the ranks `from` says it is done; returns it.
    fn ready_one(&self, from: &[u32]) -> Result<usize, Fail> {
        let (p, m) = self.ctx.recv_any(from)?;
        if m != [DONE] {
            return Err(Fail::new(
                ErrorKind::Internal,
                format!(
                    "rank {p} sent {} bytes where a sync was expected (protocol error)",
                    m.len()
                ),
            ));
        }
        Ok(p as usize)
    }

    /// Tells every other rank this one is done with the current phase and
    /// waits until they all are.
    fn sync(&self) -> Result<(), Fail> {
        self.tell_all()?;
        let mut waiting: Vec<u32> = self.others().map(|p| p as u32).collect();
        while !waiting.is_empty() {
            let p = self.ready_one(&waiting)?;
            waiting.retain(|&q| q != p as u32);
        }
        Ok(())
    }
}

/// Runs `coll` on direct links, after the signature exchange gave every
/// rank's `exts` (all linked).
///
/// # Errors
///
/// The collective's failure: a peer gone or timing out, a buffer freed.
pub(super) fn run(ctx: &Ctx<'_>, coll: &Coll, exts: &[Ext]) -> Result<(), Fail> {
    let d = Direct::new(ctx, coll, exts);
    let result = run_on(&d, coll, exts);
    // Keep only the mappings this collective used.
    ctx.c.maps.lock().retain(|k, _| d.used.contains(k));
    result
}

fn run_on(d: &Direct<'_, '_>, coll: &Coll, exts: &[Ext]) -> Result<(), Fail> {
    let (ctx, me) = (d.ctx, d.me());
    match coll {
        // The signature exchange was the barrier.
        Coll::Barrier => return Ok(()),
        Coll::AllReduce {
            send, recv, dt, op, ..
        } => {
            let blocks = coll.blocks(ctx.n());
            let (o, l) = blocks[me];
            d.reduce_block(send, o, o, l, *dt, *op, recv, o)?;
            // Copy each block as soon as its owner says it is reduced.
            d.tell_all()?;
            let mut waiting: Vec<u32> = d.others().map(|p| p as u32).collect();
            while !waiting.is_empty() {
                let p = d.ready_one(&waiting)?;
                waiting.retain(|&q| q != p as u32);
                let (po, pl) = blocks[p];
                d.pull(recv, po, p, Which::Recv, po, pl)?;
            }
        }
        Coll::ReduceScatter {
            send, recv, dt, op, ..
        }
        | Coll::ReduceScatterV {
            send, recv, dt, op, ..
        } => {
            let (o, l) = coll.blocks(ctx.n())[me];
            d.reduce_block(send, o, o, l, *dt, *op, recv, 0)?;
        }
        Coll::AllGather { send, recv, .. } | Coll::AllGatherV { send, recv, .. } => {
            let blocks = coll.blocks(ctx.n());
            send.copy_to(0, recv, blocks[me].0, blocks[me].1)?;
            for p in d.others() {
                d.pull(recv, blocks[p].0, p, Which::Send, 0, blocks[p].1)?;
            }
        }
        Coll::Broadcast { buf, root, .. } => {
            let root = *root as usize;
            if me != root {
                d.pull(buf, 0, root, Which::Send, 0, coll.count_bytes())?;
            }
        }
        Coll::Reduce {
            send,
            recv,
            dt,
            op,
            root,
            ..
        } => {
            if me == *root as usize {
                d.reduce_block(send, 0, 0, coll.count_bytes(), *dt, *op, recv, 0)?;
            }
        }
        Coll::Scatter {
            send, recv, root, ..
        } => {
            let (root, bytes) = (*root as usize, coll.count_bytes());
            if me == root {
                send.copy_to(me * bytes, recv, 0, bytes)?;
            } else {
                d.pull(recv, 0, root, Which::Send, me * bytes, bytes)?;
            }
        }
        Coll::AlltoAll { send, recv, .. } | Coll::AlltoAllV { send, recv, .. } => {
            let (sblocks, rblocks) = coll.a2a_blocks(ctx.n());
            send.copy_to(sblocks[me].0, recv, rblocks[me].0, rblocks[me].1)?;
            for p in d.others() {
                let (ro, rl) = rblocks[p];
                d.pull(recv, ro, p, Which::Send, exts[p].off as usize, rl)?;
            }
        }
    }
    d.sync()
}
