//! An allocation's access state: the marks of its last write and the reads
//! since, and the epoch that tells a commit whether its wait saw them all.

use super::mark::Mark;
use crate::Device;
use crate::allocator::Block;

/// The last write and the reads since.
///
/// Two uses can wait for conflicts concurrently and commit in either order
/// (two threads writing disjoint slices of one buffer, an HCCL group, a
/// [`Prepared`] held across another use). A commit replaces marks only if
/// nothing was committed since its wait (`epoch`); otherwise it adds its
/// mark beside the others (`more_writes` for writes), since it did not wait
/// for them and a later use must wait for both.
#[derive(Default)]
pub(crate) struct AccessState {
    pub(super) write: Option<Mark>,
    /// Writes committed without having waited for `write` (usually none).
    pub(super) more_writes: Vec<Mark>,
    pub(super) reads: Vec<Mark>,
    /// Commits so far.
    pub(super) epoch: u64,
    /// The capture whose graph initialises the memory (it was allocated on
    /// a capturing stream), until a launch of that graph: 0 for none. Until
    /// then no read outside the graph sees written memory.
    pub(super) awaiting: super::multi_stream::Awaiting,
    /// The graphs that use the memory, each with the launch the marks above
    /// were brought up to (see [`launch`](super::launch)); usually none.
    pub(super) links: Vec<super::launch::Link>,
}

impl AccessState {
    /// Whether a cached block with these marks may go straight back to its
    /// pool: every mark is on the block's own stream (where reuse is
    /// stream-ordered), and this is not a host function (which must not
    /// take the allocator's lock).
    #[inline]
    pub(super) fn own_stream_only(&self, block: &Block<usize>, device: &Device) -> bool {
        self.reads.is_empty()
            && self.more_writes.is_empty()
            && self.write.as_ref().is_none_or(|m| {
                let s = m.stream();
                crate::memory::cached::stream_key(s) == block.stream() && s.device() == device
            })
            && !crate::device::in_host_fn()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.write.is_none() && self.more_writes.is_empty() && self.reads.is_empty()
    }

    pub(super) fn into_marks(self) -> impl Iterator<Item = Mark> {
        self.write
            .into_iter()
            .chain(self.more_writes)
            .chain(self.reads)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Mark> {
        self.write
            .iter()
            .chain(self.more_writes.iter())
            .chain(self.reads.iter())
    }
}
