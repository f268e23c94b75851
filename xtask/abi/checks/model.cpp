// abi-check behavioural checks for offline models (aclmdl*) and kernel launch
// (aclrtBinary*, aclrtKernelArgs*, aclrtLaunchKernel*). Format and helpers:
// see xtask/abi/README.md.
//
// The kernel checks load `libabi_kernel.so`, which abi.rs compiles from
// `xtask/abi/kernel.cpp` (`abi_kernel_path()`).

ABI_CHECK(aclrtBinaryLoadFromFile) {
    aclrtBinHandle b = nullptr;
    EXPECT_RC(aclrtBinaryLoadFromFile(abi_kernel_path(), nullptr, &b), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryLoadFromFile(nullptr, nullptr, &b), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtBinaryLoadFromFile(abi_kernel_path(), nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtBinaryLoadFromFile("/nonexistent/cann-abi/kernel.so", nullptr, &b),
              ACL_ERROR_RT_PARAM_INVALID);
    std::string text = abi_temp_file("not a kernel binary");
    EXPECT_RC(aclrtBinaryLoadFromFile(text.c_str(), nullptr, &b), ACL_ERROR_RT_PARAM_INVALID);
    unlink(text.c_str());
    aclrtBinaryLoadOption opt = {};
    opt.type = ACL_RT_BINARY_LOAD_OPT_MAGIC;
    opt.value.magic = 42;                                      // not an ACL_RT_BINARY_MAGIC_ELF_*
    aclrtBinaryLoadOptions opts = {&opt, 1};
    EXPECT_RC(aclrtBinaryLoadFromFile(abi_kernel_path(), &opts, &b), ACL_ERROR_RT_PARAM_INVALID);
    opt.value.magic = ACL_RT_BINARY_MAGIC_ELF_AICORE;
    EXPECT_RC(aclrtBinaryLoadFromFile(abi_kernel_path(), &opts, &b), ACL_SUCCESS);
    EXPECT(b != nullptr);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtBinaryLoadFromData) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    std::vector<char> bytes = abi_file_bytes(abi_kernel_path());
    EXPECT(!bytes.empty());
    aclrtBinHandle b = nullptr;
    EXPECT_RC(aclrtBinaryLoadFromData(nullptr, 4, nullptr, &b), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtBinaryLoadFromData(bytes.data(), 0, nullptr, &b), ACL_ERROR_RT_PARAM_INVALID);
    const char junk[] = "\x7f" "ELF truncated";
    EXPECT_RC(aclrtBinaryLoadFromData(junk, sizeof junk, nullptr, &b), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtBinaryLoadFromData(bytes.data(), bytes.size(), nullptr, &b), ACL_SUCCESS);
    EXPECT(abi_kernel_fn(b, "abi_blocks") != nullptr);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtBinaryUnLoad) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(nullptr), ACL_ERROR_INVALID_PARAM);
    aclrtBinHandle b = abi_kernel_load();
    EXPECT(b != nullptr);
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_blocks");
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_ERROR_RT_INVALID_HANDLE);   // twice
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_ERROR_RT_INVALID_HANDLE);  // its functions went too
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtBinaryGetFunction) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = nullptr;
    EXPECT_RC(aclrtBinaryGetFunction(b, "abi_vadd", &f), ACL_SUCCESS);
    EXPECT(f != nullptr);
    EXPECT_RC(aclrtBinaryGetFunction(b, "no_such_kernel", &f), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtBinaryGetFunction(nullptr, "abi_vadd", &f), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtBinaryGetFunction(b, nullptr, &f), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtBinaryGetFunction(b, "abi_vadd", nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryGetFunction(b, "abi_vadd", &f), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtKernelArgsInit) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_blocks");
    aclrtArgsHandle a = nullptr, a2 = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(nullptr, &a), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsInit(f, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    EXPECT(a != nullptr);
    // One list per thread: a second init replaces the first.
    EXPECT_RC(aclrtKernelArgsInit(f, &a2), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, 1), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(abi_arg(a2, 1), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtKernelArgsAppend) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_blocks");
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    uint64_t v = 5;
    aclrtParamHandle p = nullptr;
    EXPECT_RC(aclrtKernelArgsAppend(nullptr, &v, 8, &p), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsAppend(a, nullptr, 8, &p), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsAppend(a, &v, 0, &p), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsAppend(a, &v, 8, nullptr), ACL_ERROR_INVALID_PARAM);
    for (int i = 0; i < 128; i++) EXPECT_RC(aclrtKernelArgsAppend(a, &v, 1, &p), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsAppend(a, &v, 1, &p), ACL_ERROR_RT_PARAM_INVALID);  // 128 at most
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsFinalize(a), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsAppend(a, &v, 8, &p), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtKernelArgsAppendPlaceHolder) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_scale");
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    aclrtParamHandle p = nullptr;
    EXPECT_RC(aclrtKernelArgsAppendPlaceHolder(nullptr, &p), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsAppendPlaceHolder(a, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsAppendPlaceHolder(a, &p), ACL_SUCCESS);
    EXPECT(p != nullptr);
    void *buf = nullptr;
    EXPECT_RC(aclrtKernelArgsGetPlaceHolderBuffer(a, p, 8, &buf), ACL_SUCCESS);
    aclrtParamHandle p2 = nullptr;
    // No parameter after a placeholder buffer was taken.
    EXPECT_RC(aclrtKernelArgsAppendPlaceHolder(a, &p2), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtKernelArgsGetPlaceHolderBuffer) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_scale");
    void *out = nullptr;
    EXPECT_RC(aclrtMalloc(&out, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    aclrtParamHandle p_out = nullptr, p_data = nullptr, p_k = nullptr;
    uint64_t out_addr = (uint64_t)(uintptr_t)out, k = 3;
    EXPECT_RC(aclrtKernelArgsAppend(a, &out_addr, 8, &p_out), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsAppendPlaceHolder(a, &p_data), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsAppend(a, &k, 8, &p_k), ACL_SUCCESS);
    void *buf = nullptr;
    EXPECT_RC(aclrtKernelArgsGetPlaceHolderBuffer(a, p_out, 8, &buf), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtKernelArgsGetPlaceHolderBuffer(a, p_data, 0, &buf), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsGetPlaceHolderBuffer(a, p_data, 8, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsGetPlaceHolderBuffer(a, p_data, 8, &buf), ACL_SUCCESS);
    EXPECT(buf != nullptr);
    if (buf != nullptr) *(uint64_t *)buf = 14;
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 1, nullptr, nullptr, a, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    uint64_t got = 0;
    EXPECT_RC(aclrtMemcpy(&got, 8, out, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(got == 42);                                       // 14 * 3, through the placeholder
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtKernelArgsParaUpdate) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_blocks");
    void *out = nullptr, *out2 = nullptr;
    EXPECT_RC(aclrtMalloc(&out, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out2, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    aclrtParamHandle p = nullptr;
    uint64_t addr = (uint64_t)(uintptr_t)out, addr2 = (uint64_t)(uintptr_t)out2;
    EXPECT_RC(aclrtKernelArgsAppend(a, &addr, 8, &p), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsParaUpdate(a, p, &addr2, 4), ACL_ERROR_RT_PARAM_INVALID);  // size differs
    EXPECT_RC(aclrtKernelArgsParaUpdate(a, p, nullptr, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsParaUpdate(a, p, &addr2, 8), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 2, nullptr, nullptr, a, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    uint32_t got[2] = {0, 0};
    EXPECT_RC(aclrtMemcpy(got, 8, out2, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(got[0] == 2000 && got[1] == 2001);                // the updated pointer was used
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out2), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtKernelArgsFinalize) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_blocks");
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsFinalize(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, 0), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsFinalize(a), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);  // nothing after finalizing
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtLaunchKernelWithConfig) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle f = abi_kernel_fn(b, "abi_vadd");
    aclrtFuncHandle g = abi_kernel_fn(b, "abi_blocks");
    const size_t n = 1000;
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; i++) { x[i] = (float)i; y[i] = 2.0f * (float)i; }
    void *dx = abi_dev_f32(x), *dy = abi_dev_f32(y), *dz = abi_dev_f32(std::vector<float>(n, 0.0f));
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclrtArgsHandle a = nullptr;
    EXPECT_RC(aclrtKernelArgsInit(f, &a), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, (uint64_t)(uintptr_t)dx), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, (uint64_t)(uintptr_t)dy), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, (uint64_t)(uintptr_t)dz), ACL_SUCCESS);
    EXPECT_RC(abi_arg(a, n), ACL_SUCCESS);
    EXPECT_RC(aclrtKernelArgsFinalize(a), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchKernelWithConfig(nullptr, 4, s, nullptr, a, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 0, s, nullptr, a, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 4, s, nullptr, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    int reserve = 0;
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 4, s, nullptr, a, &reserve), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtLaunchKernelWithConfig(g, 4, s, nullptr, a, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 4, s, nullptr, a, nullptr), ACL_SUCCESS);
    std::vector<float> z = abi_read_f32(s, dz, n);
    bool all = true;
    for (size_t i = 0; i < n; i++) all = all && z[i] == 3.0f * (float)i;
    EXPECT(all);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchKernelWithConfig(f, 4, s, nullptr, a, nullptr), ACL_ERROR_RT_INVALID_HANDLE);
    aclrtFree(dx);
    aclrtFree(dy);
    aclrtFree(dz);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtLaunchKernel) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle g = abi_kernel_fn(b, "abi_blocks");
    void *out = nullptr;
    EXPECT_RC(aclrtMalloc(&out, 12, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    uint64_t args[1] = {(uint64_t)(uintptr_t)out};
    EXPECT_RC(aclrtLaunchKernel(g, 3, nullptr, 8, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtLaunchKernel(g, 0, args, 8, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtLaunchKernel(g, 3, args, sizeof args, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    uint32_t got[3] = {0, 0, 0};
    EXPECT_RC(aclrtMemcpy(got, 12, out, 12, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(got[0] == 3000 && got[1] == 3001 && got[2] == 3002);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlLoadFromFile) {
    uint32_t id = 0;
    std::string path = abi_temp_file(abi_dense_json(false));
    EXPECT_RC(aclmdlLoadFromFile(path.c_str(), &id), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclmdlLoadFromFile(nullptr, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFile(path.c_str(), nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFile("/nonexistent/cann-abi/model.om", &id), ACL_ERROR_INVALID_FILE);
    std::string junk = abi_temp_file("not json");
    EXPECT_RC(aclmdlLoadFromFile(junk.c_str(), &id), ACL_ERROR_DESERIALIZE_MODEL);
    unlink(junk.c_str());
    std::string other = abi_temp_file("{\"format\":\"onnx\"}");
    EXPECT_RC(aclmdlLoadFromFile(other.c_str(), &id), ACL_ERROR_PARSE_FILE);
    unlink(other.c_str());
    EXPECT_RC(aclmdlLoadFromFile(path.c_str(), &id), ACL_SUCCESS);
    EXPECT(id != 0);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    unlink(path.c_str());
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlLoadFromMem) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    std::string json = abi_dense_json(true);
    uint32_t id = 0, id2 = 0;
    EXPECT_RC(aclmdlLoadFromMem(nullptr, 10, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromMem(json.data(), 0, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromMem(json.data(), json.size(), nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromMem(json.data(), json.size() / 2, &id), ACL_ERROR_DESERIALIZE_MODEL);
    std::string missing = "{\"format\":\"cann-sim-model\",\"version\":1}";
    EXPECT_RC(aclmdlLoadFromMem(missing.data(), missing.size(), &id), ACL_ERROR_MODEL_MISSING_ATTR);
    EXPECT_RC(aclmdlLoadFromMem(json.data(), json.size(), &id), ACL_SUCCESS);
    EXPECT_RC(aclmdlLoadFromMem(json.data(), json.size(), &id2), ACL_SUCCESS);
    EXPECT(id != 0 && id2 != 0 && id != id2);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclmdlUnload(id2), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlQuerySize) {
    std::string path = abi_temp_file(abi_dense_json(true));
    size_t work = 1, weight = 1;
    EXPECT_RC(aclmdlQuerySize(nullptr, &work, &weight), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlQuerySize(path.c_str(), nullptr, &weight), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlQuerySize(path.c_str(), &work, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlQuerySize("/nonexistent/cann-abi/model.om", &work, &weight), ACL_ERROR_INVALID_FILE);
    EXPECT_RC(aclmdlQuerySize(path.c_str(), &work, &weight), ACL_SUCCESS);   // no context needed
    EXPECT(work == 64 + 32 && weight == 64 + 8);
    unlink(path.c_str());
}

ABI_CHECK(aclmdlQuerySizeFromMem) {
    std::string json = abi_dense_json(false);
    size_t work = 1, weight = 1;
    EXPECT_RC(aclmdlQuerySizeFromMem(nullptr, 4, &work, &weight), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlQuerySizeFromMem(json.data(), json.size(), nullptr, &weight), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlQuerySizeFromMem("[1]", 3, &work, &weight), ACL_ERROR_PARSE_FILE);
    EXPECT_RC(aclmdlQuerySizeFromMem(json.data(), json.size(), &work, &weight), ACL_SUCCESS);
    EXPECT(work == 64 + 16 && weight == 64 + 8);   // at batch 2
}

ABI_CHECK(aclmdlLoadFromFileWithMem) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    std::string path = abi_temp_file(abi_dense_json(false));
    size_t ws = 0, gs = 0;
    EXPECT_RC(aclmdlQuerySize(path.c_str(), &ws, &gs), ACL_SUCCESS);
    void *work = nullptr, *weight = nullptr;
    EXPECT_RC(aclrtMalloc(&work, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&weight, gs, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    void *host = nullptr;
    EXPECT_RC(aclrtMallocHost(&host, ws), ACL_SUCCESS);

    uint32_t id = 0;
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), nullptr, work, ws, weight, gs), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), &id, work, ws - 1, weight, gs), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), &id, work, ws, weight, gs - 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), &id, nullptr, ws, weight, gs), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), &id, host, ws, weight, gs), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), &id, work, ws, work, gs), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromFileWithMem(path.c_str(), &id, work, ws, weight, gs), ACL_SUCCESS);
    float w0 = 0;   // the weights were copied into the caller's weight memory
    EXPECT_RC(aclrtMemcpy(&w0, 4, weight, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(w0 == 1.0f);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    aclrtFree(work);
    aclrtFree(weight);
    aclrtFreeHost(host);
    unlink(path.c_str());
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlLoadFromMemWithMem) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    std::string json = abi_dense_json(false);
    size_t ws = 0, gs = 0;
    EXPECT_RC(aclmdlQuerySizeFromMem(json.data(), json.size(), &ws, &gs), ACL_SUCCESS);
    void *work = nullptr, *weight = nullptr;
    EXPECT_RC(aclrtMalloc(&work, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&weight, gs, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    void *host = nullptr;
    EXPECT_RC(aclrtMallocHost(&host, ws), ACL_SUCCESS);

    uint32_t id = 0;
    EXPECT_RC(aclmdlLoadFromMemWithMem(nullptr, 5, &id, work, ws, weight, gs), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromMemWithMem(json.data(), json.size(), &id, work, 1, weight, gs), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlLoadFromMemWithMem(json.data(), json.size(), &id, work, ws, host, gs), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlLoadFromMemWithMem(json.data(), json.size(), &id, work, ws, nullptr, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclmdlLoadFromMemWithMem(json.data(), json.size(), &id, work, ws, weight, gs), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    void *x = abi_dev_f32(std::vector<float>(ABI_DENSE_X, ABI_DENSE_X + 6));
    void *y = abi_dev_f32(std::vector<float>(4, -1.0f));
    aclmdlDataset *in = abi_dataset({{x, 24}}), *out = abi_dataset({{y, 16}});
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(s, y, 4);
    EXPECT(got == std::vector<float>(ABI_DENSE_Y, ABI_DENSE_Y + 4));
    EXPECT_RC(aclmdlExecuteAsync(id, in, out, s), ACL_SUCCESS);
    abi_destroy_dataset(in);
    abi_destroy_dataset(out);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    aclrtFree(x);
    aclrtFree(y);
    aclrtFree(work);
    aclrtFree(weight);
    aclrtFreeHost(host);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlUnload) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(false));
    EXPECT(id != 0);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclmdlUnload(id), ACL_ERROR_INVALID_MODEL_ID);    // twice
    EXPECT_RC(aclmdlUnload(0xfffffff0u), ACL_ERROR_INVALID_MODEL_ID);
    aclmdlDesc *d = aclmdlCreateDesc();
    EXPECT_RC(aclmdlGetDesc(d, id), ACL_ERROR_INVALID_MODEL_ID);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlCreateDesc) {
    aclmdlDesc *d = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetNumInputs(d) == 0);    // empty until aclmdlGetDesc
    EXPECT_RC(aclmdlDestroyDesc(d), ACL_SUCCESS);
}

ABI_CHECK(aclmdlDestroyDesc) {
    aclmdlDesc *d = aclmdlCreateDesc();
    EXPECT_RC(aclmdlDestroyDesc(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlDestroyDesc(d), ACL_SUCCESS);
    EXPECT_RC(aclmdlDestroyDesc(d), ACL_ERROR_INVALID_PARAM);    // twice
}

ABI_CHECK(aclmdlGetDesc) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(false));
    aclmdlDesc *d = aclmdlCreateDesc();
    EXPECT_RC(aclmdlGetDesc(nullptr, id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetDesc(d, id + 1000), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_RC(aclmdlGetDesc(d, id), ACL_SUCCESS);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT(aclmdlGetNumInputs(d) == 1 && aclmdlGetNumOutputs(d) == 1);   // kept after unload
    EXPECT_RC(aclmdlDestroyDesc(d), ACL_SUCCESS);
    EXPECT_RC(aclmdlGetDesc(d, id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetNumInputs) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetNumInputs(d) == 2);    // x and ascend_mbatch_shape_data
    EXPECT(aclmdlGetNumInputs(nullptr) == 0);
    EXPECT(aclmdlGetNumInputs(empty) == 0);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetNumOutputs) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetNumOutputs(d) == 1);
    EXPECT(aclmdlGetNumOutputs(nullptr) == 0);
    EXPECT(aclmdlGetNumOutputs(empty) == 0);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputSizeByIndex) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetInputSizeByIndex(d, 0) == 4 * 3 * 4);    // at the largest gear
    EXPECT(aclmdlGetInputSizeByIndex(d, 1) == 8);            // one int64
    EXPECT(aclmdlGetInputSizeByIndex(d, 2) == 0);
    EXPECT(aclmdlGetInputSizeByIndex(nullptr, 0) == 0);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetOutputSizeByIndex) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetOutputSizeByIndex(d, 0) == 4 * 2 * 4);
    EXPECT(aclmdlGetOutputSizeByIndex(d, 1) == 0);
    EXPECT(aclmdlGetOutputSizeByIndex(empty, 0) == 0);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputNameByIndex) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(std::string(aclmdlGetInputNameByIndex(d, 0)) == "x");
    EXPECT(std::string(aclmdlGetInputNameByIndex(d, 1)) == ACL_DYNAMIC_TENSOR_NAME);
    EXPECT(aclmdlGetInputNameByIndex(d, 2) == nullptr);
    EXPECT(aclmdlGetInputNameByIndex(nullptr, 0) == nullptr);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetOutputNameByIndex) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(std::string(aclmdlGetOutputNameByIndex(d, 0)) == "y");
    EXPECT(aclmdlGetOutputNameByIndex(d, 1) == nullptr);
    EXPECT(aclmdlGetOutputNameByIndex(empty, 0) == nullptr);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputDims) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    aclmdlIODims dims;
    EXPECT_RC(aclmdlGetInputDims(d, 0, &dims), ACL_SUCCESS);
    EXPECT(std::string(dims.name) == "x" && dims.dimCount == 2 && dims.dims[0] == -1 && dims.dims[1] == 3);
    EXPECT_RC(aclmdlGetInputDims(d, 1, &dims), ACL_SUCCESS);
    EXPECT(dims.dimCount == 1 && dims.dims[0] == 1);
    EXPECT_RC(aclmdlGetInputDims(d, 2, &dims), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDims(d, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDims(empty, 0, &dims), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetOutputDims) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    aclmdlIODims dims;
    EXPECT_RC(aclmdlGetOutputDims(d, 0, &dims), ACL_SUCCESS);
    EXPECT(std::string(dims.name) == "y" && dims.dimCount == 2 && dims.dims[0] == -1 && dims.dims[1] == 2);
    EXPECT_RC(aclmdlGetOutputDims(d, 1, &dims), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetOutputDims(nullptr, 0, &dims), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputDataType) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetInputDataType(d, 0) == ACL_FLOAT);
    EXPECT(aclmdlGetInputDataType(d, 1) == ACL_INT64);
    EXPECT(aclmdlGetInputDataType(d, 2) == ACL_DT_UNDEFINED);
    EXPECT(aclmdlGetInputDataType(nullptr, 0) == ACL_DT_UNDEFINED);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetOutputDataType) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetOutputDataType(d, 0) == ACL_FLOAT);
    EXPECT(aclmdlGetOutputDataType(d, 1) == ACL_DT_UNDEFINED);
    EXPECT(aclmdlGetOutputDataType(empty, 0) == ACL_DT_UNDEFINED);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputFormat) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetInputFormat(d, 0) == ACL_FORMAT_ND);
    EXPECT(aclmdlGetInputFormat(d, 2) == ACL_FORMAT_UNDEFINED);
    EXPECT(aclmdlGetInputFormat(nullptr, 0) == ACL_FORMAT_UNDEFINED);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetOutputFormat) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    EXPECT(aclmdlGetOutputFormat(d, 0) == ACL_FORMAT_ND);
    EXPECT(aclmdlGetOutputFormat(d, 1) == ACL_FORMAT_UNDEFINED);
    EXPECT(aclmdlGetOutputFormat(empty, 0) == ACL_FORMAT_UNDEFINED);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputIndexByName) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    size_t i = 99;
    EXPECT_RC(aclmdlGetInputIndexByName(d, ACL_DYNAMIC_TENSOR_NAME, &i), ACL_SUCCESS);
    EXPECT(i == 1);
    EXPECT_RC(aclmdlGetInputIndexByName(d, "x", &i), ACL_SUCCESS);
    EXPECT(i == 0);
    EXPECT_RC(aclmdlGetInputIndexByName(d, "y", &i), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputIndexByName(d, nullptr, &i), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputIndexByName(d, "x", nullptr), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetOutputIndexByName) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    size_t i = 99;
    EXPECT_RC(aclmdlGetOutputIndexByName(d, "y", &i), ACL_SUCCESS);
    EXPECT(i == 0);
    EXPECT_RC(aclmdlGetOutputIndexByName(d, "x", &i), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetOutputIndexByName(empty, "y", &i), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetDynamicBatch) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    aclmdlBatch b;
    EXPECT_RC(aclmdlGetDynamicBatch(d, &b), ACL_SUCCESS);
    EXPECT(b.batchCount == 3 && b.batch[0] == 1 && b.batch[1] == 2 && b.batch[2] == 4);
    EXPECT_RC(aclmdlGetDynamicBatch(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetDynamicBatch(empty, &b), ACL_ERROR_INVALID_PARAM);
    uint32_t st = abi_load_model(abi_dense_json(false));
    aclmdlDesc *sd = abi_model_desc(st);
    EXPECT_RC(aclmdlGetDynamicBatch(sd, &b), ACL_SUCCESS);
    EXPECT(b.batchCount == 0);
    aclmdlDestroyDesc(sd);
    aclmdlUnload(st);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetDynamicHW) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    aclmdlHW hw;
    EXPECT_RC(aclmdlGetDynamicHW(d, (size_t)-1, &hw), ACL_SUCCESS);
    EXPECT(hw.hwCount == 0);     // batch gears only
    uint32_t m = abi_load_model(abi_hw_json());
    aclmdlDesc *hd = abi_model_desc(m);
    EXPECT_RC(aclmdlGetDynamicHW(hd, (size_t)-1, &hw), ACL_SUCCESS);
    EXPECT(hw.hwCount == 2 && hw.hw[0][0] == 2 && hw.hw[0][1] == 2 && hw.hw[1][0] == 4 && hw.hw[1][1] == 8);
    EXPECT_RC(aclmdlGetDynamicHW(hd, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetDynamicHW(nullptr, 0, &hw), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(hd);
    aclmdlUnload(m);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputDynamicGearCount) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    aclmdlDesc *d = abi_model_desc(id);
    aclmdlDesc *empty = aclmdlCreateDesc();
    EXPECT(d != nullptr);
    size_t n = 0;
    EXPECT_RC(aclmdlGetInputDynamicGearCount(d, (size_t)-1, &n), ACL_SUCCESS);
    EXPECT(n == 3);
    EXPECT_RC(aclmdlGetInputDynamicGearCount(d, 7, &n), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDynamicGearCount(d, (size_t)-1, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDynamicGearCount(empty, (size_t)-1, &n), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(d);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlCreateDataset) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    EXPECT(ds != nullptr);
    EXPECT(aclmdlGetDatasetNumBuffers(ds) == 0);
    EXPECT_RC(aclmdlDestroyDataset(ds), ACL_SUCCESS);
}

ABI_CHECK(aclmdlDestroyDataset) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, 0);
    EXPECT_RC(aclmdlAddDatasetBuffer(ds, b), ACL_SUCCESS);
    EXPECT_RC(aclmdlDestroyDataset(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlDestroyDataset(ds), ACL_SUCCESS);
    EXPECT_RC(aclmdlDestroyDataset(ds), ACL_ERROR_INVALID_PARAM);   // twice
    EXPECT_RC(aclDestroyDataBuffer(b), ACL_SUCCESS);                // its buffers stay
}

