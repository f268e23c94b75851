// abi-check behavioural checks for virtual memory management
// (cann-sim/src/acl/vmm.rs) and the HCCL functions over it, and for the
// pointer queries, 32-bit fills and 2-D copies (memory_query.rs). Format and
// helpers: see xtask/abi/README.md.

ABI_CHECK(aclrtMemGetAllocationGranularity) {
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    size_t g = 0;
    EXPECT_RC(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_SUCCESS);
    EXPECT(g == (2u << 20));
    EXPECT_RC(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g), ACL_SUCCESS);
    EXPECT_RC(aclrtMemGetAllocationGranularity(nullptr, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtReserveMemAddress) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *va = nullptr;
    int x = 0;
    EXPECT_RC(aclrtReserveMemAddress(nullptr, 4u << 20, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtReserveMemAddress(&va, 1000, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM);      // not granular
    EXPECT_RC(aclrtReserveMemAddress(&va, 4u << 20, 3, nullptr, 0), ACL_ERROR_INVALID_PARAM);  // alignment
    EXPECT_RC(aclrtReserveMemAddress(&va, 4u << 20, 0, &x, 0), ACL_ERROR_INVALID_PARAM);       // expectPtr
    EXPECT_RC(aclrtReserveMemAddress(&va, 4u << 20, 1u << 30, nullptr, 0), ACL_SUCCESS);
    EXPECT(((uintptr_t)va % (1u << 30)) == 0);
    EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtReleaseMemAddress) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *va = nullptr;
    EXPECT_RC(aclrtReserveMemAddress(&va, 2u << 20, 0, nullptr, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtReleaseMemAddress((char *)va + 4096), ACL_ERROR_INVALID_PARAM);  // not a base
    EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT_RC(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);                 // twice
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtMallocPhysical) {
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    aclrtDrvMemHandle h = nullptr;
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMallocPhysical(&h, 12345, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, &prop, 1), ACL_ERROR_INVALID_PARAM);
    prop.location.id = 999;
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, &prop, 0), ACL_ERROR_INVALID_PARAM);
    prop.location.id = 0;
    prop.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, &prop, 0), ACL_ERROR_API_NOT_SUPPORT);
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    EXPECT_RC(aclrtMallocPhysical(&h, (size_t)1 << 40, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);  // beyond HBM
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, &prop, 0), ACL_SUCCESS);
    EXPECT(h != nullptr);
    EXPECT_RC(aclrtFreePhysical(h), ACL_SUCCESS);
}

