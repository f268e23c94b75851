// abi-check behavioural checks for HCCL (cann-sim/src/hccl/). Format and
// helpers: see xtask/abi/README.md; `abi_hccl_ranks` (preamble.cpp) runs a
// body on two ranks as threads, devices 0 and 1.

ABI_CHECK(HcclGetRootInfo) {
    HcclRootInfo a, b;
    EXPECT_RC(HcclGetRootInfo(&a), HCCL_E_RUNTIME);           // no current device (checked first)
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclGetRootInfo(nullptr), HCCL_E_PTR);
    EXPECT(!abi_recent().empty());
    EXPECT_RC(HcclGetRootInfo(&a), HCCL_SUCCESS);
    EXPECT_RC(HcclGetRootInfo(&b), HCCL_SUCCESS);
    EXPECT(memcmp(&a, &b, sizeof a) != 0);                    // each names a new communicator
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(HcclCommInitRootInfo) {
    HcclRootInfo root, zero;
    memset(&zero, 0, sizeof zero);
    HcclComm comm = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfo(1, &root, 0, &comm), HCCL_E_RUNTIME);  // no device on this thread
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfo(2, nullptr, 0, &comm), HCCL_E_PTR);
    EXPECT_RC(HcclCommInitRootInfo(2, &root, 0, nullptr), HCCL_E_PTR);
    EXPECT_RC(HcclCommInitRootInfo(0, &root, 0, &comm), HCCL_E_PARA);
    EXPECT_RC(HcclCommInitRootInfo(2, &root, 2, &comm), HCCL_E_PARA);     // rank out of range
    EXPECT_RC(HcclCommInitRootInfo(1, &zero, 0, &comm), HCCL_E_PARA);     // not from HcclGetRootInfo
    EXPECT_RC(HcclCommInitRootInfo(1, &root, 0, &comm), HCCL_SUCCESS);    // one rank: no waiting
    uint32_t size = 0;
    EXPECT_RC(HcclGetRankSize(comm, &size), HCCL_SUCCESS);
    EXPECT(size == 1);
    EXPECT_RC(HcclCommDestroy(comm), HCCL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    // Two ranks on two threads: each call blocks until both have joined.
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream) {
        uint32_t id = 9, n = 0;
        EXPECT_RC(HcclGetRankId(c, &id), HCCL_SUCCESS);
        EXPECT_RC(HcclGetRankSize(c, &n), HCCL_SUCCESS);
        EXPECT((int)id == r && n == 2);
    });
}

