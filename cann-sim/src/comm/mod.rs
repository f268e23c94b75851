//! The collective engine behind the simulator's HCCL ([`crate::hccl`]):
//! communicators whose ranks are threads of one process or separate
//! processes (on one host or several), connected by real TCP sockets. Bulk
//! data crosses hosts over TCP and, when every rank shares one host, is read
//! straight from the peers' device memory ([`local`], [`direct`]), as
//! HCCS/PCIe and RoCE split the work on hardware.
//!
//! - [`bootstrap`]: the root server `HcclGetRootInfo` starts, the rendezvous
//!   of `HcclCommInitRootInfo(Config)`, rank tables
//!   (`HcclCommInitClusterInfo`, read by [`ranktable`]), `HcclCommInitAll`,
//!   sub-communicators (`HcclCreateSubCommConfig`).
//! - [`communicator`]: one rank's communicator, and the table of live ones.
//! - [`transport`]: the full mesh of TCP connections between the ranks;
//!   [`wire`]: what travels on it.
//! - [`local`]: direct links between ranks on one host (device memory read
//!   across processes, as HCCS/PCIe inside a server), and the variables
//!   that choose them.
//! - [`algo`]: the collectives (ring, chain and direct algorithms) running as
//!   tasks on stream workers, asynchronous to the host; [`direct`]: their
//!   versions for ranks that all share one host.
//! - [`mem`]: the device buffers of a collective, checked again whenever
//!   they are touched.
//! - [`reduce`]: data types and reductions (with the SoC's restrictions).
//! - [`window`]: memory registered with a communicator and exchanged, and
//!   virtual memory given to it.
//! - [`mod@env`]: the `HCCL_*` environment; [`settings`]: the process-wide
//!   settings (`HcclSetConfig`).
//!
//! # Configuration
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `HCCL_IF_IP` | the address root servers and ranks listen on | `127.0.0.1` |
//! | `HCCL_IF_BASE_PORT` | the root server's port is this + the physical device id (1024–65520); rank tables' default port base | first free port of 60000–60031; `60000` |
//! | `HCCL_HOST_SOCKET_PORT_RANGE` | root servers' ports: `auto` (any free port) or `a,b-c`; wins over `HCCL_IF_BASE_PORT` | unset |
//! | `HCCL_CONNECT_TIMEOUT` | bootstrap waits this + 20 s for the other ranks (120–7200) | `120` |
//! | `HCCL_INTRA_ROCE_ENABLE`, `HCCL_INTRA_PCIE_ENABLE` | links inside a host: direct (default) or TCP (`HCCL_INTRA_ROCE_ENABLE=1`); see [`local`] | direct |
//! | `HCCL_EXEC_TIMEOUT` | seconds a collective waits for a peer; per-SoC range and rounding, see [`mod@env`]; the config's `hcclExecTimeOut` wins | `1836` |
//! | `CANN_SIM_HCCL_CONNECT_TIMEOUT_MS` | simulator extension: the whole bootstrap wait in ms (for tests) | unset |
//! | `CANN_SIM_HCCL_EXEC_TIMEOUT_MS` | simulator extension: the exec timeout in ms, unless the config sets one | unset |
//!
//! The `HCCL_*` variables are read once per process, by the first
//! `HcclGetRootInfo` or `HcclCommInit*` that finds them all valid; an
//! invalid one is `HCCL_E_PARA` from those calls (see [`mod@env`]).

pub mod algo;
pub mod bootstrap;
pub mod communicator;
pub mod direct;
pub mod env;
pub mod error;
pub mod local;
pub mod mem;
pub mod ranktable;
pub mod reduce;
pub mod settings;
pub mod transport;
pub mod window;
pub mod wire;

pub use error::{ErrorKind, Fail};
