//! Ordering queued work: the device-side waits a use makes for the
//! accesses it conflicts with ([`prepare`], [`wait_entered`]) and the marks
//! recorded once the work is queued ([`Prepared::commit`],
//! [`record_accesses`], [`record`]).

use super::allocation::Allocation;
use super::event::PooledEvent;
use super::host_wait::host_wait;
use super::mark::{Mark, MarkStream};
use super::multi_stream::{is_multi_stream, note_stream};
use super::window::{Busy, Held};
use crate::error::Result;
use crate::memory::gate;
use crate::result::raw;
use crate::{Device, Stream, result};
use std::sync::Arc;

/// One use of an allocation by a queued call: read, or written (and maybe
/// read). Holding it keeps the allocation alive.
#[derive(Clone)]
pub struct Access {
    pub(crate) alloc: Arc<Allocation>,
    pub(crate) write: bool,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("alloc", &self.alloc)
            .field("write", &self.write)
            .finish()
    }
}

impl Access {
    pub(crate) fn read(alloc: &Arc<Allocation>) -> Access {
        Access {
            alloc: alloc.clone(),
            write: false,
        }
    }

    pub(crate) fn write(alloc: &Arc<Allocation>) -> Access {
        Access {
            alloc: alloc.clone(),
            write: true,
        }
    }

    /// The allocation and whether the call writes it, borrowed.
    pub(crate) fn as_use(&self) -> (&Arc<Allocation>, bool) {
        (&self.alloc, self.write)
    }

    /// Whether the call writes the memory.
    pub fn is_write(&self) -> bool {
        self.write
    }

    /// The allocation.
    pub fn allocation(&self) -> &Allocation {
        &self.alloc
    }

    /// Blocks the host until the recorded accesses this use conflicts with
    /// have finished (for callers that cannot order their work on the
    /// device).
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of the awaited work.
    pub fn wait_on_host(&self) -> Result<()> {
        host_wait(&self.alloc, self.write)
    }
}

/// Records that work queued on `stream` made the accesses `uses`, without a
/// [`prepare`] before it (the caller ordered the work otherwise, e.g. with
/// [`Access::wait_on_host`]). The marks are added beside the recorded ones,
/// never replacing them, so recording more than happened only makes later
/// uses wait longer.
pub fn record(stream: &Stream, uses: &[Access]) {
    record_accesses(
        stream,
        &Seen::Unknown,
        uses.iter().map(|u| (&u.alloc, u.write)),
    );
}

/// Accesses whose conflicts `stream` now waits for, to be recorded with
/// [`Prepared::commit`] once the work is queued. Dropping it without
/// committing records nothing (the work was not queued).
#[must_use = "commit the accesses once the work is queued"]
pub struct Prepared<'s, C: AsRef<[Access]>> {
    pub(super) stream: &'s Stream,
    pub(super) uses: C,
    pub(super) seen: Waited<'s>,
}

impl<C: AsRef<[Access]>> std::fmt::Debug for Prepared<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("stream", self.stream)
            .field("uses", &self.uses.as_ref())
            .finish()
    }
}

/// Makes `stream` wait, on the device, for the recorded accesses that the
/// `uses` conflict with (see the module docs). The device of `stream` is
/// bound on return.
///
/// Until the result is committed, other uses of the memory do not see
/// these accesses: queue the work and commit at once. A launch of a graph
/// using the memory waits for the commit (at most 2 s, then it fails); a
/// conflicting use through this crate's other calls does not — an
/// [`Access`] holds its allocation, not a borrow, so keeping it from
/// conflicting work is the caller's part of the raw-work contract, as it is
/// for the raw work itself.
///
/// # Errors
///
/// The runtime's error from recording or waiting for an event; nothing is
/// recorded then, and the work must not be queued.
pub fn prepare<C: AsRef<[Access]>>(stream: &Stream, uses: C) -> Result<Prepared<'_, C>> {
    let seen = wait_for_conflicts(stream, uses.as_ref().iter().map(|u| (&u.alloc, u.write)))?;
    Ok(Prepared { stream, uses, seen })
}

/// What a wait saw of each allocation's record, for the commit.
pub(crate) enum Seen {
    /// Single-stream mode: nothing was looked at.
    Single,
    /// No wait: the commit replaces nothing.
    Unknown,
    /// Each use's epoch, in order (the first four inline: an operator's
    /// three tensors and its workspace; four, not more, since every call
    /// moves the whole value a few times, also in single-stream mode); the
    /// rest, and the windows the use entered (left when it is dropped),
    /// boxed: usually there are none.
    Epochs {
        inline: [u64; 4],
        extra: Option<Box<Extra>>,
    },
}

