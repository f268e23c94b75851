// Control flow in models: conditional tasks of captured models
// (cann-sim/src/acl/model_cond.rs: condition handles, the conditional task
// and the capture of its sub-models, with the codes of hicann/runtime
// api_error_aclgraph.cc and v100/api_impl_aclgraph.cc), and stream
// activation and switches in built models (cann-sim/src/acl/model_stream.rs,
// api_error.cc and api_impl.cc StreamActive, StreamSwitchEx).

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

ABI_CHECK(aclrtActiveStream) {
    EXPECT_RC(aclrtActiveStream(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream head = nullptr, other = nullptr, exec = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&head, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&other, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&exec), ACL_SUCCESS);
    EXPECT_RC(aclrtActiveStream(other, head), ACL_ERROR_RT_STREAM_MODEL);  // not bound
    void *out = nullptr;
    EXPECT_RC(aclrtMalloc(&out, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, head, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, other, ACL_MODEL_STREAM_FLAG_DEFAULT), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(out, 16, 0x2B, 16, other), ACL_SUCCESS);
    EXPECT_RC(aclrtActiveStream(other, head), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIEndTask(m, head), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildEnd(m, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtMemset(out, 16, 0, 16), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, exec), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(exec), ACL_SUCCESS);
    uint8_t host[16] = {0};
    EXPECT_RC(aclrtMemcpy(host, 16, out, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 0x2B && host[15] == 0x2B);  // the activated stream ran
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(head), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(other), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(exec), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtSwitchStream) {
    int32_t dummy = 0;
    EXPECT_RC(aclrtSwitchStream(nullptr, ACL_RT_EQUAL, &dummy, ACL_RT_SWITCH_INT32, nullptr, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream head = nullptr, yes = nullptr, exec = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&head, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&yes, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&exec), ACL_SUCCESS);
    void *l = nullptr, *r = nullptr, *out = nullptr;
    EXPECT_RC(aclrtMalloc(&l, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&r, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtSwitchStream(l, ACL_RT_EQUAL, r, ACL_RT_SWITCH_INT32, yes, yes, head), ACL_ERROR_INVALID_PARAM);  // falseStream reserved
    EXPECT_RC(aclrtSwitchStream(l, ACL_RT_EQUAL, r, ACL_RT_SWITCH_INT32, yes, nullptr, head), ACL_ERROR_RT_STREAM_MODEL);  // not bound
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, head, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, yes, ACL_MODEL_STREAM_FLAG_DEFAULT), ACL_SUCCESS);
    EXPECT_RC(aclrtSwitchStream(l, (aclrtCondition)6, r, ACL_RT_SWITCH_INT32, yes, nullptr, head), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSwitchStream(l, ACL_RT_EQUAL, r, (aclrtCompareDataType)2, yes, nullptr, head), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtSwitchStream(l, ACL_RT_EQUAL, r, ACL_RT_SWITCH_INT64, yes, nullptr, head), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(out, 16, 0x11, 16, head), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIEndTask(m, head), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(out, 16, 0x22, 16, yes), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildEnd(m, nullptr), ACL_SUCCESS);
    int64_t a = 7, b = 7;
    EXPECT_RC(aclrtMemcpy(l, 8, &a, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(r, 8, &b, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, exec), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(exec), ACL_SUCCESS);
    uint8_t host[16] = {0};
    EXPECT_RC(aclrtMemcpy(host, 16, out, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 0x22);  // 7 == 7: the true stream
    b = 8;
    EXPECT_RC(aclrtMemcpy(r, 8, &b, 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, exec), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(exec), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(host, 16, out, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(host[0] == 0x11);  // 7 != 8: the head stream goes on
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(l), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(r), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(head), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(yes), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(exec), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
