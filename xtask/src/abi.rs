//! `cargo xtask abi-check`: proves that what `libcann_sim.so` exports matches
//! the real CANN declarations.
//!
//! It generates a C++ program from the checked-in bindings, compiles it
//! against the real headers (the torch-npu wheel's, see `headers.rs`), links
//! it to the cann-sim cdylib and runs it:
//!
//! 1. **Exports.** The address of every function of the AscendCL and HCCL
//!    bindings is taken through a pointer of the type the bindings declare,
//!    spelled in C++. The compiler rejects the program when that type differs
//!    from the header's declaration; the linker rejects it when
//!    `libcann_sim.so` lacks the symbol; at run time `dladdr` confirms that
//!    each one resolved into `libcann_sim.so`. (cann-sim's exports are tied to
//!    the bindings' types by the Rust compiler: `cann-sim/src/tables.rs`.)
//!    DCMI has no public header: its exports are only looked up by name.
//! 2. **Behaviour.** Every function cann-sim implements (an `extern "C" fn` in
//!    `cann-sim/src/{acl,hccl}/`) must have a check in [`CHECKS`], called
//!    through the header's declaration with real arguments; an implemented
//!    function without one stops the check before anything is compiled.
//! 3. **Not supported.** One function of each library that cann-sim does not
//!    implement is called: it must return the library's "not supported" code
//!    and leave a message naming itself in `aclGetRecentErrMsg`.
//! 4. **`HcclCommConfigInit`** (inline in `hccl.h`, not exported) runs on a
//!    zero-filled and on a 0xAB-filled `HcclCommConfig`; the bytes must equal
//!    those of `hccl_sys::comm_config_init` (and the values those of
//!    `hccl_sys::comm_config_default()`).
//!
//! The compiler is `$CXX` (default `g++`). The program and its source are left
//! in `<target>/abi-check/` for inspection.

use crate::sim_exports::{api_functions, implemented};
use crate::workspace_root;
use acl_sys::codegen::headers::HeaderDirs;
use hccl_sys::HcclCommConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The fixed part of the generated program.
const PREAMBLE: &str = include_str!("../abi/preamble.cpp");

/// The simulated machine the program runs on (its environment).
const DEVICES: u32 = 2;
const HBM_MIB: u64 = 1024;
const SOC_NAME: &str = "Ascend910B1";

/// How long the program may run.
const TIMEOUT: Duration = Duration::from_secs(120);

/// One library with a header.
struct Lib {
    /// Shown in the output.
    label: &'static str,
    /// Checked-in bindings, relative to the workspace root.
    bindings: &'static str,
    /// cann-sim's module, relative to the workspace root.
    sim_dir: &'static str,
    /// The return type of functions that answer a status code.
    status_type: &'static str,
    /// The header's name for "not supported".
    not_supported: &'static str,
}

const LIBS: [Lib; 2] = [
    Lib {
        label: "ACL",
        bindings: "acl-sys/src/bindings.rs",
        sim_dir: "cann-sim/src/acl",
        status_type: "aclError",
        not_supported: "ACL_ERROR_API_NOT_SUPPORT",
    },
    Lib {
        label: "HCCL",
        bindings: "hccl-sys/src/bindings.rs",
        sim_dir: "cann-sim/src/hccl",
        status_type: "HcclResult",
        not_supported: "HCCL_E_NOT_SUPPORT",
    },
];

/// DCMI: no header, so only the names are checked.
const DCMI_BINDINGS: &str = "dcmi-sys/src/bindings.rs";

/// Functions of the headers that no library exports.
pub(crate) const INLINE: &[(&str, &str)] = &[(
    "HcclCommConfigInit",
    "inline in hccl.h, not exported by libhccl.so (compared byte for byte below)",
)];

/// The behavioural check of each function cann-sim implements: the body of a
/// C++ function run on a new thread (no current device, no pending error
/// message). Each check is self-contained: it sets the devices it needs and
/// releases what it takes. Expectations: `EXPECT(cond)`,
/// `EXPECT_RC(call, CODE)` (exact code; use the headers' names),
/// `EXPECT_FAILS(call)` (any failure, with a recorded message). The machine
/// has `ABI_DEVICES` devices of `ABI_HBM_BYTES` each, SoC `ABI_SOC_NAME`.
/// For asynchrony, `xtask/abi/preamble.cpp` has host functions and callbacks
/// (`abi_gate_fn` holds a stream until `abi_gate_open`, `abi_calls_fn` and
/// `abi_slow_fn` count their calls) and timing helpers. Groups run in this
/// order.
/// Every behavioural check: the runtime's (below) and those of other areas,
/// each kept in its own file so that people working on different parts of
/// the simulator add checks without touching the same table.
pub fn all_checks() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    CHECKS
        .iter()
        .chain(crate::abi_checks_hccl::CHECKS)
        .chain(crate::abi_checks_op::CHECKS)
        .chain(crate::abi_checks_model::CHECKS)
        .chain(crate::abi_checks_vmm::CHECKS)
}

pub const CHECKS: &[(&str, &str)] = &[
    (
        "aclInit",
        r#"
    EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);  // 100002, and one more reference
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclFinalize(), ACL_SUCCESS);                     // ends the session whatever the count
    // A config file that cannot be read fails, and leaves AscendCL uninitialized.
    EXPECT_FAILS(aclInit("/nonexistent/cann-sim-abi-check/acl.json"));
    char path[] = "/tmp/cann-abi-check-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        EXPECT(write(fd, "{}\n", 3) == 3);
        close(fd);
        // A valid config, but not the first aclInit's (none): refused
        // (hicann/runtime src/acl/aclrt_impl/acl.cpp, aclInitJsonHash).
        EXPECT_RC(aclInit(path), ACL_ERROR_INVALID_PARAM);
        unlink(path);
    }
"#,
    ),
    (
        "aclFinalize",
        r#"
    EXPECT_RC(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);      // never initialized: 100037
    EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclFinalize(), ACL_SUCCESS);
    EXPECT_RC(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);      // twice: 100037
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);                 // a new session after finalizing
    EXPECT_RC(aclFinalize(), ACL_SUCCESS);
