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
const INLINE: &[(&str, &str)] = &[(
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
/// Groups run in this order.
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
        EXPECT_RC(aclInit(path), ACL_SUCCESS);                 // a JSON object is a valid config
        EXPECT_RC(aclFinalize(), ACL_SUCCESS);
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
];

pub fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask abi-check".into());
    }
    let started = Instant::now();
    let root = workspace_root();
    let header_root = crate::headers::fetch(&root)?;
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

    let output = execute(&exe)?;
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
struct Function {
    decl: syn::ForeignItemFn,
    name: String,
}

/// What the program covers, read from the bindings and cann-sim's sources.
struct Plan {
    /// Per library (as [`LIBS`]): every function of its bindings.
    libs: Vec<Vec<Function>>,
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
    fn new(root: &Path) -> Result<Plan, String> {
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
        for (name, _) in CHECKS {
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
                && !CHECKS.iter().any(|(n, _)| *n == f.name)
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

fn params(f: &syn::ForeignItemFn) -> Vec<&syn::Type> {
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
fn cxx_fn_type<'a>(
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
    for (i, (name, body)) in CHECKS.iter().enumerate() {
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
fn build_sim() -> Result<PathBuf, String> {
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

fn compile(
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

struct Output {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs the program on a fixed simulated machine, with a time limit.
fn execute(exe: &Path) -> Result<Output, String> {
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

fn describe_status(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
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
fn rust_config_bytes(fill: u8) -> (Vec<u8>, HcclCommConfig) {
    let size = std::mem::size_of::<HcclCommConfig>();
    let mut storage = std::mem::MaybeUninit::<HcclCommConfig>::uninit();
    // SAFETY: `storage` is valid for writing one HcclCommConfig; afterwards
    // every byte is initialised, and any byte pattern is a valid
    // HcclCommConfig (a plain C struct of integers and char arrays).
    let config = unsafe {
        std::ptr::write_bytes(storage.as_mut_ptr(), fill, 1);
        storage.assume_init_mut()
    };
    hccl_sys::comm_config_init(config);
    let copy = *config;
    // SAFETY: `config` is `size` initialised bytes (write_bytes initialised
    // the padding; the field stores of comm_config_init write only fields).
    let bytes =
        unsafe { std::slice::from_raw_parts((config as *const HcclCommConfig).cast::<u8>(), size) }
            .to_vec();
    (bytes, copy)
}

/// The field of `HcclCommConfig` at `offset`, for messages.
fn config_field(offset: usize) -> &'static str {
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
        let (rust, value) = rust_config_bytes(fill);
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
