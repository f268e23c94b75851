// The fixed part of the program `cargo xtask abi-check` generates (see
// xtask/src/abi.rs and xtask/abi/README.md), after common.hpp: expectations,
// helpers of the checks in checks/*.cpp, and the parts of main(). It is
// compiled as C++14 against the real CANN headers and linked to
// libcann_sim.so. Nothing here may depend on the simulator: only the headers'
// declarations are used.

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

// The codes the checks name, pinned to the values the project relies on.
static_assert(ACL_SUCCESS == 0, "ACL_SUCCESS");
static_assert(ACL_ERROR_INVALID_PARAM == 100000, "ACL_ERROR_INVALID_PARAM");
static_assert(ACL_ERROR_REPEAT_INITIALIZE == 100002, "ACL_ERROR_REPEAT_INITIALIZE");
static_assert(ACL_ERROR_REPEAT_FINALIZE == 100037, "ACL_ERROR_REPEAT_FINALIZE");
static_assert(ACL_ERROR_API_NOT_SUPPORT == 200001, "ACL_ERROR_API_NOT_SUPPORT");
static_assert(ACL_ERROR_RT_PARAM_INVALID == 107000, "ACL_ERROR_RT_PARAM_INVALID");
static_assert(ACL_ERROR_RT_INVALID_DEVICEID == 107001, "ACL_ERROR_RT_INVALID_DEVICEID");
static_assert(ACL_ERROR_RT_CONTEXT_NULL == 107002, "ACL_ERROR_RT_CONTEXT_NULL");
static_assert(ACL_ERROR_RT_STREAM_CONTEXT == 107003, "ACL_ERROR_RT_STREAM_CONTEXT");
static_assert(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID == 107006, "ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID");
static_assert(ACL_ERROR_RT_STREAM_SUBSCRIBE == 107011, "ACL_ERROR_RT_STREAM_SUBSCRIBE");
static_assert(ACL_ERROR_RT_THREAD_SUBSCRIBE == 107012, "ACL_ERROR_RT_THREAD_SUBSCRIBE");
static_assert(ACL_ERROR_RT_STREAM_NO_CB_REG == 107015, "ACL_ERROR_RT_STREAM_NO_CB_REG");
static_assert(ACL_ERROR_RT_INVALID_HANDLE == 107017, "ACL_ERROR_RT_INVALID_HANDLE");
static_assert(ACL_ERROR_FEATURE_UNSUPPORTED == 200006, "ACL_ERROR_FEATURE_UNSUPPORTED");
static_assert(ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT");
static_assert(ACL_ERROR_RT_MEMORY_ALLOCATION == 207001, "ACL_ERROR_RT_MEMORY_ALLOCATION");
static_assert(ACL_ERROR_RT_NO_STREAM_RESOURCE == 207008, "ACL_ERROR_RT_NO_STREAM_RESOURCE");
static_assert(ACL_ERROR_RT_INTERNAL_ERROR == 507000, "ACL_ERROR_RT_INTERNAL_ERROR");
static_assert(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR == 507007, "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR");
static_assert(ACL_ERROR_RT_REPORT_TIMEOUT == 507012, "ACL_ERROR_RT_REPORT_TIMEOUT");
static_assert(ACL_ERROR_RT_SYS_DMA == 507013, "ACL_ERROR_RT_SYS_DMA");
static_assert(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046, "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT");
static_assert(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT == 507047, "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT");
static_assert(ACL_ERROR_RT_DRV_INTERNAL_ERROR == 507899, "ACL_ERROR_RT_DRV_INTERNAL_ERROR");
static_assert(HCCL_E_NOT_SUPPORT == 5, "HCCL_E_NOT_SUPPORT");

// ---- expectations ---------------------------------------------------------

static std::mutex abi_mutex;
static int abi_failures = 0;          // failed expectations in the current group
static std::string abi_details;       // their descriptions

// Records a failed expectation of the current group; `file` and `line` are
// those of its check (ABI_FAIL passes them).
static void abi_fail(const char *file, int line, const std::string &what) {
    std::lock_guard<std::mutex> lock(abi_mutex);
    abi_failures++;
    abi_details += "        " + what + "  [" + file + ":" + std::to_string(line) + "]\n";
}

#define ABI_FAIL(what) abi_fail(__FILE__, __LINE__, (what))

// Reads (and so clears) this thread's recent error message.
static std::string abi_recent() {
    const char *m = aclGetRecentErrMsg();
    return m != nullptr ? std::string(m) : std::string();
}

static std::string abi_recent_for_report() {
    std::string m = abi_recent();
    return m.empty() ? std::string("(no recent error message)") : "\"" + m + "\"";
}

#define EXPECT(cond)                                                                    \
    do {                                                                                \
        if (!(cond)) ABI_FAIL(std::string("expected: ") + #cond);           \
    } while (0)

// `call` must return exactly `want` (a code named by the headers). A pending
// message is dropped first, so that a failure shows the call's own message.
#define EXPECT_RC(call, want)                                                           \
    do {                                                                                \
        abi_recent();                                                                   \
        long long abi_rc_ = (long long)(call);                                          \
        long long abi_want_ = (long long)(want);                                        \
        if (abi_rc_ != abi_want_)                                                       \
            ABI_FAIL(std::string(#call) + " returned " +                      \
                                   std::to_string(abi_rc_) + ", expected " +            \
                                   std::to_string(abi_want_) + " (" #want                \
                                   "); recent error: " + abi_recent_for_report());      \
    } while (0)

// `call` must fail (any code but ACL_SUCCESS) and record a recent error message.
#define EXPECT_FAILS(call)                                                              \
    do {                                                                                \
        long long abi_rc_ = (long long)(call);                                          \
        std::string abi_msg_ = abi_recent();                                            \
        if (abi_rc_ == 0)                                                               \
            ABI_FAIL(std::string(#call) + " succeeded, expected a failure");   \
        else if (abi_msg_.empty())                                                      \
            ABI_FAIL(std::string(#call) + " failed with " +                   \
                                   std::to_string(abi_rc_) +                            \
                                   " but recorded no aclGetRecentErrMsg message");      \
    } while (0)

// Runs one check group on a new thread (so it starts with no current device
// and no pending error message) and prints its result line.
static int abi_run_group(const std::string &label, void (*fn)()) {
    abi_failures = 0;
    abi_details.clear();
    printf("@start %s\n", label.c_str());
    fflush(stdout);
    std::thread t(fn);
    t.join();
    if (abi_failures == 0) {
        printf("  ok    %s\n", label.c_str());
    } else {
        printf("  FAIL  %s: %d expectation(s) failed\n%s", label.c_str(), abi_failures,
               abi_details.c_str());
    }
    fflush(stdout);
    return abi_failures == 0 ? 0 : 1;
}

// Calls `f` with a value-initialised argument of each parameter type (zero,
// null pointer, zero enum).
template <typename R, typename... A> static R abi_call_with_zeros(R (*f)(A...)) {
    return f(A()...);
}

// ---- host functions, callbacks, time ---------------------------------------
// Passed to aclrtLaunchHostFunc and aclrtLaunchCallback: plain C functions
// whose argument is one of the structs below.

// Counts the calls of abi_calls_fn / abi_slow_fn and remembers the thread of
// the last one.
struct AbiCalls {
    std::mutex m;
    int n = 0;
    std::thread::id thread;
    int count() {
        std::lock_guard<std::mutex> lock(m);
        return n;
    }
    std::thread::id last_thread() {
        std::lock_guard<std::mutex> lock(m);
        return thread;
    }
};

extern "C" void abi_calls_fn(void *arg) {
    AbiCalls *c = static_cast<AbiCalls *>(arg);
    std::lock_guard<std::mutex> lock(c->m);
    c->n++;
    c->thread = std::this_thread::get_id();
}

// Work that takes a while: sleeps 20 ms, then counts like abi_calls_fn.
extern "C" void abi_slow_fn(void *arg) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    abi_calls_fn(arg);
}

// A gate: abi_gate_fn does not return (so holds its stream) until
// abi_gate_open. Every check that closes a gate opens it again.
struct AbiGate {
    std::mutex m;
    std::condition_variable cv;
    bool entered = false;
    bool open = false;
    std::thread::id thread;
};

extern "C" void abi_gate_fn(void *arg) {
    AbiGate *g = static_cast<AbiGate *>(arg);
    std::unique_lock<std::mutex> lock(g->m);
    g->entered = true;
    g->thread = std::this_thread::get_id();
    g->cv.notify_all();
    g->cv.wait(lock, [g] { return g->open; });
}

// Waits (up to 5 s) until abi_gate_fn runs; whether it did.
static bool abi_gate_entered(AbiGate &g) {
    std::unique_lock<std::mutex> lock(g.m);
    return g.cv.wait_for(lock, std::chrono::seconds(5), [&g] { return g.entered; });
}

static void abi_gate_open(AbiGate &g) {
    std::lock_guard<std::mutex> lock(g.m);
    g.open = true;
    g.cv.notify_all();
}

static bool abi_gate_is_open(AbiGate &g) {
    std::lock_guard<std::mutex> lock(g.m);
    return g.open;
}

// Opens the gate `ms` milliseconds from now, from another thread (join it).
static std::thread abi_gate_open_later(AbiGate &g, int ms) {
    return std::thread([&g, ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        abi_gate_open(g);
    });
}

// Calls that wait from inside a callback or host function: the result is
// kept in `rc` (-1 until the function ran).
struct AbiInside {
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    std::atomic<long long> rc{-1};
};

extern "C" void abi_sync_stream_inside_fn(void *arg) {
    AbiInside *a = static_cast<AbiInside *>(arg);
    a->rc = aclrtSynchronizeStream(a->stream);
}

extern "C" void abi_sync_event_inside_fn(void *arg) {
    AbiInside *a = static_cast<AbiInside *>(arg);
    a->rc = aclrtSynchronizeEvent(a->event);
}

typedef std::chrono::steady_clock::time_point AbiTime;

static AbiTime abi_now() { return std::chrono::steady_clock::now(); }

static long long abi_us_since(AbiTime t0) {
    return (long long)std::chrono::duration_cast<std::chrono::microseconds>(abi_now() - t0)
        .count();
}

static void abi_sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The calling thread's id as aclrtSubscribeReport takes it: pthread_self().
static uint64_t abi_tid() { return (uint64_t)pthread_self(); }

// ---- the parts of main() --------------------------------------------------

struct AbiExport {
    const char *name;
    const void *addr;
};

// Every function of the headers resolved into libcann_sim.so (the compiler
// checked each type, the linker found each symbol): prints the result line;
// 1 when some resolved elsewhere.
static int abi_report_exports(const std::vector<AbiExport> &exports) {
    int elsewhere = 0;
    std::string details;
    for (const AbiExport &e : exports) {
        if (!abi_in_sim(e.addr)) {
            elsewhere++;
            details += std::string("        ") + e.name + " resolved to " + abi_object_of(e.addr) + "\n";
        }
    }
    if (elsewhere == 0) {
        printf("  ok    exports: %zu functions of acl.h, acl_op_compiler.h, acl_prof.h, hccl.h linked through the bindings' types (the compiler checked each against the header) and defined by libcann_sim.so\n", exports.size());
    } else {
        printf("  FAIL  exports: %d of %zu functions are not defined by libcann_sim.so\n%s", elsewhere, exports.size(), details.c_str());
    }
    printf("@exports %zu\n", exports.size());
    return elsewhere == 0 ? 0 : 1;
}

// DCMI has no public header: its exports (`names`, null-terminated) are
// looked up by name. Prints the result line; 1 when some are missing.
static int abi_report_dcmi(const char *const *names, int implemented) {
    int missing = 0;
    size_t count = 0;
    std::string details;
    for (const char *const *n = names; *n != nullptr; n++, count++) {
        void *p = dlsym(RTLD_DEFAULT, *n);
        if (p == nullptr || !abi_in_sim(p)) {
            missing++;
            details += std::string("        ") + *n + (p == nullptr ? " is not exported" : " resolved to " + abi_object_of(p)) + "\n";
        }
    }
    if (missing == 0) {
        printf("  ok    DCMI: no public header exists, so not compiled against one; %zu exports found by name in libcann_sim.so (%d implemented, not checked here)\n", count, implemented);
        return 0;
    }
    printf("  FAIL  DCMI: %d of %zu exports missing from libcann_sim.so\n%s", missing, count, details.c_str());
    return 1;
}

// The body of a group calling `fn`, a function cann-sim does not implement,
// with zeros: it must return `code` and leave a message naming `fn` in
// aclGetRecentErrMsg.
#define ABI_NOT_SUPPORTED(fn, code)                                                     \
    do {                                                                                \
        abi_recent(); /* nothing pending */                                             \
        EXPECT_RC(abi_call_with_zeros(&fn), code);                                      \
        std::string m = abi_recent();                                                   \
        if (m.find(#fn) == std::string::npos)                                           \
            ABI_FAIL(std::string("aclGetRecentErrMsg() after " #fn " is ") +            \
                     (m.empty() ? std::string("null") : "\"" + m + "\"") +              \
                     ", expected a message naming " #fn);                               \
    } while (0)

// ---- operators (checks/op.cpp) ---------------------------------------------

// A float32 ND description of `dims`.
static aclTensorDesc *abi_desc_f32(std::vector<int64_t> dims) {
    return aclCreateTensorDesc(ACL_FLOAT, (int)dims.size(), dims.data(), ACL_FORMAT_ND);
}

// A device copy of `v` on the current device (null on failure).
static void *abi_dev_f32(const std::vector<float> &v) {
    void *p = nullptr;
    size_t n = v.size() * sizeof(float);
    if (aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return nullptr;
    if (aclrtMemcpy(p, n, v.data(), n, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) return nullptr;
    return p;
}

// `n` floats of device memory `d`, read after synchronising `s`.
static std::vector<float> abi_read_f32(aclrtStream s, const void *d, size_t n) {
    std::vector<float> v(n, -12345.0f);
    if (aclrtSynchronizeStream(s) != ACL_SUCCESS) return v;
    aclrtMemcpy(v.data(), n * sizeof(float), d, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
}

// A binary float32 operator of [n] tensors through aclopExecuteV2: y = op(a, b).
static aclError abi_exec2(const char *op, aclTensorDesc *d, void *a, void *b, void *y, size_t n,
                          aclopAttr *attr, aclrtStream s) {
    aclDataBuffer *ba = aclCreateDataBuffer(a, n * 4), *bb = aclCreateDataBuffer(b, n * 4),
                  *by = aclCreateDataBuffer(y, n * 4);
    aclTensorDesc *in_d[2] = {d, d}, *out_d[1] = {d};
    aclDataBuffer *in_b[2] = {ba, bb}, *out_b[1] = {by};
    aclError rc = aclopExecuteV2(op, 2, in_d, in_b, 1, out_d, out_b, attr, s);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(bb);
    aclDestroyDataBuffer(by);
    return rc;
}

// ---- dump (checks/modelbuild.cpp) -------------------------------------------

// aclInit for a dump check: true when this check initialized AscendCL (and
// must finalize it), after checking that `call` needs aclInit first.
static bool abi_dump_init(aclError (*call)()) {
    aclError r = aclInit(nullptr);
    if (r == ACL_SUCCESS) {
        EXPECT_RC(aclFinalize(), ACL_SUCCESS);
        EXPECT_RC(call(), ACL_ERROR_UNINITIALIZE);  // before aclInit
        EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);
        return true;
    }
    EXPECT(r == ACL_ERROR_REPEAT_INITIALIZE);
    return false;
}

// Chunks abi_dump_cb received.
static int32_t abi_dump_chunks = 0;

// A dump callback that counts the chunks it receives.
static int32_t abi_dump_cb(const acldumpChunk *chunk, int32_t len) {
    if (chunk != nullptr && len >= (int32_t)sizeof(acldumpChunk)) abi_dump_chunks++;
    return 0;
}

// Whether `path` is a directory that can be opened.
static bool abi_dir_exists(const std::string &path) {
    DIR *d = opendir(path.c_str());
    if (d == nullptr) return false;
    closedir(d);
    return true;
}

// ---- kernels and models (checks/model.cpp) ---------------------------------

// The kernel binary abi.rs built from xtask/abi/kernel.cpp ("" when unset).
static const char *abi_kernel_path() {
    const char *p = getenv("ABI_KERNEL_SO");
    return p != nullptr ? p : "";
}

// The bytes of a file (empty when it cannot be read).
static std::vector<char> abi_file_bytes(const char *path) {
    std::vector<char> v;
    FILE *f = fopen(path, "rb");
    if (f == nullptr) return v;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
    fclose(f);
    return v;
}

// Loads the check kernels on the current device (null on failure).
static aclrtBinHandle abi_kernel_load() {
    aclrtBinHandle b = nullptr;
    if (aclrtBinaryLoadFromFile(abi_kernel_path(), nullptr, &b) != ACL_SUCCESS) return nullptr;
    return b;
}

// Kernel `name` of `b` (null on failure).
static aclrtFuncHandle abi_kernel_fn(aclrtBinHandle b, const char *name) {
    aclrtFuncHandle f = nullptr;
    if (aclrtBinaryGetFunction(b, name, &f) != ACL_SUCCESS) return nullptr;
    return f;
}

// Appends an 8-byte word to an argument list.
static aclError abi_arg(aclrtArgsHandle a, uint64_t v) {
    aclrtParamHandle p = nullptr;
    return aclrtKernelArgsAppend(a, &v, sizeof v, &p);
}

// Writes `text` to a new temporary file; returns its path ("" on failure).
static std::string abi_temp_file(const std::string &text) {
    char path[] = "/tmp/cann-abi-check-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return "";
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    close(fd);
    return done == text.size() ? std::string(path) : std::string();
}

// ---- profiling (checks/prof.cpp) -------------------------------------------

// A new empty temporary directory ("" on failure).
static std::string abi_temp_dir() {
    char path[] = "/tmp/cann-abi-prof-XXXXXX";
    return mkdtemp(path) ? std::string(path) : std::string();
}

// Removes a directory tree made by abi_temp_dir.
static void abi_remove_tree(const std::string &dir) {
    if (dir.rfind("/tmp/cann-abi-prof-", 0) != 0) return;
    std::string cmd = "rm -rf '" + dir + "'";
    if (system(cmd.c_str()) != 0) fprintf(stderr, "cannot remove %s\n", dir.c_str());
}

// aclprofInit of `dir`.
static aclError abi_prof_init(const std::string &dir) {
    return aclprofInit(dir.c_str(), dir.size());
}

// A config of device 0 with the API and task time.
static aclprofConfig *abi_prof_config() {
    uint32_t ids[] = {0};
    return aclprofCreateConfig(ids, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
}

// Functions of an external allocator for the aclrtAllocator* checks (the
// registry only stores them: src/acl/aclrt_impl/allocator.cpp).
static void *abi_ext_alloc(aclrtAllocator, size_t) { return nullptr; }
static void abi_ext_free(aclrtAllocator, aclrtAllocatorBlock) {}
static void *abi_ext_advise(aclrtAllocator, size_t, aclrtAllocatorAddr) { return nullptr; }
static void *abi_ext_addr(aclrtAllocatorBlock block) { return block; }

// Runs body() inside a profiling run of device 0 with ACL_PROF_MSPROFTX (the
// msproftx calls work only then), in a temporary directory removed after.
template <typename F>
static void abi_tx_run(F body) {
    std::string dir = abi_temp_dir();
    uint32_t ids[] = {0};
    aclprofConfig *c = aclprofCreateConfig(ids, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_MSPROFTX);
    EXPECT(c != nullptr);
    EXPECT_RC(abi_prof_init(dir), ACL_SUCCESS);
    EXPECT_RC(aclprofStart(c), ACL_SUCCESS);
    body();
    EXPECT_RC(aclprofStop(c), ACL_SUCCESS);
    EXPECT_RC(aclprofFinalize(), ACL_SUCCESS);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
    abi_remove_tree(dir);
}

// ---- HCCL (checks/hccl.cpp) ------------------------------------------------

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

// Runs body(rank, comm, stream) for `n` ranks (n <= ABI_DEVICES) on threads,
// rank r on device r, over a communicator made from one HcclGetRootInfo,
// with `config` (may be null); releases everything afterwards.
template <typename F>
static void abi_hccl_ranks(int n, HcclCommConfig *config, F body) {
    HcclRootInfo root;
    // HcclGetRootInfo needs a current device (op_base.cc, hrtGetDeviceRefresh).
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    std::vector<std::thread> ts;
    for (int r = 0; r < n; r++) {
        ts.emplace_back([&, r] {
            EXPECT_RC(aclrtSetDevice(r), ACL_SUCCESS);
            HcclComm comm = nullptr;
            EXPECT_RC(HcclCommInitRootInfoConfig(n, &root, r, config, &comm), HCCL_SUCCESS);
            aclrtStream s = nullptr;
            EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
            if (comm != nullptr && s != nullptr) body(r, comm, s);
            EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
            EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
            EXPECT_RC(HcclCommDestroy(comm), HCCL_SUCCESS);
            EXPECT_RC(aclrtResetDevice(r), ACL_SUCCESS);
        });
    }
    for (auto &t : ts) t.join();
}

// Properties of physical HBM on `device`, as aclrtMallocPhysical takes them.
static aclrtPhysicalMemProp abi_vmm_prop(uint32_t device) {
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = device;
    return p;
}

// Device memory on the current device holding `v` (null on failure).
template <typename T> static void *abi_hccl_put(const std::vector<T> &v) {
    void *p = nullptr;
    size_t n = v.size() * sizeof(T);
    if (aclrtMalloc(&p, n == 0 ? 1 : n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return nullptr;
    if (n > 0 && aclrtMemcpy(p, n, v.data(), n, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        return nullptr;
    return p;
}

// `n` elements of device memory `d`, read after synchronising `s` (the
// value -1 everywhere when that fails).
template <typename T> static std::vector<T> abi_hccl_get(aclrtStream s, const void *d, size_t n) {
    std::vector<T> v(n, (T)-1);
    if (aclrtSynchronizeStream(s) != ACL_SUCCESS) return v;
    aclrtMemcpy(v.data(), n * sizeof(T), d, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
}

// A TCP port free on 127.0.0.1 right now.
static int abi_free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && bind(fd, (sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

// Writes a two-rank rank table on 127.0.0.1 (free ports) to a temporary
// file; returns its path ("" on failure).
static std::string abi_rank_table() {
    char path[] = "/tmp/cann-abi-ranktable-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return std::string();
    std::string json = std::string("{\"status\":\"completed\",\"version\":\"1.0\",\"server_count\":\"1\",") +
        "\"server_list\":[{\"server_id\":\"127.0.0.1\",\"device\":[" +
        "{\"device_id\":\"0\",\"device_ip\":\"192.168.1.1\",\"device_port\":\"" +
        std::to_string(abi_free_port()) + "\",\"rank_id\":\"0\"}," +
        "{\"device_id\":\"1\",\"device_ip\":\"192.168.1.2\",\"device_port\":\"" +
        std::to_string(abi_free_port()) + "\",\"rank_id\":\"1\"}]}]}";
    bool ok = write(fd, json.data(), json.size()) == (ssize_t)json.size();
    close(fd);
    return ok ? std::string(path) : std::string();
}

// ---- offline models (aclmdl* checks in checks/model.cpp) -------------------

// A cann-sim model: y = relu(x · w + b), x [batch, 3] float32; batch 2, or
// -1 with batch gears 1, 2, 4 when `dynamic`.
static std::string abi_dense_json(bool dynamic) {
    std::string b = dynamic ? "-1" : "2";
    return std::string("{\"format\":\"cann-sim-model\",\"version\":1,\"name\":\"dense\",") +
        "\"inputs\":[{\"name\":\"x\",\"dtype\":\"float32\",\"format\":\"ND\",\"shape\":[" + b + ",3]}]," +
        "\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"format\":\"ND\",\"shape\":[" + b + ",2]}]," +
        "\"constants\":[{\"name\":\"w\",\"dtype\":\"float32\",\"shape\":[3,2],\"data\":[1,-1,2,0.5,-3,1]}," +
        "{\"name\":\"b\",\"dtype\":\"float32\",\"shape\":[2],\"data\":[0.25,-0.5]}]," +
        "\"nodes\":[{\"name\":\"fc\",\"op\":\"MatMul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"xw\"]}," +
        "{\"name\":\"bias\",\"op\":\"Add\",\"inputs\":[\"xw\",\"b\"],\"outputs\":[\"z\"]}," +
        "{\"name\":\"act\",\"op\":\"Relu\",\"inputs\":[\"z\"],\"outputs\":[\"y\"]}]" +
        (dynamic ? ",\"dynamic_batch\":[1,2,4]}" : "}");
}

// A cann-sim model with height-width gears [2,2] and [4,8]: out = relu(img), NCHW [1,1,-1,-1].
static std::string abi_hw_json() {
    return std::string("{\"format\":\"cann-sim-model\",\"version\":1,\"name\":\"hw\",") +
        "\"inputs\":[{\"name\":\"img\",\"dtype\":\"float32\",\"format\":\"NCHW\",\"shape\":[1,1,-1,-1]}]," +
        "\"outputs\":[{\"name\":\"out\",\"dtype\":\"float32\",\"format\":\"NCHW\",\"shape\":[1,1,-1,-1]}]," +
        "\"nodes\":[{\"name\":\"act\",\"op\":\"Relu\",\"inputs\":[\"img\"],\"outputs\":[\"out\"]}]," +
        "\"dynamic_hw\":[[2,2],[4,8]]}";
}

// Loads a model from its JSON text on the current device (0 on failure).
static uint32_t abi_load_model(const std::string &json) {
    uint32_t id = 0;
    if (aclmdlLoadFromMem(json.data(), json.size(), &id) != ACL_SUCCESS) return 0;
    return id;
}

// A filled description of model `id` (null on failure).
static aclmdlDesc *abi_model_desc(uint32_t id) {
    aclmdlDesc *d = aclmdlCreateDesc();
    if (d != nullptr && aclmdlGetDesc(d, id) != ACL_SUCCESS) {
        aclmdlDestroyDesc(d);
        return nullptr;
    }
    return d;
}

// A dataset of one data buffer per (pointer, size).
static aclmdlDataset *abi_dataset(const std::vector<std::pair<void *, size_t>> &bufs) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    for (auto &b : bufs) aclmdlAddDatasetBuffer(ds, aclCreateDataBuffer(b.first, b.second));
    return ds;
}

// Destroys a dataset and its data buffers (not their memory).
static void abi_destroy_dataset(aclmdlDataset *ds) {
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); i++)
        aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i));
    aclmdlDestroyDataset(ds);
}

// A captured model of `n` (at most 2) value writes of 1, 2 to 8 bytes of
// device 0 (`w`, zeroed first), its one model stream and its tasks; the
// current device is 0 until abi_ri_done. Null handles when a call failed.
struct AbiRi {
    aclrtStream s = nullptr;
    void *w = nullptr;
    aclmdlRI m = nullptr;
    aclrtStream ms = nullptr;
    aclmdlRITask t[2] = {nullptr, nullptr};
};

static AbiRi abi_ri_writes(uint32_t n) {
    AbiRi r;
    aclrtSetDevice(0);
    aclrtCreateStream(&r.s);
    aclrtMalloc(&r.w, 8, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(r.w, 8, 0, 8);
    aclmdlRICaptureBegin(r.s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    for (uint32_t i = 0; i < n; i++) aclrtValueWrite(r.w, i + 1, 0, r.s);
    aclmdlRICaptureEnd(r.s, &r.m);
    uint32_t k = 1;
    aclmdlRIGetStreams(r.m, &r.ms, &k);
    k = n;
    aclmdlRIGetTasksByStream(r.ms, r.t, &k);
    return r;
}

// The word abi_ri_writes' model writes.
static uint64_t abi_ri_word(const AbiRi &r) {
    uint64_t v = 0;
    aclrtMemcpy(&v, 8, r.w, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
}

// Releases what abi_ri_writes took (the model unless destroyed: null it).
static void abi_ri_done(AbiRi &r) {
    if (r.m != nullptr) aclmdlRIDestroy(r.m);
    aclrtFree(r.w);
    aclrtDestroyStream(r.s);
    aclrtResetDevice(0);
}

// The dense model's output for x = {1, 2, 3, -1, 0, 4}.
static const float ABI_DENSE_X[6] = {1, 2, 3, -1, 0, 4};
static const float ABI_DENSE_Y[4] = {0, 2.5f, 0, 4.5f};
