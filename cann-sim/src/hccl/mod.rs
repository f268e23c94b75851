//! The simulator's HCCL (`libhccl.so`): communicators whose ranks are
//! threads of one process or separate processes (on one host or several),
//! connected by real TCP sockets. Bulk data crosses hosts over TCP and, when
//! every rank shares one host, is read straight from the peers' device
//! memory ([`local`], [`direct`]), as HCCS/PCIe and RoCE split the work on
//! hardware.
//!
//! - [`bootstrap`]: `HcclGetRootInfo` and its root server, the rendezvous of
//!   `HcclCommInitRootInfo(Config)`, rank tables (`HcclCommInitClusterInfo`),
//!   `HcclCommInitAll`, sub-communicators (`HcclCreateSubCommConfig`).
//! - [`transport`]: the full mesh of TCP connections between the ranks.
//! - [`local`]: direct links between ranks on one host (device memory read
//!   across processes, as HCCS/PCIe inside a server), and the variables
//!   that choose them.
//! - [`algo`]: the collectives (ring, chain and direct algorithms) running as
//!   tasks on stream workers, asynchronous to the host; [`direct`]: their
//!   versions for ranks that all share one host.
//! - [`exports`]: the C functions, their argument checks and codes.
//! - [`reduce`]: data types and reductions (with the SoC's restrictions).
//!
//! - [`exports_config`]: `HcclGetCommConfigCapability`, process-wide and
//!   per-communicator settings (`HcclSetConfig`, `HcclSetCommConfig`, and
//!   their getters).
//! - [`exports_window`]: memory registration (`HcclCommRegister`,
//!   `HcclCommDeregister`, `HcclCommExchangeMem`)
//!
//!   and virtual memory given to a communicator (`HcclCommSetMemoryRange`,
//!   `HcclCommActivateCommMemory` and their inverses, over
//!   [`crate::acl::vmm`]).
//!
//! Everything else of `hccl.h` is in `unsupported` (generated), returning
//! `HCCL_E_NOT_SUPPORT`: `HcclCommWorkingDevNicSet` (switching to a backup
//! NIC: the simulator has one network path).
//!
//! # Errors and messages
//!
//! Real HCCL reports details through CANN's error manager (the `EIxxxx`
//! messages `aclGetRecentErrMsg` shows). The simulator records a message for
//! every failing HCCL call in the calling thread's recent-error slot, read
//! with `aclGetRecentErrMsg`, and failures of queued collectives in the
//! stream's fault, reported by its next synchronisation (see [`exports`]).
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
//! | `HCCL_EXEC_TIMEOUT` | seconds a collective waits for a peer; per-SoC range and rounding, see [`env`]; the config's `hcclExecTimeOut` wins | `1836` |
//! | `CANN_SIM_HCCL_CONNECT_TIMEOUT_MS` | simulator extension: the whole bootstrap wait in ms (for tests) | unset |
//!
//! The `HCCL_*` variables are read once per process, by the first
//! `HcclGetRootInfo` or `HcclCommInit*` that finds them all valid; an
//! invalid one is `HCCL_E_PARA` from those calls (see [`env`]).
//! | `CANN_SIM_HCCL_EXEC_TIMEOUT_MS` | simulator extension: the exec timeout in ms, unless the config sets one | unset |

pub mod algo;
pub mod bootstrap;
pub mod comm;
pub mod direct;
pub mod env;
pub mod exports;
pub mod exports_config;
pub mod exports_window;
pub mod local;
pub mod mem;
pub mod ranktable;
pub mod reduce;
pub mod transport;
mod unsupported;
pub mod wire;

pub use exports::*;
pub use exports_config::*;
pub use exports_window::*;
pub use unsupported::*;
