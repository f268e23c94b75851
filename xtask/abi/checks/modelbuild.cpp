// Checks of explicit model construction (aclmdlRIBuildBegin … BuildEnd), the
// label API, aclmdlRIDebugJsonPrint, and the dump API: each called through
// the real headers' declarations, with the release's codes.

ABI_CHECK(aclmdlRIBuildBegin) {
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_ERROR_RT_CONTEXT_NULL);  // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildBegin(&m, 1), ACL_ERROR_RT_PARAM_INVALID);  // flag must be 0
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    EXPECT(m != nullptr);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIBindStream) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclmdlRI m = nullptr, m2 = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildBegin(&m2, 0), ACL_SUCCESS);
    aclrtStream plain = nullptr, s = nullptr;
    EXPECT_RC(aclrtCreateStream(&plain), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(nullptr, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRIBindStream(m, s, 5), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIBindStream(m, plain, ACL_MODEL_STREAM_FLAG_HEAD), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIBindStream(m, nullptr, ACL_MODEL_STREAM_FLAG_HEAD), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclmdlRIBindStream(m, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m2, s, ACL_MODEL_STREAM_FLAG_DEFAULT), ACL_ERROR_RT_STREAM_MODEL);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m2), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(plain), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIUnbindStream) {
    EXPECT_RC(aclmdlRIUnbindStream(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIUnbindStream(m, s), ACL_ERROR_RT_STREAM_MODEL);  // not bound
    EXPECT_RC(aclmdlRIBindStream(m, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIUnbindStream(m, s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIEndTask) {
    EXPECT_RC(aclmdlRIEndTask(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    aclrtStream s = nullptr, other = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&other, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIEndTask(m, other), ACL_ERROR_RT_INTERNAL_ERROR);  // not bound to it
    EXPECT_RC(aclmdlRIEndTask(m, s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIEndTask(m, s), ACL_ERROR_RT_INTERNAL_ERROR);  // one end per model
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(other), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIBuildEnd) {
    EXPECT_RC(aclmdlRIBuildEnd(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    int reserve = 0;
    EXPECT_RC(aclmdlRIBuildEnd(m, &reserve), ACL_ERROR_INVALID_PARAM);
    aclrtStream exec = nullptr;
    EXPECT_RC(aclrtCreateStream(&exec), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, exec), ACL_ERROR_RT_PARAM_INVALID);  // not built yet
    EXPECT_RC(aclmdlRIBuildEnd(m, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIExecuteAsync(m, exec), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(exec), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(exec), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtCreateLabel) {
    aclrtLabel l = nullptr;
    EXPECT_RC(aclrtCreateLabel(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateLabel(&l), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateLabel(&l), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(l), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtDestroyLabel) {
    EXPECT_RC(aclrtDestroyLabel(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtLabel l = nullptr;
    EXPECT_RC(aclrtCreateLabel(&l), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(l), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(l), ACL_ERROR_RT_INVALID_HANDLE);  // destroyed
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtCreateLabelList) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtLabel ls[2] = {nullptr, nullptr};
    EXPECT_RC(aclrtCreateLabel(&ls[0]), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateLabel(&ls[1]), ACL_SUCCESS);
    aclrtLabelList list = nullptr;
    EXPECT_RC(aclrtCreateLabelList(nullptr, 2, &list), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateLabelList(ls, 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtCreateLabelList(ls, 0, &list), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtCreateLabelList(ls, 2, &list), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabelList(list), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(ls[0]), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(ls[1]), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtDestroyLabelList) {
    EXPECT_RC(aclrtDestroyLabelList(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtLabel l = nullptr;
    EXPECT_RC(aclrtCreateLabel(&l), ACL_SUCCESS);
    aclrtLabelList list = nullptr;
    EXPECT_RC(aclrtCreateLabelList(&l, 1, &list), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabelList(list), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabelList(list), ACL_ERROR_RT_INVALID_HANDLE);
    EXPECT_RC(aclrtDestroyLabel(l), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtSetLabel) {
    EXPECT_RC(aclrtSetLabel(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    aclrtStream s = nullptr, unbound = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStreamWithConfig(&unbound, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    aclrtLabel l = nullptr, lone = nullptr;
    EXPECT_RC(aclrtCreateLabel(&l), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateLabel(&lone), ACL_SUCCESS);
    aclrtLabelList list = nullptr;
    EXPECT_RC(aclrtCreateLabelList(&l, 1, &list), ACL_SUCCESS);
    EXPECT_RC(aclrtSetLabel(l, unbound), ACL_ERROR_RT_STREAM_MODEL);
    EXPECT_RC(aclrtSetLabel(lone, s), ACL_ERROR_RT_INTERNAL_ERROR);  // in no list
    EXPECT_RC(aclrtSetLabel(l, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSetLabel(l, s), ACL_ERROR_RT_INTERNAL_ERROR);  // set twice
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabelList(list), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(l), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(lone), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(unbound), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclrtSwitchLabelByIndex) {
    EXPECT_RC(aclrtSwitchLabelByIndex(nullptr, 1, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    // The label sample: a switch to label 1 of two, both set after it; the
    // branch fills `out` with 0x22, the other with 0x11.
    aclrtStream s = nullptr, exec = nullptr;
    EXPECT_RC(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&exec), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBindStream(m, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS);
    void *idx = nullptr, *out = nullptr;
    EXPECT_RC(aclrtMalloc(&idx, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtLabel ls[2] = {nullptr, nullptr};
    EXPECT_RC(aclrtCreateLabel(&ls[0]), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateLabel(&ls[1]), ACL_SUCCESS);
    aclrtLabelList list = nullptr;
    EXPECT_RC(aclrtCreateLabelList(ls, 2, &list), ACL_SUCCESS);
    EXPECT_RC(aclrtSwitchLabelByIndex(idx, 2, list, exec), ACL_ERROR_RT_STREAM_MODEL);  // unbound
    EXPECT_RC(aclrtSwitchLabelByIndex(idx, 2, list, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSetLabel(ls[0], s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(out, 4, 0x11, 4, s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIEndTask(m, s), ACL_SUCCESS);
    EXPECT_RC(aclrtSetLabel(ls[1], s), ACL_SUCCESS);
    EXPECT_RC(aclrtMemsetAsync(out, 4, 0x22, 4, s), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildEnd(m, nullptr), ACL_SUCCESS);
    for (uint32_t i = 0; i < 2; ++i) {
        EXPECT_RC(aclrtMemcpy(idx, 4, &i, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        EXPECT_RC(aclmdlRIExecuteAsync(m, exec), ACL_SUCCESS);
        EXPECT_RC(aclrtSynchronizeStream(exec), ACL_SUCCESS);
        unsigned char got[4] = {0, 0, 0, 0};
        EXPECT_RC(aclrtMemcpy(got, 4, out, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
        EXPECT(got[0] == (i == 0 ? 0x11 : 0x22) && got[3] == got[0]);
    }
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabelList(list), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(ls[0]), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyLabel(ls[1]), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(idx), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(exec), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlRIDebugJsonPrint) {
    EXPECT_RC(aclmdlRIDebugJsonPrint(nullptr, "/tmp/x.json", 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclmdlRI m = nullptr;
    EXPECT_RC(aclmdlRIBuildBegin(&m, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIBuildEnd(m, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclmdlRIDebugJsonPrint(m, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlRIDebugJsonPrint(m, "/dev/null", 0), ACL_ERROR_RT_PARAM_INVALID);  // not a file
    std::string dir = abi_temp_dir();
    std::string path = dir + "/model.json";
    EXPECT_RC(aclmdlRIDebugJsonPrint(m, path.c_str(), 0), ACL_SUCCESS);
    FILE *f = fopen(path.c_str(), "r");
    EXPECT(f != nullptr);
    if (f != nullptr) {
        char text[8] = {0};
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        EXPECT(n == 3 && std::string(text) == "[\n]");  // an empty model
    }
    abi_remove_tree(dir);
    EXPECT_RC(aclmdlRIDestroy(m), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclmdlInitDump) {
    bool mine = abi_dump_init(aclmdlInitDump);
    EXPECT_RC(aclmdlInitDump(), ACL_SUCCESS);
    EXPECT_RC(aclmdlInitDump(), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_RC(aclmdlFinalizeDump(), ACL_SUCCESS);
    if (mine) EXPECT_RC(aclFinalize(), ACL_SUCCESS);
}

ABI_CHECK(aclmdlFinalizeDump) {
    bool mine = abi_dump_init(aclmdlFinalizeDump);
    EXPECT_RC(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN);  // no aclmdlInitDump
    EXPECT_RC(aclmdlInitDump(), ACL_SUCCESS);
    EXPECT_RC(aclmdlFinalizeDump(), ACL_SUCCESS);
    if (mine) EXPECT_RC(aclFinalize(), ACL_SUCCESS);
}

ABI_CHECK(aclmdlSetDump) {
    bool mine = abi_dump_init(aclmdlInitDump);
    std::string dir = abi_temp_dir();
    std::string cfg = dir + "/dump.json";
    EXPECT_RC(aclmdlSetDump(cfg.c_str()), ACL_ERROR_DUMP_NOT_RUN);
    EXPECT_RC(aclmdlInitDump(), ACL_SUCCESS);
    EXPECT_RC(aclmdlSetDump(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclmdlSetDump(cfg.c_str()), ACL_ERROR_INVALID_FILE);  // no such file
    auto write_cfg = [&](const std::string &text) {
        FILE *f = fopen(cfg.c_str(), "w");
        EXPECT(f != nullptr);
        if (f != nullptr) {
            fputs(text.c_str(), f);
            fclose(f);
        }
    };
    write_cfg("{\"dump\":{\"dump_mode\":\"output\"}}");
    EXPECT_RC(aclmdlSetDump(cfg.c_str()), ACL_ERROR_INVALID_DUMP_CONFIG);  // no dump_path
    write_cfg("{\"dump\":{\"dump_path\":\"" + dir + "\",\"dump_mode\":\"sideways\"}}");
    EXPECT_RC(aclmdlSetDump(cfg.c_str()), ACL_ERROR_INVALID_DUMP_CONFIG);
    write_cfg("{\"dump\":{\"dump_path\":\"" + dir + "\",\"dump_list\":[{}],\"dump_op_switch\":\"on\"}}");
    EXPECT_RC(aclmdlSetDump(cfg.c_str()), ACL_SUCCESS);
    EXPECT_RC(aclmdlFinalizeDump(), ACL_SUCCESS);
    abi_remove_tree(dir);
    if (mine) EXPECT_RC(aclFinalize(), ACL_SUCCESS);
}

ABI_CHECK(acldumpRegCallback) {
    EXPECT_RC(acldumpRegCallback(nullptr, 0), ACL_ERROR_FAILURE);
    EXPECT_RC(acldumpRegCallback(abi_dump_cb, 1), ACL_ERROR_FAILURE);  // flag must be 0
    bool mine = abi_dump_init(aclmdlInitDump);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(acldumpRegCallback(abi_dump_cb, 0), ACL_SUCCESS);
    EXPECT_RC(aclmdlInitDump(), ACL_SUCCESS);
    // One operator: its outputs come to the callback in one chunk.
    abi_dump_chunks = 0;
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    float xs[4] = {1, 2, 3, 4};
    void *a = nullptr, *out = nullptr;
    EXPECT_RC(aclrtMalloc(&a, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMalloc(&out, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_RC(aclrtMemcpy(a, 16, xs, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    aclTensorDesc *d = abi_desc_f32({4});
    EXPECT_RC(abi_exec2("Add", d, a, a, out, 4, nullptr, s), ACL_SUCCESS);
    aclDestroyTensorDesc(d);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclmdlFinalizeDump(), ACL_SUCCESS);
    acldumpUnregCallback();
    EXPECT(abi_dump_chunks == 1);
    EXPECT_RC(aclrtFree(a), ACL_SUCCESS);
    EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    if (mine) EXPECT_RC(aclFinalize(), ACL_SUCCESS);
}

ABI_CHECK(acldumpUnregCallback) {
    acldumpUnregCallback();  // without a callback: nothing to do
    EXPECT_RC(acldumpRegCallback(abi_dump_cb, 0), ACL_SUCCESS);
    acldumpUnregCallback();
}

ABI_CHECK(acldumpGetPath) {
    EXPECT(acldumpGetPath(DATA_DUMP) == nullptr);  // no dump path set
    EXPECT(acldumpGetPath(AIC_ERR_BRIEF_DUMP) == nullptr);
    bool mine = abi_dump_init(aclmdlInitDump);
    std::string dir = abi_temp_dir();
    std::string cfg = dir + "/dump.json";
    FILE *f = fopen(cfg.c_str(), "w");
    EXPECT(f != nullptr);
    if (f != nullptr) {
        fputs(("{\"dump\":{\"dump_path\":\"" + dir + "\"}}").c_str(), f);
        fclose(f);
    }
    EXPECT_RC(aclmdlInitDump(), ACL_SUCCESS);
    EXPECT_RC(aclmdlSetDump(cfg.c_str()), ACL_SUCCESS);
    const char *p = acldumpGetPath(DATA_DUMP);
    EXPECT(p != nullptr && std::string(p) == dir);
    EXPECT_RC(aclmdlFinalizeDump(), ACL_SUCCESS);
    EXPECT(acldumpGetPath(DATA_DUMP) == nullptr);
    abi_remove_tree(dir);
    if (mine) EXPECT_RC(aclFinalize(), ACL_SUCCESS);
}

ABI_CHECK(aclopStartDumpArgs) {
    EXPECT_RC(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, nullptr), ACL_ERROR_FAILURE);
    EXPECT_RC(aclopStartDumpArgs(0, "/tmp"), ACL_ERROR_FAILURE);  // not the AI Core args type
    std::string dir = abi_temp_dir();
    std::string args = dir + "/args";
    EXPECT_RC(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, args.c_str()), ACL_SUCCESS);
    EXPECT_RC(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS), ACL_SUCCESS);
    EXPECT(abi_dir_exists(args));  // made by the start
    abi_remove_tree(dir);
}

ABI_CHECK(aclopStopDumpArgs) {
    EXPECT_RC(aclopStopDumpArgs(0), ACL_SUCCESS);  // another type: nothing to stop
    EXPECT_RC(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS), ACL_SUCCESS);
}