ABI_CHECK(HcclCommInitRootInfoConfig) {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    strcpy(cfg.hcclCommName, "abi_group");
    cfg.hcclExecTimeOut = 30;
    abi_hccl_ranks(2, &cfg, [](int, HcclComm c, aclrtStream) {
        char name[COMM_NAME_MAX_LENGTH] = {0};
        EXPECT_RC(HcclGetCommName(c, name), HCCL_SUCCESS);
        EXPECT(strcmp(name, "abi_group") == 0);
    });
    HcclCommConfig bad;
    memset(&bad, 0, sizeof bad);                              // not initialised: no magic word
    HcclRootInfo root;
    HcclComm comm = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfoConfig(1, &root, 0, &bad, &comm), HCCL_E_PARA);
    HcclCommConfigInit(&bad);
    bad.hcclDeterministic = 7;
    EXPECT_RC(HcclCommInitRootInfoConfig(1, &root, 0, &bad, &comm), HCCL_E_PARA);
    // 2 (strict) is valid on a 910B part (ABI_SOC_NAME); hicann/hcomm comm_config.cc.
    HcclCommConfigInit(&bad);
    bad.hcclDeterministic = 2;
    EXPECT_RC(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfoConfig(1, &root, 0, &bad, &comm), HCCL_SUCCESS);
    EXPECT_RC(HcclCommDestroy(comm), HCCL_SUCCESS);
    // A field newer than the config's version is ignored: the zero-copy flag
    // counts from version 7.
    HcclCommConfigInit(&bad);
    bad.aclGraphZeroCopyEnable = 5;
    EXPECT_RC(HcclCommInitRootInfoConfig(1, &root, 0, &bad, &comm), HCCL_E_PARA);
    uint32_t version = 1;
    memcpy(bad.reserved + 12, &version, sizeof version);
    EXPECT_RC(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfoConfig(1, &root, 0, &bad, &comm), HCCL_SUCCESS);
    EXPECT_RC(HcclCommDestroy(comm), HCCL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(HcclCommInitClusterInfo) {
    std::string path = abi_rank_table();
    EXPECT(!path.empty());
    std::vector<std::thread> ts;
    for (int r = 0; r < 2; r++) {
        ts.emplace_back([&, r] {
            EXPECT_RC(aclrtSetDevice(r), ACL_SUCCESS);
            HcclComm c = nullptr;
            EXPECT_RC(HcclCommInitClusterInfo(path.c_str(), r, &c), HCCL_SUCCESS);
            uint32_t id = 9;
            EXPECT_RC(HcclGetRankId(c, &id), HCCL_SUCCESS);
            EXPECT((int)id == r);
            EXPECT_RC(HcclCommDestroy(c), HCCL_SUCCESS);
            EXPECT_RC(aclrtResetDevice(r), ACL_SUCCESS);
        });
    }
    for (auto &t : ts) t.join();
    HcclComm c = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclCommInitClusterInfo("/nonexistent/cann-abi/table.json", 0, &c), HCCL_E_OPEN_FILE_FAILURE);
    EXPECT_RC(HcclCommInitClusterInfo(path.c_str(), 2, &c), HCCL_E_PARA);   // rank not in the table
    EXPECT_RC(HcclCommInitClusterInfo(nullptr, 0, &c), HCCL_E_PTR);
    FILE *f = fopen(path.c_str(), "w");
    if (f != nullptr) {
        fputs("{\"status\":\"completed\",\"version\":\"1.0\",\"server_list\":[]}", f);
        fclose(f);
    }
    EXPECT_RC(HcclCommInitClusterInfo(path.c_str(), 0, &c), HCCL_E_PARA);   // no device listed
    EXPECT(abi_recent().find("rank table") != std::string::npos);  // names the problem
    unlink(path.c_str());
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(HcclCommInitClusterInfoConfig) {
    std::string path = abi_rank_table();
    std::vector<std::thread> ts;
    for (int r = 0; r < 2; r++) {
        ts.emplace_back([&, r] {
            HcclCommConfig cfg;
            HcclCommConfigInit(&cfg);
            strcpy(cfg.hcclCommName, "abi_table");
            EXPECT_RC(aclrtSetDevice(r), ACL_SUCCESS);
            HcclComm c = nullptr;
            EXPECT_RC(HcclCommInitClusterInfoConfig(path.c_str(), r, &cfg, &c), HCCL_SUCCESS);
            char name[COMM_NAME_MAX_LENGTH] = {0};
            EXPECT_RC(HcclGetCommName(c, name), HCCL_SUCCESS);
            EXPECT(strcmp(name, "abi_table") == 0);
            EXPECT_RC(HcclCommDestroy(c), HCCL_SUCCESS);
            EXPECT_RC(aclrtResetDevice(r), ACL_SUCCESS);
        });
    }
    for (auto &t : ts) t.join();
    unlink(path.c_str());
}

ABI_CHECK(HcclCommInitAll) {
    int32_t devs[2] = {0, 1}, dup[2] = {1, 1}, bad[1] = {ABI_DEVICES};
    HcclComm comms[2] = {nullptr, nullptr};
    EXPECT_RC(HcclCommInitAll(2, devs, comms), HCCL_SUCCESS);
    uint32_t id0 = 9, id1 = 9, n = 0;
    EXPECT_RC(HcclGetRankId(comms[0], &id0), HCCL_SUCCESS);
    EXPECT_RC(HcclGetRankId(comms[1], &id1), HCCL_SUCCESS);
    EXPECT_RC(HcclGetRankSize(comms[1], &n), HCCL_SUCCESS);
    EXPECT(id0 == 0 && id1 == 1 && n == 2);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);                // destroy needs a current device
    EXPECT_RC(HcclCommDestroy(comms[0]), HCCL_SUCCESS);
    EXPECT_RC(HcclCommDestroy(comms[1]), HCCL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclCommInitAll(2, dup, comms), HCCL_E_PARA);   // a device twice
    EXPECT_RC(HcclCommInitAll(1, bad, comms), HCCL_E_PARA);   // no such device
    EXPECT_RC(HcclCommInitAll(0, devs, comms), HCCL_E_PARA);
    EXPECT_RC(HcclCommInitAll(2, nullptr, comms), HCCL_E_PTR);
}

ABI_CHECK(HcclCreateSubCommConfig) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        uint32_t ids[2] = {1, 0};                             // sub rank 0 is parent rank 1
        HcclComm sub = nullptr;
        HcclCommConfig cfg;
        HcclCommConfigInit(&cfg);
        EXPECT_RC(HcclCreateSubCommConfig(&c, 2, ids, 7, (uint32_t)(1 - r), &cfg, &sub), HCCL_SUCCESS);
        uint32_t id = 9;
        EXPECT_RC(HcclGetRankId(sub, &id), HCCL_SUCCESS);
        EXPECT((int)id == 1 - r);
        // The sub-communicator works: a sum over both.
        void *d = abi_hccl_put(std::vector<int32_t>(4, r + 1));
        EXPECT_RC(HcclAllReduce(d, d, 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, sub, s), HCCL_SUCCESS);
        std::vector<int32_t> got = abi_hccl_get<int32_t>(s, d, 4);
        EXPECT(got[0] == 3 && got[3] == 3);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
        EXPECT_RC(HcclCommDestroy(sub), HCCL_SUCCESS);
        // This rank must be rankIds[subCommRankId].
        EXPECT_RC(HcclCreateSubCommConfig(&c, 2, ids, 8, (uint32_t)r, &cfg, &sub), HCCL_E_PARA);
        uint32_t twice[2] = {0, 0};
        EXPECT_RC(HcclCreateSubCommConfig(&c, 2, twice, 9, 0, &cfg, &sub), HCCL_E_PARA);
        EXPECT_RC(HcclCreateSubCommConfig(&c, 2, nullptr, 9, 0, &cfg, &sub), HCCL_E_PTR);
    });
}