/// The rarer part of [`Seen::Epochs`].
pub(crate) struct Extra {
    /// The epochs past the fourth use.
    more: Vec<u64>,
    #[allow(dead_code, reason = "held for its drop, after the commit")]
    held: Held,
}

impl Seen {
    pub(super) fn epoch(&self, i: usize) -> Option<u64> {
        match self {
            Seen::Single | Seen::Unknown => None,
            Seen::Epochs { inline, extra } => match inline.get(i) {
                Some(&e) => Some(e),
                None => extra.as_ref()?.more.get(i - inline.len()).copied(),
            },
        }
    }
}

/// What a wait saw, and the stream's gate, entered until the accesses are
/// committed (see [`gate`](crate::memory::gate)): the stream's capture state cannot
/// change between the wait and the commit.
pub(crate) struct Waited<'s> {
    pub(super) seen: Seen,
    pub(super) _gate: gate::Shared<'s>,
}

impl std::ops::Deref for Waited<'_> {
    type Target = Seen;
    fn deref(&self) -> &Seen {
        &self.seen
    }
}

/// [`prepare`] on borrowed allocations: `(allocation, writes)` pairs. The
/// stream's gate stays entered until the result is dropped: commit before.
#[inline(always)]
pub(crate) fn wait_for_conflicts<'s, 'a>(
    stream: &'s Stream,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)> + Clone,
) -> Result<Waited<'s>> {
    let gate = stream.shared().capture.gate.enter();
    let seen = wait_entered(stream, uses, 0)?;
    Ok(Waited { seen, _gate: gate })
}

/// The error for a read of memory a capture initialises, before its graph
/// has run.
pub(crate) fn awaiting_launch(function: &'static str) -> crate::Error {
    crate::Error::invalid(
        function,
        "the memory is initialised by captured work that has not run yet; launch the graph \
         first (or allocate it before the capture)",
    )
}

/// [`wait_for_conflicts`] with the stream's gate entered by the caller;
/// `launching` is the capture number of the graph being launched (0 for
/// other work), which may read the memory its capture initialises.
#[inline(always)]
pub(crate) fn wait_entered<'a>(
    stream: &Stream,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)> + Clone,
    launching: u64,
) -> Result<Seen> {
    if crate::device::in_host_fn() {
        // Before any lock: a thread holding one may be waiting for this
        // very host function.
        return Err(crate::device::host_fn_error("memory::prepare"));
    }
    // The single-stream path, inline (no frame for the general case's
    // epochs): the same tests, in the same order, as `wait_general`.
    if !stream.shared().capture.is_active() && !note_stream(stream) {
        stream.device().bind()?;
        return Ok(Seen::Single);
    }
    wait_general(stream, uses, launching)
}

/// [`wait_entered`] past its single-stream path: a capturing stream, or
/// multi-stream mode (which, once on, stays on).
#[inline(never)]
fn wait_general<'a>(
    stream: &Stream,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)> + Clone,
    launching: u64,
) -> Result<Seen> {
    let device = stream.device();
    if stream.shared().capture.is_active() {
        // Captured work does not run now: it is ordered when the graph is
        // launched (`Graph::launch` waits for these uses then).
        device.bind()?;
        return Ok(Seen::Unknown);
    }
    if !note_stream(stream) {
        // Single-stream mode: every recorded access is on this stream,
        // which keeps its own order.
        device.bind()?;
        return Ok(Seen::Single);
    }
    // Cloned for each pass (a use that meets a launch starts over).
    loop {
        match wait_uses(stream, uses.clone(), launching)? {
            Ok(seen) => return Ok(seen),
            Err(busy) => busy.wait(),
        }
    }
}

