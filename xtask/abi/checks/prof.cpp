// abi-check behavioural checks for profiling (aclprof*, cann-sim/src/acl/prof.rs):
// the codes of the released runtime (CANN 8.5.0). Format and helpers: see
// xtask/abi/README.md.

ABI_CHECK(aclprofInit) {
    std::string dir = abi_temp_dir();
    EXPECT(!dir.empty());
    EXPECT_RC(aclprofInit(nullptr, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclprofInit(dir.c_str(), 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclprofInit(dir.c_str(), dir.size() - 1), ACL_ERROR_INVALID_PARAM);  // not strlen
    std::string file = abi_temp_file("x");
    EXPECT_RC(abi_prof_init(file), ACL_ERROR_INVALID_FILE);                          // not a directory
    unlink(file.c_str());
    EXPECT_RC(abi_prof_init(dir + "/made/by/init"), ACL_SUCCESS);                    // created
    EXPECT_RC(abi_prof_init(dir), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_RC(aclprofFinalize(), ACL_SUCCESS);
    abi_remove_tree(dir);
}

ABI_CHECK(aclprofFinalize) {
    std::string dir = abi_temp_dir();
    EXPECT_RC(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    EXPECT_RC(abi_prof_init(dir), ACL_SUCCESS);
    aclprofConfig *c = abi_prof_config();
    EXPECT_RC(aclprofStart(c), ACL_SUCCESS);
    EXPECT_RC(aclprofFinalize(), ACL_SUCCESS);                                       // stops the run too
    EXPECT_RC(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
    abi_remove_tree(dir);
}

ABI_CHECK(aclprofSetConfig) {
    std::string dir = abi_temp_dir();
    EXPECT_RC(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 5), ACL_ERROR_UNINITIALIZE);
    EXPECT_RC(abi_prof_init(dir), ACL_SUCCESS);
    EXPECT_RC(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 5), ACL_SUCCESS);
    EXPECT_RC(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, nullptr, 5), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclprofSetConfig(ACL_PROF_ARGS_MAX, "200MB", 5), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclprofFinalize(), ACL_SUCCESS);
    abi_remove_tree(dir);
}

ABI_CHECK(aclprofCreateConfig) {
    uint32_t ids[] = {0, 1};
    uint32_t twice[] = {1, 1};
    uint32_t beyond[] = {ABI_DEVICES};
    aclprofConfig *c = aclprofCreateConfig(ids, 2, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
    EXPECT(c != nullptr);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
    EXPECT(aclprofCreateConfig(twice, 2, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME) == nullptr);
    EXPECT(aclprofCreateConfig(beyond, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME) == nullptr);
    EXPECT(aclprofCreateConfig(nullptr, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME) == nullptr);
    EXPECT(aclprofCreateConfig(nullptr, 0, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME) == nullptr);
    aclprofAicoreEvents *events = (aclprofAicoreEvents *)ids;                       // any non-null
    EXPECT(aclprofCreateConfig(ids, 1, ACL_AICORE_NONE, events, ACL_PROF_TASK_TIME) == nullptr);
    c = aclprofCreateConfig(nullptr, 0, ACL_AICORE_NONE, nullptr, ACL_PROF_MSPROFTX);
    EXPECT(c != nullptr);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
}

ABI_CHECK(aclprofDestroyConfig) {
    aclprofConfig *c = abi_prof_config();
    EXPECT(c != nullptr);
    EXPECT_RC(aclprofDestroyConfig(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_ERROR_INVALID_PARAM);                     // destroyed
}

ABI_CHECK(aclprofStart) {
    std::string dir = abi_temp_dir();
    aclprofConfig *c = abi_prof_config();
    EXPECT_RC(aclprofStart(c), ACL_ERROR_PROF_NOT_RUN);                              // before init
    EXPECT_RC(abi_prof_init(dir), ACL_SUCCESS);
    EXPECT_RC(aclprofStart(c), ACL_SUCCESS);
    EXPECT_RC(aclprofStart(c), ACL_ERROR_PROF_ALREADY_RUN);                          // device 0 runs
    EXPECT_RC(aclprofStop(c), ACL_SUCCESS);
    uint32_t ids[] = {1};
    aclprofConfig *odd = aclprofCreateConfig(ids, 1, ACL_AICORE_NONE, nullptr, (uint64_t)1 << 40);
    EXPECT(odd != nullptr);
    EXPECT_RC(aclprofStart(odd), ACL_ERROR_PROF_MODULES_UNSUPPORTED);                // unknown bits
    EXPECT_RC(aclprofDestroyConfig(odd), ACL_SUCCESS);
    EXPECT_RC(aclprofFinalize(), ACL_SUCCESS);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
    std::string list = "ls -d '" + dir + "'/PROF_000001_* >/dev/null 2>&1";
    EXPECT(system(list.c_str()) == 0);                                               // the run's folder
    abi_remove_tree(dir);
}

ABI_CHECK(aclprofStop) {
    std::string dir = abi_temp_dir();
    aclprofConfig *c = abi_prof_config();
    uint32_t ids[] = {0};
    aclprofConfig *other = aclprofCreateConfig(ids, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_ACL_API);
    EXPECT_RC(aclprofStop(c), ACL_ERROR_PROF_NOT_RUN);                               // before init
    EXPECT_RC(abi_prof_init(dir), ACL_SUCCESS);
    EXPECT_RC(aclprofStart(c), ACL_SUCCESS);
    EXPECT_RC(aclprofStop(other), ACL_ERROR_INVALID_PROFILING_CONFIG);               // not Start's
    EXPECT_RC(aclprofStop(c), ACL_SUCCESS);
    EXPECT_RC(aclprofStop(c), ACL_SUCCESS);                                          // not running: skipped
    EXPECT_RC(aclprofFinalize(), ACL_SUCCESS);
    EXPECT_RC(aclprofDestroyConfig(other), ACL_SUCCESS);
    EXPECT_RC(aclprofDestroyConfig(c), ACL_SUCCESS);
    abi_remove_tree(dir);
}

ABI_CHECK(aclprofCreateStamp) {
    EXPECT(aclprofCreateStamp() == nullptr);  // no msproftx run
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        EXPECT(stamp != nullptr);
        aclprofDestroyStamp(stamp);
    });
}

ABI_CHECK(aclprofDestroyStamp) {
    aclprofDestroyStamp(nullptr);  // ignored, with a message
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        aclprofDestroyStamp(stamp);
        EXPECT_RC(aclprofMark(stamp), -1);  // destroyed
    });
}