ABI_CHECK(HcclCommDestroy) {
    HcclRootInfo root;
    HcclComm c = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfo(1, &root, 0, &c), HCCL_SUCCESS);
    EXPECT_RC(HcclCommDestroy(c), HCCL_SUCCESS);
    EXPECT_RC(HcclCommDestroy(c), HCCL_E_PARA);               // twice
    EXPECT(abi_recent().find("HcclCommDestroy") != std::string::npos);  // the message names the function
    EXPECT_RC(HcclCommDestroy(nullptr), HCCL_SUCCESS);        // "An empty comm given, skip destroy" (op_base.cc)
    uint32_t n = 0;
    EXPECT_RC(HcclGetRankSize(c, &n), HCCL_E_PARA);           // a destroyed handle
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(HcclGetRankId) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream) {
        uint32_t id = 9;
        EXPECT_RC(HcclGetRankId(c, &id), HCCL_SUCCESS);
        EXPECT((int)id == r);
        EXPECT_RC(HcclGetRankId(c, nullptr), HCCL_E_PTR);
        EXPECT_RC(HcclGetRankId(nullptr, &id), HCCL_E_PTR);
    });
}

ABI_CHECK(HcclGetRankSize) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        uint32_t n = 0;
        EXPECT_RC(HcclGetRankSize(c, &n), HCCL_SUCCESS);
        EXPECT(n == 2);
        EXPECT_RC(HcclGetRankSize(c, nullptr), HCCL_E_PTR);
        EXPECT_RC(HcclGetRankSize((HcclComm)0x1234, &n), HCCL_E_PARA);
    });
}

ABI_CHECK(HcclGetCommName) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        char name[COMM_NAME_MAX_LENGTH];
        memset(name, 'x', sizeof name);
        EXPECT_RC(HcclGetCommName(c, name), HCCL_SUCCESS);
        EXPECT(name[0] != 'x' && strlen(name) < COMM_NAME_MAX_LENGTH);  // a default name, terminated
        EXPECT_RC(HcclGetCommName(c, nullptr), HCCL_E_PTR);
    });
}