ABI_CHECK(aclrtFreePhysical) {
    aclrtPhysicalMemProp prop = abi_vmm_prop(0);
    aclrtDrvMemHandle h = nullptr;
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, &prop, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT_RC(aclrtFreePhysical(h), ACL_ERROR_INVALID_PARAM);   // twice
    EXPECT_RC(aclrtFreePhysical(nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtMemGetAllocationPropertiesFromHandle) {
    aclrtPhysicalMemProp prop, got;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 1;
    aclrtDrvMemHandle h = nullptr;
    EXPECT_RC(aclrtMallocPhysical(&h, 2u << 20, &prop, 0), ACL_SUCCESS);
    memset(&got, 0xFF, sizeof got);
    EXPECT_RC(aclrtMemGetAllocationPropertiesFromHandle(h, &got), ACL_SUCCESS);
    EXPECT(got.location.id == 1 && got.memAttr == ACL_HBM_MEM_HUGE);
    EXPECT_RC(aclrtMemGetAllocationPropertiesFromHandle(h, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT_RC(aclrtMemGetAllocationPropertiesFromHandle(h, &got), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtMapMem) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtPhysicalMemProp prop = abi_vmm_prop(0);
    const size_t G = 2u << 20;
    void *va = nullptr;
    aclrtDrvMemHandle h = nullptr;
    EXPECT_RC(aclrtReserveMemAddress(&va, 4 * G, 0, nullptr, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocPhysical(&h, 2 * G, &prop, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtMapMem((char *)va + G, 2 * G, 0, h, 1), ACL_ERROR_INVALID_PARAM);      // flags
    EXPECT_RC(aclrtMapMem((char *)va + 4096, 2 * G, 0, h, 0), ACL_ERROR_INVALID_PARAM);   // not granular
    EXPECT_RC(aclrtMapMem((char *)va + 3 * G, 2 * G, 0, h, 0), ACL_ERROR_INVALID_PARAM);  // past the end
    EXPECT_RC(aclrtMapMem((char *)va, 2 * G, G, h, 0), ACL_ERROR_INVALID_PARAM);          // past the handle
    EXPECT_RC(aclrtMapMem((char *)va + G, 2 * G, 0, h, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtMapMem((char *)va, 2 * G, 0, h, 0), ACL_ERROR_INVALID_PARAM);          // overlaps
    // The mapped range is device memory: copies reach the physical memory.
    std::vector<int> in(256, 7), out(256, 0);
    EXPECT_RC(aclrtMemcpy((char *)va + G, 1024, in.data(), 1024, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(out.data(), 1024, (char *)va + G, 1024, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(out[0] == 7 && out[255] == 7);
    EXPECT_RC(aclrtFree((char *)va + G), ACL_ERROR_RT_PARAM_INVALID);                      // not aclrtMalloc's
    EXPECT_RC(aclrtFreePhysical(h), ACL_ERROR_INVALID_PARAM);                              // still mapped
    EXPECT_RC(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);                        // still mapped
    EXPECT_RC(aclrtUnmapMem((char *)va + G), ACL_SUCCESS);
    EXPECT_RC(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtUnmapMem) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtPhysicalMemProp prop = abi_vmm_prop(0);
    const size_t G = 2u << 20;
    void *va = nullptr;
    aclrtDrvMemHandle h = nullptr;
    EXPECT_RC(aclrtReserveMemAddress(&va, 2 * G, 0, nullptr, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocPhysical(&h, G, &prop, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtMapMem(va, G, 0, h, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtUnmapMem((char *)va + G), ACL_ERROR_INVALID_PARAM);   // nothing mapped there
    EXPECT_RC(aclrtUnmapMem(va), ACL_SUCCESS);
    EXPECT_RC(aclrtUnmapMem(va), ACL_ERROR_INVALID_PARAM);               // twice
    // Unmapped memory is no longer device memory.
    int v = 1;
    EXPECT_RC(aclrtMemcpy(va, 4, &v, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtFreePhysical(h), ACL_SUCCESS);
    EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(HcclCommSetMemoryRange) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream) {
        const size_t G = 2u << 20;
        void *va = nullptr, *other = nullptr;
        EXPECT_RC(aclrtReserveMemAddress(&va, 2 * G, 0, nullptr, 0), ACL_SUCCESS);
        EXPECT_RC(HcclCommSetMemoryRange(c, nullptr, G, 0, 0), HCCL_E_PTR);
        EXPECT_RC(HcclCommSetMemoryRange(c, va, G, 1, 0), HCCL_E_PARA);        // alignment
        EXPECT_RC(HcclCommSetMemoryRange(c, va, 4 * G, 0, 0), HCCL_E_PARA);    // beyond the reservation
        EXPECT_RC(HcclCommSetMemoryRange(c, (char *)va + G, G, 0, 0), HCCL_E_PARA);  // not a base
        EXPECT_RC(HcclCommSetMemoryRange(c, va, 2 * G, 0, 0), HCCL_SUCCESS);
        EXPECT_RC(HcclCommSetMemoryRange(c, va, 2 * G, 0, 0), HCCL_E_PARA);    // twice
        // A reservation of the other rank's device.
        EXPECT_RC(aclrtSetDevice(1 - r), ACL_SUCCESS);
        EXPECT_RC(aclrtReserveMemAddress(&other, G, 0, nullptr, 0), ACL_SUCCESS);
        EXPECT_RC(aclrtSetDevice(r), ACL_SUCCESS);
        EXPECT_RC(HcclCommSetMemoryRange(c, other, G, 0, 0), HCCL_E_PARA);
        EXPECT_RC(HcclCommUnsetMemoryRange(c, va), HCCL_SUCCESS);
        EXPECT_RC(aclrtReleaseMemAddress(other), ACL_SUCCESS);
        EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
        EXPECT_RC(aclrtResetDevice(1 - r), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclCommUnsetMemoryRange) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        void *va = nullptr;
        EXPECT_RC(aclrtReserveMemAddress(&va, 2u << 20, 0, nullptr, 0), ACL_SUCCESS);
        EXPECT_RC(HcclCommUnsetMemoryRange(c, va), HCCL_E_PARA);               // never set
        EXPECT_RC(HcclCommSetMemoryRange(c, va, 2u << 20, 0, 0), HCCL_SUCCESS);
        EXPECT_RC(HcclCommUnsetMemoryRange(c, nullptr), HCCL_E_PTR);
        EXPECT_RC(HcclCommUnsetMemoryRange(c, va), HCCL_SUCCESS);
        EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclCommActivateCommMemory) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream) {
        const size_t G = 2u << 20;
        aclrtPhysicalMemProp prop = abi_vmm_prop(r);
        void *va = nullptr;
        aclrtDrvMemHandle h = nullptr, h2 = nullptr;
        EXPECT_RC(aclrtReserveMemAddress(&va, 2 * G, 0, nullptr, 0), ACL_SUCCESS);
        EXPECT_RC(aclrtMallocPhysical(&h, G, &prop, 0), ACL_SUCCESS);
        EXPECT_RC(aclrtMallocPhysical(&h2, G, &prop, 0), ACL_SUCCESS);
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 0, h, 0), HCCL_E_PARA);  // no range set
        EXPECT_RC(HcclCommSetMemoryRange(c, va, 2 * G, 0, 0), HCCL_SUCCESS);
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 0, h, 0), HCCL_E_PARA);  // not mapped yet
        EXPECT_RC(aclrtMapMem(va, G, 0, h, 0), ACL_SUCCESS);
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 0, h2, 0), HCCL_E_PARA); // another handle
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 1, h, 0), HCCL_E_PARA);  // offset
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 0, nullptr, 0), HCCL_E_PTR);
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 0, h, 0), HCCL_SUCCESS);
        EXPECT_RC(HcclCommActivateCommMemory(c, va, G, 0, h, 0), HCCL_E_PARA);  // twice
        EXPECT_RC(HcclCommUnsetMemoryRange(c, va), HCCL_E_PARA);                // still active
        EXPECT_RC(HcclCommDeactivateCommMemory(c, va), HCCL_SUCCESS);
        EXPECT_RC(HcclCommUnsetMemoryRange(c, va), HCCL_SUCCESS);
        EXPECT_RC(aclrtUnmapMem(va), ACL_SUCCESS);
        EXPECT_RC(aclrtFreePhysical(h), ACL_SUCCESS);
        EXPECT_RC(aclrtFreePhysical(h2), ACL_SUCCESS);
        EXPECT_RC(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclCommDeactivateCommMemory) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        int x = 0;
        EXPECT_RC(HcclCommDeactivateCommMemory(c, nullptr), HCCL_E_PTR);
        EXPECT_RC(HcclCommDeactivateCommMemory(c, &x), HCCL_E_PARA);            // never activated
    });
}

