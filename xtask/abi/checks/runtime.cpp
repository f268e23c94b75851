// abi-check behavioural checks of the AscendCL runtime: init, devices, contexts,
// streams, events, host callbacks, memory and copies, device queries, peer
// access (cann-sim/src/acl/). Format and helpers: see xtask/abi/README.md.

ABI_CHECK(aclInit) {
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
}

ABI_CHECK(aclFinalize) {
    EXPECT_RC(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);      // never initialized: 100037
    EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclFinalize(), ACL_SUCCESS);
    EXPECT_RC(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);      // twice: 100037
    EXPECT(!abi_recent().empty());
    EXPECT_RC(aclInit(nullptr), ACL_SUCCESS);                 // a new session after finalizing
    EXPECT_RC(aclFinalize(), ACL_SUCCESS);
}

ABI_CHECK(aclFinalizeReference) {
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
}

ABI_CHECK(aclrtGetVersion) {
    int32_t major = -1, minor = -1, patch = -1;
    EXPECT_RC(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS);
    EXPECT(major == ACL_MAJOR_VERSION);
    EXPECT(minor == ACL_MINOR_VERSION);
    EXPECT(patch == ACL_PATCH_VERSION);
    EXPECT_RC(aclrtGetVersion(nullptr, &minor, &patch), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtGetSocName) {
    const char *name = aclrtGetSocName();
    EXPECT(name != nullptr);
    if (name != nullptr) EXPECT(strcmp(name, ABI_SOC_NAME) == 0);
    const char *again = aclrtGetSocName();
    EXPECT(again != nullptr && strcmp(again, ABI_SOC_NAME) == 0);
}

ABI_CHECK(aclGetRecentErrMsg) {
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
}

ABI_CHECK(aclrtGetDeviceCount) {
    uint32_t count = 0;
    EXPECT_RC(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    EXPECT(count == ABI_DEVICES);
    EXPECT_RC(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtGetRunMode) {
    aclrtRunMode mode = ACL_DEVICE;
    EXPECT_RC(aclrtGetRunMode(&mode), ACL_SUCCESS);           // no device or context needed
    EXPECT(mode == ACL_HOST);
    EXPECT_RC(aclrtGetRunMode(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT(!abi_recent().empty());
}

ABI_CHECK(aclrtSetDevice) {
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
}

ABI_CHECK(aclrtResetDevice) {
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
}

ABI_CHECK(aclrtResetDeviceForce) {
    int32_t dev = -1;
    for (int i = 0; i < 3; i++) EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDeviceForce(1), ACL_SUCCESS);         // all three references at once
    EXPECT_RC(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_FAILS(aclrtResetDeviceForce(1));
    EXPECT_RC(aclrtResetDeviceForce(ABI_DEVICES), ACL_ERROR_RT_INVALID_DEVICEID);
}

ABI_CHECK(aclrtGetDevice) {
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
}

ABI_CHECK(aclrtMalloc) {
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
}

ABI_CHECK(aclrtMallocAlign32) {
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
}

ABI_CHECK(aclrtMallocCached) {
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
}

ABI_CHECK(aclrtFree) {
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
}

ABI_CHECK(aclrtMallocHost) {
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
}

ABI_CHECK(aclrtFreeHost) {
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
}

ABI_CHECK(aclrtMemcpy) {
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
}

ABI_CHECK(aclrtMemset) {
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
}

ABI_CHECK(aclrtGetMemInfo) {
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
}

// ---- contexts -----------------------------------------------------------

ABI_CHECK(aclrtCreateContext) {
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
}

ABI_CHECK(aclrtDestroyContext) {
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
}

ABI_CHECK(aclrtSetCurrentContext) {
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
}

ABI_CHECK(aclrtGetCurrentContext) {
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
}

ABI_CHECK(aclrtCtxGetCurrentDefaultStream) {
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
}

// ---- streams ------------------------------------------------------------

ABI_CHECK(aclrtCreateStream) {
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
}

ABI_CHECK(aclrtSetStreamFailureMode) {
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
}

ABI_CHECK(aclrtCreateStreamConfigHandle) {
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    EXPECT(h != nullptr);
    if (h != nullptr) EXPECT(h->workptr == nullptr && h->workSize == 0 && h->flag == 0 && h->priority == 0);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_SUCCESS);
}

ABI_CHECK(aclrtDestroyStreamConfigHandle) {
    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    aclrtStreamConfigHandle mine;
    EXPECT_RC(aclrtDestroyStreamConfigHandle(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(&mine), ACL_ERROR_INVALID_PARAM);   // not made by create
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStreamConfigHandle(h), ACL_ERROR_INVALID_PARAM);       // twice
}

ABI_CHECK(aclrtSetStreamConfigOpt) {
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
}

ABI_CHECK(aclrtCreateStreamV2) {
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
}

ABI_CHECK(aclrtCreateStreamWithConfig) {
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
}

ABI_CHECK(aclrtDestroyStream) {
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
}

ABI_CHECK(aclrtDestroyStreamForce) {
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
}

ABI_CHECK(aclrtSynchronizeStream) {
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
}

ABI_CHECK(aclrtSynchronizeStreamWithTimeout) {
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
}

ABI_CHECK(aclrtSynchronizeDevice) {
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
}

ABI_CHECK(aclrtStreamQuery) {
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
}

ABI_CHECK(aclrtStreamWaitEvent) {
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
}

ABI_CHECK(aclrtStreamGetPriority) {
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
}

ABI_CHECK(aclrtStreamGetFlags) {
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
}

ABI_CHECK(aclrtStreamGetId) {
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
}

// ---- events -------------------------------------------------------------

ABI_CHECK(aclrtCreateEvent) {
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
}

ABI_CHECK(aclrtCreateEventWithFlag) {
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
}

ABI_CHECK(aclrtCreateEventExWithFlag) {
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
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC), ACL_SUCCESS);  // an inter-process event
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    e = nullptr;
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
}

ABI_CHECK(aclrtDestroyEvent) {
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
}

ABI_CHECK(aclrtRecordEvent) {
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
}

ABI_CHECK(aclrtResetEvent) {
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
}

ABI_CHECK(aclrtQueryEventStatus) {
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
}

ABI_CHECK(aclrtQueryEvent) {
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
}

ABI_CHECK(aclrtSynchronizeEvent) {
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
}

ABI_CHECK(aclrtSynchronizeEventWithTimeout) {
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
}

ABI_CHECK(aclrtEventElapsedTime) {
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
}

ABI_CHECK(aclrtEventGetTimestamp) {
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
}

// ---- host callbacks -----------------------------------------------------

ABI_CHECK(aclrtSubscribeReport) {
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
}

ABI_CHECK(aclrtLaunchCallback) {
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
}

ABI_CHECK(aclrtProcessReport) {
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
}

ABI_CHECK(aclrtUnSubscribeReport) {
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
}

ABI_CHECK(aclrtLaunchHostFunc) {
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
}

// ---- asynchronous memory ------------------------------------------------

ABI_CHECK(aclrtMemcpyAsync) {
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
}

ABI_CHECK(aclrtMemsetAsync) {
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
}

// ---- device queries -----------------------------------------------------

ABI_CHECK(aclGetDeviceCapability) {
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
}

ABI_CHECK(aclrtGetDeviceInfo) {
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
        if (v != f.want) ABI_FAIL("aclrtGetDeviceInfo attr " + std::to_string((int)f.attr) + " is " + std::to_string(v) + ", expected " + std::to_string(f.want));
    }
    // The physical installation is not modelled.
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SMP_ID, &v), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_HD_CONNECT_TYPE, &v), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_RC(aclrtGetDeviceInfo(ABI_DEVICES, ACL_DEV_ATTR_AICORE_CORE_NUM, &v), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtGetDeviceInfo(0, (aclrtDevAttr)9999, &v), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtGetDeviceCapability) {
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
}