ABI_CHECK(HcclGetCommAsyncError) {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclExecTimeOut = 20;
    abi_hccl_ranks(2, &cfg, [](int r, HcclComm c, aclrtStream s) {
        HcclResult e = HCCL_E_INTERNAL;
        EXPECT_RC(HcclGetCommAsyncError(c, &e), HCCL_SUCCESS);
        EXPECT(e == HCCL_SUCCESS);                            // healthy
        // Rank 1 passes another count: both ranks fail, with HCCL_E_PARA.
        void *d = abi_hccl_put(std::vector<float>(8, 1.0f));
        EXPECT_RC(HcclAllReduce(d, d, r == 1 ? 7 : 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_SUCCESS);
        EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_SUSPECT_REMOTE_ERROR);  // 507057
        EXPECT_RC(HcclGetCommAsyncError(c, &e), HCCL_SUCCESS);
        EXPECT(e == HCCL_E_PARA);
        EXPECT_RC(HcclGetCommAsyncError(c, nullptr), HCCL_E_PTR);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclGetErrorString) {
    const char *ok = HcclGetErrorString(HCCL_SUCCESS);
    const char *timeout = HcclGetErrorString(HCCL_E_TIMEOUT);
    const char *unknown = HcclGetErrorString((HcclResult)999);
    EXPECT(ok != nullptr && timeout != nullptr && unknown != nullptr);
    if (timeout != nullptr) EXPECT(strstr(timeout, "timeout") != nullptr);
    if (ok != nullptr && timeout != nullptr) EXPECT(strcmp(ok, timeout) != 0);
}

ABI_CHECK(HcclCommSuspend) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream s) {
        void *d = abi_hccl_put(std::vector<float>(4, 1.0f));
        EXPECT_RC(HcclCommSuspend(c), HCCL_SUCCESS);
        EXPECT_RC(HcclAllReduce(d, d, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_SUSPENDING);
        EXPECT_RC(HcclCommResume(c), HCCL_SUCCESS);
        EXPECT_RC(HcclCommSuspend(nullptr), HCCL_E_PTR);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclCommResume) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream s) {
        void *d = abi_hccl_put(std::vector<float>(4, 1.0f));
        EXPECT_RC(HcclCommSuspend(c), HCCL_SUCCESS);
        EXPECT_RC(HcclCommResume(c), HCCL_SUCCESS);
        EXPECT_RC(HcclAllReduce(d, d, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_SUCCESS);
        std::vector<float> got = abi_hccl_get<float>(s, d, 4);
        EXPECT(got[0] == 2.0f);
        EXPECT_RC(HcclCommResume((HcclComm)0x99), HCCL_E_PARA);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclAllReduce) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *in = abi_hccl_put(std::vector<float>(1000, (float)(r + 1)));
        void *out = abi_hccl_put(std::vector<float>(1000, 0.0f));
        EXPECT_RC(HcclAllReduce(in, out, 1000, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_SUCCESS);
        std::vector<float> got = abi_hccl_get<float>(s, out, 1000);
        EXPECT(got[0] == 3.0f && got[999] == 3.0f);
        EXPECT_RC(HcclAllReduce(in, out, 1000, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, c, s), HCCL_SUCCESS);
        got = abi_hccl_get<float>(s, out, 1000);
        EXPECT(got[500] == 2.0f);
        EXPECT_RC(HcclAllReduce(in, out, 0, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_SUCCESS);  // count 0
        EXPECT_RC(HcclAllReduce(in, out, 10, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_SUM, c, s), HCCL_E_NOT_SUPPORT);
        EXPECT_RC(HcclAllReduce(in, out, 10, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_PROD, c, s), HCCL_E_NOT_SUPPORT);
        EXPECT_RC(HcclAllReduce(in, out, 10, HCCL_DATA_TYPE_FP32, (HcclReduceOp)9, c, s), HCCL_E_PARA);
        EXPECT_RC(HcclAllReduce(in, out, 10, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, nullptr), HCCL_E_PTR);
        EXPECT_RC(HcclAllReduce(nullptr, out, 10, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PTR);
        EXPECT_RC(HcclAllReduce(in, out, 1001, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PARA);  // past the end
        float host[4] = {0};
        EXPECT_RC(HcclAllReduce(host, out, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PARA);  // host memory
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclBroadcast) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *d = abi_hccl_put(std::vector<int64_t>(100, r == 1 ? 42 : 0));
        EXPECT_RC(HcclBroadcast(d, 100, HCCL_DATA_TYPE_INT64, 1, c, s), HCCL_SUCCESS);
        std::vector<int64_t> got = abi_hccl_get<int64_t>(s, d, 100);
        EXPECT(got[0] == 42 && got[99] == 42);
        EXPECT_RC(HcclBroadcast(d, 100, HCCL_DATA_TYPE_INT64, 2, c, s), HCCL_E_PARA);  // root out of range
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclReduce) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *in = abi_hccl_put(std::vector<int32_t>(16, r + 5));
        void *out = r == 0 ? abi_hccl_put(std::vector<int32_t>(16, 0)) : nullptr;  // only the root's
        EXPECT_RC(HcclReduce(in, out, 16, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_PROD, 0, c, s), HCCL_SUCCESS);
        if (r == 0) {
            std::vector<int32_t> got = abi_hccl_get<int32_t>(s, out, 16);
            EXPECT(got[0] == 30 && got[15] == 30);
            EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
        }
        EXPECT_RC(HcclReduce(in, nullptr, 16, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 5, c, s), HCCL_E_PARA);
        EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclAllGather) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *in = abi_hccl_put(std::vector<uint16_t>(3, (uint16_t)(r + 1)));
        void *out = abi_hccl_put(std::vector<uint16_t>(6, 0));
        EXPECT_RC(HcclAllGather(in, out, 3, HCCL_DATA_TYPE_UINT16, c, s), HCCL_SUCCESS);
        std::vector<uint16_t> got = abi_hccl_get<uint16_t>(s, out, 6);
        EXPECT(got[0] == 1 && got[2] == 1 && got[3] == 2 && got[5] == 2);
        EXPECT_RC(HcclAllGather(in, out, 4, HCCL_DATA_TYPE_UINT16, c, s), HCCL_E_PARA);  // out needs 8
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclAllGatherV) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        uint64_t counts[2] = {1, 2}, displs[2] = {0, 2};      // a gap at element 1
        void *in = abi_hccl_put(std::vector<int8_t>(counts[r], (int8_t)(r + 7)));
        void *out = abi_hccl_put(std::vector<int8_t>(4, 0));
        EXPECT_RC(HcclAllGatherV(in, counts[r], out, counts, displs, HCCL_DATA_TYPE_INT8, c, s), HCCL_SUCCESS);
        std::vector<int8_t> got = abi_hccl_get<int8_t>(s, out, 4);
        EXPECT(got[0] == 7 && got[1] == 0 && got[2] == 8 && got[3] == 8);
        EXPECT_RC(HcclAllGatherV(in, 3, out, counts, displs, HCCL_DATA_TYPE_INT8, c, s), HCCL_E_PARA);
        EXPECT_RC(HcclAllGatherV(in, counts[r], out, nullptr, displs, HCCL_DATA_TYPE_INT8, c, s), HCCL_E_PTR);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclReduceScatter) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        std::vector<float> v(8);
        for (int i = 0; i < 8; i++) v[i] = (float)(i + 10 * r);
        void *in = abi_hccl_put(v);
        void *out = abi_hccl_put(std::vector<float>(4, 0.0f));
        EXPECT_RC(HcclReduceScatter(in, out, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_SUCCESS);
        std::vector<float> got = abi_hccl_get<float>(s, out, 4);
        EXPECT(got[0] == (float)(2 * (4 * r) + 10) && got[3] == (float)(2 * (4 * r + 3) + 10));
        EXPECT_RC(HcclReduceScatter(in, out, 4, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM, c, s), HCCL_E_NOT_SUPPORT);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclReduceScatterV) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        uint64_t counts[2] = {2, 1}, displs[2] = {0, 3};
        std::vector<int32_t> v = {1, 2, 99, 4};
        for (auto &x : v) x += r;
        void *in = abi_hccl_put(v);
        void *out = abi_hccl_put(std::vector<int32_t>(counts[r], 0));
        EXPECT_RC(HcclReduceScatterV(in, counts, displs, out, counts[r], HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, c, s), HCCL_SUCCESS);
        std::vector<int32_t> got = abi_hccl_get<int32_t>(s, out, counts[r]);
        if (r == 0) EXPECT(got[0] == 2 && got[1] == 3);
        if (r == 1) EXPECT(got[0] == 5);
        EXPECT_RC(HcclReduceScatterV(in, counts, displs, out, 5, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, c, s), HCCL_E_PARA);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclScatter) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *in = r == 1 ? abi_hccl_put(std::vector<double>{1.5, 2.5, 3.5, 4.5}) : nullptr;
        void *out = abi_hccl_put(std::vector<double>(2, 0.0));
        EXPECT_RC(HcclScatter(in, out, 2, HCCL_DATA_TYPE_FP64, 1, c, s), HCCL_SUCCESS);
        std::vector<double> got = abi_hccl_get<double>(s, out, 2);
        EXPECT(got[0] == 1.5 + 2 * r && got[1] == 2.5 + 2 * r);
        if (in != nullptr) EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclAlltoAll) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        std::vector<int32_t> v = {10 * r, 10 * r + 1};        // block j goes to rank j
        void *in = abi_hccl_put(v);
        void *out = abi_hccl_put(std::vector<int32_t>(2, -1));
        EXPECT_RC(HcclAlltoAll(in, 1, HCCL_DATA_TYPE_INT32, out, 1, HCCL_DATA_TYPE_INT32, c, s), HCCL_SUCCESS);
        std::vector<int32_t> got = abi_hccl_get<int32_t>(s, out, 2);
        EXPECT(got[0] == r && got[1] == 10 + r);
        EXPECT_RC(HcclAlltoAll(in, 1, HCCL_DATA_TYPE_INT32, out, 1, HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PARA);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclAlltoAllV) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        // Rank 0 sends 1 element to each; rank 1 sends 2 to rank 0 and 1 to itself.
        uint64_t sc[2][2] = {{1, 1}, {2, 1}}, sd[2][2] = {{0, 1}, {0, 2}};
        uint64_t rc[2][2] = {{1, 2}, {1, 1}}, rd[2][2] = {{0, 1}, {0, 1}};
        std::vector<int16_t> v = r == 0 ? std::vector<int16_t>{1, 2} : std::vector<int16_t>{3, 4, 5};
        void *in = abi_hccl_put(v);
        void *out = abi_hccl_put(std::vector<int16_t>(3, -1));
        EXPECT_RC(HcclAlltoAllV(in, sc[r], sd[r], HCCL_DATA_TYPE_INT16, out, rc[r], rd[r], HCCL_DATA_TYPE_INT16, c, s), HCCL_SUCCESS);
        std::vector<int16_t> got = abi_hccl_get<int16_t>(s, out, 3);
        if (r == 0) EXPECT(got[0] == 1 && got[1] == 3 && got[2] == 4);
        if (r == 1) EXPECT(got[0] == 2 && got[1] == 5);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclAlltoAllVC) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        uint64_t m[4] = {1, 1, 2, 1};                         // m[i * 2 + j]: from i to j
        std::vector<uint8_t> v = r == 0 ? std::vector<uint8_t>{1, 2} : std::vector<uint8_t>{3, 4, 5};
        void *in = abi_hccl_put(v);
        void *out = abi_hccl_put(std::vector<uint8_t>(3, 0));
        EXPECT_RC(HcclAlltoAllVC(in, m, HCCL_DATA_TYPE_UINT8, out, HCCL_DATA_TYPE_UINT8, c, s), HCCL_SUCCESS);
        std::vector<uint8_t> got = abi_hccl_get<uint8_t>(s, out, 3);
        if (r == 0) EXPECT(got[0] == 1 && got[1] == 3 && got[2] == 4);
        if (r == 1) EXPECT(got[0] == 2 && got[1] == 5);
        EXPECT_RC(HcclAlltoAllVC(in, nullptr, HCCL_DATA_TYPE_UINT8, out, HCCL_DATA_TYPE_UINT8, c, s), HCCL_E_PTR);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclSend) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *d = abi_hccl_put(std::vector<uint32_t>(64, r == 0 ? 77u : 0u));
        if (r == 0) EXPECT_RC(HcclSend(d, 64, HCCL_DATA_TYPE_UINT32, 1, c, s), HCCL_SUCCESS);
        else EXPECT_RC(HcclRecv(d, 64, HCCL_DATA_TYPE_UINT32, 0, c, s), HCCL_SUCCESS);
        std::vector<uint32_t> got = abi_hccl_get<uint32_t>(s, d, 64);
        EXPECT(got[0] == 77u && got[63] == 77u);
        EXPECT_RC(HcclSend(d, 64, HCCL_DATA_TYPE_UINT32, (uint32_t)r, c, s), HCCL_E_PARA);  // to itself
        EXPECT_RC(HcclSend(d, 64, HCCL_DATA_TYPE_UINT32, 2, c, s), HCCL_E_PARA);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclRecv) {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclExecTimeOut = 20;
    abi_hccl_ranks(2, &cfg, [](int r, HcclComm c, aclrtStream s) {
        void *d = abi_hccl_put(std::vector<float>(8, r == 1 ? 2.5f : 0.0f));
        if (r == 1) EXPECT_RC(HcclSend(d, 8, HCCL_DATA_TYPE_FP32, 0, c, s), HCCL_SUCCESS);
        else EXPECT_RC(HcclRecv(d, 8, HCCL_DATA_TYPE_FP32, 1, c, s), HCCL_SUCCESS);
        std::vector<float> got = abi_hccl_get<float>(s, d, 8);
        EXPECT(got[0] == 2.5f && got[7] == 2.5f);
        // Counts that disagree fail both sides.
        if (r == 1) EXPECT_RC(HcclSend(d, 8, HCCL_DATA_TYPE_FP32, 0, c, s), HCCL_SUCCESS);
        else EXPECT_RC(HcclRecv(d, 4, HCCL_DATA_TYPE_FP32, 1, c, s), HCCL_SUCCESS);
        EXPECT_RC(aclrtSynchronizeStream(s), ACL_ERROR_RT_SUSPECT_REMOTE_ERROR);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclBatchSendRecv) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *out = abi_hccl_put(std::vector<int32_t>(4, r + 1));
        void *in = abi_hccl_put(std::vector<int32_t>(4, 0));
        HcclSendRecvItem items[2];
        items[0].sendRecvType = HCCL_SEND;                    // both ranks send first: no deadlock
        items[0].buf = out; items[0].count = 4; items[0].dataType = HCCL_DATA_TYPE_INT32;
        items[0].remoteRank = (uint32_t)(1 - r);
        items[1] = items[0];
        items[1].sendRecvType = HCCL_RECV;
        items[1].buf = in;
        EXPECT_RC(HcclBatchSendRecv(items, 2, c, s), HCCL_SUCCESS);
        std::vector<int32_t> got = abi_hccl_get<int32_t>(s, in, 4);
        EXPECT(got[0] == 2 - r && got[3] == 2 - r);
        EXPECT_RC(HcclBatchSendRecv(nullptr, 2, c, s), HCCL_E_PTR);
        EXPECT_RC(HcclBatchSendRecv(items, 0, c, s), HCCL_E_PARA);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclBarrier) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        if (r == 1) abi_sleep_ms(100);                        // rank 1 arrives late
        AbiTime t0 = abi_now();
        EXPECT_RC(HcclBarrier(c, s), HCCL_SUCCESS);
        EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
        if (r == 0) EXPECT(abi_us_since(t0) >= 50000);        // rank 0 waited for it
        EXPECT_RC(HcclBarrier(c, nullptr), HCCL_E_PTR);
    });
}