ABI_CHECK(aclrtPointerGetAttributes) {
    EXPECT_RC(aclrtSetDevice(1), ACL_SUCCESS);
    void *d = nullptr, *big = nullptr, *h = nullptr;
    int local = 0;
    EXPECT_RC(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&big, 4u << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMallocHost(&h, 64), ACL_SUCCESS);
    aclrtPtrAttributes a;
    EXPECT_RC(aclrtPointerGetAttributes((char *)d + 10, &a), ACL_SUCCESS);
    EXPECT(a.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && a.location.id == 1 && a.pageSize == 4096);
    EXPECT_RC(aclrtPointerGetAttributes(big, &a), ACL_SUCCESS);
    EXPECT(a.pageSize == (2u << 20));
    EXPECT_RC(aclrtPointerGetAttributes(h, &a), ACL_SUCCESS);
    EXPECT(a.location.type == ACL_MEM_LOCATION_TYPE_HOST);
    EXPECT_RC(aclrtPointerGetAttributes(&local, &a), ACL_SUCCESS);
    EXPECT(a.location.type == ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    EXPECT_RC(aclrtPointerGetAttributes(nullptr, &a), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtPointerGetAttributes(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(big), ACL_SUCCESS);
    EXPECT_RC(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(1), ACL_SUCCESS);
}

ABI_CHECK(aclrtMemGetAddressRange) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *d = nullptr, *base = nullptr;
    size_t size = 0;
    int local = 0;
    EXPECT_RC(aclrtMalloc(&d, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemGetAddressRange((char *)d + 500, &base, &size), ACL_SUCCESS);
    EXPECT(base == d && size == 1000);
    EXPECT_RC(aclrtMemGetAddressRange((char *)d + 1, nullptr, &size), ACL_SUCCESS);
    EXPECT_RC(aclrtMemGetAddressRange(&local, &base, &size), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtMemGetAddressRange(nullptr, &base, &size), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtMemsetD32) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *d = nullptr;
    EXPECT_RC(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetD32(d, 64, 0xDEADBEEFu, 16), ACL_SUCCESS);
    uint32_t out[16] = {0};
    EXPECT_RC(aclrtMemcpy(out, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(out[0] == 0xDEADBEEFu && out[15] == 0xDEADBEEFu);
    EXPECT_RC(aclrtMemsetD32(d, 60, 1, 16), ACL_ERROR_RT_PARAM_INVALID);           // memSize too small
    EXPECT_RC(aclrtMemsetD32((char *)d + 2, 62, 1, 4), ACL_ERROR_RT_PARAM_INVALID);  // misaligned
    EXPECT_RC(aclrtMemsetD32(nullptr, 64, 1, 16), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemsetD32(d, 64, 1, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtMemsetD32Async) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    void *d = nullptr;
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetD32Async(d, 64, 7u, 16, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    uint32_t out[16] = {0};
    EXPECT_RC(aclrtMemcpy(out, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(out[0] == 7u && out[15] == 7u);
    int local[16];
    EXPECT_RC(aclrtMemsetD32Async(local, 64, 7u, 16, s), ACL_ERROR_RT_PARAM_INVALID);  // not device memory
    EXPECT_RC(aclrtMemsetD32Async(d, 64, 7u, 17, s), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtDeviceGetUuid) {
    aclrtUuid a, b, a2;
    EXPECT_RC(aclrtDeviceGetUuid(0, &a), ACL_SUCCESS);
    EXPECT_RC(aclrtDeviceGetUuid(1, &b), ACL_SUCCESS);
    EXPECT_RC(aclrtDeviceGetUuid(0, &a2), ACL_SUCCESS);
    EXPECT(memcmp(&a, &b, sizeof a) != 0 && memcmp(&a, &a2, sizeof a) == 0);
    EXPECT_RC(aclrtDeviceGetUuid(999, &a), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_RC(aclrtDeviceGetUuid(0, nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclrtMemcpy2d) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    // A 3x4 block of a 5-wide host matrix into a 4-wide device matrix and back.
    unsigned char host[15], back[12] = {0};
    for (int i = 0; i < 15; i++) host[i] = (unsigned char)i;
    void *d = nullptr;
    EXPECT_RC(aclrtMalloc(&d, 12, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy2d(d, 4, host, 5, 4, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(back, 12, d, 12, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(back[0] == 0 && back[3] == 3 && back[4] == 5 && back[11] == 13);
    EXPECT_RC(aclrtMemcpy2d(d, 4, host, 5, 6, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);  // width > pitch
    EXPECT_RC(aclrtMemcpy2d(d, 4, host, 5, 4, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);  // past the end
    EXPECT_RC(aclrtMemcpy2d(nullptr, 4, host, 5, 4, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtMemcpy2d(d, 4, host, 5, 0, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);  // zero width
    EXPECT_RC(aclrtMemcpy2d(d, 4, host, 5, 4, 3, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);   // kind
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtMemcpy2dAsync) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    void *a = nullptr, *b = nullptr;
    EXPECT_RC(aclrtMalloc(&a, 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&b, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    unsigned char host[20], out[8] = {0};
    for (int i = 0; i < 20; i++) host[i] = (unsigned char)(100 + i);
    EXPECT_RC(aclrtMemcpy(a, 20, host, 20, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    // Column pair 1..3 of a 4x5 device matrix, packed.
    EXPECT_RC(aclrtMemcpy2dAsync(b, 2, (char *)a + 1, 5, 2, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(out, 8, b, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(out[0] == 101 && out[1] == 102 && out[2] == 106 && out[7] == 117);
    EXPECT_RC(aclrtMemcpy2dAsync(b, 2, a, 5, 2, 5, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_ERROR_RT_PARAM_INVALID);  // dst span too long
    EXPECT_RC(aclrtFree(a), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(b), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

// IPC memory sharing. The simulator shares device blocks of at least 2 MiB
// and lets the exporting process import its own key, so each check runs in
// one process.
ABI_CHECK(aclrtIpcMemGetExportKey) {
    char key[65] = {0};
    void *d = nullptr, *small = nullptr;
    int local = 0;
    EXPECT_RC(aclrtIpcMemGetExportKey(nullptr, 1, key, 65, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemGetExportKey(&local, 1, nullptr, 65, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemGetExportKey(&local, 0, key, 65, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemGetExportKey(&local, 1, key, 0, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemGetExportKey(&local, 1, key, 65, 2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemGetExportKey(&local, 1, key, 65, 0), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(&local, 4, key, 65, 0), ACL_ERROR_RT_PARAM_INVALID);  // host memory
    EXPECT_RC(aclrtMalloc(&small, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(small, 4096, key, 65, 0), ACL_ERROR_RT_PARAM_INVALID);  // below 2 MiB
    EXPECT_RC(aclrtMalloc(&d, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(d, (2 << 20) + 1, key, 65, 0), ACL_ERROR_RT_PARAM_INVALID);  // past the end
    EXPECT_RC(aclrtIpcMemGetExportKey(d, 2 << 20, key, 4, 0), ACL_ERROR_RT_PARAM_INVALID);  // key too short
    EXPECT_RC(aclrtIpcMemGetExportKey(d, 2 << 20, key, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
              ACL_SUCCESS);
    EXPECT(key[0] != 0 && strlen(key) < 65);
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(small), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtIpcMemSetImportPid) {
    char key[65] = {0};
    void *d = nullptr, *p = nullptr;
    int32_t pid = 0;
    EXPECT_RC(aclrtIpcMemSetImportPid(nullptr, &pid, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemSetImportPid("k", nullptr, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemSetImportPid("k", &pid, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemSetImportPid("k", &pid, 1), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemSetImportPid("not-a-key", &pid, 1), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtMalloc(&d, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(d, 2 << 20, key, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT), ACL_SUCCESS);
    // Not whitelisted yet: refused; whitelisted: imported.
    EXPECT_RC(aclrtIpcMemImportByKey(&p, key, 0), ACL_ERROR_RT_NO_PERMISSION);
    EXPECT_RC(aclrtDeviceGetBareTgid(&pid), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemSetImportPid(key, &pid, 1), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, key, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);  // the import
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);  // the export
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtIpcMemImportByKey) {
    char key[65] = {0};
    void *d = nullptr, *p = nullptr;
    EXPECT_RC(aclrtIpcMemImportByKey(nullptr, "k", 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, "k", 2), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, "k", 0), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, "csim-1-2-3", 0), ACL_ERROR_RT_PARAM_INVALID);  // unknown key
    EXPECT_RC(aclrtMalloc(&d, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(d, 2 << 20, 0x5A, 2 << 20), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(d, 2 << 20, key, 65, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
              ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS), ACL_SUCCESS);
    EXPECT(p != nullptr && p != d);
    // One memory, two addresses: a write through one is read through the other.
    unsigned char b = 0;
    EXPECT_RC(aclrtMemcpy(&b, 1, (char *)p + 12345, 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(b == 0x5A);
    EXPECT_RC(aclrtMemset(p, 16, 0x33, 16), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(&b, 1, d, 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(b == 0x33);
    EXPECT_RC(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID);  // closed, not freed
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemImportByKey(&p, key, 0), ACL_ERROR_RT_PARAM_INVALID);  // withdrawn
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtIpcMemClose) {
    char key[65] = {0};
    void *d = nullptr;
    EXPECT_RC(aclrtIpcMemClose(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtIpcMemClose("k"), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemClose("never-exported"), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtMalloc(&d, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(d, 2 << 20, key, 65, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemClose(key), ACL_ERROR_RT_PARAM_INVALID);  // closed twice
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtDeviceGetBareTgid) {
    int32_t pid = 0;
    EXPECT_RC(aclrtDeviceGetBareTgid(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtDeviceGetBareTgid(&pid), ACL_SUCCESS);  // no device needed
    EXPECT(pid == (int32_t)getpid());
}

ABI_CHECK(aclrtHostRegister) {
    static unsigned char host[4096];
    void *dev = nullptr;
    EXPECT_RC(aclrtHostRegister(nullptr, 64, ACL_HOST_REGISTER_MAPPED, &dev), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostRegister(host, 64, ACL_HOST_REGISTER_MAPPED, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostRegister(host, 0, ACL_HOST_REGISTER_MAPPED, &dev), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostRegister(host, 64, ACL_HOST_REGISTER_MAPPED, &dev), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtHostRegister(host, sizeof host, ACL_HOST_REGISTER_MAPPED, &dev), ACL_SUCCESS);
    EXPECT(dev != nullptr);
    // The device writes the host's memory through the answered address.
    EXPECT_RC(aclrtMemset(dev, 16, 0x3C, 16), ACL_SUCCESS);
    EXPECT(host[0] == 0x3C && host[15] == 0x3C);
    EXPECT_RC(aclrtHostRegister(host + 8, 8, ACL_HOST_REGISTER_MAPPED, &dev), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_RC(aclrtHostUnregister(host), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtHostRegisterV2) {
    static unsigned char host[4096];
    EXPECT_RC(aclrtHostRegisterV2(nullptr, 64, ACL_HOST_REG_MAPPED), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostRegisterV2(host, 0, ACL_HOST_REG_MAPPED), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostRegisterV2(host, 64, ACL_HOST_REG_MAPPED), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtHostRegisterV2(host, sizeof host, ACL_HOST_REG_PINNED), ACL_SUCCESS);
    aclrtPtrAttributes attrs = {};
    EXPECT_RC(aclrtPointerGetAttributes(host, &attrs), ACL_SUCCESS);
    EXPECT(attrs.location.type == ACL_MEM_LOCATION_TYPE_HOST);
    EXPECT_RC(aclrtHostRegisterV2(host, 64, ACL_HOST_REG_MAPPED), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    EXPECT_RC(aclrtHostUnregister(host), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtHostGetDevicePointer) {
    static unsigned char host[4096];
    void *dev = nullptr;
    EXPECT_RC(aclrtHostGetDevicePointer(nullptr, &dev, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostGetDevicePointer(host, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostGetDevicePointer(host, &dev, 1), ACL_ERROR_INVALID_PARAM);  // reserved flag
    EXPECT_RC(aclrtHostGetDevicePointer(host, &dev, 0), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtHostGetDevicePointer(host, &dev, 0), ACL_ERROR_RT_PARAM_INVALID);  // not mapped
    EXPECT_RC(aclrtHostRegisterV2(host, sizeof host, ACL_HOST_REG_MAPPED), ACL_SUCCESS);
    EXPECT_RC(aclrtHostGetDevicePointer(host, &dev, 0), ACL_SUCCESS);
    EXPECT(dev != nullptr);
    EXPECT_RC(aclrtHostGetDevicePointer(host + 1, &dev, 0), ACL_ERROR_RT_PARAM_INVALID);  // not the first address
    EXPECT_RC(aclrtHostUnregister(host), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtHostUnregister) {
    static unsigned char host[4096];
    EXPECT_RC(aclrtHostUnregister(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtHostUnregister(host), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtHostUnregister(host), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_RC(aclrtHostRegisterV2(host, sizeof host, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED), ACL_SUCCESS);
    EXPECT_RC(aclrtHostUnregister(host), ACL_SUCCESS);
    EXPECT_RC(aclrtHostUnregister(host), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtIpcMemSetAttr) {
    char key[65] = {0};
    void *d = nullptr;
    EXPECT_RC(aclrtIpcMemSetAttr(nullptr, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemSetAttr("k", (aclrtIpcMemAttrType)1, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemSetAttr("k", ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 4), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtIpcMemSetAttr("k", ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&d, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtIpcMemGetExportKey(d, 2 << 20, key, 65, 0), ACL_SUCCESS);
    // The checks' SoC is an A2 part: only A3 parts set the link.
    EXPECT_RC(aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS),
              ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclrtIpcMemClose(key), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
