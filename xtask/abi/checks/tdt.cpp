// The data-transfer API (acl_tdt.h: data items, datasets, channels;
// acl_tdt_queue.h: queues, buffers, routes), after hicann/runtime
// src/acl/acl_tdt_channel/tensor_data_transfer.cpp and
// src/acl/acl_tdt_queue/{queue,queue_process,queue_process_host}.cpp.

// ---- data items and datasets ----

ABI_CHECK(acltdtCreateDataItem) {
    int64_t dims[2] = {1, 2};
    float v[2] = {1.0f, 2.0f};
    EXPECT(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, nullptr, 2, ACL_FLOAT, v, 8) == nullptr);
    EXPECT(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 0, ACL_FLOAT, v, 8) == nullptr);
    EXPECT(acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, dims, 2, ACL_FLOAT, v, 8) == nullptr);
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, v, 8);
    EXPECT(it != nullptr);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyDataItem) {
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0, ACL_FLOAT, nullptr, 0);
    EXPECT_RC(acltdtDestroyDataItem(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtCreateDataset) {
    acltdtDataset *d = acltdtCreateDataset();
    EXPECT(d != nullptr);
    EXPECT(acltdtGetDatasetSize(d) == 0);
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyDataset) {
    acltdtDataset *d = acltdtCreateDataset();
    EXPECT_RC(acltdtDestroyDataset(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
}

ABI_CHECK(acltdtAddDataItem) {
    acltdtDataset *d = acltdtCreateDataset();
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0, ACL_FLOAT, nullptr, 0);
    EXPECT_RC(acltdtAddDataItem(nullptr, it), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtAddDataItem(d, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtAddDataItem(d, it), ACL_SUCCESS);
    EXPECT(acltdtGetDatasetSize(d) == 1);
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDataItem) {
    acltdtDataset *d = acltdtCreateDataset();
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0, ACL_FLOAT, nullptr, 0);
    EXPECT_RC(acltdtAddDataItem(d, it), ACL_SUCCESS);
    EXPECT(acltdtGetDataItem(d, 0) == it);
    EXPECT(acltdtGetDataItem(d, 1) == nullptr);
    EXPECT(acltdtGetDataItem(nullptr, 0) == nullptr);
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDatasetSize) {
    EXPECT(acltdtGetDatasetSize(nullptr) == 0);
}

ABI_CHECK(acltdtGetDatasetName) {
    acltdtDataset *d = acltdtCreateDataset();
    EXPECT(acltdtGetDatasetName(nullptr) == nullptr);
    const char *name = acltdtGetDatasetName(d);
    EXPECT(name != nullptr && name[0] == '\0');
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetTensorTypeFromItem) {
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_ABNORMAL, nullptr, 0, ACL_FLOAT, nullptr, 0);
    EXPECT(acltdtGetTensorTypeFromItem(it) == ACL_TENSOR_DATA_ABNORMAL);
    EXPECT(acltdtGetTensorTypeFromItem(nullptr) == ACL_TENSOR_DATA_UNDEFINED);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDataTypeFromItem) {
    int64_t dims[1] = {1};
    int32_t v = 3;
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_INT32, &v, 4);
    EXPECT(acltdtGetDataTypeFromItem(it) == ACL_INT32);
    EXPECT(acltdtGetDataTypeFromItem(nullptr) == ACL_DT_UNDEFINED);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDataAddrFromItem) {
    int64_t dims[1] = {1};
    int32_t v = 3;
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_INT32, &v, 4);
    EXPECT(acltdtGetDataAddrFromItem(it) == &v);
    EXPECT(acltdtGetDataAddrFromItem(nullptr) == nullptr);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDataSizeFromItem) {
    int64_t dims[1] = {1};
    int32_t v = 3;
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_INT32, &v, 4);
    EXPECT(acltdtGetDataSizeFromItem(it) == 4);
    EXPECT(acltdtGetDataSizeFromItem(nullptr) == 0);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDimNumFromItem) {
    int64_t dims[3] = {1, 2, 3};
    float v[6] = {0};
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 3, ACL_FLOAT, v, 24);
    EXPECT(acltdtGetDimNumFromItem(it) == 3);
    EXPECT(acltdtGetDimNumFromItem(nullptr) == 0);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetDimsFromItem) {
    int64_t dims[3] = {1, 2, 3};
    float v[6] = {0};
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 3, ACL_FLOAT, v, 24);
    int64_t out[4] = {0, 0, 0, 0};
    EXPECT_RC(acltdtGetDimsFromItem(nullptr, out, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetDimsFromItem(it, nullptr, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetDimsFromItem(it, out, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetDimsFromItem(it, out, 2), ACL_ERROR_INVALID_PARAM);   // fewer than 3
    EXPECT_RC(acltdtGetDimsFromItem(it, out, 4), ACL_SUCCESS);
    EXPECT(out[0] == 1 && out[1] == 2 && out[2] == 3);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetSliceInfoFromItem) {
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0, ACL_FLOAT, nullptr, 0);
    size_t num = 9, id = 9;
    EXPECT_RC(acltdtGetSliceInfoFromItem(nullptr, &num, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetSliceInfoFromItem(it, nullptr, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetSliceInfoFromItem(it, &num, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetSliceInfoFromItem(it, &num, &id), ACL_SUCCESS);
    EXPECT(num == 0 && id == 0);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
}

// ---- channels ----

ABI_CHECK(acltdtCreateChannel) {
    EXPECT(acltdtCreateChannel(0, nullptr) == nullptr);
    acltdtChannelHandle *ch = acltdtCreateChannel(0, "abi_tdt");
    EXPECT(ch != nullptr);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

ABI_CHECK(acltdtCreateChannelWithCapacity) {
    std::string long_name(128, 'n');
    EXPECT(acltdtCreateChannelWithCapacity(0, nullptr, 2) == nullptr);
    EXPECT(acltdtCreateChannelWithCapacity(0, long_name.c_str(), 2) == nullptr);
    EXPECT(acltdtCreateChannelWithCapacity(0, "abi_cap", 1) == nullptr);
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_cap", 2);
    EXPECT(ch != nullptr);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyChannel) {
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_destroy", 2);
    EXPECT_RC(acltdtDestroyChannel(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

ABI_CHECK(acltdtStopChannel) {
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_stop", 2);
    EXPECT_RC(acltdtStopChannel(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtStopChannel(ch), ACL_SUCCESS);   // nothing to wake on a queue channel
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

ABI_CHECK(acltdtSendTensor) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_send", 2);
    int64_t dims[1] = {2};
    float v[2] = {1.0f, 2.0f};
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_FLOAT, v, 8);
    acltdtDataset *d = acltdtCreateDataset();
    EXPECT_RC(acltdtAddDataItem(d, it), ACL_SUCCESS);
    EXPECT_RC(acltdtSendTensor(nullptr, d, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSendTensor(ch, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSendTensor(ch, d, 0), ACL_SUCCESS);
    EXPECT_RC(acltdtSendTensor(ch, d, 100), ACL_SUCCESS);
    EXPECT_RC(acltdtSendTensor(ch, d, 0), ACL_ERROR_RT_QUEUE_FULL);
    acltdtChannelHandle *feed = acltdtCreateChannel(0, "abi_feed");
    EXPECT_RC(acltdtSendTensor(feed, d, 0), ACL_ERROR_INVALID_PARAM);   // -1 only
    EXPECT_RC(acltdtDestroyChannel(feed), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtReceiveTensor) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_recv", 2);
    int64_t dims[1] = {2};
    float v[2] = {1.5f, 2.5f};
    acltdtDataItem *it = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_FLOAT, v, 8);
    acltdtDataset *d = acltdtCreateDataset();
    EXPECT_RC(acltdtAddDataItem(d, it), ACL_SUCCESS);
    acltdtDataset *got = acltdtCreateDataset();
    EXPECT_RC(acltdtReceiveTensor(nullptr, got, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtReceiveTensor(ch, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtReceiveTensor(ch, got, 0), ACL_ERROR_RT_QUEUE_EMPTY);
    EXPECT_RC(acltdtSendTensor(ch, d, -1), ACL_SUCCESS);
    EXPECT_RC(acltdtReceiveTensor(ch, got, -1), ACL_SUCCESS);
    EXPECT(acltdtGetDatasetSize(got) == 1);
    const float *r = static_cast<const float *>(acltdtGetDataAddrFromItem(acltdtGetDataItem(got, 0)));
    EXPECT(r != nullptr && r[0] == 1.5f && r[1] == 2.5f);
    EXPECT_RC(acltdtDestroyDataset(got), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyDataset(d), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyDataItem(it), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtCleanChannel) {
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_clean", 2);
    acltdtChannelHandle *feed = acltdtCreateChannel(0, "abi_clean_feed");
    EXPECT_RC(acltdtCleanChannel(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtCleanChannel(ch), ACL_SUCCESS);
    EXPECT_RC(acltdtCleanChannel(feed), ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_RC(acltdtDestroyChannel(feed), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

ABI_CHECK(acltdtQueryChannelSize) {
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, "abi_size", 2);
    acltdtChannelHandle *feed = acltdtCreateChannel(0, "abi_size_feed");
    size_t n = 9;
    EXPECT_RC(acltdtQueryChannelSize(nullptr, &n), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtQueryChannelSize(ch, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtQueryChannelSize(ch, &n), ACL_SUCCESS);
    EXPECT(n == 0);
    EXPECT_RC(acltdtQueryChannelSize(feed, &n), ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_RC(acltdtDestroyChannel(feed), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

// ---- queues ----

ABI_CHECK(acltdtCreateQueueAttr) {
    acltdtQueueAttr *a = acltdtCreateQueueAttr();
    EXPECT(a != nullptr);
    uint32_t depth = 0;
    size_t size = 0;
    EXPECT_RC(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &size, &depth), ACL_SUCCESS);
    EXPECT(depth == 8 && size == 4);   // RT_MQ_DEPTH_DEFAULT
    EXPECT_RC(acltdtDestroyQueueAttr(a), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyQueueAttr) {
    acltdtQueueAttr *a = acltdtCreateQueueAttr();
    EXPECT_RC(acltdtDestroyQueueAttr(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyQueueAttr(a), ACL_SUCCESS);
}

ABI_CHECK(acltdtSetQueueAttr) {
    acltdtQueueAttr *a = acltdtCreateQueueAttr();
    uint32_t depth = 4;
    const char *name = "abi_queue";
    EXPECT_RC(acltdtSetQueueAttr(nullptr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 4, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 8, &depth), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueAttr(a, static_cast<acltdtQueueAttrType>(7), 4, &depth), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth), ACL_SUCCESS);
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, sizeof(name), &name), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueAttr(a), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetQueueAttr) {
    acltdtQueueAttr *a = acltdtCreateQueueAttr();
    const char *name = "abi_named";
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, sizeof(name), &name), ACL_SUCCESS);
    const char *got = nullptr;
    size_t size = 0;
    EXPECT_RC(acltdtGetQueueAttr(nullptr, ACL_TDT_QUEUE_NAME_PTR, sizeof(got), &size, &got), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, sizeof(got), nullptr, &got), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, 4, &size, &got), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, sizeof(got), &size, &got), ACL_SUCCESS);
    EXPECT(got != nullptr && strcmp(got, "abi_named") == 0 && size == sizeof(got));
    EXPECT_RC(acltdtDestroyQueueAttr(a), ACL_SUCCESS);
}

ABI_CHECK(acltdtCreateQueue) {
    uint32_t qid = 0;
    EXPECT_RC(acltdtCreateQueue(nullptr, &qid), ACL_ERROR_RT_CONTEXT_NULL);   // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(acltdtCreateQueue(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    acltdtQueueAttr *a = acltdtCreateQueueAttr();
    uint32_t depth = 1;
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth), ACL_SUCCESS);
    EXPECT_RC(acltdtCreateQueue(a, &qid), ACL_ERROR_RT_PARAM_INVALID);   // below RT_MQ_DEPTH_MIN
    EXPECT_RC(acltdtCreateQueue(nullptr, &qid), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueue(qid), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueAttr(a), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyQueue) {
    EXPECT_RC(acltdtDestroyQueue(1), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t qid = 0;
    EXPECT_RC(acltdtCreateQueue(nullptr, &qid), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueue(qid), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueue(qid), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtEnqueueData) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t qid = 0;
    acltdtQueueAttr *a = acltdtCreateQueueAttr();
    uint32_t depth = 2;
    EXPECT_RC(acltdtSetQueueAttr(a, ACL_TDT_QUEUE_DEPTH_UINT32, 4, &depth), ACL_SUCCESS);
    EXPECT_RC(acltdtCreateQueue(a, &qid), ACL_SUCCESS);
    char data[4] = {1, 2, 3, 4};
    char user[97] = {0};
    EXPECT_RC(acltdtEnqueueData(qid, nullptr, 4, nullptr, 0, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtEnqueueData(qid, data, 0, nullptr, 0, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtEnqueueData(qid, data, 4, user, 97, 0, 0), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_RC(acltdtEnqueueData(qid, data, 4, user, 96, 0, 0), ACL_SUCCESS);
    EXPECT_RC(acltdtEnqueueData(qid, data, 4, nullptr, 0, -1, 0), ACL_SUCCESS);
    EXPECT_RC(acltdtEnqueueData(qid, data, 4, nullptr, 0, 10, 0), ACL_ERROR_RT_QUEUE_FULL);
    EXPECT_RC(acltdtDestroyQueue(qid), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueAttr(a), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtDequeueData) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t qid = 0;
    EXPECT_RC(acltdtCreateQueue(nullptr, &qid), ACL_SUCCESS);
    char data[4] = {1, 2, 3, 4};
    char user[2] = {7, 8};
    char out[8] = {0};
    char uout[2] = {0, 0};
    size_t n = 0;
    EXPECT_RC(acltdtDequeueData(qid, out, 8, &n, nullptr, 0, 0), ACL_ERROR_RT_QUEUE_EMPTY);
    EXPECT_RC(acltdtEnqueueData(qid, data, 4, user, 2, 0, 0), ACL_SUCCESS);
    EXPECT_RC(acltdtDequeueData(qid, nullptr, 8, &n, nullptr, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDequeueData(qid, out, 8, nullptr, nullptr, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDequeueData(qid, out, 0, &n, nullptr, 0, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDequeueData(qid, out, 8, &n, uout, 2, -1), ACL_SUCCESS);
    EXPECT(n == 4 && out[3] == 4 && uout[0] == 7 && uout[1] == 8);
    EXPECT_RC(acltdtDestroyQueue(qid), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

// The mbuf functions, grant and attach exist on the device's control CPU
// only: a host program gets 200006 (QueueProcessorHost, QueueProcessor).

ABI_CHECK(acltdtAllocBuf) {
    acltdtBuf buf = nullptr;
    EXPECT_RC(acltdtAllocBuf(8, 5, &buf), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtAllocBuf(8, ACL_TDT_NORMAL_MEM, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtAllocBuf(8, ACL_TDT_NORMAL_MEM, &buf), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtFreeBuf) {
    EXPECT_RC(acltdtFreeBuf(nullptr), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtGetBufData) {
    void *p = nullptr;
    size_t n = 0;
    EXPECT_RC(acltdtGetBufData(nullptr, &p, &n), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtSetBufDataLen) {
    EXPECT_RC(acltdtSetBufDataLen(nullptr, 4), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtGetBufDataLen) {
    size_t n = 0;
    EXPECT_RC(acltdtGetBufDataLen(nullptr, &n), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtAppendBufChain) {
    EXPECT_RC(acltdtAppendBufChain(nullptr, nullptr), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtGetBufChainNum) {
    uint32_t n = 0;
    EXPECT_RC(acltdtGetBufChainNum(nullptr, &n), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtGetBufFromChain) {
    acltdtBuf b = nullptr;
    EXPECT_RC(acltdtGetBufFromChain(nullptr, 0, &b), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtGetBufUserData) {
    char u[4];
    EXPECT_RC(acltdtGetBufUserData(nullptr, u, 4, 0), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtSetBufUserData) {
    char u[4] = {0};
    EXPECT_RC(acltdtSetBufUserData(nullptr, u, 4, 0), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtCopyBufRef) {
    acltdtBuf b = nullptr;
    EXPECT_RC(acltdtCopyBufRef(nullptr, &b), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtEnqueue) {
    EXPECT_RC(acltdtEnqueue(1, nullptr, 0), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtDequeue) {
    acltdtBuf b = nullptr;
    EXPECT_RC(acltdtDequeue(1, &b, 0), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtGrantQueue) {
    EXPECT_RC(acltdtGrantQueue(1, 1, ACL_TDT_QUEUE_PERMISSION_DEQUEUE, 0), ACL_ERROR_FEATURE_UNSUPPORTED);
}

ABI_CHECK(acltdtAttachQueue) {
    uint32_t perm = 0;
    EXPECT_RC(acltdtAttachQueue(1, 0, &perm), ACL_ERROR_FEATURE_UNSUPPORTED);
}

// ---- routes ----

ABI_CHECK(acltdtCreateQueueRoute) {
    acltdtQueueRoute *r = acltdtCreateQueueRoute(3, 4);
    EXPECT(r != nullptr);
    uint32_t v = 0;
    size_t n = 0;
    EXPECT_RC(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, 4, &n, &v), ACL_SUCCESS);
    EXPECT(v == 3);
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyQueueRoute) {
    acltdtQueueRoute *r = acltdtCreateQueueRoute(1, 2);
    EXPECT_RC(acltdtDestroyQueueRoute(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetQueueRouteParam) {
    acltdtQueueRoute *r = acltdtCreateQueueRoute(3, 4);
    uint32_t v = 0;
    int32_t status = -1;
    size_t n = 0;
    EXPECT_RC(acltdtGetQueueRouteParam(nullptr, ACL_TDT_QUEUE_ROUTE_DST_UINT32, 4, &n, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_DST_UINT32, 4, nullptr, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_DST_UINT32, 2, &n, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRouteParam(r, static_cast<acltdtQueueRouteParamType>(9), 4, &n, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_DST_UINT32, 4, &n, &v), ACL_SUCCESS);
    EXPECT(v == 4 && n == 4);
    EXPECT_RC(acltdtGetQueueRouteParam(r, ACL_TDT_QUEUE_ROUTE_STATUS_INT32, 4, &n, &status), ACL_SUCCESS);
    EXPECT(status == 0);
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
}

ABI_CHECK(acltdtCreateQueueRouteList) {
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    EXPECT(l != nullptr);
    EXPECT(acltdtGetQueueRouteNum(l) == 0);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyQueueRouteList) {
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    EXPECT_RC(acltdtDestroyQueueRouteList(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
}

ABI_CHECK(acltdtAddQueueRoute) {
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    acltdtQueueRoute *r = acltdtCreateQueueRoute(1, 2);
    EXPECT_RC(acltdtAddQueueRoute(nullptr, r), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtAddQueueRoute(l, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtAddQueueRoute(l, r), ACL_SUCCESS);
    EXPECT(acltdtGetQueueRouteNum(l) == 1);
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetQueueRoute) {
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    acltdtQueueRoute *r = acltdtCreateQueueRoute(5, 6);
    acltdtQueueRoute *out = acltdtCreateQueueRoute(0, 0);
    EXPECT_RC(acltdtAddQueueRoute(l, r), ACL_SUCCESS);
    EXPECT_RC(acltdtGetQueueRoute(nullptr, 0, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRoute(l, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRoute(l, 1, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtGetQueueRoute(l, 0, out), ACL_SUCCESS);
    uint32_t v = 0;
    size_t n = 0;
    EXPECT_RC(acltdtGetQueueRouteParam(out, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, 4, &n, &v), ACL_SUCCESS);
    EXPECT(v == 5);
    EXPECT_RC(acltdtDestroyQueueRoute(out), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
}

ABI_CHECK(acltdtGetQueueRouteNum) {
    EXPECT(acltdtGetQueueRouteNum(nullptr) == 0);
}

ABI_CHECK(acltdtCreateQueueRouteQueryInfo) {
    acltdtQueueRouteQueryInfo *q = acltdtCreateQueueRouteQueryInfo();
    EXPECT(q != nullptr);
    EXPECT_RC(acltdtDestroyQueueRouteQueryInfo(q), ACL_SUCCESS);
}

ABI_CHECK(acltdtDestroyQueueRouteQueryInfo) {
    acltdtQueueRouteQueryInfo *q = acltdtCreateQueueRouteQueryInfo();
    EXPECT_RC(acltdtDestroyQueueRouteQueryInfo(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtDestroyQueueRouteQueryInfo(q), ACL_SUCCESS);
}

ABI_CHECK(acltdtSetQueueRouteQueryInfo) {
    acltdtQueueRouteQueryInfo *q = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteQueryMode mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC;
    uint32_t src = 1;
    uint64_t wide = 1;
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(nullptr, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode), &mode), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(q, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode), nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(q, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, 8, &wide), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(q, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode), &mode), ACL_SUCCESS);
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(q, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, 4, &src), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRouteQueryInfo(q), ACL_SUCCESS);
}

// Route binding: the simulator stands in for the device's queue scheduler.

ABI_CHECK(acltdtBindQueueRoutes) {
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    EXPECT_RC(acltdtBindQueueRoutes(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtBindQueueRoutes(l), ACL_ERROR_RT_CONTEXT_NULL);   // no device
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t src = 0, dst = 0;
    EXPECT_RC(acltdtCreateQueue(nullptr, &src), ACL_SUCCESS);
    EXPECT_RC(acltdtCreateQueue(nullptr, &dst), ACL_SUCCESS);
    acltdtQueueRoute *r = acltdtCreateQueueRoute(src, dst);
    EXPECT_RC(acltdtAddQueueRoute(l, r), ACL_SUCCESS);
    EXPECT_RC(acltdtBindQueueRoutes(l), ACL_SUCCESS);
    EXPECT_RC(acltdtBindQueueRoutes(l), ACL_ERROR_FAILURE);   // bound already
    char in[3] = {1, 2, 3}, out[3] = {0, 0, 0};
    size_t n = 0;
    EXPECT_RC(acltdtEnqueueData(src, in, 3, nullptr, 0, 0, 0), ACL_SUCCESS);
    EXPECT_RC(acltdtDequeueData(dst, out, 3, &n, nullptr, 0, 0), ACL_SUCCESS);   // forwarded
    EXPECT(n == 3 && out[2] == 3);
    EXPECT_RC(acltdtDestroyQueue(src), ACL_ERROR_FAILURE);   // bound
    EXPECT_RC(acltdtUnbindQueueRoutes(l), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueue(src), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueue(dst), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtUnbindQueueRoutes) {
    EXPECT_RC(acltdtUnbindQueueRoutes(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    acltdtQueueRoute *r = acltdtCreateQueueRoute(7001, 7002);
    EXPECT_RC(acltdtAddQueueRoute(l, r), ACL_SUCCESS);
    EXPECT_RC(acltdtUnbindQueueRoutes(l), ACL_ERROR_FAILURE);   // not bound
    EXPECT_RC(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(acltdtQueryQueueRoutes) {
    acltdtQueueRouteQueryInfo *q = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteList *l = acltdtCreateQueueRouteList();
    EXPECT_RC(acltdtQueryQueueRoutes(nullptr, l), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtQueryQueueRoutes(q, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(acltdtQueryQueueRoutes(q, l), ACL_ERROR_INVALID_PARAM);   // no mode set
    acltdtQueueRouteQueryMode mode = ACL_TDT_QUEUE_ROUTE_QUERY_DST;
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(q, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode), &mode), ACL_SUCCESS);
    EXPECT_RC(acltdtQueryQueueRoutes(q, l), ACL_ERROR_INVALID_PARAM);   // no destination set
    uint32_t dst = 7003;
    EXPECT_RC(acltdtSetQueueRouteQueryInfo(q, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, 4, &dst), ACL_SUCCESS);
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(acltdtQueryQueueRoutes(q, l), ACL_SUCCESS);
    EXPECT(acltdtGetQueueRouteNum(l) == 0);
    EXPECT_RC(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
    EXPECT_RC(acltdtDestroyQueueRouteQueryInfo(q), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}