/// One pass of [`wait_general`] over `uses`: `Ok(Err(busy))` when a launch
/// of a graph using the memory is being queued (the windows entered are
/// left: wait for it and start over).
#[inline(always)]
fn wait_uses<'a>(
    stream: &Stream,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
    launching: u64,
) -> Result<std::result::Result<Seen, Busy>> {
    let device = stream.device();
    let mut inline = [0u64; 4];
    // Sized once (a graph launch has one use per buffer of the graph).
    let mut more = Vec::with_capacity(uses.size_hint().0.saturating_sub(inline.len()));
    // A launch's own wait enters no window: its `LaunchWindow` excludes
    // the other uses of its memory.
    let mut held = Held::default();
    let mut bound = false;
    for (n, (alloc, write)) in uses.enumerate() {
        let mut st = alloc.lock_state();
        if st.awaiting.get() != 0 && st.awaiting.get() != launching && !write {
            return Err(awaiting_launch("memory::prepare"));
        }
        if launching == 0
            && let Err(busy) = held.enter(&st)
        {
            return Ok(Err(busy));
        }
        match inline.get_mut(n) {
            Some(slot) => *slot = st.epoch,
            None => more.push(st.epoch),
        }
        // The marks this use conflicts with: every write, and the reads
        // for a write. Marks of this stream (its own order) and marks a
        // synchronisation showed finished need nothing: tested inline,
        // the wait itself is out of line.
        let st = &mut *st;
        if let Some(slot) = st.write.as_mut()
            && needs_wait(slot, stream)
        {
            wait_mark(stream, slot, write, true, &mut bound)?;
        }
        for slot in st.more_writes.iter_mut() {
            if needs_wait(slot, stream) {
                wait_mark(stream, slot, write, true, &mut bound)?;
            }
        }
        if write {
            for slot in st.reads.iter_mut() {
                if needs_wait(slot, stream) {
                    wait_mark(stream, slot, write, false, &mut bound)?;
                }
            }
        }
    }
    if !bound {
        device.bind()?;
    }
    let extra = if more.is_empty() && held.is_empty() {
        // Nothing to leave, nothing allocated: forgotten, no drop code.
        std::mem::forget(held);
        None
    } else {
        Some(Box::new(Extra { more, held }))
    };
    Ok(Ok(Seen::Epochs { inline, extra }))
}

/// Whether a use on `stream` must wait for `mark`: not when it is on
/// `stream` itself (stream order) or a synchronisation showed it finished.
#[inline(always)]
pub(super) fn needs_wait(mark: &Mark, stream: &Stream) -> bool {
    !(mark.stream().same_queue(stream) || mark.known_done())
}

/// Makes `stream` wait for `slot`, a mark of another stream (see
/// [`needs_wait`]) that a use (`write` or not) conflicts with (`of_write`:
/// the mark is of a write); `bound` says whether `stream`'s device is bound.
#[inline(never)]
pub(super) fn wait_mark(
    stream: &Stream,
    slot: &mut Mark,
    write: bool,
    of_write: bool,
    bound: &mut bool,
) -> Result<()> {
    let device = stream.device();
    if slot.stream().device() != device {
        // CANN cannot queue a wait for another device's event
        // (hicann/runtime docs/zh/dev_guide/05_multi_device_programming.md):
        // go on only if that work has already finished.
        if slot.is_complete()? {
            return Ok(());
        }
        return Err(cross_device(
            write,
            of_write,
            slot.stream().device(),
            device,
        ));
    }
    if slot.event().is_none() {
        *slot = slot.with_event()?;
        *bound = false;
    }
    // No de-duplication by handle: once this allocation's lock is
    // released, a mark may go and its event be re-recorded for
    // another one (waiting twice for one event is harmless).
    let ev = slot.event().map_or(0, |e| e.raw);
    if !*bound {
        device.bind()?;
        *bound = true;
    }
    // SAFETY: the stream is live (borrowed), the event is live
    // (pooled, held by the mark in the allocation's state, whose lock the
    // caller holds).
    unsafe { result::stream_wait_event(stream.as_raw(), ev as raw::aclrtEvent) }
}

/// [`Prepared::commit`] on borrowed allocations: records that work queued
/// on `stream` made these accesses; `seen` is what its wait saw.
#[inline]
pub(crate) fn record_accesses<'a>(
    stream: &Stream,
    seen: &Seen,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
) {
    commit_uses(stream, seen, uses, 0);
}

/// [`record_accesses`] for a launch of the graph of capture `launching`:
/// in the same pass (one lock per allocation), the memory that capture
/// initialises counts as written from now on. Never on a capturing
/// stream (the runtime refuses to launch a graph there, 107027).
pub(crate) fn record_launch<'a>(
    stream: &Stream,
    seen: &Seen,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
    launching: u64,
) {
    commit_uses(stream, seen, uses, launching);
}

