// mstx-style tensor-info ranges (cann-sim/src/acl/prof_range.rs;
// hicann/runtime prof_acl_core.cpp, prof_impl_inner_api.cpp MsprofGetHashId,
// prof_tx_plugin.cpp ProftxRangePushEx/ProftxRangePop). The pop check comes
// first: nothing has been pushed in the process yet.

ABI_CHECK(aclprofRangePop) {
    EXPECT_RC(aclprofRangePop(), ACL_ERROR_INVALID_PARAM);  // no push yet
}

ABI_CHECK(aclprofStr2Id) {
    uint64_t id = aclprofStr2Id("MatMul_7");
    EXPECT(id != UINT64_MAX);
    EXPECT(aclprofStr2Id("MatMul_7") == id);
    EXPECT(aclprofStr2Id("") == UINT64_MAX);
}

ABI_CHECK(aclprofRangePushEx) {
    EXPECT_RC(aclprofRangePushEx(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclprofTensorInfo info = {};
    info.opNameId = aclprofStr2Id("MatMul_7");
    info.stream = s;
    aclprofEventAttributes attr = {};
    attr.version = ACL_PROF_EVENT_ATTR_VERSION;
    attr.size = sizeof(attr);
    attr.messageType = 1;
    attr.message.tensorInfo = &info;
    EXPECT_RC(aclprofRangePushEx(&attr), -1);  // not TENSOR_INFO
    attr.messageType = ACL_PROF_MESSAGE_TYPE_TENSOR_INFO;
    abi_tx_run([&] {
        EXPECT_RC(aclprofRangePushEx(&attr), ACL_SUCCESS);
        EXPECT_RC(aclprofRangePop(), ACL_SUCCESS);
        EXPECT_RC(aclprofRangePop(), ACL_SUCCESS);  // the push is kept
    });
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