ABI_CHECK(aclmdlAddDatasetBuffer) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, 0);
    EXPECT_RC(aclmdlAddDatasetBuffer(nullptr, b), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlAddDatasetBuffer(ds, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlAddDatasetBuffer(ds, b), ACL_SUCCESS);
    EXPECT_RC(aclmdlAddDatasetBuffer(ds, b), ACL_SUCCESS);
    EXPECT(aclmdlGetDatasetNumBuffers(ds) == 2);
    EXPECT_RC(aclDestroyDataBuffer(b), ACL_SUCCESS);
    EXPECT_RC(aclmdlAddDatasetBuffer(ds, b), ACL_ERROR_INVALID_PARAM);   // destroyed
    EXPECT_RC(aclmdlDestroyDataset(ds), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetDatasetNumBuffers) {
    aclmdlDataset *ds = abi_dataset({{nullptr, 0}, {nullptr, 0}, {nullptr, 0}});
    EXPECT(aclmdlGetDatasetNumBuffers(ds) == 3);
    EXPECT(aclmdlGetDatasetNumBuffers(nullptr) == 0);
    abi_destroy_dataset(ds);
    EXPECT(aclmdlGetDatasetNumBuffers(ds) == 0);
}

ABI_CHECK(aclmdlGetDatasetBuffer) {
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, 0);
    aclmdlDataset *ds = aclmdlCreateDataset();
    EXPECT_RC(aclmdlAddDatasetBuffer(ds, b), ACL_SUCCESS);
    EXPECT(aclmdlGetDatasetBuffer(ds, 0) == b);
    EXPECT(aclmdlGetDatasetBuffer(ds, 1) == nullptr);
    EXPECT(aclmdlGetDatasetBuffer(nullptr, 0) == nullptr);
    abi_destroy_dataset(ds);
}