/// The commit of [`record_accesses`] and [`record_launch`]; `launching` is
/// 0 for work other than a graph launch.
#[inline(always)]
fn commit_uses<'a>(
    stream: &Stream,
    seen: &Seen,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
    launching: u64,
) {
    let capture = &stream.shared().capture;
    if capture.is_active() {
        // Recorded into the graph, which keeps the memory and orders it at
        // each launch; nothing runs now, so there is no mark to make.
        capture.add(uses.map(|(a, w)| (Arc::clone(a), w)));
        return;
    }
    // A mark on a stream that did not wait here (raw work recorded with
    // `record`, a capture's leftovers) is a use of that stream too: a second
    // stream ends single-stream mode before its mark exists.
    let multi = match seen {
        Seen::Single => is_multi_stream(),
        _ => note_stream(stream),
    };
    if !multi && matches!(seen, Seen::Single) {
        // Single-stream mode, and the wait saw it too: every mark is on this
        // stream; a mark of it only takes the new generation (no reference
        // counting).
        let generation = stream
            .shared()
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        for (alloc, write) in uses {
            let mut st = alloc.lock_state();
            super::launch::touch(&st, launching);
            st.epoch = st.epoch.wrapping_add(1);
            if launching != 0 && st.awaiting.get() == launching {
                st.awaiting.clear();
            }
            let slot = if write {
                // Usually empty: tested first, no drop loop to call.
                if !st.reads.is_empty() {
                    st.reads.clear();
                }
                if !st.more_writes.is_empty() {
                    st.more_writes.clear();
                }
                &mut st.write
            } else {
                if st.reads.is_empty() {
                    st.reads.push(Mark::Stream(MarkStream::with_generation(
                        stream, generation,
                    )));
                    continue;
                }
                match st.reads.iter().position(|m| m.stream().same_queue(stream)) {
                    Some(i) => {
                        if let Mark::Stream(ms) = &mut st.reads[i] {
                            ms.1 = generation;
                            continue;
                        }
                        st.reads[i] = Mark::Stream(MarkStream::with_generation(stream, generation));
                    }
                    None => st.reads.push(Mark::Stream(MarkStream::with_generation(
                        stream, generation,
                    ))),
                }
                continue;
            };
            match slot {
                Some(Mark::Stream(ms)) if ms.same_queue(stream) => ms.1 = generation,
                _ => {
                    *slot = Some(Mark::Stream(MarkStream::with_generation(
                        stream, generation,
                    )))
                }
            }
        }
        return;
    }
    let mut mark: Option<Mark> = None;
    let mut make = || -> Mark {
        mark.get_or_insert_with(|| {
            let ev = if multi {
                PooledEvent::record(stream).ok()
            } else {
                None
            };
            Mark::with(stream, ev)
        })
        .clone()
    };
    for (n, (alloc, write)) in uses.enumerate() {
        let mut st = alloc.lock_state();
        super::launch::touch(&st, launching);
        if launching != 0 && st.awaiting.get() == launching {
            st.awaiting.clear();
        }
        // Whether the wait covered every mark there is now: then they may
        // be replaced. A wait in single-stream mode looked at nothing; it
        // covered everything only if the process is still in that mode
        // (every mark on this one stream).
        let covered = match (seen, seen.epoch(n)) {
            (Seen::Unknown, _) => false,
            (_, Some(e)) => e == st.epoch,
            (_, None) => !multi,
        };
        st.epoch = st.epoch.wrapping_add(1);
        if write {
            if covered {
                // Usually empty: tested first, no drop loop to call.
                if !st.reads.is_empty() {
                    st.reads.clear();
                }
                if !st.more_writes.is_empty() {
                    st.more_writes.clear();
                }
                st.write = Some(make());
            } else {
                let m = make();
                match &st.write {
                    None => st.write = Some(m),
                    Some(_) => st.more_writes.push(m),
                }
            }
        } else {
            // A read of this stream replaces an earlier read of the same
            // stream (stream order) whatever happened in between.
            match st.reads.iter_mut().find(|m| m.stream().same_queue(stream)) {
                Some(m) => *m = make(),
                None => st.reads.push(make()),
            }
        }
    }
}

/// The error for an access that would have to wait for queued work of
/// another device.
pub(super) fn cross_device(
    write: bool,
    of_write: bool,
    from: &Device,
    to: &Device,
) -> crate::Error {
    crate::Error::invalid(
        "memory::prepare",
        format!(
            "the memory's last {} is still queued on device {}, and CANN cannot make a stream \
             of device {} wait for another device's work; synchronize device {} (or the work's \
             event) before this {}",
            if of_write { "write" } else { "read" },
            from.ordinal(),
            to.ordinal(),
            from.ordinal(),
            if write { "write" } else { "read" },
        ),
    )
}

impl<C: AsRef<[Access]>> Prepared<'_, C> {
    /// Records the accesses: the work was queued on the stream. Never
    /// fails: without an event (multi-stream mode, recording failed), the
    /// mark is the stream itself, which later users wait for in full.
    pub fn commit(self) {
        record_accesses(
            self.stream,
            &self.seen,
            self.uses.as_ref().iter().map(|u| (&u.alloc, u.write)),
        );
    }

    /// The stream the work goes to.
    pub fn stream(&self) -> &Stream {
        self.stream
    }
}