"#,
    ),
    (
        "aclFinalizeReference",
        r#"
    uint64_t refs = 99;
    EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE); // two references
    EXPECT_RC(aclFinalizeReference(&refs), ACL_SUCCESS);
    EXPECT(refs == 1);
    EXPECT_RC(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE); // still initialized; two again
    EXPECT_RC(aclFinalizeReference(nullptr), ACL_SUCCESS);    // refCount may be null
    EXPECT_RC(aclFinalizeReference(&refs), ACL_SUCCESS);
    EXPECT(refs == 0);                                        // finalized at zero
    EXPECT_RC(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    refs = 99;
    EXPECT_RC(aclFinalizeReference(&refs), ACL_ERROR_REPEAT_FINALIZE);
    EXPECT(refs == 0);
"#,
    ),
    (
        "aclrtGetVersion",
        r#"
    int32_t major = -1, minor = -1, patch = -1;
    EXPECT_RC(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS);
    EXPECT(major == ACL_MAJOR_VERSION);
    EXPECT(minor == ACL_MINOR_VERSION);
    EXPECT(patch == ACL_PATCH_VERSION);
    EXPECT_RC(aclrtGetVersion(nullptr, &minor, &patch), ACL_ERROR_INVALID_PARAM);
"#,
    ),
    (
        "aclrtGetSocName",
        r#"
    const char *name = aclrtGetSocName();
    EXPECT(name != nullptr);
    if (name != nullptr) EXPECT(strcmp(name, ABI_SOC_NAME) == 0);
    const char *again = aclrtGetSocName();
    EXPECT(again != nullptr && strcmp(again, ABI_SOC_NAME) == 0);
"#,
    ),
    (
        "aclGetRecentErrMsg",
        r#"
    const char *none = aclGetRecentErrMsg();                  // nothing failed on this new thread
    EXPECT(none == nullptr || none[0] == '\0');
    // With a context, a read clears the text; without one the previous text
    // comes back (hicann/runtime src/acl/aclrt_impl/acl.cpp
    // aclGetRecentErrMsgImpl, src/runtime/api/impl/api_impl.cc GetDevErrMsg).
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
    const char *msg = aclGetRecentErrMsg();
    EXPECT(msg != nullptr && msg[0] != '\0');
    if (msg != nullptr) EXPECT(strstr(msg, "aclrtGetDeviceCount") != nullptr);
    const char *cleared = aclGetRecentErrMsg();               // reading clears it
    EXPECT(cleared == nullptr || cleared[0] == '\0');
    // The message is per thread: a failure on another thread is not ours.
    std::thread([] { EXPECT_RC(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM); }).join();
    const char *other = aclGetRecentErrMsg();
    EXPECT(other == nullptr || other[0] == '\0');
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtGetDeviceCount",
        r#"
    uint32_t count = 0;
    EXPECT_RC(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    EXPECT(count == ABI_DEVICES);
    EXPECT_RC(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
"#,
    ),
    (
        "aclrtSetDevice",
        r#"
    int32_t dev = -1;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT(dev == 0);
    EXPECT_RC(aclrtSetDevice(ABI_DEVICES - 1), ACL_SUCCESS);  // switch to another device
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT(dev == ABI_DEVICES - 1);
    EXPECT_RC(aclrtSetDevice(ABI_DEVICES), ACL_ERROR_RT_INVALID_DEVICEID);  // 107001
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);             // a failed set changes nothing
    EXPECT(dev == ABI_DEVICES - 1);
    EXPECT_RC(aclrtResetDevice(ABI_DEVICES - 1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtResetDevice",
        r#"
    int32_t dev = -1;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);              // one reference left
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT(dev == 0);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);              // the last: the default context is gone
    EXPECT_RC(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_FAILS(aclrtResetDevice(0));                        // not set any more
    EXPECT_RC(aclrtResetDevice(ABI_DEVICES), ACL_ERROR_RT_INVALID_DEVICEID);
    // References are per process: one taken on another thread keeps the device.
    std::thread([] { EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS); }).join();
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT(dev == 1);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);              // the other thread's reference
    EXPECT_RC(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
"#,
    ),
    (
        "aclrtResetDeviceForce",
        r#"
    int32_t dev = -1;
    for (int i = 0; i < 3; i++) EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDeviceForce(1), ACL_SUCCESS);         // all three references at once
    EXPECT_RC(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_FAILS(aclrtResetDeviceForce(1));
    EXPECT_RC(aclrtResetDeviceForce(ABI_DEVICES), ACL_ERROR_RT_INVALID_DEVICEID);
"#,
    ),
    (
        "aclrtGetDevice",
        r#"
    int32_t dev = 12345;
    EXPECT_RC(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);  // 107002: none set on this thread
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);
    EXPECT(dev == 1);
    // The current device is per thread.
    std::thread([] {
        int32_t d = -1;
        EXPECT_RC(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL);
    }).join();
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMalloc",
        r#"
    void *p = nullptr;
    EXPECT_RC(aclrtMalloc(&p, 1024, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);  // size 0
    EXPECT_RC(aclrtMalloc(nullptr, 1024, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    size_t free0 = 0, free1 = 0, total = 0;
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(p != nullptr);
    EXPECT((uintptr_t)p % 64 == 0);                           // first address 64-byte aligned
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free0 - free1 == 1056);                            // (1000 + 32 + 31) / 32 * 32: rounded, padded
    void *big = nullptr;
    EXPECT_RC(aclrtMalloc(&big, ABI_HBM_BYTES, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtMalloc(&big, SIZE_MAX - 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);  // overflows when rounded
    EXPECT_RC(aclrtMalloc(&big, 64, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);  // another policy
    EXPECT_RC(aclrtFree(big), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(p), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free1 == free0);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMallocAlign32",
        r#"
    void *p = nullptr;
    EXPECT_RC(aclrtMallocAlign32(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMallocAlign32(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    size_t free0 = 0, free1 = 0, total = 0;
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocAlign32(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(p != nullptr && (uintptr_t)p % 64 == 0);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free0 - free1 == 1024);                            // 32-byte rounding, no padding
    EXPECT_RC(aclrtFree(p), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMallocCached",
        r#"
    void *p = nullptr;
    EXPECT_RC(aclrtMallocCached(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocCached(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    size_t free0 = 0, free1 = 0, total = 0;
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocCached(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT(p != nullptr && (uintptr_t)p % 64 == 0);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free0 - free1 == 1056);                            // as aclrtMalloc
    EXPECT_RC(aclrtFree(p), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtFree",
        r#"
    EXPECT_RC(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);   // unlike free(NULL)
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *p = nullptr, *h = nullptr;
    int local = 0;
    EXPECT_RC(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_FAILS(aclrtFree((char *)p + 64));                  // not the allocation's address
    EXPECT_RC(aclrtFree(p), ACL_SUCCESS);
    EXPECT_FAILS(aclrtFree(p));                               // twice
    EXPECT_FAILS(aclrtFree(&local));                          // never allocated
    EXPECT_RC(aclrtMallocHost(&h, 256), ACL_SUCCESS);
    EXPECT_FAILS(aclrtFree(h));                               // pinned host memory: aclrtFreeHost
    EXPECT_RC(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMallocHost",
        r#"
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *h = nullptr;
    EXPECT_RC(aclrtMallocHost(&h, 0), ACL_ERROR_INVALID_PARAM);  // size 0
    EXPECT_RC(aclrtMallocHost(nullptr, 64), ACL_ERROR_INVALID_PARAM);
    size_t free0 = 0, free1 = 0, total = 0;
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocHost(&h, 4096), ACL_SUCCESS);
    EXPECT(h != nullptr && (uintptr_t)h % 64 == 0);
    if (h != nullptr) {
        memset(h, 0x3C, 4096);                                // the host can use it directly
        EXPECT(((unsigned char *)h)[4095] == 0x3C);
    }
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free1 == free0);                                   // not device memory
    EXPECT_RC(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtFreeHost",
        r#"
    EXPECT_RC(aclrtFreeHost(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *h = nullptr, *d = nullptr;
    EXPECT_RC(aclrtMallocHost(&h, 128), ACL_SUCCESS);
    EXPECT_RC(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_FAILS(aclrtFreeHost(h));                           // twice
    EXPECT_RC(aclrtMalloc(&d, 128, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_FAILS(aclrtFreeHost(d));                           // device memory: aclrtFree
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMemcpy",
        r#"
    const size_t n = 1 << 20;
    std::vector<unsigned char> src(n), back(n, 0);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 131 + i / 4096 + 7);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *d = nullptr, *d2 = nullptr;
    EXPECT_RC(aclrtMalloc(&d, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d2, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    // 1 MiB host -> device -> device -> host.
    EXPECT_RC(aclrtMemcpy(d, n, src.data(), n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(d2, n, d, n, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(back.data(), n, d2, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(memcmp(src.data(), back.data(), n) == 0);
    // ACL_MEMCPY_DEFAULT: the direction comes from the pointers.
    memset(back.data(), 0, n);
    EXPECT_RC(aclrtMemcpy(back.data(), n, d, n, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    EXPECT(memcmp(src.data(), back.data(), n) == 0);
    // A part, at an offset, into a larger destination.
    memset(back.data(), 0, n);
    EXPECT_RC(aclrtMemcpy(back.data(), n, (char *)d + 4096, 1000, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(memcmp(src.data() + 4096, back.data(), 1000) == 0 && back[1000] == 0);
    // Argument checks.
    EXPECT_RC(aclrtMemcpy(nullptr, 0, nullptr, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);  // count 0: nothing to do
    EXPECT_RC(aclrtMemcpy(nullptr, n, src.data(), n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemcpy(d, n, nullptr, n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemcpy(d, n, src.data(), n, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);  // kinds 0..=5 only
    EXPECT_RC(aclrtMemcpy(d, n - 1, src.data(), n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);  // count > destMax
    EXPECT_FAILS(aclrtMemcpy((char *)d + 16, n, src.data(), n, ACL_MEMCPY_HOST_TO_DEVICE));  // runs past the allocation
    EXPECT_FAILS(aclrtMemcpy(back.data(), n, src.data(), n, ACL_MEMCPY_HOST_TO_DEVICE));  // dst is not device memory
    // No device on the calling thread.
    std::thread([&] {
        EXPECT_RC(aclrtMemcpy(d, n, src.data(), n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_CONTEXT_NULL);
    }).join();
    EXPECT_RC(aclrtFree(d2), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMemset",
        r#"
    const size_t n = 1 << 20;
    std::vector<unsigned char> back(n, 0);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *d = nullptr;
    EXPECT_RC(aclrtMalloc(&d, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(d, n, 0x11, n), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(d, n, 0x5A, n / 2), ACL_SUCCESS);   // the first half only
    EXPECT_RC(aclrtMemcpy(back.data(), n, d, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) wrong += back[i] != (i < n / 2 ? 0x5A : 0x11);
    EXPECT(wrong == 0);
    EXPECT_RC(aclrtMemset(d, n, 0, 0), ACL_SUCCESS);          // count 0: nothing to do
    EXPECT_RC(aclrtMemset(nullptr, n, 0, n), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemset(d, n / 2, 0, n), ACL_ERROR_RT_PARAM_INVALID);  // count > maxCount
    EXPECT_FAILS(aclrtMemset((char *)d + n / 2, n, 0, n));    // runs past the allocation
    std::thread([&] { EXPECT_RC(aclrtMemset(d, n, 0, n), ACL_ERROR_RT_CONTEXT_NULL); }).join();
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtGetMemInfo",
        r#"
    size_t free0 = 0, free1 = 0, total = 0;
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
    EXPECT(total == ABI_HBM_BYTES);
    EXPECT(free0 <= total);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &total), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free0, nullptr), ACL_ERROR_INVALID_PARAM);
    void *d = nullptr;
    EXPECT_RC(aclrtMalloc(&d, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free0 - free1 == (1 << 20) + 32);
    // Each device has its own memory.
    size_t other0 = 0, other1 = 0;
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &other0, &total), ACL_SUCCESS);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &other1, &total), ACL_SUCCESS);
    EXPECT(other1 == other0);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
    EXPECT(free1 == free0);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    // ---- contexts -----------------------------------------------------------
    (
        "aclrtCreateContext",
        r#"
    aclrtContext ctx = nullptr, other = nullptr, cur = nullptr;
    int32_t dev = -1;
    EXPECT_RC(aclrtCreateContext(nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateContext(&ctx, ABI_DEVICES), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtCreateContext(&ctx, -1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(ctx == nullptr);
    EXPECT_RC(aclrtCreateContext(&ctx, 1), ACL_SUCCESS);      // no aclrtSetDevice needed
    EXPECT(ctx != nullptr);
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);     // made current
    EXPECT(cur == ctx);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);             // and its device the thread's
    EXPECT(dev == 1);
    void *d = nullptr;                                        // usable as a device context
    EXPECT_RC(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(d, 64, 1, 64, nullptr), ACL_SUCCESS);  // on its default stream
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateContext(&other, 1), ACL_SUCCESS);    // a second one on the same device
    EXPECT(other != nullptr && other != ctx);
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT(cur == other);
    EXPECT_RC(aclrtDestroyContext(other), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyContext(ctx), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtDestroyContext",
        r#"
    aclrtContext ctx = nullptr, primary = nullptr;
    aclrtStream s = nullptr;
    AbiCalls calls;
    int32_t dev = -1;
    EXPECT_RC(aclrtDestroyContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyContext(ctx), ACL_SUCCESS);         // waits for the work of its streams
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);  // it was current: now none
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);  // its streams are gone
    EXPECT_RC(aclrtDestroyContext(ctx), ACL_ERROR_RT_CONTEXT_NULL);     // twice: 107002
    EXPECT_RC(aclrtDestroyContext((aclrtContext)&dev), ACL_ERROR_RT_CONTEXT_NULL);  // not a context
    EXPECT(!abi_recent().empty());
    // A primary context ends with aclrtResetDevice only.
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyContext(primary), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);             // still there
    EXPECT(dev == 0);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtSetCurrentContext",
        r#"
    aclrtContext a = nullptr, b = nullptr, cur = nullptr, primary = nullptr;
    int32_t dev = -1;
    EXPECT_RC(aclrtSetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateContext(&a, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateContext(&b, 1), ACL_SUCCESS);        // b is current
    EXPECT_RC(aclrtSetCurrentContext(a), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT(cur == a);
    EXPECT_RC(aclrtGetDevice(&dev), ACL_SUCCESS);             // the device follows the context
    EXPECT(dev == 0);
    // Per thread: another thread starts with none, and setting one there leaves ours.
    std::thread([&] {
        aclrtContext c = nullptr;
        int32_t d = -1;
        EXPECT_RC(aclrtGetCurrentContext(&c), ACL_ERROR_RT_CONTEXT_NULL);
        EXPECT_RC(aclrtSetCurrentContext(b), ACL_SUCCESS);
        EXPECT_RC(aclrtGetDevice(&d), ACL_SUCCESS);
        EXPECT(d == 1);
    }).join();
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT(cur == a);
    EXPECT_RC(aclrtDestroyContext(b), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(b), ACL_ERROR_RT_PARAM_INVALID);  // destroyed: 107000
    EXPECT_RC(aclrtSetCurrentContext((aclrtContext)&dev), ACL_ERROR_RT_PARAM_INVALID);  // not a context
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);     // a failed set changes nothing
    EXPECT(cur == a);
    // It takes no device reference: one aclrtSetDevice, one reset.
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(a), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);  // 507007: no reference left
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);  // the primary context is gone
    EXPECT_RC(aclrtDestroyContext(a), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtGetCurrentContext",
        r#"
    aclrtContext cur = nullptr, p0 = nullptr, p1 = nullptr;
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);  // none on this thread
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtGetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);                // the device's primary context
    EXPECT_RC(aclrtGetCurrentContext(&p0), ACL_SUCCESS);
    EXPECT(p0 != nullptr);
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&p1), ACL_SUCCESS);
    EXPECT(p1 != nullptr && p1 != p0);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);                // the same primary context again
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT(cur == p0);
    std::thread([&] {                                         // one per device, process-wide
        aclrtContext c = nullptr;
        EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
        EXPECT_RC(aclrtGetCurrentContext(&c), ACL_SUCCESS);
        EXPECT(c == p0);
        EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    }).join();
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_SUCCESS);     // one reference left
    EXPECT(cur == p0);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);  // destroyed with the last reset
"#,
    ),
    (
        "aclrtCtxGetCurrentDefaultStream",
        r#"
    aclrtStream s = nullptr, s2 = nullptr;
    aclrtContext c = nullptr;
    int32_t id = -1, null_id = -2;
    EXPECT_RC(aclrtCtxGetCurrentDefaultStream(&s), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtCtxGetCurrentDefaultStream(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCtxGetCurrentDefaultStream(&s), ACL_SUCCESS);
    EXPECT(s != nullptr);
    EXPECT_RC(aclrtStreamGetId(s, &id), ACL_SUCCESS);         // the stream a null aclrtStream means
    EXPECT_RC(aclrtStreamGetId(nullptr, &null_id), ACL_SUCCESS);
    EXPECT(id == null_id);
    AbiGate gate;                                             // work on null shows on it
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    EXPECT_RC(aclrtLaunchHostFunc(nullptr, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);        // each context has its own
    EXPECT_RC(aclrtCtxGetCurrentDefaultStream(&s2), ACL_SUCCESS);
    EXPECT(s2 != nullptr && s2 != s);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamQuery(s2, &st), ACL_ERROR_RT_INVALID_HANDLE);  // gone with its context
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    // ---- streams ------------------------------------------------------------
    (
        "aclrtCreateStream",
        r#"
    aclrtStream s = nullptr, t = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT(s == nullptr);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT(s != nullptr && t != nullptr && s != t);
    uint32_t prio = 99, flags = 99;
    EXPECT_RC(aclrtStreamGetPriority(s, &prio), ACL_SUCCESS);
    EXPECT(prio == 0);                                        // the highest
    EXPECT_RC(aclrtStreamGetFlags(s, &flags), ACL_SUCCESS);
    EXPECT(flags == 0);
    // Streams run independently: t runs while s is held.
    AbiGate gate;
    AbiCalls calls;
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(t, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT(abi_gate_entered(gate));
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(t), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    // At most 1984 live streams per device (CANN_SIM_MAX_STREAMS), the default stream included.
    std::vector<aclrtStream> many;
    aclError rc = ACL_SUCCESS;
    while (many.size() < 4096 && (rc = aclrtCreateStream(&s)) == ACL_SUCCESS) many.push_back(s);
    EXPECT(rc == ACL_ERROR_RT_NO_STREAM_RESOURCE);            // 207008
    EXPECT(many.size() + 1 == 1984);
    EXPECT(!abi_recent().empty());
    aclrtContext c = nullptr;                                 // nor one for a new context's default stream
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_ERROR_RT_NO_STREAM_RESOURCE);
    for (aclrtStream m : many) EXPECT_RC(aclrtDestroyStream(m), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);            // free again
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtSetStreamFailureMode",
        r#"
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtSetStreamFailureMode(s, 2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSetStreamFailureMode((aclrtStream)0x1234, ACL_STOP_ON_FAILURE), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE), ACL_SUCCESS);
    void *bad = nullptr, *d = nullptr;
    EXPECT_RC(aclrtMalloc(&bad, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(d, 256, 0, 256), ACL_SUCCESS);
    AbiGate gate;
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(bad, 256, 1, 256, s), ACL_SUCCESS);   // faults: freed below
    EXPECT_RC(aclrtMemsetAsync(d, 256, 7, 256, s), ACL_SUCCESS);     // skipped: the stream stopped
    EXPECT_RC(aclrtFree(bad), ACL_SUCCESS);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_SYS_DMA);
    EXPECT(abi_recent().find("skipped") != std::string::npos);
    unsigned char b = 9;
    EXPECT_RC(aclrtMemcpy(&b, 1, d, 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(b == 0);                                                   // the skipped fill did not run
    EXPECT_RC(aclrtMemsetAsync(d, 256, 7, 256, s), ACL_SUCCESS);     // reported: work runs again
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(&b, 1, d, 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(b == 7);
    EXPECT_RC(aclrtSetStreamFailureMode(nullptr, ACL_CONTINUE_ON_FAILURE), ACL_SUCCESS);  // default stream
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtCreateStreamConfigHandle",
        r#"
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    EXPECT(h != nullptr);
    if (h != nullptr) EXPECT(h->workptr == nullptr && h->workSize == 0 && h->flag == 0 && h->priority == 0);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtDestroyStreamConfigHandle",
        r#"
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    aclrtStreamConfigHandle mine;
    EXPECT_RC(aclrtDestroyStreamConfigHandle(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(&mine), ACL_ERROR_INVALID_PARAM);   // not made by create
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_ERROR_INVALID_PARAM);       // twice
"#,
    ),
    (
        "aclrtSetStreamConfigOpt",
        r#"
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    uint32_t prio = 3;
    uint64_t size = 4096;
    void *ptr = (void *)0x1000;
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio), ACL_SUCCESS);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_SIZE, &size, sizeof size), ACL_SUCCESS);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &ptr, sizeof ptr), ACL_SUCCESS);
    EXPECT(h->priority == 3 && h->workSize == 4096 && h->workptr == ptr);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, 3), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, nullptr, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, (aclrtStreamConfigAttr)99, &prio, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtCreateStreamV2",
        r#"
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    uint32_t prio = 2;
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &prio, sizeof prio), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStreamV2(&s, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateStreamV2(&s, h), ACL_SUCCESS);
    uint32_t got = 9;
    EXPECT_RC(aclrtStreamGetPriority(s, &got), ACL_SUCCESS);
    EXPECT(got == 2);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    // Work memory must be device memory of the current device.
    std::vector<char> host(4096);
    void *p = host.data();
    uint64_t size = host.size();
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &p, sizeof p), ACL_SUCCESS);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_SIZE, &size, sizeof size), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamV2(&s, h), ACL_ERROR_INVALID_PARAM);
    void *dev = nullptr;
    EXPECT_RC(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_WORK_ADDR_PTR, &dev, sizeof dev), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamV2(&s, h), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(dev), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtCreateStreamWithConfig",
        r#"
    aclrtStream s = nullptr;
    uint32_t prio = 99, flags = 99;
    AbiCalls calls;
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, 0), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(nullptr, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetPriority(s, &prio), ACL_SUCCESS);
    EXPECT(prio == 3);
    EXPECT_RC(aclrtStreamGetFlags(s, &flags), ACL_SUCCESS);
    EXPECT(flags == (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC));
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    // The priority is clamped to [0, 7]; unknown flag bits are dropped.
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 100, ACL_STREAM_HUGE | 0x100u), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetPriority(s, &prio), ACL_SUCCESS);
    EXPECT(prio == 7);
    EXPECT_RC(aclrtStreamGetFlags(s, &flags), ACL_SUCCESS);
    EXPECT(flags == ACL_STREAM_HUGE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_FAST_LAUNCH), ACL_ERROR_RT_PARAM_INVALID);
    // A persistent stream takes no host work: it synchronises at once, work is refused.
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT(calls.count() == 0);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtDestroyStream",
        r#"
    aclrtStream s = nullptr, t = nullptr, def = nullptr;
    aclrtContext primary = nullptr, c = nullptr;
    AbiCalls calls;
    EXPECT_RC(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);            // waits for the queued work
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);  // twice: 107017
    EXPECT_RC(aclrtDestroyStream((aclrtStream)&calls), ACL_ERROR_RT_INVALID_HANDLE);  // not a stream
    EXPECT_RC(aclrtCtxGetCurrentDefaultStream(&def), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(def), ACL_ERROR_RT_PARAM_INVALID);  // lives as long as its context
    // Only in its own context.
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_ERROR_RT_STREAM_CONTEXT);  // 107003
    std::thread([&] { EXPECT_RC(aclrtDestroyStream(t), ACL_ERROR_RT_CONTEXT_NULL); }).join();
    EXPECT_RC(aclrtSetCurrentContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtDestroyStreamForce",
        r#"
    aclrtStream s = nullptr;
    AbiGate gate;
    AbiCalls calls;
    EXPECT_RC(aclrtDestroyStreamForce(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_SUCCESS);  // queued behind the gate
    EXPECT(abi_gate_entered(gate));
    EXPECT_RC(aclrtDestroyStreamForce(s), ACL_SUCCESS);       // returns with the gate still closed
    EXPECT(!abi_gate_is_open(gate));
    abi_gate_open(gate);
    abi_sleep_ms(20);
    EXPECT(calls.count() == 0);                               // dropped work is never called
    EXPECT_RC(aclrtDestroyStreamForce(s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(calls.count() == 0);
"#,
    ),
    (
        "aclrtSynchronizeStream",
        r#"
    aclrtStream s = nullptr, t = nullptr;
    aclrtContext primary = nullptr, c = nullptr;
    AbiCalls calls;
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);        // nothing queued
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT(calls.count() == 0);                               // asynchronous
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(calls.count() == 2);
    EXPECT_RC(aclrtLaunchHostFunc(nullptr, abi_slow_fn, &calls), ACL_SUCCESS);  // the default stream
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT(calls.count() == 3);
    // A stream of another context: synchronised all the same.
    EXPECT_RC(aclrtCreateContext(&c, 1), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(t, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(t), ACL_SUCCESS);
    EXPECT(calls.count() == 4);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(t), ACL_ERROR_RT_INVALID_HANDLE);  // destroyed with its context
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtSynchronizeStreamWithTimeout",
        r#"
    aclrtStream s = nullptr;
    AbiGate gate;
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(nullptr, -1), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_RT_PARAM_INVALID);  // 0 is invalid
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(s, 10), ACL_SUCCESS);  // nothing queued
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    AbiTime t0 = abi_now();
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(s, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);  // 507046
    EXPECT(abi_us_since(t0) >= 30000);
    EXPECT(!abi_recent().empty());
    std::thread opener = abi_gate_open_later(gate, 10);
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(s, -1), ACL_SUCCESS);  // waits as long as it takes
    EXPECT(abi_gate_is_open(gate));
    opener.join();
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout((aclrtStream)&gate, 10), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtSynchronizeDevice",
        r#"
    aclrtStream s = nullptr, t = nullptr, u = nullptr;
    aclrtContext primary = nullptr, c = nullptr, c1 = nullptr;
    AbiCalls calls;
    AbiGate gate;
    EXPECT_RC(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeDevice(), ACL_SUCCESS);         // nothing queued
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);        // another context on device 0
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateContext(&c1, 1), ACL_SUCCESS);       // and device 1, held by a gate
    EXPECT_RC(aclrtCreateStream(&u), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(u, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(nullptr, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(t, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeDevice(), ACL_SUCCESS);         // every stream of device 0, not device 1
    EXPECT(calls.count() == 3);
    EXPECT(!abi_gate_is_open(gate));
    abi_gate_open(gate);
    EXPECT_RC(aclrtSetCurrentContext(c1), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeDevice(), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyContext(c1), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtStreamQuery",
        r#"
    aclrtStream s = nullptr;
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    AbiGate gate;
    EXPECT_RC(aclrtStreamQuery(nullptr, &st), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamQuery(s, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_COMPLETE);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    st = ACL_STREAM_STATUS_RESERVED;
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);         // does not wait
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    EXPECT(abi_gate_entered(gate));
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_COMPLETE);
    EXPECT_RC(aclrtStreamQuery(nullptr, &st), ACL_SUCCESS);   // the default stream
    EXPECT(st == ACL_STREAM_STATUS_COMPLETE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtStreamWaitEvent",
        r#"
    aclrtStream a = nullptr, b = nullptr;
    aclrtEvent e = nullptr, timed = nullptr, device_only = nullptr;
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    AbiGate gate;
    AbiCalls calls;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&a), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&b), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(b, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtStreamWaitEvent(b, e), ACL_SUCCESS);       // never recorded: nothing to wait for
    EXPECT_RC(aclrtSynchronizeStream(b), ACL_SUCCESS);
    // b waits for a record on a, which is held by a gate.
    EXPECT_RC(aclrtLaunchHostFunc(a, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, a), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(b, e), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(b, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(b, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT_RC(aclrtStreamQuery(b, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    EXPECT(calls.count() == 0);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(b), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtCreateEventWithFlag(&timed, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(b, timed), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);  // without ACL_EVENT_SYNC
    EXPECT_RC(aclrtCreateEventWithFlag(&device_only, ACL_EVENT_DEVICE_USE_ONLY), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(b, device_only), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtStreamWaitEvent((aclrtStream)&gate, e), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyEvent(device_only), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(timed), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(b, e), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(b), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(a), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtStreamGetPriority",
        r#"
    aclrtStream s = nullptr;
    uint32_t prio = 99;
    EXPECT_RC(aclrtStreamGetPriority(nullptr, &prio), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetPriority(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtStreamGetPriority(nullptr, &prio), ACL_SUCCESS);  // the default stream
    EXPECT(prio == 0);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 5, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetPriority(s, &prio), ACL_SUCCESS);
    EXPECT(prio == 5);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    prio = 99;
    EXPECT_RC(aclrtStreamGetPriority(s, &prio), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT(prio == 99);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtStreamGetFlags",
        r#"
    aclrtStream s = nullptr;
    uint32_t flags = 99;
    EXPECT_RC(aclrtStreamGetFlags(nullptr, &flags), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetFlags(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtStreamGetFlags(nullptr, &flags), ACL_SUCCESS);  // the default stream
    EXPECT(flags == 0);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_FAST_SYNC | ACL_STREAM_HUGE | 0x80000000u), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetFlags(s, &flags), ACL_SUCCESS);
    EXPECT(flags == (ACL_STREAM_FAST_SYNC | ACL_STREAM_HUGE));  // the unknown bit is dropped
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_CPU_SCHEDULE), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetFlags(s, &flags), ACL_SUCCESS);
    EXPECT(flags == ACL_STREAM_CPU_SCHEDULE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetFlags(s, &flags), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtStreamGetId",
        r#"
    aclrtStream s = nullptr, t = nullptr, u = nullptr;
    int32_t def = -1, sid = -1, tid = -1, uid = -1;
    EXPECT_RC(aclrtStreamGetId(nullptr, &def), ACL_ERROR_RT_CONTEXT_NULL);  // a null stream needs a context
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetId(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtStreamGetId(nullptr, &def), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetId(s, &sid), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetId(t, &tid), ACL_SUCCESS);
    EXPECT(def >= 0 && sid >= 0 && tid >= 0);
    EXPECT(def != sid && def != tid && sid != tid);           // distinct on the device
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&u), ACL_SUCCESS);            // the smallest free id: s's again
    EXPECT_RC(aclrtStreamGetId(u, &uid), ACL_SUCCESS);
    EXPECT(uid == sid);
    EXPECT_RC(aclrtStreamGetId(s, &sid), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(u), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
"#,
    ),
    // ---- events -------------------------------------------------------------
    (
        "aclrtCreateEvent",
        r#"
    aclrtEvent e = nullptr, f = nullptr;
    EXPECT_RC(aclrtCreateEvent(&e), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT(e == nullptr);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&f), ACL_SUCCESS);
    EXPECT(e != nullptr && f != nullptr && e != f);
    // Timed and waitable.
    float ms = -1;
    EXPECT_RC(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(f, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(nullptr, f), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(f), ACL_SUCCESS);
    EXPECT_RC(aclrtEventElapsedTime(&ms, e, f), ACL_SUCCESS);
    EXPECT(ms >= 0);
    EXPECT_RC(aclrtResetEvent(e, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(f), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtCreateEventWithFlag",
        r#"
    aclrtEvent e = nullptr, t = nullptr, x = nullptr;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    uint64_t us = 0;
    EXPECT_RC(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEventWithFlag(nullptr, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateEventWithFlag(&e, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC | ACL_EVENT_IPC), ACL_ERROR_RT_PARAM_INVALID);  // above 0x3F
    EXPECT_RC(aclrtCreateEventWithFlag(&e, ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_SYNC), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCreateEventWithFlag(&e, ACL_EVENT_EXTERNAL | ACL_EVENT_TIME_LINE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(e == nullptr);
    // ACL_EVENT_SYNC: waitable, records no timestamp.
    EXPECT_RC(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(nullptr, e), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(e, &us), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    // ACL_EVENT_TIME_LINE: timed, not waitable.
    EXPECT_RC(aclrtCreateEventWithFlag(&t, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(t, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(t), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(t, &us), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(nullptr, t), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    // ACL_EVENT_EXTERNAL alone: cannot be queried.
    EXPECT_RC(aclrtCreateEventWithFlag(&x, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(x, &st), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclrtDestroyEvent(x), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(t), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtCreateEventExWithFlag",
        r#"
    aclrtEvent e = nullptr;
    aclrtStream s = nullptr;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    aclrtEventStatus old = ACL_EVENT_STATUS_RESERVED;
    AbiGate gate;
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEventExWithFlag(nullptr, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_DEVICE_USE_ONLY), ACL_ERROR_RT_PARAM_INVALID);  // no bit of 0x4F
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC | ACL_EVENT_SYNC), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC), ACL_ERROR_API_NOT_SUPPORT);  // IPC: not simulated
    EXPECT(e == nullptr);
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);   // complete before its first record
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT_RC(aclrtQueryEvent(e, &old), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);  // not with the deprecated query
    EXPECT_RC(aclrtResetEvent(e, nullptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);  // re-record instead
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtDestroyEvent",
        r#"
    aclrtEvent e = nullptr, f = nullptr;
    aclrtStream s = nullptr;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    AbiGate gate;
    EXPECT_RC(aclrtDestroyEvent(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    // Destroying before its record completes is allowed; the stream goes on.
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_ERROR_RT_INVALID_HANDLE);  // twice: 107017
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyEvent((aclrtEvent)&gate), ACL_ERROR_RT_INVALID_HANDLE);  // not an event
    EXPECT_RC(aclrtCreateEvent(&f), ACL_SUCCESS);
    std::thread([&] { EXPECT_RC(aclrtDestroyEvent(f), ACL_SUCCESS); }).join();  // needs no context
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtRecordEvent",
        r#"
    aclrtEvent e = nullptr, device_only = nullptr;
    aclrtStream s = nullptr, t = nullptr;
    aclrtContext primary = nullptr, c = nullptr;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    AbiGate gate;
    EXPECT_RC(aclrtRecordEvent(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);           // queued: completes when s reaches it
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT_RC(aclrtRecordEvent(e, (aclrtStream)&gate), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtCreateEventWithFlag(&device_only, ACL_EVENT_DEVICE_USE_ONLY), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(device_only, s), ACL_ERROR_RT_PARAM_INVALID);
    std::thread([&] { EXPECT_RC(aclrtRecordEvent(e, nullptr), ACL_ERROR_RT_CONTEXT_NULL); }).join();
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, t), ACL_ERROR_RT_STREAM_CONTEXT);  // 107003
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(device_only), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtResetEvent",
        r#"
    aclrtEvent e = nullptr, timed = nullptr;
    aclrtStream s = nullptr;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    uint64_t us = 0;
    AbiGate gate;
    EXPECT_RC(aclrtResetEvent(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    // Queued: the record is forgotten when s reaches the reset.
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtResetEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);        // as if never recorded
    EXPECT_RC(aclrtEventGetTimestamp(e, &us), ACL_ERROR_RT_INTERNAL_ERROR);
    EXPECT_RC(aclrtCreateEventWithFlag(&timed, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    EXPECT_RC(aclrtResetEvent(timed, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);  // without ACL_EVENT_SYNC
    EXPECT_RC(aclrtResetEvent(e, (aclrtStream)&gate), ACL_ERROR_RT_INVALID_HANDLE);
    std::thread([&] { EXPECT_RC(aclrtResetEvent(e, nullptr), ACL_ERROR_RT_CONTEXT_NULL); }).join();
    EXPECT_RC(aclrtDestroyEvent(timed), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtResetEvent(e, s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtQueryEventStatus",
        r#"
    aclrtEvent e = nullptr;
    aclrtStream s = nullptr;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    AbiGate gate;
    EXPECT_RC(aclrtQueryEventStatus(nullptr, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);   // never recorded
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);   // does not wait
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    std::thread([&] {                                         // needs no context
        aclrtEventRecordedStatus s2 = ACL_EVENT_RECORDED_STATUS_NOT_READY;
        EXPECT_RC(aclrtQueryEventStatus(e, &s2), ACL_SUCCESS);
        EXPECT(s2 == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    }).join();
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(e, &st), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtQueryEvent",
        r#"
    aclrtEvent e = nullptr;
    aclrtStream s = nullptr;
    aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
    AbiGate gate;
    EXPECT_RC(aclrtQueryEvent(nullptr, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEvent(e, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtQueryEvent(e, &st), ACL_SUCCESS);         // never recorded: nothing pending
    EXPECT(st == ACL_EVENT_STATUS_COMPLETE);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEvent(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_STATUS_NOT_READY);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEvent(e, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_STATUS_COMPLETE);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEvent(e, &st), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtSynchronizeEvent",
        r#"
    aclrtEvent e = nullptr, x = nullptr;
    aclrtStream s = nullptr;
    AbiCalls calls;
    AbiGate gate;
    void *d = nullptr;
    EXPECT_RC(aclrtSynchronizeEvent(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);         // never recorded: at once
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_slow_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);         // waits for the work before the record
    EXPECT(calls.count() == 1);
    // A task before the record that faults when it runs: the event returns the fault.
    EXPECT_RC(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(d, 256, 0, 256, s), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);                     // freed before the fill runs
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_ERROR_RT_SYS_DMA);  // 507013
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);        // reported once
    EXPECT_RC(aclrtCreateEventWithFlag(&x, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(x), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclrtDestroyEvent(x), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtSynchronizeEventWithTimeout",
        r#"
    aclrtEvent e = nullptr;
    aclrtStream s = nullptr;
    AbiGate gate;
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(nullptr, -2), ACL_ERROR_RT_PARAM_INVALID);  // timeout first
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(nullptr, 10), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(e, 0), ACL_ERROR_RT_PARAM_INVALID);  // 0 is invalid
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(e, 10), ACL_SUCCESS);  // never recorded
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    AbiTime t0 = abi_now();
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(e, 30), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);  // 507047
    EXPECT(abi_us_since(t0) >= 30000);
    EXPECT(!abi_recent().empty());
    std::thread opener = abi_gate_open_later(gate, 10);
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(e, -1), ACL_SUCCESS);  // waits as long as it takes
    EXPECT(abi_gate_is_open(gate));
    opener.join();
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(e, 1000), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEventWithTimeout(e, 10), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtEventElapsedTime",
        r#"
    aclrtEvent a = nullptr, b = nullptr, untimed = nullptr;
    aclrtStream s = nullptr;
    AbiGate gate;
    float ms = -1, back = 0;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&a), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&b), ACL_SUCCESS);
    EXPECT_RC(aclrtEventElapsedTime(nullptr, a, b), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtEventElapsedTime(&ms, nullptr, b), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtEventElapsedTime(&ms, a, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_RT_INTERNAL_ERROR);  // never recorded: 507000
    EXPECT_RC(aclrtRecordEvent(a, s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(b, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(a), ACL_SUCCESS);
    EXPECT_RC(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);  // b still queued: 107006
    abi_sleep_ms(20);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeEvent(b), ACL_SUCCESS);
    EXPECT_RC(aclrtEventElapsedTime(&ms, a, b), ACL_SUCCESS);
    EXPECT(ms >= 20 && ms < 10000);                           // the gate held b at least 20 ms
    EXPECT_RC(aclrtEventElapsedTime(&back, b, a), ACL_SUCCESS);
    EXPECT(back == -ms);                                      // negative when end completed first
    EXPECT_RC(aclrtCreateEventWithFlag(&untimed, ACL_EVENT_SYNC), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(untimed, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(untimed), ACL_SUCCESS);
    EXPECT_RC(aclrtEventElapsedTime(&ms, a, untimed), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);  // no ACL_EVENT_TIME_LINE
    EXPECT_RC(aclrtDestroyEvent(untimed), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(b), ACL_SUCCESS);
    EXPECT_RC(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyEvent(a), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtEventGetTimestamp",
        r#"
    aclrtEvent e = nullptr, untimed = nullptr;
    aclrtStream s = nullptr;
    AbiGate gate;
    uint64_t t0 = 0, t1 = 0;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(e, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtEventGetTimestamp(nullptr, &t0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtEventGetTimestamp(e, &t0), ACL_ERROR_RT_INTERNAL_ERROR);  // never recorded: 507000
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(e, &t0), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, s), ACL_SUCCESS);           // the latest record counts
    EXPECT_RC(aclrtEventGetTimestamp(e, &t1), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);  // pending: 107006
    abi_sleep_ms(10);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(e, &t1), ACL_SUCCESS);
    EXPECT(t1 >= t0 + 10000);                                 // microseconds
    EXPECT_RC(aclrtCreateEventWithFlag(&untimed, ACL_EVENT_SYNC), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(untimed, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(untimed), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(untimed, &t1), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);  // no ACL_EVENT_TIME_LINE
    EXPECT_RC(aclrtDestroyEvent(untimed), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtEventGetTimestamp(e, &t1), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    // ---- host callbacks -----------------------------------------------------
    (
        "aclrtSubscribeReport",
        r#"
    aclrtStream s = nullptr, t = nullptr, u = nullptr;
    aclrtContext c0 = nullptr, c1 = nullptr;
    AbiCalls calls;
    const uint64_t me = abi_tid();
    EXPECT_RC(aclrtSubscribeReport(me, nullptr), ACL_ERROR_RT_CONTEXT_NULL);  // null: the default stream of none
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&c0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtSubscribeReport(me, (aclrtStream)&calls), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSubscribeReport(me, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);  // one thread per stream: 107011
    EXPECT_RC(aclrtSubscribeReport(me, t), ACL_SUCCESS);      // several streams per thread
    // The subscribed thread runs the streams' callbacks in aclrtProcessReport.
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_NO_BLOCK, s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_NO_BLOCK, t), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtProcessReport(1000), ACL_SUCCESS);
    EXPECT(calls.count() == 2 && calls.last_thread() == std::this_thread::get_id());
    // A thread serves one device.
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&c1), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&u), ACL_SUCCESS);
    EXPECT_RC(aclrtSubscribeReport(me, u), ACL_ERROR_RT_THREAD_SUBSCRIBE);  // 107012
    // A stream that runs host functions cannot have a callback thread.
    EXPECT_RC(aclrtLaunchHostFunc(u, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(u), ACL_SUCCESS);
    std::thread([&] { EXPECT_RC(aclrtSubscribeReport(abi_tid(), u), ACL_ERROR_RT_STREAM_SUBSCRIBE); }).join();
    EXPECT_RC(aclrtDestroyStream(u), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(c0), ACL_SUCCESS);
    EXPECT_RC(aclrtUnSubscribeReport(me, t), ACL_SUCCESS);
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtLaunchCallback",
        r#"
    aclrtStream s = nullptr, h = nullptr, t = nullptr;
    aclrtContext primary = nullptr, c = nullptr;
    AbiCalls calls;
    const uint64_t me = abi_tid();
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_BLOCK, nullptr), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG);  // 107015
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, (aclrtCallbackBlockType)2, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtLaunchCallback(nullptr, &calls, ACL_CALLBACK_BLOCK, s), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_BLOCK, (aclrtStream)&calls), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtSubscribeReport(me, s), ACL_SUCCESS);
    // ACL_CALLBACK_BLOCK: the stream waits until the subscribed thread has run it.
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_BLOCK, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT(calls.count() == 0);
    EXPECT_RC(aclrtProcessReport(1000), ACL_SUCCESS);         // runs it here
    EXPECT(calls.count() == 1 && calls.last_thread() == std::this_thread::get_id());
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    // A blocking callback that waits for its own stream is refused, not hung.
    AbiInside inside;
    inside.stream = s;
    EXPECT_RC(aclrtLaunchCallback(abi_sync_stream_inside_fn, &inside, ACL_CALLBACK_BLOCK, s), ACL_SUCCESS);
    EXPECT_RC(aclrtProcessReport(1000), ACL_SUCCESS);
    EXPECT(inside.rc == ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(!abi_recent().empty());                            // recorded on this thread, which ran it
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    // ACL_CALLBACK_NO_BLOCK: the stream goes on.
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_NO_BLOCK, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtProcessReport(1000), ACL_SUCCESS);
    EXPECT(calls.count() == 2);
    // Not on a stream that runs host functions, nor on another context's.
    EXPECT_RC(aclrtCreateStream(&h), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(h, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_BLOCK, h), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_BLOCK, t), ACL_ERROR_RT_STREAM_CONTEXT);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(h), ACL_SUCCESS);
    EXPECT(calls.count() == 3);
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtProcessReport",
        r#"
    aclrtStream s = nullptr, w = nullptr;
    AbiCalls calls, other;
    const uint64_t me = abi_tid();
    EXPECT_RC(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);  // -1 or a positive number of ms
    EXPECT_RC(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);  // not subscribed: 107012
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtSubscribeReport(me, s), ACL_SUCCESS);
    AbiTime t0 = abi_now();
    EXPECT_RC(aclrtProcessReport(30), ACL_ERROR_RT_REPORT_TIMEOUT);  // nothing came: 507012
    EXPECT(abi_us_since(t0) >= 30000);
    // Runs every callback queued for the thread.
    for (int i = 0; i < 3; i++)
        EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_NO_BLOCK, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtProcessReport(1000), ACL_SUCCESS);
    EXPECT(calls.count() == 3);
    // The usual pattern: a thread of its own loops on aclrtProcessReport.
    std::atomic<bool> stop(false);
    std::thread worker([&] {
        while (!stop.load()) {
            aclError rc = aclrtProcessReport(10);
            if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT) abi_sleep_ms(1);
        }
    });
    EXPECT_RC(aclrtCreateStream(&w), ACL_SUCCESS);
    EXPECT_RC(aclrtSubscribeReport((uint64_t)worker.native_handle(), w), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &other, ACL_CALLBACK_BLOCK, w), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(w), ACL_SUCCESS);        // the worker ran it
    EXPECT(other.count() == 1 && other.last_thread() == worker.get_id());
    EXPECT_RC(aclrtUnSubscribeReport((uint64_t)worker.native_handle(), w), ACL_SUCCESS);
    stop = true;
    worker.join();
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);  // no longer subscribed
    EXPECT(calls.count() == 3);
    EXPECT_RC(aclrtDestroyStream(w), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtUnSubscribeReport",
        r#"
    aclrtStream s = nullptr;
    AbiCalls calls;
    const uint64_t me = abi_tid();
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);  // not bound: 107011
    EXPECT_RC(aclrtSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtUnSubscribeReport(me + 1, s), ACL_ERROR_RT_THREAD_SUBSCRIBE);  // another thread: 107012
    // A callback still waiting for the thread is cancelled, never called.
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_NO_BLOCK, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);        // handed to this thread
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    EXPECT(calls.count() == 0);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_DRV_INTERNAL_ERROR);  // the stream reports it
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtLaunchCallback(abi_calls_fn, &calls, ACL_CALLBACK_NO_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG);
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);  // twice
    EXPECT_RC(aclrtSubscribeReport(me, s), ACL_SUCCESS);      // again
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtUnSubscribeReport(me, s), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtLaunchHostFunc",
        r#"
    aclrtStream s = nullptr, t = nullptr;
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    AbiGate gate;
    AbiCalls calls;
    EXPECT_RC(aclrtLaunchHostFunc(nullptr, abi_calls_fn, &calls), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, nullptr, &calls), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtLaunchHostFunc((aclrtStream)&gate, abi_calls_fn, &calls), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT(abi_gate_entered(gate));                           // runs by itself, on a runtime thread
    EXPECT(gate.thread != std::this_thread::get_id());
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);         // and holds the stream until it returns
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    EXPECT(calls.count() == 0);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
    EXPECT(calls.last_thread() == gate.thread);               // one host-function thread per context
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_COMPLETE);
    // Waiting for a record that its own stream reaches only after it returns is refused, not hung.
    AbiGate gate2;
    AbiInside inside;
    EXPECT_RC(aclrtCreateEvent(&inside.event), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate2), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_sync_event_inside_fn, &inside), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(inside.event, s), ACL_SUCCESS);
    abi_gate_open(gate2);
    EXPECT_RC(aclrtSynchronizeEvent(inside.event), ACL_SUCCESS);
    EXPECT(inside.rc == ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtDestroyEvent(inside.event), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);            // not on a stream with a callback thread
    EXPECT_RC(aclrtSubscribeReport(abi_tid(), t), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(t, abi_calls_fn, &calls), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    EXPECT_RC(aclrtUnSubscribeReport(abi_tid(), t), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
"#,
    ),
    // ---- asynchronous memory ------------------------------------------------
    (
        "aclrtMemcpyAsync",
        r#"
    const size_t n = 64 << 10;
    std::vector<unsigned char> page(n, 0);
    aclrtStream s = nullptr, t = nullptr;
    aclrtContext primary = nullptr, c = nullptr;
    void *h = nullptr, *h2 = nullptr, *d = nullptr;
    AbiGate gate, gate2;
    EXPECT_RC(aclrtMemcpyAsync(nullptr, 0, nullptr, 0, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_SUCCESS);  // count 0
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&primary), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocHost(&h, n), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocHost(&h2, n), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    // Pinned memory: queued, and really copied when the stream gets there.
    memset(h, 0x11, n);
    memset(h2, 0, n);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(d, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(h2, n, d, n, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    memset(h, 0x22, n);                                       // not copied yet: this is what it reads
    EXPECT(((unsigned char *)h2)[0] == 0);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(((unsigned char *)h2)[0] == 0x22 && ((unsigned char *)h2)[n - 1] == 0x22);
    // Pageable memory: waits for the stream's earlier work, then copies before returning.
    std::thread opener;
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate2), ACL_SUCCESS);
    opener = abi_gate_open_later(gate2, 10);
    EXPECT_RC(aclrtMemcpyAsync(page.data(), n, d, n, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    EXPECT(abi_gate_is_open(gate2));
    EXPECT(page[0] == 0x22 && page[n - 1] == 0x22);           // no synchronisation needed
    opener.join();
    // ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: the host data is taken at the call.
    AbiGate gate3;
    memset(page.data(), 0x33, n);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate3), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(d, n, page.data(), n, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s), ACL_SUCCESS);
    memset(page.data(), 0x44, n);                             // may be reused at once
    abi_gate_open(gate3);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(page.data(), n, d, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(page[0] == 0x33 && page[n - 1] == 0x33);
    // Argument checks.
    EXPECT_RC(aclrtMemcpyAsync(nullptr, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemcpyAsync(d, n, nullptr, n, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemcpyAsync(d, n, h, n, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);  // kinds 0..=5
    EXPECT_RC(aclrtMemcpyAsync(d, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, (aclrtStream)&gate), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtMemcpyAsync(d, n - 1, h, n, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_RT_PARAM_INVALID);  // count > destMax
    EXPECT_RC(aclrtMemcpyAsync((char *)d + 16, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_RT_PARAM_INVALID);  // past the end
    EXPECT_RC(aclrtMemcpyAsync(h2, n, h, n, ACL_MEMCPY_HOST_TO_HOST, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    std::thread([&] {
        EXPECT_RC(aclrtMemcpyAsync(d, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_ERROR_RT_CONTEXT_NULL);
    }).join();
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtSetCurrentContext(primary), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(d, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE, t), ACL_ERROR_RT_STREAM_CONTEXT);
    EXPECT_RC(aclrtMemcpyAsync(page.data(), n, d, n, ACL_MEMCPY_DEVICE_TO_HOST, t), ACL_ERROR_RT_STREAM_CONTEXT);  // pageable too
    EXPECT_RC(aclrtMemcpyAsync(d, n, page.data(), n, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, t), ACL_ERROR_RT_STREAM_CONTEXT);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtFreeHost(h2), ACL_SUCCESS);
    EXPECT_RC(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtMemsetAsync",
        r#"
    const size_t n = 64 << 10;
    std::vector<unsigned char> back(n, 0xFF);
    aclrtStream s = nullptr;
    void *d = nullptr, *d2 = nullptr, *h = nullptr;
    AbiGate gate, gate2;
    EXPECT_RC(aclrtMemsetAsync(nullptr, 0, 0, 0, nullptr), ACL_SUCCESS);  // count 0: nothing to do
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(d, n, 0, n), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(d, n, 0x15A, n / 2, s), ACL_SUCCESS);  // the low byte: 0x5A
    EXPECT_RC(aclrtMemcpy(back.data(), n, d, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(back[0] == 0);                                     // queued, not done
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(back.data(), n, d, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(back[0] == 0x5A && back[n / 2 - 1] == 0x5A && back[n / 2] == 0);
    // Argument checks.
    EXPECT_RC(aclrtMemsetAsync(nullptr, n, 0, n, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemsetAsync(d, n, 0, n, (aclrtStream)&gate), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtMemsetAsync(d, n / 2, 0, n, s), ACL_ERROR_RT_PARAM_INVALID);  // count > maxCount
    EXPECT_RC(aclrtMemsetAsync((char *)d + n / 2, n, 0, n, s), ACL_ERROR_RT_PARAM_INVALID);  // past the end
    EXPECT_RC(aclrtMallocHost(&h, 64), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(h, 64, 0, 64, s), ACL_ERROR_RT_PARAM_INVALID);  // not device memory
    EXPECT_RC(aclrtFreeHost(h), ACL_SUCCESS);
    std::thread([&] { EXPECT_RC(aclrtMemsetAsync(d, n, 0, n, nullptr), ACL_ERROR_RT_CONTEXT_NULL); }).join();
    // Memory freed before the fill runs: a fault of the task, reported by the next synchronisation.
    EXPECT_RC(aclrtMalloc(&d2, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate2), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(d2, 256, 1, 256, s), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d2), ACL_SUCCESS);
    abi_gate_open(gate2);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_SYS_DMA);  // 507013
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);        // once
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    // ---- device queries -----------------------------------------------------
    (
        "aclGetDeviceCapability",
        r#"
    int64_t v = -1;                                           // Ascend910B1: 24 AI cores, 48 vector, 192 MiB L2
    EXPECT_RC(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_SUCCESS);  // no device needed
    EXPECT(v == 24);
    EXPECT_RC(aclGetDeviceCapability(ABI_DEVICES - 1, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &v), ACL_SUCCESS);
    EXPECT(v == 48);
    EXPECT_RC(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, &v), ACL_SUCCESS);
    EXPECT(v == 192 << 20);
    v = -1;
    EXPECT_RC(aclGetDeviceCapability(ABI_DEVICES, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclGetDeviceCapability(0, ACL_DEVICE_INFO_UNDEFINED, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT(v == -1);                                          // failures write nothing
"#,
    ),
    (
        "aclrtGetDeviceInfo",
        r#"
    int64_t v = -1;
    struct { aclrtDevAttr attr; int64_t want; } figures[] = {  // Ascend910B1's platform file
        {ACL_DEV_ATTR_AICPU_CORE_NUM, 6},        {ACL_DEV_ATTR_AICORE_CORE_NUM, 24},
        {ACL_DEV_ATTR_CUBE_CORE_NUM, 24},        {ACL_DEV_ATTR_VECTOR_CORE_NUM, 48},
        {ACL_DEV_ATTR_WARP_SIZE, 0},             {ACL_DEV_ATTR_MAX_BLOCK_DIM_Z, 0},  // no SIMT: 0
        {ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, (int64_t)ABI_HBM_BYTES},
        {ACL_DEV_ATTR_L2_CACHE_SIZE, 192 << 20}, {ACL_DEV_ATTR_IS_VIRTUAL, 0},
        {ACL_DEV_ATTR_NPU_ARCH, 2201},
    };
    for (auto &f : figures) {
        v = -1;
        EXPECT_RC(aclrtGetDeviceInfo(ABI_DEVICES - 1, f.attr, &v), ACL_SUCCESS);  // no device needed
        if (v != f.want) abi_fail(__LINE__, "aclrtGetDeviceInfo attr " + std::to_string((int)f.attr) + " is " + std::to_string(v) + ", expected " + std::to_string(f.want));
    }
    // The physical installation is not modelled.
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SMP_ID, &v), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_HD_CONNECT_TYPE, &v), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_RC(aclrtGetDeviceInfo(ABI_DEVICES, ACL_DEV_ATTR_AICORE_CORE_NUM, &v), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtGetDeviceInfo(0, (aclrtDevAttr)9999, &v), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, nullptr), ACL_ERROR_INVALID_PARAM);
"#,
    ),
    (
        "aclrtGetDeviceCapability",
        r#"
    int32_t v = -1;
    EXPECT_RC(aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &v), ACL_SUCCESS);
    EXPECT(v == ACL_DEV_FEATURE_SUPPORT);
    EXPECT_RC(aclrtGetDeviceCapability(ABI_DEVICES - 1, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &v), ACL_SUCCESS);
    EXPECT(v == ACL_DEV_FEATURE_NOT_SUPPORT);
    v = -1;
    EXPECT_RC(aclrtGetDeviceCapability(0, (aclrtDevFeatureType)2, &v), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtGetDeviceCapability(ABI_DEVICES, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &v), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtGetDeviceCapability(-1, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &v), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT(v == -1);
"#,
    ),
    (
        "aclrtDeviceGetStreamPriorityRange",
        r#"
    int32_t least = -1, greatest = -1;
    EXPECT_RC(aclrtDeviceGetStreamPriorityRange(&least, &greatest), ACL_SUCCESS);  // no device needed
    EXPECT(least == 7 && greatest == 0);                      // 0 is the highest priority
    least = greatest = -1;
    EXPECT_RC(aclrtDeviceGetStreamPriorityRange(nullptr, &greatest), ACL_SUCCESS);  // either may be null
    EXPECT(greatest == 0);
    EXPECT_RC(aclrtDeviceGetStreamPriorityRange(&least, nullptr), ACL_SUCCESS);
    EXPECT(least == 7);
    EXPECT_RC(aclrtDeviceGetStreamPriorityRange(nullptr, nullptr), ACL_SUCCESS);
    // Priorities beyond the range are clamped to it.
    aclrtStream s = nullptr;
    uint32_t prio = 99;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, least + 1, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamGetPriority(s, &prio), ACL_SUCCESS);
    EXPECT(prio == (uint32_t)least);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
"#,
    ),
    // ---- peer access --------------------------------------------------------
    (
        "aclrtDeviceCanAccessPeer",
        r#"
    int32_t can = -1;
    EXPECT_RC(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_SUCCESS);  // no device needed
    EXPECT(can == 1);
    can = -1;
    EXPECT_RC(aclrtDeviceCanAccessPeer(&can, 1, 0), ACL_SUCCESS);
    EXPECT(can == 1);
    can = -1;
    EXPECT_RC(aclrtDeviceCanAccessPeer(&can, 0, 0), ACL_ERROR_INVALID_PARAM);  // itself
    EXPECT_RC(aclrtDeviceCanAccessPeer(&can, 0, ABI_DEVICES), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtDeviceCanAccessPeer(&can, -1, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtDeviceCanAccessPeer(nullptr, 0, 1), ACL_ERROR_RT_PARAM_INVALID);  // checked by the runtime: 107000
    EXPECT(can == -1);
"#,
    ),
    (
        "aclrtDeviceEnablePeerAccess",
        r#"
    const size_t n = 4096;
    std::vector<unsigned char> back(n, 0);
    EXPECT_RC(aclrtDeviceEnablePeerAccess(1, 0), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    aclrtContext c0 = nullptr, c1 = nullptr;
    void *d0 = nullptr, *d1 = nullptr;
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&c1), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d1, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(d1, n, 0x77, n), ACL_SUCCESS);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetCurrentContext(&c0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d0, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(d0, n, d1, n, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);  // not enabled
    EXPECT_RC(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_FEATURE_UNSUPPORTED);  // flags are reserved: 200006
    EXPECT_RC(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM);        // the current device itself
    EXPECT_RC(aclrtDeviceEnablePeerAccess(ABI_DEVICES, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);  // twice
    EXPECT_RC(aclrtMemcpy(d0, n, d1, n, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);  // device 1 -> device 0
    EXPECT_RC(aclrtMemcpy(back.data(), n, d0, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(back[0] == 0x77 && back[n - 1] == 0x77);
    // One direction only: from device 1, device 0 is not accessible.
    EXPECT_RC(aclrtSetCurrentContext(c1), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(d1, n, d0, n, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSetCurrentContext(c0), ACL_SUCCESS);
    EXPECT_RC(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d0), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
"#,
    ),
    (
        "aclrtDeviceDisablePeerAccess",
        r#"
    const size_t n = 256;
    EXPECT_RC(aclrtDeviceDisablePeerAccess(1), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    void *d0 = nullptr, *d1 = nullptr;
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d1, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d0, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);  // not enabled: nothing to do
    EXPECT_RC(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_INVALID_PARAM);  // the current device itself
    EXPECT_RC(aclrtDeviceDisablePeerAccess(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(d1, n, d0, n, ACL_MEMCPY_DEVICE_TO_DEVICE, nullptr), ACL_SUCCESS);  // device 0 -> 1
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(d1, n, d0, n, ACL_MEMCPY_DEVICE_TO_DEVICE, nullptr), ACL_ERROR_RT_PARAM_INVALID);  // withdrawn
    EXPECT_RC(aclrtFree(d0), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
"#,
    ),
];

pub fn run(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let header_root = match args {
        [] => crate::headers::fetch(&root)?,
        [flag, dir] if flag == "--headers" => PathBuf::from(dir),
        [flag, version] if flag == "--release" => crate::headers::fetch_version(&root, version)?,
        _ => {
            return Err(
                "usage: cargo xtask abi-check [--headers DIR | --release TORCH_NPU_VERSION]".into(),
            );
        }
    };
    if !args.is_empty() {
        // Another release's headers: the ABI check of abi_release.rs, unless
        // they declare exactly what the bindings declare.
        let source = crate::abi_release::HeaderSource::find(&header_root)?;
        if crate::abi_release::run(&root, &source)? {
            return Ok(());
        }
    }
    let started = Instant::now();
    let dirs = HeaderDirs::find(&header_root)?;
    let plan = Plan::new(&root)?;

    let lib = build_sim()?;
    let lib_dir = lib
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", lib.display()))?;
    let out_dir = lib_dir.parent().unwrap_or(lib_dir).join("abi-check");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    println!(
        "abi-check: headers {} (ACL {}), library {}",
        header_root.display(),
        dirs.acl_version().unwrap_or_else(|| "?".into()),
        lib.display()
    );

    let program = generate(&plan)?;
    let source = out_dir.join("abi_check.cpp");
    std::fs::write(&source, &program.text).map_err(|e| format!("{}: {e}", source.display()))?;
    let exe = out_dir.join("abi_check");
    compile(&dirs, &source, &exe, lib_dir, &program.export_lines)?;
    let kernel = compile_kernel(&out_dir)?;

    let output = execute(&exe, &kernel)?;
    let mut exports = None;
    let mut checked = None;
    let mut failed: Option<usize> = None;
    let mut configs = BTreeMap::new();
    let mut last_group = None;
    for line in output.stdout.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("@start") => last_group = line.strip_prefix("@start ").map(str::to_string),
            Some("@exports") => exports = words.next().and_then(|w| w.parse::<usize>().ok()),
            Some("@checked") => checked = words.next().and_then(|w| w.parse::<usize>().ok()),
            Some("@failed") => failed = words.next().and_then(|w| w.parse::<usize>().ok()),
            Some(tag @ ("@config-zero" | "@config-ab")) => {
                let size = words.next().and_then(|w| w.parse::<usize>().ok());
                let bytes = words.next().map(unhex).transpose()?;
                configs.insert(tag.to_string(), (size, bytes));
            }
            _ => println!("{line}"),
        }
    }
    if !output.status.success() && failed.is_none_or(|f| f == 0) {
        return Err(format!(
            "{} did not finish ({}){}{}",
            exe.display(),
            describe_status(&output.status),
            last_group
                .map(|g| format!(" during the check group `{g}`"))
                .unwrap_or_default(),
            if output.stderr.trim().is_empty() {
                String::new()
            } else {
                format!("; its stderr:\n{}", output.stderr.trim_end())
            }
        ));
    }
    if !output.stderr.trim().is_empty() {
        println!("  (stderr of the program)\n{}", output.stderr.trim_end());
    }
    let (Some(exports), Some(checked), Some(mut failed)) = (exports, checked, failed) else {
        return Err(format!(
            "{} printed no summary ({})",
            exe.display(),
            describe_status(&output.status)
        ));
    };

    let config_ok = match compare_configs(&configs) {
        Ok(line) => {
            println!("  ok    {line}");
            true
        }
        Err(e) => {
            println!("  FAIL  HcclCommConfigInit: {e}");
            failed += 1;
            false
        }
    };
    println!(
        "abi-check: {exports} exports linked, {checked} implemented functions checked, \
         HcclCommConfigInit {}; {failed} failed ({:.1} s)",
        if config_ok { "identical" } else { "DIFFERS" },
        started.elapsed().as_secs_f64()
    );
    if failed > 0 {
        return Err(format!(
            "{failed} ABI check group(s) failed (program: {})",
            source.display()
        ));
    }
    Ok(())
}

/// One C function of a library with a header.
pub(crate) struct Function {
    pub(crate) decl: syn::ForeignItemFn,
    pub(crate) name: String,
}

/// What the program covers, read from the bindings and cann-sim's sources.
pub(crate) struct Plan {
    /// Per library (as [`LIBS`]): every function of its bindings.
    pub(crate) libs: Vec<Vec<Function>>,
    /// Per library: the functions cann-sim implements.
    implemented: Vec<BTreeSet<String>>,
    /// Type aliases of all bindings: name → aliased type.
    aliases: BTreeMap<String, syn::Type>,
    /// DCMI functions (by name only).
    dcmi: Vec<String>,
    /// DCMI functions cann-sim implements.
    dcmi_implemented: usize,
}

impl Plan {
    pub(crate) fn new(root: &Path) -> Result<Plan, String> {
        let mut libs = Vec::new();
        let mut implemented_sets = Vec::new();
        let mut aliases = BTreeMap::new();
        for lib in &LIBS {
            let text = read(&root.join(lib.bindings))?;
            collect_aliases(&text, &mut aliases).map_err(|e| format!("{}: {e}", lib.bindings))?;
            let functions = api_functions(&text)
                .map_err(|e| format!("{}: {e}", lib.bindings))?
                .into_iter()
                .map(|decl| Function {
                    name: decl.sig.ident.to_string(),
                    decl,
                })
                .collect::<Vec<_>>();
            let implemented_set = implemented(&root.join(lib.sim_dir))?;
            for name in &implemented_set {
                if !functions.iter().any(|f| &f.name == name) {
                    return Err(format!(
                        "{} implements {name}, which is not in {}",
                        lib.sim_dir, lib.bindings
                    ));
                }
            }
            libs.push(functions);
            implemented_sets.push(implemented_set);
        }
        let dcmi = api_functions(&read(&root.join(DCMI_BINDINGS))?)
            .map_err(|e| format!("{DCMI_BINDINGS}: {e}"))?
            .into_iter()
            .map(|f| f.sig.ident.to_string())
            .collect();
        let dcmi_implemented = implemented(&root.join("cann-sim/src/dcmi"))?.len();
        let plan = Plan {
            libs,
            implemented: implemented_sets,
            aliases,
            dcmi,
            dcmi_implemented,
        };
        plan.validate_checks()?;
        Ok(plan)
    }

    fn is_implemented(&self, name: &str) -> bool {
        self.implemented.iter().any(|s| s.contains(name))
    }

    fn function(&self, name: &str) -> Option<&Function> {
        self.libs.iter().flatten().find(|f| f.name == name)
    }

    /// Every implemented function has exactly one check, and every check
    /// names a function of the bindings.
    fn validate_checks(&self) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for (name, _) in all_checks() {
            if self.function(name).is_none() {
                return Err(format!(
                    "xtask/src/abi.rs has a check for {name}, which is not in the bindings"
                ));
            }
            if !seen.insert(*name) {
                return Err(format!("xtask/src/abi.rs has two checks for {name}"));
            }
        }
        let missing: Vec<&str> = self
            .implemented
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|name| !seen.contains(name))
            .collect();
        match missing.as_slice() {
            [] => Ok(()),
            [one] => Err(format!(
                "cann-sim implements {one} but abi-check has no check for it: add one to CHECKS \
                 in xtask/src/abi.rs"
            )),
            many => Err(format!(
                "cann-sim implements {} but abi-check has no check for them: add them to CHECKS \
                 in xtask/src/abi.rs",
                many.join(", ")
            )),
        }
    }

    /// The first function of `lib` that cann-sim does not implement, that
    /// answers a status code and takes only integers and pointers.
    fn not_supported_probe(&self, lib: usize) -> Option<&Function> {
        self.libs[lib].iter().find(|f| {
            f.decl.sig.variadic.is_none()
                && !self.implemented[lib].contains(&f.name)
                && !all_checks().any(|(n, _)| *n == f.name)
                && returns(&f.decl.sig.output, LIBS[lib].status_type)
                && params(&f.decl)
                    .iter()
                    .all(|t| is_integer_or_pointer(t, &self.aliases, 0))
        })
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn collect_aliases(text: &str, out: &mut BTreeMap<String, syn::Type>) -> Result<(), String> {
    let file = syn::parse_file(text).map_err(|e| format!("cannot parse: {e}"))?;
    for item in file.items {
        if let syn::Item::Type(t) = item {
            out.insert(t.ident.to_string(), *t.ty);
        }
    }
    Ok(())
}

pub(crate) fn params(f: &syn::ForeignItemFn) -> Vec<&syn::Type> {
    f.sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(p) => Some(&*p.ty),
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

fn returns(output: &syn::ReturnType, type_name: &str) -> bool {
    match output {
        syn::ReturnType::Type(_, ty) => {
            matches!(&**ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == type_name))
        }
        syn::ReturnType::Default => false,
    }
}

const INTEGERS: &[&str] = &[
    "c_char",
    "c_schar",
    "c_uchar",
    "c_short",
    "c_ushort",
    "c_int",
    "c_uint",
    "c_long",
    "c_ulong",
    "c_longlong",
    "c_ulonglong",
    "i8",
    "u8",
    "i16",
    "u16",
    "i32",
    "u32",
    "i64",
    "u64",
    "isize",
    "usize",
    "bool",
];

/// Whether `ty` (through the bindings' aliases) is an integer, enum or pointer.
fn is_integer_or_pointer(
    ty: &syn::Type,
    aliases: &BTreeMap<String, syn::Type>,
    depth: u32,
) -> bool {
    match ty {
        syn::Type::Ptr(_) | syn::Type::BareFn(_) => true,
        syn::Type::Paren(p) => is_integer_or_pointer(&p.elem, aliases, depth),
        syn::Type::Group(g) => is_integer_or_pointer(&g.elem, aliases, depth),
        syn::Type::Path(p) => {
            let Some(seg) = p.path.segments.last() else {
                return false;
            };
            let name = seg.ident.to_string();
            if name == "Option" || INTEGERS.contains(&name.as_str()) {
                return true;
            }
            depth < 16
                && aliases
                    .get(&name)
                    .is_some_and(|t| is_integer_or_pointer(t, aliases, depth + 1))
        }
        _ => false,
    }
}

/// The C++ spelling of a bindings type. Typedef, struct and enum names are
/// the headers' own (bindgen keeps them), so the spelling is exact.
fn cxx_type(ty: &syn::Type) -> Result<String, String> {
    match ty {
        syn::Type::Ptr(p) => {
            let inner = cxx_type(&p.elem)?;
            Ok(if p.const_token.is_some() {
                format!("{inner} const *")
            } else {
                format!("{inner} *")
            })
        }
        syn::Type::Paren(p) => cxx_type(&p.elem),
        syn::Type::Group(g) => cxx_type(&g.elem),
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok("void".into()),
        syn::Type::BareFn(f) => Ok(format!("{} *", cxx_bare_fn(f)?)),
        // Only behind a pointer: `int64_t (*)[2]` from `int64_t range[][2]`.
        syn::Type::Array(a) => match &a.len {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => Ok(format!(
                "abi_id<{}[{}]>",
                cxx_type(&a.elem)?,
                n.base10_digits()
            )),
            _ => Err("an array whose length is not a literal".into()),
        },
        syn::Type::Path(p) => {
            let seg = p
                .path
                .segments
                .last()
                .ok_or_else(|| "empty type path".to_string())?;
            let name = seg.ident.to_string();
            if name == "Option" {
                let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
                    return Err("Option without a type argument".into());
                };
                return match args.args.first() {
                    Some(syn::GenericArgument::Type(syn::Type::BareFn(f))) => {
                        Ok(format!("{} *", cxx_bare_fn(f)?))
                    }
                    _ => Err("Option of something other than a function pointer".into()),
                };
            }
            Ok(match name.as_str() {
                "c_void" => "void",
                "c_char" => "char",
                "c_schar" => "signed char",
                "c_uchar" => "unsigned char",
                "c_short" => "short",
                "c_ushort" => "unsigned short",
                "c_int" => "int",
                "c_uint" => "unsigned int",
                "c_long" => "long",
                "c_ulong" => "unsigned long",
                "c_longlong" => "long long",
                "c_ulonglong" => "unsigned long long",
                "c_float" | "f32" => "float",
                "c_double" | "f64" => "double",
                "i8" => "int8_t",
                "u8" => "uint8_t",
                "i16" => "int16_t",
                "u16" => "uint16_t",
                "i32" => "int32_t",
                "u32" => "uint32_t",
                "i64" => "int64_t",
                "u64" => "uint64_t",
                "isize" => "ptrdiff_t",
                "usize" => "size_t",
                "bool" => "bool",
                other => other,
            }
            .to_string())
        }
        other => Err(format!(
            "no C++ spelling for the type `{}`",
            quote::quote!(#other)
        )),
    }
}

fn cxx_ret(output: &syn::ReturnType) -> Result<String, String> {
    match output {
        syn::ReturnType::Default => Ok("void".into()),
        syn::ReturnType::Type(_, ty) => cxx_type(ty),
    }
}

/// `abi_id<R(A, B)>`: a function type.
pub(crate) fn cxx_fn_type<'a>(
    inputs: impl Iterator<Item = &'a syn::Type>,
    variadic: bool,
    output: &syn::ReturnType,
) -> Result<String, String> {
    let mut args = inputs.map(cxx_type).collect::<Result<Vec<_>, _>>()?;
    if variadic {
        args.push("...".into());
    }
    Ok(format!("abi_id<{}({})>", cxx_ret(output)?, args.join(", ")))
}

fn cxx_bare_fn(f: &syn::TypeBareFn) -> Result<String, String> {
    cxx_fn_type(
        f.inputs.iter().map(|a| &a.ty),
        f.variadic.is_some(),
        &f.output,
    )
}

/// A C++ string literal.
fn c_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The generated program.
struct Program {
    text: String,
    /// Source line → the function whose address that line takes.
    export_lines: BTreeMap<usize, String>,
}

/// Builds source text while counting lines.
struct Source {
    text: String,
    lines: usize,
}

impl Source {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
        self.lines += s.matches('\n').count() + 1;
    }
}

fn generate(plan: &Plan) -> Result<Program, String> {
    let mut src = Source {
        text: String::new(),
        lines: 0,
    };
    src.push("// @generated by `cargo xtask abi-check` (xtask/src/abi.rs). Do not edit.");
    src.push(PREAMBLE.trim_end());
    src.push("");
    src.push("// ---- generated -------------------------------------------------------------");
    src.push(&format!("#define ABI_DEVICES {DEVICES}"));
    src.push(&format!("#define ABI_HBM_BYTES ((size_t){HBM_MIB} << 20)"));
    src.push(&format!("#define ABI_SOC_NAME {}", c_str(SOC_NAME)));
    src.push("");

    // Exports: the address of every function, through its declared type.
    let mut export_lines = BTreeMap::new();
    let mut skipped = Vec::new();
    src.push("static void abi_collect_exports(std::vector<AbiExport> &v) {");
    for (i, functions) in plan.libs.iter().enumerate() {
        for f in functions {
            if let Some((_, why)) = INLINE.iter().find(|(n, _)| *n == f.name) {
                skipped.push(format!("{}: {why}", f.name));
                continue;
            }
            if f.decl.sig.variadic.is_some() {
                skipped.push(format!(
                    "{}: C-variadic; stable Rust cannot define it, so cann-sim does not export it",
                    f.name
                ));
                continue;
            }
            let ty = cxx_fn_type(params(&f.decl).into_iter(), false, &f.decl.sig.output)
                .map_err(|e| format!("{} ({}): {e}", f.name, LIBS[i].bindings))?;
            export_lines.insert(src.lines + 1, f.name.clone());
            src.push(&format!(
                "    {{ {ty} *p = &{name}; v.push_back({{\"{name}\", abi_addr(p)}}); }}",
                name = f.name
            ));
        }
    }
    src.push("}");
    src.push("");
    for (name, why) in INLINE {
        if plan.function(name).is_none() {
            skipped.push(format!("{name}: {why}"));
        }
    }
    skipped.push(
        "aclnn (acl_sys::aclnn): no aclnn header is available outside the CANN toolkit, so there is \
         nothing to compile its exports against; cann_sim::aclnn_api() checks them against the \
         hand-written bindings at compile time"
            .to_string(),
    );

    // DCMI: names only.
    src.push("static const char *const abi_dcmi[] = {");
    for name in &plan.dcmi {
        src.push(&format!("    {},", c_str(name)));
    }
    src.push("    nullptr,");
    src.push("};");
    src.push("");

    // Behavioural checks of the implemented functions.
    let mut groups = Vec::new();
    let mut not_run = Vec::new();
    for (i, (name, body)) in all_checks().enumerate() {
        if !plan.is_implemented(name) {
            not_run.push(*name);
            continue;
        }
        src.push(&format!("// {name}"));
        src.push(&format!("static void abi_check_{i}() {{"));
        src.push(body.trim_matches('\n'));
        src.push("}");
        src.push("");
        groups.push((name.to_string(), format!("abi_check_{i}")));
    }
    let checked = groups.len();

    // One function of each library that cann-sim does not implement.
    let mut probe_notes = Vec::new();
    for (i, lib) in LIBS.iter().enumerate() {
        let Some(f) = plan.not_supported_probe(i) else {
            probe_notes.push(format!(
                "not supported ({}): no unimplemented function answering {} to call",
                lib.label, lib.status_type
            ));
            continue;
        };
        let fname = format!("abi_probe_{}", lib.label.to_lowercase());
        src.push(&format!("static void {fname}() {{"));
        src.push("    abi_recent();  // nothing pending");
        src.push(&format!(
            "    EXPECT_RC(abi_call_with_zeros(&{}), {});",
            f.name, lib.not_supported
        ));
        src.push("    std::string m = abi_recent();");
        src.push(&format!(
            "    if (m.find({n}) == std::string::npos) abi_fail(__LINE__, std::string(\"aclGetRecentErrMsg() after {f} is \") + (m.empty() ? std::string(\"null\") : \"\\\"\" + m + \"\\\"\") + \", expected a message naming {f}\");",
            n = c_str(&f.name),
            f = f.name
        ));
        src.push("}");
        src.push("");
        let args = vec!["0"; params(&f.decl).len()].join(", ");
        groups.push((
            format!(
                "not supported ({}): {}({args}) returns {} and aclGetRecentErrMsg names it",
                lib.label, f.name, lib.not_supported
            ),
            fname,
        ));
    }

    let exported: usize = plan
        .libs
        .iter()
        .flatten()
        .filter(|f| f.decl.sig.variadic.is_none() && !INLINE.iter().any(|(n, _)| *n == f.name))
        .count();
    let headers = "acl.h, acl_op_compiler.h, acl_prof.h, hccl.h";
    src.push("int main() {");
    src.push("    setvbuf(stdout, nullptr, _IOLBF, 0);");
    src.push("    int failed = 0;");
    src.push("    std::vector<AbiExport> exports;");
    src.push("    abi_collect_exports(exports);");
    src.push("    {");
    src.push("        int elsewhere = 0;");
    src.push("        std::string details;");
    src.push("        for (const AbiExport &e : exports) {");
    src.push("            if (!abi_in_sim(e.addr)) {");
    src.push("                elsewhere++;");
    src.push("                details += std::string(\"        \") + e.name + \" resolved to \" + abi_object_of(e.addr) + \"\\n\";");
    src.push("            }");
    src.push("        }");
    src.push("        if (elsewhere == 0) {");
    src.push(&format!(
        "            printf(\"  ok    exports: %zu functions of {headers} linked through the \
         bindings' types (the compiler checked each against the header) and defined by \
         libcann_sim.so\\n\", exports.size());"
    ));
    src.push("        } else {");
    src.push("            printf(\"  FAIL  exports: %d of %zu functions are not defined by libcann_sim.so\\n%s\", elsewhere, exports.size(), details.c_str());");
    src.push("            failed++;");
    src.push("        }");
    src.push("        printf(\"@exports %zu\\n\", exports.size());");
    src.push("    }");
    for note in &skipped {
        src.push(&format!("    printf(\"  skip  %s\\n\", {});", c_str(note)));
    }
    // DCMI.
    src.push("    {");
    src.push("        int missing = 0;");
    src.push("        size_t count = 0;");
    src.push("        std::string details;");
    src.push("        for (const char *const *n = abi_dcmi; *n != nullptr; n++, count++) {");
    src.push("            void *p = dlsym(RTLD_DEFAULT, *n);");
    src.push("            if (p == nullptr || !abi_in_sim(p)) {");
    src.push("                missing++;");
    src.push("                details += std::string(\"        \") + *n + (p == nullptr ? \" is not exported\" : \" resolved to \" + abi_object_of(p)) + \"\\n\";");
    src.push("            }");
    src.push("        }");
    src.push("        if (missing == 0) {");
    src.push(&format!(
        "            printf(\"  ok    DCMI: no public header exists, so not compiled against one; \
         %zu exports found by name in libcann_sim.so ({} implemented, not checked here)\\n\", count);",
        plan.dcmi_implemented
    ));
    src.push("        } else {");
    src.push("            printf(\"  FAIL  DCMI: %d of %zu exports missing from libcann_sim.so\\n%s\", missing, count, details.c_str());");
    src.push("            failed++;");
    src.push("        }");
    src.push("    }");
    for name in &not_run {
        src.push(&format!(
            "    printf(\"  skip  %s: not implemented by cann-sim yet (its check is ready)\\n\", {});",
            c_str(name)
        ));
    }
    for (label, fname) in &groups {
        src.push(&format!(
            "    failed += abi_run_group({}, {fname});",
            c_str(label)
        ));
    }
    for note in &probe_notes {
        src.push(&format!("    printf(\"  skip  %s\\n\", {});", c_str(note)));
    }
    src.push("    abi_print_config(\"@config-zero\", 0x00);");
    src.push("    abi_print_config(\"@config-ab\", 0xAB);");
    src.push(&format!("    printf(\"@checked {checked}\\n\");"));
    src.push("    printf(\"@failed %d\\n\", failed);");
    src.push("    return failed == 0 ? 0 : 1;");
    src.push("}");

    if exported != export_lines.len() {
        return Err(format!(
            "internal error: {exported} exports counted, {} generated",
            export_lines.len()
        ));
    }
    Ok(Program {
        text: src.text,
        export_lines,
    })
}

/// Builds the cann-sim cdylib with the profile xtask was built with (and the
/// caller's target directory); returns the path of `libcann_sim.so`.
pub(crate) fn build_sim() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "cann-sim",
        "--lib",
        "--message-format=json-render-diagnostics",
    ]);
    match profile() {
        Some(p) if p == "release" => {
            cmd.arg("--release");
        }
        Some(p) => {
            cmd.args(["--profile", &p]);
        }
        None => {}
    }
    cmd.current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo build -p cann-sim` failed ({})",
            describe_status(&out.status)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter(|l| {
            l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"name\":\"cann_sim\"")
        })
        .flat_map(json_filenames)
        .find(|f| f.ends_with("/libcann_sim.so"))
        .map(PathBuf::from)
        .ok_or_else(|| "`cargo build -p cann-sim` produced no libcann_sim.so".to_string())
}

/// The cargo profile this xtask binary was built with: the name of the
/// directory it lies in (`debug` is the `dev` profile).
fn profile() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let mut dir = exe.parent()?;
    if dir.file_name()? == "deps" {
        dir = dir.parent()?;
    }
    match dir.file_name()?.to_str()? {
        "debug" => None,
        other => Some(other.to_string()),
    }
}

/// The strings of the `"filenames"` array of one line of cargo's JSON output.
fn json_filenames(line: &str) -> Vec<String> {
    let Some(start) = line.find("\"filenames\":[") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut chars = line[start + "\"filenames\":[".len()..].chars();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (None, ']') => break,
            (None, '"') => current = Some(String::new()),
            (None, _) => {}
            (Some(s), '\\') => match chars.next() {
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some(other) => s.push(other),
                None => break,
            },
            (Some(_), '"') => out.extend(current.take()),
            (Some(s), c) => s.push(c),
        }
    }
    out
}

pub(crate) fn compile(
    dirs: &HeaderDirs,
    source: &Path,
    exe: &Path,
    lib_dir: &Path,
    export_lines: &BTreeMap<usize, String>,
) -> Result<(), String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args(["-std=c++14", "-O0", "-fPIE", "-pie", "-pthread", "-w"]);
    let mut includes = vec![
        dirs.acl_inc.clone(),
        dirs.acl_inc.join("acl"),
        dirs.hccl_inc.clone(),
    ];
    includes.extend(dirs.extra.iter().cloned());
    for dir in includes {
        cmd.arg(format!("-I{}", dir.display()));
    }
    cmd.arg(source)
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lcann_sim")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-Wl,-z,now", "-ldl"]);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run the C++ compiler `{cxx}` (set CXX): {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(explain_compile_failure(&stderr, source, export_lines))
}

/// Turns the compiler's and linker's complaints into a statement of which
/// functions are wrong.
fn explain_compile_failure(
    stderr: &str,
    source: &Path,
    export_lines: &BTreeMap<usize, String>,
) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut mismatched = BTreeMap::new();
    let mut undefined = BTreeSet::new();
    for line in stderr.lines() {
        if let Some(rest) = line
            .find(&format!("{file}:"))
            .map(|i| &line[i + file.len() + 1..])
            && let Some((num, msg)) = rest.split_once(':')
            && let Ok(num) = num.parse::<usize>()
            && msg.contains("error")
            && let Some(name) = export_lines.get(&num)
        {
            // Drop the column number.
            let msg = msg.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
            mismatched
                .entry(name.clone())
                .or_insert_with(|| msg.trim().to_string());
        }
        if let Some(i) = line.find("undefined reference to `") {
            let rest = &line[i + "undefined reference to `".len()..];
            if let Some(end) = rest.find('\'') {
                undefined.insert(rest[..end].to_string());
            }
        }
    }
    let mut msg = String::new();
    if !mismatched.is_empty() {
        let _ = writeln!(
            msg,
            "{} function(s) are declared differently in the bindings and in the real headers \
             (regenerate with `cargo xtask bindgen`):",
            mismatched.len()
        );
        for (name, why) in &mismatched {
            let _ = writeln!(msg, "    {name}: {why}");
        }
    }
    if !undefined.is_empty() {
        let _ = writeln!(
            msg,
            "libcann_sim.so does not export {} function(s) the headers declare: {}",
            undefined.len(),
            undefined.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if msg.is_empty() {
        let excerpt: Vec<&str> = stderr.lines().take(60).collect();
        let _ = write!(
            msg,
            "compiling {} failed:\n{}",
            source.display(),
            excerpt.join("\n")
        );
    } else {
        let _ = write!(msg, "(program: {})", source.display());
    }
    msg
}

pub(crate) struct Output {
    pub(crate) status: std::process::ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs the program on a fixed simulated machine, with a time limit.
/// Compiles `xtask/abi/kernel.cpp` into a cann-sim kernel binary (a host
/// shared library) for the kernel checks; the program finds it through
/// `ABI_KERNEL_SO`.
fn compile_kernel(out_dir: &Path) -> Result<PathBuf, String> {
    let source = workspace_root().join("xtask/abi/kernel.cpp");
    let lib = out_dir.join("libabi_kernel.so");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let out = Command::new(&cxx)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run the C++ compiler `{cxx}` (set CXX): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "compiling {} failed:\n{}",
            source.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(lib)
}

pub(crate) fn execute(exe: &Path, kernel: &Path) -> Result<Output, String> {
    let mut cmd = Command::new(exe);
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("CANN_SIM_") || k == "ASCEND_RT_VISIBLE_DEVICES" {
            cmd.env_remove(&key);
        }
    }
    cmd.env("CANN_SIM_DEVICES", DEVICES.to_string())
        .env("CANN_SIM_HBM_MIB", HBM_MIB.to_string())
        .env("CANN_SIM_SOC_NAME", SOC_NAME)
        .env("ABI_KERNEL_SO", kernel)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let mut bytes = Vec::new();
                let _ = p.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                let partial = out.join().unwrap_or_default();
                return Err(format!(
                    "{} did not finish within {} s (a hang in cann-sim?); its output so far:\n{}",
                    exe.display(),
                    TIMEOUT.as_secs(),
                    partial.trim_end()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("waiting for {}: {e}", exe.display())),
        }
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

pub(crate) fn describe_status(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

pub(crate) fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd-length hex from the program".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad hex from the program at {i}"))
        })
        .collect()
}

/// `HcclCommConfigInit` from `fill` bytes, in Rust: `hccl_sys::comm_config_init`
/// on storage holding `fill` everywhere (padding included), read back as bytes.
pub(crate) fn rust_config_bytes(
    fill: u8,
    acl_version: Option<(u32, u32, u32)>,
) -> (Vec<u8>, HcclCommConfig) {
    let size = std::mem::size_of::<HcclCommConfig>();
    let mut storage = std::mem::MaybeUninit::<HcclCommConfig>::uninit();
    // SAFETY: `storage` is valid for writing one HcclCommConfig; afterwards
    // every byte is initialised, and any byte pattern is a valid
    // HcclCommConfig (a plain C struct of integers and char arrays).
    let config = unsafe {
        std::ptr::write_bytes(storage.as_mut_ptr(), fill, 1);
        storage.assume_init_mut()
    };
    hccl_sys::comm_config_init_for(config, acl_version);
    let copy = *config;
    // SAFETY: `config` is `size` initialised bytes (write_bytes initialised
    // the padding; the field stores of comm_config_init write only fields).
    let bytes =
        unsafe { std::slice::from_raw_parts((config as *const HcclCommConfig).cast::<u8>(), size) }
            .to_vec();
    (bytes, copy)
}

/// The field of `HcclCommConfig` at `offset`, for messages.
pub(crate) fn config_field(offset: usize) -> &'static str {
    use std::mem::offset_of;
    let fields = [
        (
            "reserved (size, magic word, version)",
            offset_of!(HcclCommConfig, reserved),
        ),
        ("hcclBufferSize", offset_of!(HcclCommConfig, hcclBufferSize)),
        (
            "hcclDeterministic",
            offset_of!(HcclCommConfig, hcclDeterministic),
        ),
        ("hcclCommName", offset_of!(HcclCommConfig, hcclCommName)),
        ("hcclUdi", offset_of!(HcclCommConfig, hcclUdi)),
        (
            "hcclOpExpansionMode",
            offset_of!(HcclCommConfig, hcclOpExpansionMode),
        ),
        (
            "hcclRdmaTrafficClass",
            offset_of!(HcclCommConfig, hcclRdmaTrafficClass),
        ),
        (
            "hcclRdmaServiceLevel",
            offset_of!(HcclCommConfig, hcclRdmaServiceLevel),
        ),
        (
            "hcclWorldRankID",
            offset_of!(HcclCommConfig, hcclWorldRankID),
        ),
        ("hcclJobID", offset_of!(HcclCommConfig, hcclJobID)),
        (
            "aclGraphZeroCopyEnable",
            offset_of!(HcclCommConfig, aclGraphZeroCopyEnable),
        ),
        (
            "padding after aclGraphZeroCopyEnable",
            offset_of!(HcclCommConfig, hcclExecTimeOut) - 3,
        ),
        (
            "hcclExecTimeOut",
            offset_of!(HcclCommConfig, hcclExecTimeOut),
        ),
        ("hcclAlgo", offset_of!(HcclCommConfig, hcclAlgo)),
        (
            "hcclRetryEnable",
            offset_of!(HcclCommConfig, hcclRetryEnable),
        ),
        (
            "hcclRetryParams",
            offset_of!(HcclCommConfig, hcclRetryParams),
        ),
        ("hcclBufferName", offset_of!(HcclCommConfig, hcclBufferName)),
        (
            "padding after hcclBufferName",
            offset_of!(HcclCommConfig, hcclQos) - 2,
        ),
        ("hcclQos", offset_of!(HcclCommConfig, hcclQos)),
        (
            "hcclSymWinMaxMemSizePerRank",
            offset_of!(HcclCommConfig, hcclSymWinMaxMemSizePerRank),
        ),
    ];
    fields
        .iter()
        .rev()
        .find(|(_, start)| *start <= offset)
        .map_or("?", |(name, _)| name)
}

type ConfigLines = BTreeMap<String, (Option<usize>, Option<Vec<u8>>)>;

/// Compares the program's `HcclCommConfigInit` bytes with hccl-sys's.
fn compare_configs(configs: &ConfigLines) -> Result<String, String> {
    let size = std::mem::size_of::<HcclCommConfig>();
    for (tag, fill) in [("@config-zero", 0u8), ("@config-ab", 0xAB)] {
        let start = if fill == 0 {
            "zero-filled".to_string()
        } else {
            format!("0x{fill:02X}-filled")
        };
        let Some((Some(c_size), Some(c_bytes))) = configs.get(tag) else {
            return Err(format!("the program printed no {tag} line"));
        };
        if *c_size != size || c_bytes.len() != size {
            return Err(format!(
                "sizeof(HcclCommConfig) is {c_size} in C++ but {size} in hccl-sys"
            ));
        }
        let (rust, value) = rust_config_bytes(fill, None);
        if let Some(i) = (0..size).find(|&i| c_bytes[i] != rust[i]) {
            return Err(format!(
                "from a {start} struct, byte {i} ({}) is {:#04x} after the header's \
                 HcclCommConfigInit but {:#04x} after hccl_sys::comm_config_init",
                config_field(i),
                c_bytes[i],
                rust[i]
            ));
        }
        if fill == 0 {
            // The same values as comm_config_default() (compared field by
            // field: padding is not part of a Rust value).
            let default = hccl_sys::comm_config_default();
            if format!("{default:?}") != format!("{value:?}") {
                return Err(
                    "hccl_sys::comm_config_default() differs from comm_config_init on a \
                     zero-filled struct (and so from the header's HcclCommConfigInit)"
                        .into(),
                );
            }
        }
    }
    Ok(format!(
        "HcclCommConfigInit: {size} bytes from zero-filled and 0xAB-filled structs identical to \
         hccl_sys::comm_config_init (values equal comm_config_default())"
    ))
}