ABI_CHECK(HcclGroupStart) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream s) {
        void *out = abi_hccl_put(std::vector<int64_t>(2, r + 1));
        void *in = abi_hccl_put(std::vector<int64_t>(2, 0));
        // Both ranks send before receiving: in a group, that does not deadlock.
        EXPECT_RC(HcclGroupStart(), HCCL_SUCCESS);
        EXPECT_RC(HcclSend(out, 2, HCCL_DATA_TYPE_INT64, (uint32_t)(1 - r), c, s), HCCL_SUCCESS);
        EXPECT_RC(HcclRecv(in, 2, HCCL_DATA_TYPE_INT64, (uint32_t)(1 - r), c, s), HCCL_SUCCESS);
        EXPECT_RC(HcclGroupEnd(), HCCL_SUCCESS);
        std::vector<int64_t> got = abi_hccl_get<int64_t>(s, in, 2);
        EXPECT(got[0] == 2 - r && got[1] == 2 - r);
        EXPECT_RC(aclrtFree(out), ACL_SUCCESS);
        EXPECT_RC(aclrtFree(in), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclGroupEnd) {
    EXPECT_RC(HcclGroupEnd(), HCCL_E_PARA);                   // no group open
    EXPECT_RC(HcclGroupStart(), HCCL_SUCCESS);
    EXPECT_RC(HcclGroupStart(), HCCL_SUCCESS);                // groups nest
    EXPECT_RC(HcclGroupEnd(), HCCL_SUCCESS);
    EXPECT_RC(HcclGroupEnd(), HCCL_SUCCESS);                  // the outermost end (nothing queued)
    EXPECT_RC(HcclGroupEnd(), HCCL_E_PARA);
}

ABI_CHECK(HcclGetRootInfoScalable) {
    HcclRootInfo a, b;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);                // needs a current device, as HcclGetRootInfo
    EXPECT_RC(HcclGetRootInfoScalable(nullptr), HCCL_E_PTR);
    EXPECT_RC(HcclGetRootInfoScalable(&a), HCCL_SUCCESS);
    EXPECT_RC(HcclGetRootInfoScalable(&b), HCCL_SUCCESS);
    EXPECT(memcmp(&a, &b, sizeof a) != 0);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(HcclCommInitRootInfoScalable) {
    static HcclRootInfo roots[2];
    HcclComm comm = nullptr;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(HcclGetRootInfoScalable(&roots[0]), HCCL_SUCCESS);
    EXPECT_RC(HcclGetRootInfoScalable(&roots[1]), HCCL_SUCCESS);
    EXPECT_RC(HcclCommInitRootInfoScalable(2, 2, nullptr, 0, 0, nullptr, &comm), HCCL_E_PTR);
    EXPECT_RC(HcclCommInitRootInfoScalable(2, 2, roots, 0, 1, nullptr, &comm), HCCL_E_PARA);  // nExtRoot
    EXPECT_RC(HcclCommInitRootInfoScalable(2, 0, roots, 0, 0, nullptr, &comm), HCCL_E_PARA);  // no roots
    EXPECT_RC(HcclCommInitRootInfoScalable(2, 3, roots, 0, 0, nullptr, &comm), HCCL_E_PARA);  // nRoot > nRanks
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    std::vector<std::thread> ts;
    for (int r = 0; r < 2; r++) {
        ts.emplace_back([r] {
            EXPECT_RC(aclrtSetDevice(r), ACL_SUCCESS);
            HcclComm c = nullptr;
            EXPECT_RC(HcclCommInitRootInfoScalable(2, 2, roots, r, 0, nullptr, &c), HCCL_SUCCESS);
            uint32_t id = 9, n = 0;
            EXPECT_RC(HcclGetRankId(c, &id), HCCL_SUCCESS);
            EXPECT_RC(HcclGetRankSize(c, &n), HCCL_SUCCESS);
            EXPECT((int)id == r && n == 2);
            EXPECT_RC(HcclCommDestroy(c), HCCL_SUCCESS);
            EXPECT_RC(aclrtResetDevice(r), ACL_SUCCESS);
        });
    }
    for (auto &t : ts) t.join();
}

ABI_CHECK(HcclGetCommConfigCapability) {
    uint32_t cap = HcclGetCommConfigCapability();
    EXPECT(cap > HCCL_COMM_CONFIG_COMM_NAME);
    EXPECT(cap > HCCL_COMM_CONFIG_EXEC_TIMEOUT);
    EXPECT(cap <= HCCL_COMM_CONFIG_RESERVED);
}

ABI_CHECK(HcclSetConfig) {
    HcclConfigValue v;
    v.value = 1;
    EXPECT_RC(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_SUCCESS);
    HcclConfigValue got;
    got.value = 7;
    EXPECT_RC(HcclGetConfig(HCCL_DETERMINISTIC, &got), HCCL_SUCCESS);
    EXPECT(got.value == 1);
    v.value = 2;
    EXPECT_RC(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_E_PARA);
    v.value = 2;                                              // AIV: not simulated
    EXPECT_RC(HcclSetConfig(HCCL_ACCELERATOR, v), HCCL_E_NOT_SUPPORT);
    v.value = 0;
    EXPECT_RC(HcclSetConfig(HCCL_ACCELERATOR, v), HCCL_SUCCESS);
    EXPECT_RC(HcclSetConfig((HcclConfig)42, v), HCCL_E_PARA);
    EXPECT_RC(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_SUCCESS);
}

ABI_CHECK(HcclGetConfig) {
    HcclConfigValue v;
    EXPECT_RC(HcclGetConfig(HCCL_DETERMINISTIC, nullptr), HCCL_E_PTR);
    EXPECT_RC(HcclGetConfig(HCCL_ACCELERATOR, &v), HCCL_SUCCESS);
    EXPECT(v.value == 0);
    EXPECT_RC(HcclGetConfig((HcclConfig)42, &v), HCCL_E_PARA);
}

ABI_CHECK(HcclSetCommConfig) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        HcclConfigValue v, got;
        v.value = 1;
        EXPECT_RC(HcclSetCommConfig(c, HCCL_DETERMINISTIC, v), HCCL_SUCCESS);
        EXPECT_RC(HcclGetCommConfig(c, HCCL_DETERMINISTIC, &got), HCCL_SUCCESS);
        EXPECT(got.value == 1);
        v.value = 5;
        EXPECT_RC(HcclSetCommConfig(c, HCCL_ACCELERATOR, v), HCCL_E_NOT_SUPPORT);
        EXPECT_RC(HcclSetCommConfig(nullptr, HCCL_DETERMINISTIC, v), HCCL_E_PTR);
    });
}

