// The fixed part of the program `cargo xtask abi-check` generates (see
// xtask/src/abi.rs). It is compiled as C++14 against the real CANN headers and
// linked to libcann_sim.so. Nothing here may depend on the simulator: only the
// headers' declarations are used.
//
// Output protocol: lines starting with "@" are read by xtask; every other
// line is shown to the user.

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// Spells a function type in a declarator: abi_id<int(void *)> *p.
template <typename T> using abi_id = T;

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

static void abi_fail(int line, const std::string &what) {
    std::lock_guard<std::mutex> lock(abi_mutex);
    abi_failures++;
    abi_details += "        " + what + "  [abi_check.cpp:" + std::to_string(line) + "]\n";
}

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
        if (!(cond)) abi_fail(__LINE__, std::string("expected: ") + #cond);           \
    } while (0)

// `call` must return exactly `want` (a code named by the headers). A pending
// message is dropped first, so that a failure shows the call's own message.
#define EXPECT_RC(call, want)                                                           \
    do {                                                                                \
        abi_recent();                                                                   \
        long long abi_rc_ = (long long)(call);                                          \
        long long abi_want_ = (long long)(want);                                        \
        if (abi_rc_ != abi_want_)                                                       \
            abi_fail(__LINE__, std::string(#call) + " returned " +                      \
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
            abi_fail(__LINE__, std::string(#call) + " succeeded, expected a failure");   \
        else if (abi_msg_.empty())                                                      \
            abi_fail(__LINE__, std::string(#call) + " failed with " +                   \
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

// ---- exports --------------------------------------------------------------

struct AbiExport {
    const char *name;
    const void *addr;
};

template <typename F> static const void *abi_addr(F *f) {
    return reinterpret_cast<const void *>(f);
}

// Where the dynamic linker found `addr`: the path of the object defining it.
static std::string abi_object_of(const void *addr) {
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return std::string("(unknown)");
    return std::string(info.dli_fname);
}

static bool abi_in_sim(const void *addr) {
    return abi_object_of(addr).find("libcann_sim") != std::string::npos;
}

// ---- HcclCommConfigInit ---------------------------------------------------

static void abi_print_config(const char *tag, unsigned char fill) {
    HcclCommConfig config;
    memset(&config, fill, sizeof config);
    HcclCommConfigInit(&config);
    const unsigned char *b = reinterpret_cast<const unsigned char *>(&config);
    printf("%s %zu ", tag, sizeof config);
    for (size_t i = 0; i < sizeof config; i++) printf("%02x", b[i]);
    printf("\n");
}