ABI_CHECK(aclrtDeviceGetStreamPriorityRange) {
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
}

// ---- peer access --------------------------------------------------------

ABI_CHECK(aclrtDeviceCanAccessPeer) {
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
}

ABI_CHECK(aclrtDeviceEnablePeerAccess) {
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
}

ABI_CHECK(aclrtDeviceDisablePeerAccess) {
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
}

// ---- runtime control (cann-sim/src/acl/{sys_version,last_error,runtime_config,abort,value}.rs) ----

ABI_CHECK(aclsysGetCANNVersion) {
    aclCANNPackageVersion v;
    memset(&v, 0, sizeof v);
    EXPECT_RC(aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &v), ACL_SUCCESS);
    EXPECT(v.version[0] != '\0' && v.majorVersion[0] != '\0' && v.patchVersion[0] != '\0');
    EXPECT_RC(aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &v), ACL_ERROR_INVALID_FILE);   // no driver package
    EXPECT_RC(aclsysGetCANNVersion((aclCANNPackageName)99, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclsysGetVersionStr) {
    char name[] = "runtime", other[] = "no-such-package";
    char out[ACL_PKG_VERSION_MAX_SIZE] = {0};
    EXPECT_RC(aclsysGetVersionStr(name, out), ACL_SUCCESS);
    aclCANNPackageVersion v;
    memset(&v, 0, sizeof v);
    EXPECT_RC(aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &v), ACL_SUCCESS);
    EXPECT(strcmp(out, v.version) == 0);
    EXPECT_RC(aclsysGetVersionStr(other, out), ACL_ERROR_INVALID_FILE);
    EXPECT_RC(aclsysGetVersionStr(nullptr, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclsysGetVersionStr(name, nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtGetLastError) {
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);           // a new thread
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);           // reset by the read
    EXPECT(aclrtGetLastError((aclrtLastErrLevel)1) == ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtPeekAtLastError) {
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(-2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_PARAM_INVALID);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_PARAM_INVALID);  // kept
    EXPECT(aclrtPeekAtLastError((aclrtLastErrLevel)1) == ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_PARAM_INVALID);
}

ABI_CHECK(aclrtGetErrorVerbose) {
    aclrtErrorInfo info;
    memset(&info, 0xff, sizeof info);
    EXPECT_RC(aclrtGetErrorVerbose(0, &info), ACL_SUCCESS);
    EXPECT(info.errorType == ACL_RT_NO_ERROR && info.hasDetail == 0 && info.tryRepair == 0);
    EXPECT_RC(aclrtGetErrorVerbose(ABI_DEVICES, &info), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtGetErrorVerbose(0, nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtGetMemUceInfo) {
    aclrtMemUceInfo arr[2];
    size_t n = 7;
    EXPECT_RC(aclrtGetMemUceInfo(0, arr, 2, &n), ACL_ERROR_RT_CONTEXT_NULL);  // no context
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetMemUceInfo(0, arr, 2, &n), ACL_SUCCESS);
    EXPECT(n == 0);
    EXPECT_RC(aclrtGetMemUceInfo(0, nullptr, 2, &n), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtGetMemUceInfo(0, arr, 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtGetMemUceInfo(ABI_DEVICES, arr, 2, &n), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtSetOpWaitTimeout) {
    aclrtStream a = nullptr, b = nullptr;
    aclrtEvent e = nullptr;
    AbiGate gate;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&a), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&b), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEvent(&e), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(a, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, a), ACL_SUCCESS);
    EXPECT_RC(aclrtSetOpWaitTimeout(1), ACL_SUCCESS);             // seconds
    EXPECT_RC(aclrtStreamWaitEvent(b, e), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(b), ACL_ERROR_RT_TASK_TIMEOUT);  // the wait outlived 1 s
    EXPECT_RC(aclrtSetOpWaitTimeout(0), ACL_SUCCESS);             // for ever again
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(a), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(a), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtSetOpExecuteTimeOut) {
    EXPECT_RC(aclrtSetOpExecuteTimeOut(0), ACL_SUCCESS);          // no device needed, any value
    EXPECT_RC(aclrtSetOpExecuteTimeOut(UINT32_MAX), ACL_SUCCESS);
}

ABI_CHECK(aclrtSynchronizeDeviceWithTimeout) {
    aclrtStream s = nullptr;
    AbiGate gate;
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(-1), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(-2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeDeviceWithTimeout(-1), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtGetDeviceSatMode) {
    aclrtFloatOverflowMode m = ACL_RT_OVERFLOW_MODE_UNDEF;
    EXPECT_RC(aclrtGetDeviceSatMode(&m), ACL_SUCCESS);            // no device needed
    EXPECT(m == ACL_RT_OVERFLOW_MODE_INFNAN);                     // the 910B/910_93 default
    EXPECT_RC(aclrtGetDeviceSatMode(nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtSetDeviceSatMode) {
    aclrtFloatOverflowMode m = ACL_RT_OVERFLOW_MODE_UNDEF;
    EXPECT_RC(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION), ACL_SUCCESS);
    EXPECT_RC(aclrtGetDeviceSatMode(&m), ACL_SUCCESS);
    EXPECT(m == ACL_RT_OVERFLOW_MODE_SATURATION);
    EXPECT_RC(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN), ACL_SUCCESS);
}

ABI_CHECK(aclrtStreamAbort) {
    aclrtStream s = nullptr;
    AbiGate gate;
    AbiCalls calls;
    EXPECT_RC(aclrtStreamAbort(nullptr), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT(abi_gate_entered(gate));
    EXPECT_RC(aclrtStreamAbort(s), ACL_SUCCESS);                  // drops the queued call
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(calls.count() == 0);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_SUCCESS);  // runs again
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamAbort(s), ACL_ERROR_RT_INVALID_HANDLE);  // destroyed
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtDeviceTaskAbort) {
    aclrtStream s = nullptr;
    AbiGate gate;
    AbiCalls calls;
    EXPECT_RC(aclrtDeviceTaskAbort(ABI_DEVICES, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtDeviceTaskAbort(0, 36 * 60 * 1000 + 1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(nullptr, abi_calls_fn, &calls), ACL_SUCCESS);
    EXPECT(abi_gate_entered(gate));
    EXPECT_RC(aclrtDeviceTaskAbort(1, 5000), ACL_SUCCESS);
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeDevice(), ACL_SUCCESS);
    EXPECT(calls.count() <= 1);                                   // the queued call was dropped
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
}

ABI_CHECK(aclrtValueWrite) {
    void *word = nullptr;
    uint64_t host = 0;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&word, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtValueWrite(word, 42, 0, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(&host, 8, word, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host == 42);
    EXPECT_RC(aclrtValueWrite(word, 1, 1, nullptr), ACL_ERROR_RT_PARAM_INVALID);   // flag must be 0
    EXPECT_RC(aclrtValueWrite(&host, 1, 0, nullptr), ACL_ERROR_RT_PARAM_INVALID);  // host memory
    EXPECT_RC(aclrtValueWrite(nullptr, 1, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtFree(word), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtValueWait) {
    void *word = nullptr;
    aclrtStream waiter = nullptr;
    AbiCalls calls;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&word, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(word, 8, 0, 8), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&waiter), ACL_SUCCESS);
    EXPECT_RC(aclrtValueWait(word, 5, 0, waiter), ACL_SUCCESS);  // until *word >= 5
    EXPECT_RC(aclrtLaunchHostFunc(waiter, abi_calls_fn, &calls), ACL_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT(calls.count() == 0);
    EXPECT_RC(aclrtValueWrite(word, 6, 0, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
    EXPECT(calls.count() == 1);
    EXPECT_RC(aclrtValueWait(word, 1, 4, waiter), ACL_ERROR_RT_PARAM_INVALID);     // flag in [0, 4)
    EXPECT_RC(aclrtValueWait(nullptr, 1, 0, waiter), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDestroyStream(waiter), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(word), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtGetResInCurrentThread) {
    uint32_t n = 0;
    EXPECT_RC(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &n), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &n), ACL_SUCCESS);
    int64_t cube = 0;
    EXPECT_RC(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_CUBE_CORE_NUM, &cube), ACL_SUCCESS);
    EXPECT((int64_t)n == cube);
    EXPECT_RC(aclrtGetResInCurrentThread((aclrtDevResLimitType)2, &n), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtCtxGetSysParamOpt) {
    int64_t v = -1;
    EXPECT_RC(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext c = nullptr;
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);            // a fresh context: nothing set
    EXPECT_RC(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
    EXPECT_RC(aclrtCtxGetSysParamOpt((aclSysParamOpt)3, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtCtxSetSysParamOpt) {
    int64_t v = -1;
    aclrtContext c = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 3), ACL_SUCCESS);
    EXPECT_RC(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), ACL_SUCCESS);
    EXPECT(v == 3);
    EXPECT_RC(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 4), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCtxSetSysParamOpt((aclSysParamOpt)3, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtGetSysParamOpt) {
    int64_t v = -1;
    EXPECT_RC(aclrtGetSysParamOpt((aclSysParamOpt)4, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, 1), ACL_SUCCESS);
    EXPECT_RC(aclrtGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, &v), ACL_SUCCESS);  // no device needed
    EXPECT(v == 1);
}

ABI_CHECK(aclrtSetSysParamOpt) {
    int64_t v = -1;
    EXPECT_RC(aclrtSetSysParamOpt((aclSysParamOpt)3, 1), ACL_SUCCESS);  // kernel early start: process only
    EXPECT_RC(aclrtGetSysParamOpt((aclSysParamOpt)3, &v), ACL_SUCCESS);
    EXPECT(v == 1);
    EXPECT_RC(aclrtSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, -1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSetSysParamOpt((aclSysParamOpt)4, 0), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtGetDeviceUtilizationRate) {
    aclrtUtilizationInfo u;
    memset(&u, 0, sizeof u);
    EXPECT_RC(aclrtGetDeviceUtilizationRate(0, &u), ACL_SUCCESS);
    EXPECT(u.cubeUtilization >= 0 && u.cubeUtilization <= 100);
    EXPECT(u.memoryUtilization == -1);                            // not supported
    EXPECT_RC(aclrtGetDeviceUtilizationRate(0, nullptr), ACL_ERROR_INVALID_PARAM);
    u.utilizationExtend = reinterpret_cast<aclrtUtilizationExtendInfo *>(&u);
    EXPECT_RC(aclrtGetDeviceUtilizationRate(0, &u), ACL_ERROR_INVALID_PARAM);  // reserved, must be null
}

ABI_CHECK(aclrtReduceAsync) {
    void *dst = nullptr;
    void *src = nullptr;
    float host[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&dst, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&src, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(dst, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(src, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    // The runtime's own sample: dst = dst + src, count in bytes.
    EXPECT_RC(aclrtReduceAsync(dst, src, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, nullptr, nullptr),
              ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(host, 16, dst, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 2.0f && host[1] == 4.0f && host[2] == 6.0f && host[3] == 8.0f);
    EXPECT_RC(aclrtReduceAsync(nullptr, src, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, nullptr, nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtReduceAsync(dst, src, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, nullptr, dst),
              ACL_ERROR_INVALID_PARAM);  // reserve must be nullptr
    EXPECT_RC(aclrtReduceAsync(dst, src, 0, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, nullptr, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtReduceAsync(dst, src, 16, (aclrtReduceKind)14, ACL_FLOAT, nullptr, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);  // kind in [10, 14)
    EXPECT_RC(aclrtReduceAsync(dst, src, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_UINT8, nullptr, nullptr),
              ACL_ERROR_RT_FEATURE_NOT_SUPPORT);  // not reduced on Atlas A2
    EXPECT_RC(aclrtReduceAsync(static_cast<char *>(dst) + 2, src, 8, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT,
                               nullptr, nullptr),
              ACL_ERROR_RT_ADDR_UNALIGNED);
    EXPECT_RC(aclrtFree(dst), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(src), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtRandomNumAsync) {
    void *out = nullptr;
    void *counter = nullptr;
    float host[256] = {};
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&counter, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(counter, 16, 0, 16), ACL_SUCCESS);
    // The runtime's own sample: 256 normal floats, mean 3, stddev 2.
    aclrtRandomNumTaskInfo info = {};
    float mean = 3.0f;
    float stddev = 2.0f;
    uint64_t seed = 0;
    uint64_t num = 256;
    info.dataType = ACL_FLOAT;
    info.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS;
    info.randomResultAddr = out;
    info.randomCounterAddr = counter;
    memcpy(info.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.valueOrAddr, &mean, sizeof(float));
    info.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.size = sizeof(float);
    memcpy(info.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev.valueOrAddr, &stddev, sizeof(float));
    info.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev.size = sizeof(float);
    memcpy(info.randomSeed.valueOrAddr, &seed, sizeof(seed));
    info.randomSeed.size = sizeof(seed);
    memcpy(info.randomNum.valueOrAddr, &num, sizeof(num));
    info.randomNum.size = sizeof(num);
    EXPECT_RC(aclrtRandomNumAsync(&info, nullptr, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(host, sizeof(host), out, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    double sum = 0;
    for (float v : host) sum += v;
    EXPECT(sum / 256 > 2.5 && sum / 256 < 3.5);
    EXPECT_RC(aclrtRandomNumAsync(nullptr, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtRandomNumAsync(&info, nullptr, out), ACL_ERROR_RT_PARAM_INVALID);  // reserve
    info.dataType = ACL_INT32;  // normal numbers are floats
    EXPECT_RC(aclrtRandomNumAsync(&info, nullptr, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    info.dataType = ACL_FLOAT;
    info.randomCounterAddr = nullptr;
    EXPECT_RC(aclrtRandomNumAsync(&info, nullptr, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(counter), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorCreateDesc) {
    aclrtAllocatorDesc a = aclrtAllocatorCreateDesc();
    aclrtAllocatorDesc b = aclrtAllocatorCreateDesc();
    EXPECT(a != nullptr && b != nullptr && a != b);
    EXPECT_RC(aclrtAllocatorDestroyDesc(a), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorDestroyDesc(b), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorDestroyDesc) {
    EXPECT_RC(aclrtAllocatorDestroyDesc(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorDestroyDesc(aclrtAllocatorCreateDesc()), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorSetObjToDesc) {
    int obj = 0;
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetObjToDesc(d, &obj), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetObjToDesc(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorSetObjToDesc(nullptr, &obj), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorSetAllocFuncToDesc) {
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetAllocFuncToDesc(d, abi_ext_alloc), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetAllocFuncToDesc(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorSetFreeFuncToDesc) {
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetFreeFuncToDesc(d, abi_ext_free), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetFreeFuncToDesc(nullptr, abi_ext_free), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorSetAllocAdviseFuncToDesc) {
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetAllocAdviseFuncToDesc(d, abi_ext_advise), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetAllocAdviseFuncToDesc(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc) {
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, abi_ext_addr), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorRegister) {
    int obj = 0;
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetObjToDesc(d, &obj), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetAllocFuncToDesc(d, abi_ext_alloc), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetFreeFuncToDesc(d, abi_ext_free), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);  // no getAddrFromBlock
    EXPECT_RC(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, abi_ext_addr), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorRegister(nullptr, d), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorRegister(s, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorRegister(s, d), ACL_SUCCESS);  // the advise function is optional
    EXPECT_RC(aclrtAllocatorUnregister(s), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorGetByStream) {
    int obj = 0;
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT_RC(aclrtAllocatorSetObjToDesc(d, &obj), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetAllocFuncToDesc(d, abi_ext_alloc), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetFreeFuncToDesc(d, abi_ext_free), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, abi_ext_addr), ACL_SUCCESS);
    aclrtAllocatorDesc got = nullptr;
    aclrtAllocator got_obj = nullptr;
    aclrtAllocatorAllocFunc got_alloc = nullptr;
    EXPECT_RC(aclrtAllocatorGetByStream(s, &got, &got_obj, &got_alloc, nullptr, nullptr, nullptr),
              ACL_ERROR_INVALID_PARAM);  // nothing registered
    EXPECT_RC(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
    // The registry holds a copy: a later change of the description is not seen.
    EXPECT_RC(aclrtAllocatorSetObjToDesc(d, &got), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorGetByStream(s, &got, &got_obj, &got_alloc, nullptr, nullptr, nullptr), ACL_SUCCESS);
    EXPECT(got == d && got_obj == &obj && got_alloc == abi_ext_alloc);
    EXPECT_RC(aclrtAllocatorGetByStream(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorUnregister(s), ACL_SUCCESS);
    EXPECT_RC(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtAllocatorUnregister) {
    int dummy = 0;
    EXPECT_RC(aclrtAllocatorUnregister(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtAllocatorUnregister(&dummy), ACL_SUCCESS);  // nothing registered: fine
}

ABI_CHECK(aclrtIpcGetEventHandle) {
    aclrtEvent e = nullptr, plain = nullptr;
    aclrtIpcEventHandle h = {};
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcGetEventHandle(e, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcGetEventHandle(nullptr, &h), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateEventExWithFlag(&plain, ACL_EVENT_SYNC), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcGetEventHandle(plain, &h), ACL_ERROR_RT_PARAM_INVALID);  // only IPC events
    EXPECT_RC(aclrtIpcGetEventHandle(e, &h), ACL_SUCCESS);
    // What IPC events cannot do.
    EXPECT_RC(aclrtResetEvent(e, nullptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    float ms = 0;
    EXPECT_RC(aclrtEventElapsedTime(&ms, e, e), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclrtDestroyEvent(plain), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtIpcOpenEventHandle) {
    aclrtEvent e = nullptr, opened = nullptr;
    aclrtStream a = nullptr, b = nullptr;
    aclrtIpcEventHandle h = {};
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    AbiGate gate;
    EXPECT_RC(aclrtIpcOpenEventHandle(h, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcOpenEventHandle(h, &opened), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcOpenEventHandle(h, &opened), ACL_ERROR_RT_PARAM_INVALID);  // not a handle
    EXPECT_RC(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcGetEventHandle(e, &h), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcOpenEventHandle(h, &opened), ACL_SUCCESS);
    EXPECT(opened != nullptr && opened != e);
    // A record held back on stream a: a wait through the opened event holds b.
    EXPECT_RC(aclrtCreateStream(&a), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&b), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchHostFunc(a, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclrtRecordEvent(e, a), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(b, opened), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(opened, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT(abi_gate_entered(gate));
    aclrtStreamStatus bs = ACL_STREAM_STATUS_RESERVED;
    EXPECT_RC(aclrtStreamQuery(b, &bs), ACL_SUCCESS);
    EXPECT(bs == ACL_STREAM_STATUS_NOT_READY);  // held by the wait
    abi_gate_open(gate);
    EXPECT_RC(aclrtSynchronizeStream(b), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeEvent(opened), ACL_SUCCESS);
    EXPECT_RC(aclrtQueryEventStatus(opened, &st), ACL_SUCCESS);
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT_RC(aclrtDestroyEvent(opened), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcOpenEventHandle(h, &opened), ACL_ERROR_RT_PARAM_INVALID);  // destroyed
    EXPECT_RC(aclrtDestroyStream(a), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclFloatToFloat16) {
    // No device or aclInit needed. Rounds to nearest even, saturates.
    EXPECT(aclFloatToFloat16(1.0f) == 0x3C00);
    EXPECT(aclFloatToFloat16(1.0f + 1.0f / 2048.0f) == 0x3C00);  // a tie: to even
    EXPECT(aclFloatToFloat16(70000.0f) == 0x7BFF);
    EXPECT(aclFloatToFloat16(-INFINITY) == 0xFBFF);
    EXPECT(aclFloatToFloat16(NAN) == 0x7BFF);
}

ABI_CHECK(aclFloat16ToFloat) {
    EXPECT(aclFloat16ToFloat(0x3C00) == 1.0f);
    EXPECT(aclFloat16ToFloat(0xC100) == -2.5f);
    EXPECT(aclFloat16ToFloat(0x7C00) == 65536.0f);  // +Inf reads as 2^16
    EXPECT(aclFloat16ToFloat(0x7E00) == 98304.0f);  // a NaN too
}

ABI_CHECK(aclrtMemUceRepair) {
    aclrtMemUceInfo arr[21] = {};
    void *d = nullptr;
    EXPECT_RC(aclrtMemUceRepair(0, nullptr, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemUceRepair(0, arr, 21), ACL_ERROR_INVALID_PARAM);  // at most 20 entries
    arr[0].reserved[0] = 1;
    EXPECT_RC(aclrtMemUceRepair(0, arr, 1), ACL_ERROR_INVALID_PARAM);   // reserved must be 0
    arr[0].reserved[0] = 0;
    EXPECT_RC(aclrtMemUceRepair(0, arr, 1), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMemUceRepair(ABI_DEVICES, arr, 1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    arr[0].addr = d;
    arr[0].len = 4096;
    EXPECT_RC(aclrtMemUceRepair(0, arr, 1), ACL_SUCCESS);  // nothing to repair
    arr[0].addr = arr;  // host memory
    EXPECT_RC(aclrtMemUceRepair(0, arr, 1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtMemUceRepair(0, arr, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
