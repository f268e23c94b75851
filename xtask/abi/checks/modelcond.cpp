// Conditional tasks of captured models (cann-sim/src/acl/model_cond.rs):
// condition handles, the conditional task and the capture of its
// sub-models, with the codes of hicann/runtime api_error_aclgraph.cc and
// v100/api_impl_aclgraph.cc.

ABI_CHECK(aclmdlRICondHandleCreate) {
    aclmdlRICondHandle h = nullptr;
    EXPECT_RC(aclmdlRICondHandleCreate(nullptr, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &h), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICondHandleCreate(m, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICondHandleCreate(m, 0, (aclmdlRICondHandleFlag)2, &h), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRICondHandleCreate(m, 7, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &h), ACL_SUCCESS);
    EXPECT(h != nullptr);
    aclmdlRI done = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &done), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICondHandleCreate(done, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &h), ACL_ERROR_RT_PARAM_INVALID);  // not capturing
    EXPECT_RC(aclmdlRIDestroy(done), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICondHandleGetCondPtr) {
    uint64_t *p = nullptr;
    EXPECT_RC(aclmdlRICondHandleGetCondPtr(nullptr, &p), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    aclmdlRICondHandle h = nullptr;
    EXPECT_RC(aclmdlRICondHandleCreate(m, 0, (aclmdlRICondHandleFlag)0, &h), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICondHandleGetCondPtr(h, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRICondHandleGetCondPtr(h, &p), ACL_SUCCESS);
    EXPECT(p != nullptr);
    uint64_t v = 1;
    EXPECT_RC(aclrtMemcpy(&v, 8, p, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(v == 0);  // zeroed
    aclmdlRI done = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &done), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(done), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICondHandleGetCondPtr(h, &p), ACL_ERROR_RT_INVALID_HANDLE);  // gone with its model
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIAddCondTask) {
    aclmdlRI subs[2] = {nullptr, nullptr};
    aclmdlRICondTaskParams params = {};
    params.type = ACL_MODEL_RI_COND_TYPE_IF;
    params.size = 2;
    params.modelRIArray = subs;
    EXPECT_RC(aclmdlRIAddCondTask(params, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr, t = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIAddCondTask(params, s, 0), ACL_ERROR_RT_PARAM_INVALID);  // no handle
    EXPECT_RC(aclmdlRICondHandleCreate(m, 0, (aclmdlRICondHandleFlag)0, &params.handle), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIAddCondTask(params, s, 1), ACL_ERROR_RT_PARAM_INVALID);  // flags
    EXPECT_RC(aclmdlRIAddCondTask(params, t, 0), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    params.type = ACL_MODEL_RI_COND_TYPE_WHILE;
    EXPECT_RC(aclmdlRIAddCondTask(params, s, 0), ACL_ERROR_RT_PARAM_INVALID);  // WHILE takes 1
    params.type = ACL_MODEL_RI_COND_TYPE_IF;
    EXPECT_RC(aclmdlRIAddCondTask(params, s, 0), ACL_SUCCESS);
    EXPECT(subs[0] != nullptr && subs[1] != nullptr && subs[0] != subs[1]);
    EXPECT_RC(aclmdlRIAddCondTask(params, s, 0), ACL_ERROR_RT_PARAM_INVALID);  // once per handle
    // The parent cannot end before its sub-models are captured.
    aclmdlRI done = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &done), ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING);
    EXPECT(done == nullptr);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRICaptureToModelRIBegin) {
    EXPECT_RC(aclmdlRICaptureToModelRIBegin(nullptr, nullptr, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr, t = nullptr, x = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&t), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&x), ACL_SUCCESS);
    void *sel = nullptr, *out = nullptr;
    EXPECT_RC(aclrtMalloc(&sel, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    aclmdlRICaptureStatus st;
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureToModelRIBegin(t, m, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_ERROR_RT_PARAM_INVALID);  // not a sub-model
    aclmdlRICondTaskParams params = {};
    aclmdlRI sub = nullptr;
    EXPECT_RC(aclmdlRICondHandleCreate(m, 0, (aclmdlRICondHandleFlag)0, &params.handle), ACL_SUCCESS);
    uint64_t *cond = nullptr;
    EXPECT_RC(aclmdlRICondHandleGetCondPtr(params.handle, &cond), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpyAsync(cond, 8, sel, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);  // the device writes it
    params.type = ACL_MODEL_RI_COND_TYPE_IF;
    params.size = 1;
    params.modelRIArray = &sub;
    EXPECT_RC(aclmdlRIAddCondTask(params, s, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureToModelRIBegin(t, sub, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(out, 16, 0x5A, 16, t), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureEnd(t, nullptr), ACL_SUCCESS);  // null: a sub-model
    EXPECT_RC(aclmdlRICaptureToModelRIBegin(t, sub, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_ERROR_RT_MODEL_CAPTURED);
    aclmdlRI done = nullptr;
    EXPECT_RC(aclmdlRICaptureEnd(s, &done), ACL_SUCCESS);
    EXPECT(done == m);
    EXPECT_RC(aclmdlRIExecuteAsync(sub, x), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    EXPECT_RC(aclmdlRIDestroy(sub), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    uint8_t host[16] = {0};
    uint64_t v = 0;
    EXPECT_RC(aclrtMemcpy(sel, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(out, 16, 0, 16), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, x), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(x), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(host, 16, out, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 0 && host[15] == 0);  // 0: the branch is skipped
    v = 1;
    EXPECT_RC(aclrtMemcpy(sel, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, x), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(x), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(host, 16, out, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 0x5A && host[15] == 0x5A);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(sel), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(t), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(x), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
