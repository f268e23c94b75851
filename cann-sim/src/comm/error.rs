//! Why an operation of the collective engine failed: a [`Fail`], whose
//! [`ErrorKind`] the HCCL exports turn into the library's code
//! (`crate::hccl::common::code`) and whose sentence they record.
//!
//! Kinds travel between ranks (a failed collective tells its peers, a root
//! server tells a rank why it was refused) as [`ErrorKind::to_wire`] numbers.

/// What kind of failure: one per code the exports return for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An invalid argument or state, or ranks that called different
    /// collectives (`HCCL_E_PARA`).
    Para,
    /// A buffer freed before the collective used it (`HCCL_E_MEMORY`).
    Memory,
    /// A protocol error, a stopped stream, a destroyed communicator
    /// (`HCCL_E_INTERNAL`).
    Internal,
    /// Something the simulator or the simulated SoC does not do
    /// (`HCCL_E_NOT_SUPPORT`).
    NotSupported,
    /// A port in use (`HCCL_E_UNAVAIL`).
    Unavailable,
    /// A peer that did not come or answer in time (`HCCL_E_TIMEOUT`).
    Timeout,
    /// An address that cannot be listened on or reached
    /// (`HCCL_E_TCP_CONNECT`).
    TcpConnect,
    /// A connection that broke while greeting (`HCCL_E_TCP_TRANSFER`).
    TcpTransfer,
    /// A peer that failed, aborted or is gone (`HCCL_E_REMOTE`).
    Remote,
    /// A communicator another thread is calling into (`HCCL_E_AGAIN`).
    Again,
    /// A file that cannot be read (`HCCL_E_OPEN_FILE_FAILURE`).
    OpenFile,
}

impl ErrorKind {
    const ALL: [ErrorKind; 11] = [
        ErrorKind::Para,
        ErrorKind::Memory,
        ErrorKind::Internal,
        ErrorKind::NotSupported,
        ErrorKind::Unavailable,
        ErrorKind::Timeout,
        ErrorKind::TcpConnect,
        ErrorKind::TcpTransfer,
        ErrorKind::Remote,
        ErrorKind::Again,
        ErrorKind::OpenFile,
    ];

    /// Its number between ranks.
    pub fn to_wire(self) -> u32 {
        super::wire::number_of(&Self::ALL, &self)
    }

    /// The kind numbered `n` by [`ErrorKind::to_wire`].
    pub fn from_wire(n: u32) -> Option<ErrorKind> {
        super::wire::numbered(&Self::ALL, n)
    }
}

/// Why an operation failed: its kind and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    /// What kind of failure (the code `HcclGetCommAsyncError` reports).
    pub kind: ErrorKind,
    /// What happened.
    pub msg: String,
    /// Whether a buffer was freed before the task used it (a memory fault).
    pub memory: bool,
    /// Whether the failure was reported by another rank (not re-broadcast).
    pub remote: bool,
}

impl Fail {
    /// A failure of `kind`.
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> Fail {
        Fail {
            kind,
            msg: msg.into(),
            memory: false,
            remote: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_wire_numbers() {
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_wire(k.to_wire()), Some(k));
        }
        assert_eq!(ErrorKind::from_wire(11), None);
    }
}
