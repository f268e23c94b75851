//! Safe HCCL collectives for Ascend NPUs (all-reduce, all-gather, broadcast,
//! send/recv, ...) across devices, processes and hosts. The safe API is not
//! written yet; the raw functions are in `hccl-sys`.