ABI_CHECK(aclmdlExecute) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(false));
    void *x = abi_dev_f32(std::vector<float>(ABI_DENSE_X, ABI_DENSE_X + 6));
    void *y = abi_dev_f32(std::vector<float>(4, -1.0f));
    aclmdlDataset *in = abi_dataset({{x, 24}}), *out = abi_dataset({{y, 16}});
    aclmdlDataset *small = abi_dataset({{x, 20}}), *none = aclmdlCreateDataset();
    EXPECT_RC(aclmdlExecute(id + 1000, in, out), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_RC(aclmdlExecute(id, nullptr, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlExecute(id, in, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlExecute(id, none, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    EXPECT_RC(aclmdlExecute(id, in, none), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    EXPECT_RC(aclmdlExecute(id, small, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    aclmdlDataset *osmall = abi_dataset({{y, 12}});
    EXPECT_RC(aclmdlExecute(id, in, osmall), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    abi_destroy_dataset(osmall);
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 4);
    EXPECT(got == std::vector<float>(ABI_DENSE_Y, ABI_DENSE_Y + 4));
    std::vector<float> host(6, 1.0f);
    aclmdlDataset *hin = abi_dataset({{host.data(), 24}});
    EXPECT_RC(aclmdlExecute(id, hin, out), ACL_ERROR_RT_PARAM_INVALID);   // not device memory
    abi_destroy_dataset(hin);
    abi_destroy_dataset(in);
    abi_destroy_dataset(out);
    abi_destroy_dataset(small);
    aclmdlDestroyDataset(none);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    aclrtFree(x);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlExecuteAsync) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(false));
    void *x = abi_dev_f32(std::vector<float>(ABI_DENSE_X, ABI_DENSE_X + 6));
    void *y = abi_dev_f32(std::vector<float>(4, -1.0f));
    aclmdlDataset *in = abi_dataset({{x, 24}}), *out = abi_dataset({{y, 16}});
    aclmdlDataset *small = abi_dataset({{x, 20}}), *none = aclmdlCreateDataset();
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclmdlExecuteAsync(id + 1000, in, out, s), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_RC(aclmdlExecuteAsync(id, small, out, s), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    EXPECT_RC(aclmdlExecuteAsync(id, in, out, s), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(s, y, 4);
    EXPECT(got == std::vector<float>(ABI_DENSE_Y, ABI_DENSE_Y + 4));
    EXPECT_RC(aclmdlExecuteAsync(id, in, out, nullptr), ACL_SUCCESS);   // the default stream
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclmdlExecuteAsync(id, in, out, s), ACL_ERROR_RT_INVALID_HANDLE);
    abi_destroy_dataset(in);
    abi_destroy_dataset(out);
    abi_destroy_dataset(small);
    aclmdlDestroyDataset(none);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    aclrtFree(x);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlSetDynamicBatchSize) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_dense_json(true));
    uint32_t st = abi_load_model(abi_dense_json(false));
    void *x = abi_dev_f32(std::vector<float>(12, 0.0f));
    void *g = abi_dev_f32(std::vector<float>(2, 0.0f));
    void *y = abi_dev_f32(std::vector<float>(8, -1.0f));
    EXPECT_RC(aclrtMemcpy(x, 24, ABI_DENSE_X, 24, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    aclmdlDataset *in = abi_dataset({{x, 48}, {g, 8}}), *out = abi_dataset({{y, 32}});
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);   // gear not set
    EXPECT_RC(aclmdlSetDynamicBatchSize(id + 1000, in, 1, 2), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_RC(aclmdlSetDynamicBatchSize(id, nullptr, 1, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlSetDynamicBatchSize(id, in, 0, 2), ACL_ERROR_INVALID_PARAM);   // not the gear input
    EXPECT_RC(aclmdlSetDynamicBatchSize(id, in, 1, 3), ACL_ERROR_INVALID_PARAM);   // not a gear
    EXPECT_RC(aclmdlSetDynamicBatchSize(st, in, 1, 2), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_RC(aclmdlSetDynamicBatchSize(id, in, 1, 2), ACL_SUCCESS);
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 8);
    EXPECT(got[0] == 0 && got[1] == 2.5f && got[2] == 0 && got[3] == 4.5f && got[4] == -1.0f);
    abi_destroy_dataset(in);
    abi_destroy_dataset(out);
    aclmdlUnload(id);
    aclmdlUnload(st);
    aclrtFree(x);
    aclrtFree(g);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlSetDynamicHWSize) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(abi_hw_json());
    uint32_t batch = abi_load_model(abi_dense_json(true));
    std::vector<float> img(32, 0.0f);
    img[1] = 1.0f; img[2] = -2.0f; img[3] = 3.0f;
    void *x = abi_dev_f32(img);
    void *g = abi_dev_f32(std::vector<float>(4, 0.0f));
    void *y = abi_dev_f32(std::vector<float>(32, -1.0f));
    aclmdlDataset *in = abi_dataset({{x, 128}, {g, 16}}), *out = abi_dataset({{y, 128}});
    EXPECT_RC(aclmdlSetDynamicHWSize(id, in, 1, 3, 3), ACL_ERROR_INVALID_PARAM);    // not a gear
    EXPECT_RC(aclmdlSetDynamicHWSize(id, in, 0, 2, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlSetDynamicHWSize(batch, in, 1, 2, 2), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_RC(aclmdlSetDynamicBatchSize(id, in, 1, 2), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_RC(aclmdlSetDynamicHWSize(id + 1000, in, 1, 2, 2), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_RC(aclmdlSetDynamicHWSize(id, in, 1, 2, 2), ACL_SUCCESS);
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 5);
    EXPECT(got[0] == 0 && got[1] == 1.0f && got[2] == 0 && got[3] == 3.0f && got[4] == -1.0f);
    abi_destroy_dataset(in);
    abi_destroy_dataset(out);
    aclmdlUnload(id);
    aclmdlUnload(batch);
    aclrtFree(x);
    aclrtFree(g);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlGetInputDynamicDims) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(std::string("{\"format\":\"cann-sim-model\",\"version\":1,\"name\":\"dims\",") +
        "\"inputs\":[{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[-1,-1]}]," +
        "\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[-1,-1]}]," +
        "\"nodes\":[{\"name\":\"act\",\"op\":\"Relu\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]}]," +
        "\"dynamic_dims\":[[1,2],[2,3]]}");
    uint32_t st = abi_load_model(abi_dense_json(false));
    EXPECT(id != 0 && st != 0);
    aclmdlDesc *d = abi_model_desc(id), *sd = abi_model_desc(st);
    aclmdlDesc *empty = aclmdlCreateDesc();
    size_t n = 0;
    EXPECT_RC(aclmdlGetInputDynamicGearCount(d, (size_t)-1, &n), ACL_SUCCESS);
    EXPECT(n == 2);
    aclmdlIODims g[2] = {};
    EXPECT_RC(aclmdlGetInputDynamicDims(d, (size_t)-1, g, 2), ACL_SUCCESS);
    EXPECT(g[0].dimCount == 2 && g[0].dims[0] == 1 && g[0].dims[1] == 2);
    EXPECT(g[1].dimCount == 2 && g[1].dims[0] == 2 && g[1].dims[1] == 3);
    EXPECT_RC(aclmdlGetInputDynamicDims(d, (size_t)-1, g, 1), ACL_ERROR_INVALID_PARAM);  // not the count
    EXPECT_RC(aclmdlGetInputDynamicDims(d, 7, g, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDynamicDims(d, (size_t)-1, nullptr, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDynamicDims(empty, (size_t)-1, g, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlGetInputDynamicDims(sd, (size_t)-1, nullptr, 0), ACL_SUCCESS);  // no dims gears
    EXPECT_RC(aclmdlGetInputDynamicDims(sd, (size_t)-1, g, 2), ACL_ERROR_INVALID_PARAM);
    aclmdlDestroyDesc(empty);
    aclmdlDestroyDesc(sd);
    aclmdlDestroyDesc(d);
    aclmdlUnload(st);
    EXPECT_RC(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlSetInputDynamicDims) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id = abi_load_model(std::string("{\"format\":\"cann-sim-model\",\"version\":1,\"name\":\"dims\",") +
        "\"inputs\":[{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[-1,-1]}]," +
        "\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[-1,-1]}]," +
        "\"nodes\":[{\"name\":\"act\",\"op\":\"Relu\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]}]," +
        "\"dynamic_dims\":[[1,2],[2,3]]}");
    uint32_t batch = abi_load_model(abi_dense_json(true));
    EXPECT(id != 0 && batch != 0);
    std::vector<float> v(6, 0.0f);
    v[0] = -1.0f; v[1] = 2.0f; v[2] = -3.0f; v[3] = 4.0f; v[4] = 5.0f; v[5] = -6.0f;
    void *x = abi_dev_f32(v);
    void *g = abi_dev_f32(std::vector<float>(4, 0.0f));
    void *y = abi_dev_f32(std::vector<float>(8, -1.0f));
    aclmdlDataset *in = abi_dataset({{x, 24}, {g, 16}}), *out = abi_dataset({{y, 32}});
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);   // no gear set
    aclmdlIODims dims = {};
    dims.dimCount = 2;
    dims.dims[0] = 3; dims.dims[1] = 3;
    EXPECT_RC(aclmdlSetInputDynamicDims(id, in, 1, &dims), ACL_ERROR_INVALID_PARAM);  // not a gear
    dims.dims[0] = 2;
    EXPECT_RC(aclmdlSetInputDynamicDims(id, in, 0, &dims), ACL_ERROR_INVALID_PARAM);  // not the gear input
    EXPECT_RC(aclmdlSetInputDynamicDims(id, in, 1, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlSetInputDynamicDims(batch, in, 1, &dims), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_RC(aclmdlSetDynamicBatchSize(id, in, 1, 2), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_RC(aclmdlSetInputDynamicDims(id + 1000, in, 1, &dims), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_RC(aclmdlSetInputDynamicDims(id, in, 1, &dims), ACL_SUCCESS);
    EXPECT_RC(aclmdlExecute(id, in, out), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 7);
    EXPECT(got[0] == 0 && got[1] == 2.0f && got[2] == 0 && got[3] == 4.0f && got[4] == 5.0f &&
           got[5] == 0 && got[6] == -1.0f);
    abi_destroy_dataset(in);
    abi_destroy_dataset(out);
    aclmdlUnload(id);
    aclmdlUnload(batch);
    aclrtFree(x);
    aclrtFree(g);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

// Graph capture (aclmdlRI*): work queued on a capturing stream is recorded into
// a model run instance and runs at each aclmdlRIExecuteAsync.

ABI_CHECK(aclmdlRICaptureBegin) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr, def = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCtxGetCurrentDefaultStream(&def), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(nullptr, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICaptureBegin(def, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
              ACL_ERROR_RT_FEATURE_NOT_SUPPORT);                  // the default stream
    EXPECT_RC(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)3), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_ERROR_RT_STREAM_CAPTURED);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
    EXPECT_RC(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureEnd) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(nullptr, &m), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    EXPECT(m == nullptr);
    // Another thread may end only a RELAXED capture; a failed end still ends it.
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    aclrtContext ctx = nullptr;
    EXPECT_RC(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    aclError other = ACL_SUCCESS;
    std::thread([&] {
        aclrtSetCurrentContext(ctx);
        aclmdlRI mm = nullptr;
        other = aclmdlRICaptureEnd(s, &mm);
    }).join();
    EXPECT(other == ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureEnd(s, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);           // nothing captured: an empty model
    EXPECT(m != nullptr);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureGetInfo) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED;
    aclmdlRI m = nullptr, ended = nullptr;
    EXPECT_RC(aclmdlRICaptureGetInfo(nullptr, &st, &m), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICaptureGetInfo(s, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE && m == nullptr);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && m != nullptr);
    EXPECT_RC(aclmdlRICaptureEnd(s, &ended), ACL_SUCCESS);
    EXPECT(ended == m);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureThreadExchangeMode) {
    EXPECT_RC(aclmdlRICaptureThreadExchangeMode(nullptr), ACL_ERROR_RT_PARAM_INVALID);
    aclmdlRICaptureMode mode = (aclmdlRICaptureMode)9;
    EXPECT_RC(aclmdlRICaptureThreadExchangeMode(&mode), ACL_ERROR_RT_PARAM_INVALID);
    // A GLOBAL capture blocks synchronous fills on every thread of the
    // context until the thread exchanges its mode to RELAXED.
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    void *p = nullptr;
    EXPECT_RC(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(p, 64, 0, 64), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
    mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    EXPECT_RC(aclmdlRICaptureThreadExchangeMode(&mode), ACL_SUCCESS);
    EXPECT(mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);              // the previous mode
    EXPECT_RC(aclrtMemset(p, 64, 0, 64), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureThreadExchangeMode(&mode), ACL_SUCCESS);
    EXPECT(mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(p, 64, 0, 64), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(p), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIExecuteAsync) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr, other = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&other), ACL_SUCCESS);
    void *a = nullptr, *b = nullptr;
    EXPECT_RC(aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&b, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(b, 64, 0, 64), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(nullptr, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI capturing = nullptr, m = nullptr;
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &capturing), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(a, 64, 5, 64, s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(b, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(capturing, other), ACL_ERROR_RT_MODEL_CAPTURED);
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    unsigned char host[64] = {0};
    EXPECT_RC(aclrtMemcpy(host, 64, b, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 0);                                         // captured, not run
    for (int i = 0; i < 3; i++) {
        EXPECT_RC(aclrtMemset(a, 64, 0, 64), ACL_SUCCESS);
        EXPECT_RC(aclmdlRIExecuteAsync(m, other), ACL_SUCCESS);
        EXPECT_RC(aclrtSynchronizeStream(other), ACL_SUCCESS);
        EXPECT_RC(aclrtMemcpy(host, 64, b, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
        EXPECT(host[0] == 5 && host[63] == 5);
    }
    // Not on a capturing stream.
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, s), ACL_ERROR_RT_STREAM_CAPTURED);
    aclmdlRI empty = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &empty), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(empty), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(a), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(b), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(other), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIExecute) {
    EXPECT_RC(aclmdlRIExecute(nullptr, -1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecute(m, 0), ACL_ERROR_RT_PARAM_INVALID);  // timeout 0
    EXPECT_RC(aclmdlRIExecute(m, -1), ACL_ERROR_RT_PARAM_INVALID); // a captured model
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIDestroy) {
    EXPECT_RC(aclmdlRIDestroy(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI m = nullptr, ended = nullptr;
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_ERROR_RT_MODEL_CAPTURED);  // still capturing
    EXPECT_RC(aclmdlRICaptureEnd(s, &ended), ACL_SUCCESS);
    // A model with an execution held back by a host function: destroyed
    // once the execution has run.
    AbiGate gate;
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
    std::thread opener = abi_gate_open_later(gate, 20);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    opener.join();
    EXPECT_RC(aclmdlRIDestroy(m), ACL_ERROR_RT_INVALID_HANDLE);  // twice
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

// Task groups (aclmdlRICaptureTaskGrp*) and their update
// (aclmdlRICaptureTaskUpdate*): kernels captured in a group are replaced,
// in order, by the kernels issued on an update stream.

ABI_CHECK(aclmdlRICaptureTaskGrpBegin) {
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    void *p = nullptr;
    EXPECT_RC(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_ERROR_STREAM_TASK_GROUP_STATUS);  // no nesting
    // Only kernels in a group: a fill fails and invalidates the capture.
    EXPECT_RC(aclrtMemsetAsync(p, 64, 0, 64, s), ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT);
    aclrtTaskGrp g = nullptr;
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, &g), ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT);
    EXPECT(g == nullptr);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    EXPECT_RC(aclrtFree(p), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureTaskGrpEnd) {
    aclrtTaskGrp g = nullptr;
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(nullptr, &g), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, &g), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, &g), ACL_ERROR_STREAM_TASK_GROUP_STATUS);  // none open
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, &g), ACL_SUCCESS);                         // may be empty
    EXPECT(g != nullptr);
    // A capture cannot end with a group open.
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_ERROR_STREAM_TASK_GROUP_STATUS);
    EXPECT(m == nullptr);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureTaskUpdateBegin) {
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr, u = nullptr, v = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&u), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&v), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(u, nullptr), ACL_ERROR_INVALID_PARAM);
    aclTensorDesc *d = abi_desc_f32({4});
    void *a = abi_dev_f32({1, 2, 3, 4}), *b = abi_dev_f32({10, 20, 30, 40}), *y = abi_dev_f32({0, 0, 0, 0});
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    EXPECT_RC(abi_exec2("Add", d, a, b, y, 4, nullptr, s), ACL_SUCCESS);
    aclrtTaskGrp g = nullptr;
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, &g), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(s, g), ACL_ERROR_RT_STREAM_CAPTURED);  // capturing
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(s, y, 4);
    EXPECT(got[0] == 11.0f && got[3] == 44.0f);
    // The update's kernel replaces the group's: y = a + a.
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(u, g), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(u, g), ACL_ERROR_STREAM_TASK_GROUP_STATUS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(v, g), ACL_ERROR_STREAM_TASK_GROUP_STATUS);  // one stream
    EXPECT_RC(abi_exec2("Add", d, a, a, y, 4, nullptr, u), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateEnd(u), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(u), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
    got = abi_read_f32(s, y, 4);
    EXPECT(got[0] == 2.0f && got[3] == 8.0f);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    aclDestroyTensorDesc(d);
    aclrtFree(a);
    aclrtFree(b);
    aclrtFree(y);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(u), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(v), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureTaskUpdateEnd) {
    EXPECT_RC(aclmdlRICaptureTaskUpdateEnd(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr, u = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&u), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateEnd(u), ACL_ERROR_STREAM_TASK_GROUP_STATUS);  // not updating
    aclTensorDesc *d = abi_desc_f32({4});
    void *a = abi_dev_f32({1, 2, 3, 4}), *y = abi_dev_f32({0, 0, 0, 0});
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateEnd(s), ACL_ERROR_RT_STREAM_CAPTURED);
    EXPECT_RC(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    EXPECT_RC(abi_exec2("Add", d, a, a, y, 4, nullptr, s), ACL_SUCCESS);
    aclrtTaskGrp g = nullptr;
    EXPECT_RC(aclmdlRICaptureTaskGrpEnd(s, &g), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(u, g), ACL_SUCCESS);
    // Only kernels on an updating stream; at most as many as the group holds.
    EXPECT_RC(aclrtMemsetAsync(y, 16, 0, 16, u), ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT);
    EXPECT_RC(aclmdlRICaptureTaskUpdateEnd(u), ACL_ERROR_RT_INTERNAL_ERROR);  // fewer kernels
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(u, g), ACL_SUCCESS);           // ended all the same
    EXPECT_RC(abi_exec2("Add", d, a, a, y, 4, nullptr, u), ACL_SUCCESS);
    EXPECT_RC(abi_exec2("Add", d, a, a, y, 4, nullptr, u), ACL_ERROR_RT_INTERNAL_ERROR);  // one more
    EXPECT_RC(aclmdlRICaptureTaskUpdateEnd(u), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureTaskUpdateBegin(u, g), ACL_ERROR_RT_INVALID_HANDLE);  // died with its model
    aclDestroyTensorDesc(d);
    aclrtFree(a);
    aclrtFree(y);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(u), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIUpdate) {
    EXPECT_RC(aclmdlRIUpdate(nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI m = nullptr, ended = nullptr;
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIUpdate(m), ACL_ERROR_RT_MODEL_UPDATE_FAILED);  // still capturing
    EXPECT_RC(aclmdlRICaptureEnd(s, &ended), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIUpdate(m), ACL_SUCCESS);  // ready: nothing to apply
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
