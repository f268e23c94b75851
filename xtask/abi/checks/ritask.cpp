// The tasks of captured models (cann-sim/src/acl/ri_task.rs): streams and
// tasks of a model, their types, sequence ids and parameters, and their
// change, with the codes of hicann/runtime api_error.cc and api_impl.cc
// (ModelGetStreams, StreamGetTasks, TaskGetType, TaskGetSeqId,
// TaskGetParams, TaskSetParams, ModelTaskDisable). abi_ri_writes
// (preamble.cpp) captures the models.

ABI_CHECK(aclmdlRIGetStreams) {
    uint32_t n = 0;
    EXPECT_RC(aclmdlRIGetStreams(nullptr, nullptr, &n), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(1);
    EXPECT(r.ms != nullptr && r.ms != r.s);
    EXPECT_RC(aclmdlRIGetStreams(r.m, nullptr, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIGetStreams(r.m, nullptr, &n), ACL_SUCCESS);
    EXPECT(n == 1);
    aclrtStream out[2] = {r.s, r.s};
    n = 2;
    EXPECT_RC(aclmdlRIGetStreams(r.m, out, &n), ACL_SUCCESS);
    EXPECT(n == 1 && out[0] == r.ms && out[1] == nullptr);
    n = 0;
    EXPECT_RC(aclmdlRIGetStreams(r.m, out, &n), ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY);
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRIGetTasksByStream) {
    uint32_t n = 0;
    EXPECT_RC(aclmdlRIGetTasksByStream(nullptr, nullptr, &n), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(2);
    EXPECT(r.t[0] != nullptr && r.t[1] != nullptr);
    EXPECT_RC(aclmdlRIGetTasksByStream(r.s, nullptr, &n), ACL_ERROR_RT_PARAM_INVALID);  // not a model's
    EXPECT_RC(aclmdlRIGetTasksByStream(r.ms, nullptr, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIGetTasksByStream(r.ms, nullptr, &n), ACL_SUCCESS);
    EXPECT(n == 2);
    aclmdlRITask t[1] = {nullptr};
    n = 1;
    EXPECT_RC(aclmdlRIGetTasksByStream(r.ms, t, &n), ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY);
    EXPECT(n == 1 && t[0] == r.t[0]);
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRITaskGetType) {
    aclmdlRITaskType ty = ACL_MODEL_RI_TASK_DEFAULT;
    EXPECT_RC(aclmdlRITaskGetType(nullptr, &ty), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRITaskGetType(r.t[0], nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRITaskGetType(r.t[0], &ty), ACL_SUCCESS);
    EXPECT(ty == ACL_MODEL_RI_TASK_VALUE_WRITE);
    EXPECT_RC(aclmdlRIDestroy(r.m), ACL_SUCCESS);
    r.m = nullptr;
    EXPECT_RC(aclmdlRITaskGetType(r.t[0], &ty), ACL_ERROR_RT_INVALID_HANDLE);  // gone with its model
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRITaskGetSeqId) {
    uint32_t id = 9;
    EXPECT_RC(aclmdlRITaskGetSeqId(nullptr, &id), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(2);
    EXPECT_RC(aclmdlRITaskGetSeqId(r.t[1], nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRITaskGetSeqId(r.t[1], &id), ACL_SUCCESS);
    EXPECT(id == 1);
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRITaskGetParams) {
    aclmdlRITaskParams p = {};
    EXPECT_RC(aclmdlRITaskGetParams(nullptr, &p), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRITaskGetParams(r.t[0], nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRITaskGetParams(r.t[0], &p), ACL_SUCCESS);
    EXPECT(p.type == ACL_MODEL_RI_TASK_VALUE_WRITE);
    EXPECT(p.valueWriteTaskParams.devAddr == r.w && p.valueWriteTaskParams.value == 1);
    EXPECT(p.taskGrp == nullptr && p.opInfoPtr == nullptr && p.opInfoSize == 0);
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRITaskSetParams) {
    aclmdlRITaskParams p = {};
    EXPECT_RC(aclmdlRITaskSetParams(nullptr, &p), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRITaskSetParams(r.t[0], nullptr), ACL_ERROR_RT_PARAM_INVALID);
    p.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    p.valueWriteTaskParams.devAddr = r.w;
    p.valueWriteTaskParams.value = 9;
    EXPECT_RC(aclmdlRITaskSetParams(r.t[0], &p), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(r.m, r.s), ACL_ERROR_RT_MODEL_EXECUTE);  // UPDATING
    EXPECT_RC(aclmdlRIUpdate(r.m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(r.m, r.s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(r.s), ACL_SUCCESS);
    EXPECT(abi_ri_word(r) == 9);
    p.type = ACL_MODEL_RI_TASK_EVENT_RECORD;
    EXPECT_RC(aclmdlRITaskSetParams(r.t[0], &p), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIUpdate(r.m), ACL_ERROR_RT_MODEL_UPDATE_FAILED);  // FAULT
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRITaskDisable) {
    EXPECT_RC(aclmdlRITaskDisable(nullptr), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRITaskDisable(r.t[0]), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIUpdate(r.m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(r.m, r.s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(r.s), ACL_SUCCESS);
    EXPECT(abi_ri_word(r) == 0);  // disabled
    abi_ri_done(r);
}

// A model's id and name (cann-sim/src/acl/model_ri_name.rs; model_ri.cpp,
// api_error.cc ModelGetName, api_impl.cc ModelNameSet, model.cc
// GetModelName).

ABI_CHECK(aclmdlRIGetId) {
    uint32_t id = 0;
    EXPECT_RC(aclmdlRIGetId(nullptr, &id), ACL_ERROR_INVALID_PARAM);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRIGetId(r.m, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRIGetId(r.m, &id), ACL_SUCCESS);
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRISetName) {
    EXPECT_RC(aclmdlRISetName(nullptr, "x"), ACL_ERROR_INVALID_PARAM);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRISetName(r.m, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRISetName(r.m, "step"), ACL_SUCCESS);
    abi_ri_done(r);
}

ABI_CHECK(aclmdlRIGetName) {
    char name[8] = {};
    EXPECT_RC(aclmdlRIGetName(nullptr, 8, name), ACL_ERROR_INVALID_PARAM);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRIGetName(r.m, 8, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRIGetName(r.m, 0, name), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRISetName(r.m, "step"), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIGetName(r.m, 8, name), ACL_SUCCESS);
    EXPECT(std::string(name) == "step");
    EXPECT_RC(aclmdlRIGetName(r.m, 4, name), ACL_ERROR_RT_INTERNAL_ERROR);  // no room for the NUL
    abi_ri_done(r);
}

// aclmdlRIAbort (cann-sim/src/acl/ri_task.rs; api_error.cc and api_impl.cc
// ModelAbort): an idle model aborts and runs again; an execution blocked in
// a wait is stopped, and its stream's synchronisation answers
// ACL_ERROR_RT_MODEL_ABORT_NORMAL once (model.cc Model::ModelAbort,
// stream.cc Stream::GetError, api_c_stream.cc rtStreamSynchronize).

ABI_CHECK(aclmdlRIAbort) {
    EXPECT_RC(aclmdlRIAbort(nullptr), ACL_ERROR_RT_PARAM_INVALID);
    AbiRi r = abi_ri_writes(1);
    EXPECT_RC(aclmdlRIAbort(r.m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(r.m, r.s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(r.s), ACL_SUCCESS);
    EXPECT(abi_ri_word(r) == 1);
    // A model that waits for an event nobody records, then writes 7.
    aclrtEvent e = nullptr;
    aclmdlRI blocked = nullptr;
    EXPECT_RC(aclrtCreateEventWithFlag(&e, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureBegin(r.s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclrtStreamWaitEvent(r.s, e), ACL_SUCCESS);
    EXPECT_RC(aclrtValueWrite(r.w, 7, 0, r.s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureEnd(r.s, &blocked), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(blocked, r.s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIAbort(blocked), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(r.s), ACL_ERROR_RT_MODEL_ABORT_NORMAL);
    EXPECT_RC(aclrtSynchronizeStream(r.s), ACL_SUCCESS);
    EXPECT(abi_ri_word(r) == 1);  // the write after the wait never ran
    EXPECT_RC(aclmdlRIDestroy(blocked), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyEvent(e), ACL_SUCCESS);
    // A built model aborts too, and runs again.
    aclmdlRI built = nullptr;
    aclrtStream ps = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&ps, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildBegin(&built, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(built, ps, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(r.w, 8, 0, 8, ps), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIEndTask(built, ps), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildEnd(built, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIAbort(built), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(built, r.s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(r.s), ACL_SUCCESS);
    EXPECT(abi_ri_word(r) == 0);
    EXPECT_RC(aclmdlRIDestroy(built), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(ps), ACL_SUCCESS);
    abi_ri_done(r);
}

// A captured kernel launch (cann-sim/src/acl/ri_kernel.rs; kernel_utils.cc
// GetKernelTaskParams, UpdateKernelParams, GetKernelAttribute): its
// parameters, a new launch set in its place, and its launch attributes.
ABI_CHECK(aclmdlRIKernelTaskGetAttribute) {
    aclrtLaunchKernelAttrValue v = {};
    EXPECT_RC(aclmdlRIKernelTaskGetAttribute(nullptr, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, &v),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtBinHandle b = abi_kernel_load();
    aclrtFuncHandle g = abi_kernel_fn(b, "abi_blocks");
    aclrtStream s = nullptr;
    void *out = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    uint64_t args[1] = {(uint64_t)(uintptr_t)out};
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_RC(aclrtLaunchKernel(g, 2, args, sizeof args, s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
    aclrtStream ms = nullptr;
    aclmdlRITask t = nullptr;
    uint32_t n = 1;
    EXPECT_RC(aclmdlRIGetStreams(m, &ms, &n), ACL_SUCCESS);
    n = 1;
    EXPECT_RC(aclmdlRIGetTasksByStream(ms, &t, &n), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIKernelTaskGetAttribute(t, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRIKernelTaskGetAttribute(t, ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, &v), ACL_SUCCESS);
    EXPECT(v.isDataDump == 0);
    EXPECT_RC(aclmdlRIKernelTaskGetAttribute(t, ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, &v),
              ACL_ERROR_RT_PARAM_INVALID);
    // Its parameters: the function, the arguments and the block count.
    aclmdlRITaskParams p = {};
    EXPECT_RC(aclmdlRITaskGetParams(t, &p), ACL_SUCCESS);
    EXPECT(p.type == ACL_MODEL_RI_TASK_KERNEL && p.kernelTaskParams.funcHandle == g);
    EXPECT(p.kernelTaskParams.argsSize == sizeof args && p.kernelTaskParams.numBlocks == 2);
    // A new launch on 3 blocks runs after the update.
    p.kernelTaskParams.args = args;
    p.kernelTaskParams.isHostArgs = 1;
    p.kernelTaskParams.numBlocks = 3;
    EXPECT_RC(aclmdlRITaskSetParams(t, &p), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIUpdate(m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    uint32_t got[3] = {0, 0, 0};
    EXPECT_RC(aclrtMemcpy(got, 12, out, 12, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(got[0] == 3000 && got[1] == 3001 && got[2] == 3002);
    p.kernelTaskParams.argsSize = 0;
    EXPECT_RC(aclmdlRITaskSetParams(t, &p), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtBinaryUnLoad(b), ACL_SUCCESS);
    aclrtResetDevice(0);
}