ABI_CHECK(HcclGetCommConfig) {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclDeterministic = 1;
    abi_hccl_ranks(2, &cfg, [](int, HcclComm c, aclrtStream) {
        HcclConfigValue got;
        got.value = 0;
        EXPECT_RC(HcclGetCommConfig(c, HCCL_DETERMINISTIC, &got), HCCL_SUCCESS);
        EXPECT(got.value == 1);                               // from the config
        EXPECT_RC(HcclGetCommConfig(c, HCCL_ACCELERATOR, &got), HCCL_SUCCESS);
        EXPECT(got.value == 0);
        EXPECT_RC(HcclGetCommConfig(c, HCCL_DETERMINISTIC, nullptr), HCCL_E_PTR);
    });
}

ABI_CHECK(HcclCommRegister) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        void *d = abi_hccl_put(std::vector<float>(256, 1.0f));
        void *h = nullptr;
        std::vector<float> host(256);
        EXPECT_RC(HcclCommRegister(c, d, 1024, nullptr, 0), HCCL_E_PTR);
        EXPECT_RC(HcclCommRegister(c, nullptr, 1024, &h, 0), HCCL_E_PTR);
        EXPECT_RC(HcclCommRegister(c, d, 0, &h, 0), HCCL_E_PARA);
        EXPECT_RC(HcclCommRegister(c, d, 1024, &h, 1), HCCL_E_PARA);      // flag is reserved
        EXPECT_RC(HcclCommRegister(c, d, 2048, &h, 0), HCCL_E_PARA);      // past the allocation
        EXPECT_RC(HcclCommRegister(c, host.data(), 1024, &h, 0), HCCL_E_PARA);  // host memory
        EXPECT_RC(HcclCommRegister(c, d, 1024, &h, 0), HCCL_SUCCESS);
        EXPECT(h != nullptr);
        EXPECT_RC(HcclCommDeregister(c, h), HCCL_SUCCESS);
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclCommDeregister) {
    abi_hccl_ranks(2, nullptr, [](int, HcclComm c, aclrtStream) {
        void *d = abi_hccl_put(std::vector<float>(16, 1.0f));
        void *h = nullptr;
        EXPECT_RC(HcclCommRegister(c, d, 64, &h, 0), HCCL_SUCCESS);
        EXPECT_RC(HcclCommDeregister(c, nullptr), HCCL_E_PTR);
        EXPECT_RC(HcclCommDeregister(c, h), HCCL_SUCCESS);
        EXPECT_RC(HcclCommDeregister(c, h), HCCL_E_PARA);         // twice
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}

ABI_CHECK(HcclCommExchangeMem) {
    abi_hccl_ranks(2, nullptr, [](int r, HcclComm c, aclrtStream) {
        void *d = abi_hccl_put(std::vector<float>(16, 1.0f));
        void *h = nullptr;
        EXPECT_RC(HcclCommRegister(c, d, 64, &h, 0), HCCL_SUCCESS);
        uint32_t peer = 1 - r, self = r, bad = 2;
        EXPECT_RC(HcclCommExchangeMem(c, nullptr, &peer, 1), HCCL_E_PTR);
        EXPECT_RC(HcclCommExchangeMem(c, h, nullptr, 1), HCCL_E_PTR);
        EXPECT_RC(HcclCommExchangeMem(c, h, &self, 1), HCCL_E_PARA);
        EXPECT_RC(HcclCommExchangeMem(c, h, &bad, 1), HCCL_E_PARA);
        EXPECT_RC(HcclCommExchangeMem(c, h, &peer, 1), HCCL_SUCCESS);   // both ranks call it
        EXPECT_RC(HcclCommDeregister(c, h), HCCL_SUCCESS);
        EXPECT_RC(HcclCommExchangeMem(c, h, &peer, 1), HCCL_E_PARA);   // deregistered
        EXPECT_RC(aclrtFree(d), ACL_SUCCESS);
    });
}
