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
//! - [`reduce`]: data types and reductions (with the SoC's restrictions).
//!
//! The C functions, each checking its arguments at the call with HCCL's
//! codes: a null pointer is `HCCL_E_PTR`, an invalid value (a rank out of
//! range, an unknown handle, a buffer that is not device memory of the
//! communicator's device, a length that overflows) `HCCL_E_PARA`, a type or
//! op the SoC does not reduce `HCCL_E_NOT_SUPPORT`, a suspended communicator
//! `HCCL_E_SUSPENDING`:
//!
//! - [`communicator`]: root info, communicator creation, destruction and
//!   queries, error strings, suspension.
//! - [`collective`]: every collective, queued on the stream's worker.
//! - [`p2p`]: send, receive, batches and groups.
//! - [`settings`]: `HcclGetCommConfigCapability`, process-wide and
//!   per-communicator settings (`HcclSetConfig`, `HcclSetCommConfig`, and
//!   their getters).
//! - [`memory`]: memory registration (`HcclCommRegister`,
//!   `HcclCommDeregister`, `HcclCommExchangeMem`) and virtual memory given
//!   to a communicator (`HcclCommSetMemoryRange`,
//!   `HcclCommActivateCommMemory` and their inverses, over
//!   [`crate::acl::vmm`]).
//! - [`common`]: what they share (early returns, code names, messages).
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
//! stream's fault, reported by its next synchronisation (see [`collective`]).
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
pub mod collective;
pub mod comm;
pub mod common;
pub mod communicator;
pub mod direct;
pub mod env;
pub mod local;
pub mod mem;
pub mod memory;
pub mod p2p;
pub mod ranktable;
pub mod reduce;
pub mod settings;
pub mod transport;
mod unsupported;
pub mod wire;

pub use collective::*;
pub use common::{HCCL_E_IN_STATUS, code_name};
pub use communicator::*;
pub use memory::*;
pub use p2p::*;
pub use settings::*;
pub use unsupported::*;