ABI_CHECK(aclprofSetStampTraceMessage) {
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        EXPECT_RC(aclprofSetStampTraceMessage(stamp, "fwd", 3), ACL_SUCCESS);
        std::string longer(128, 'x');
        EXPECT_RC(aclprofSetStampTraceMessage(stamp, longer.c_str(), 128), -1);  // < 128 bytes
        EXPECT_RC(aclprofSetStampTraceMessage(nullptr, "fwd", 3), -1);
        aclprofDestroyStamp(stamp);
    });
}

ABI_CHECK(aclprofMark) {
    EXPECT_RC(aclprofMark(nullptr), -1);  // no msproftx run
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        EXPECT_RC(aclprofMark(stamp), ACL_SUCCESS);
        EXPECT_RC(aclprofMark(nullptr), -1);
        aclprofDestroyStamp(stamp);
    });
}

ABI_CHECK(aclprofMarkEx) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_RC(aclprofMarkEx("point", 5, s), -1);  // no msproftx run
    abi_tx_run([s] {
        EXPECT_RC(aclprofMarkEx("point", 5, s), ACL_SUCCESS);
        EXPECT_RC(aclprofMarkEx("point", 4, s), -1);        // not the string's length
        EXPECT_RC(aclprofMarkEx("point", 5, nullptr), -1);  // no stream
    });
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclprofPush) {
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        EXPECT_RC(aclprofPush(stamp), ACL_SUCCESS);
        EXPECT_RC(aclprofPop(), ACL_SUCCESS);
        EXPECT_RC(aclprofPush(nullptr), ACL_ERROR_INVALID_PARAM);
        aclprofDestroyStamp(stamp);
    });
}

ABI_CHECK(aclprofPop) {
    EXPECT_RC(aclprofPop(), -1);  // no msproftx run
    abi_tx_run([] { EXPECT_RC(aclprofPop(), -1); });  // nothing pushed on this thread
}

ABI_CHECK(aclprofRangeStart) {
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        uint32_t id = 0;
        EXPECT_RC(aclprofRangeStart(stamp, &id), ACL_SUCCESS);
        EXPECT_RC(aclprofRangeStop(id), ACL_SUCCESS);
        EXPECT_RC(aclprofRangeStart(stamp, nullptr), ACL_ERROR_INVALID_PARAM);
        EXPECT_RC(aclprofRangeStart(nullptr, &id), ACL_ERROR_INVALID_PARAM);
        aclprofDestroyStamp(stamp);
    });
}

ABI_CHECK(aclprofRangeStop) {
    abi_tx_run([] {
        void *stamp = aclprofCreateStamp();
        uint32_t id = 0;
        EXPECT_RC(aclprofRangeStart(stamp, &id), ACL_SUCCESS);
        EXPECT_RC(aclprofRangeStop(id), ACL_SUCCESS);
        EXPECT_RC(aclprofRangeStop(id), -1);  // ended already
        aclprofDestroyStamp(stamp);
    });
}

ABI_CHECK(aclprofCreateStepInfo) {
    aclprofStepInfo *a = aclprofCreateStepInfo();
    aclprofStepInfo *b = aclprofCreateStepInfo();
    EXPECT(a != nullptr && b != nullptr && a != b);
    aclprofDestroyStepInfo(a);
    aclprofDestroyStepInfo(b);
}

ABI_CHECK(aclprofDestroyStepInfo) {
    aclprofDestroyStepInfo(nullptr);  // a message only
    aclprofDestroyStepInfo(aclprofCreateStepInfo());
}

ABI_CHECK(aclprofGetStepTimestamp) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclprofStepInfo *step = aclprofCreateStepInfo();
    EXPECT_RC(aclprofGetStepTimestamp(step, ACL_STEP_START, s), ACL_SUCCESS);
    EXPECT_RC(aclprofGetStepTimestamp(step, ACL_STEP_START, s), ACL_ERROR_INVALID_PARAM);  // twice
    EXPECT_RC(aclprofGetStepTimestamp(step, ACL_STEP_END, s), ACL_SUCCESS);
    EXPECT_RC(aclprofGetStepTimestamp(nullptr, ACL_STEP_END, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    aclprofDestroyStepInfo(step);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
