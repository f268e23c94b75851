// abi-check behavioural checks for operators (aclop*: tensor descriptions,
// data buffers, attributes, execution). Format and helpers: see
// xtask/abi/README.md.

// ---- tensor descriptions ----

ABI_CHECK(aclCreateTensorDesc) {
    int64_t dims[2] = {2, 3};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT16, 2, dims, ACL_FORMAT_NCHW);
    EXPECT(d != nullptr);
    EXPECT(aclGetTensorDescType(d) == ACL_FLOAT16);
    EXPECT(aclGetTensorDescNumDims(d) == 2);
    aclDestroyTensorDesc(d);
    aclTensorDesc *scalar = aclCreateTensorDesc(ACL_FLOAT, 0, nullptr, ACL_FORMAT_ND);  // a scalar
    EXPECT(scalar != nullptr && aclGetTensorDescElementCount(scalar) == 1);
    aclDestroyTensorDesc(scalar);
    EXPECT(aclCreateTensorDesc(ACL_FLOAT, 2, nullptr, ACL_FORMAT_ND) == nullptr);  // dims null
    EXPECT(!abi_recent().empty());
    EXPECT(aclCreateTensorDesc(ACL_FLOAT, -1, dims, ACL_FORMAT_ND) == nullptr);
    EXPECT(aclCreateTensorDesc(ACL_FLOAT, 129, dims, ACL_FORMAT_ND) == nullptr);    // > ACL_MAX_DIM_CNT
    int64_t bad[1] = {-3};
    EXPECT(aclCreateTensorDesc(ACL_FLOAT, 1, bad, ACL_FORMAT_ND) == nullptr);
}

ABI_CHECK(aclDestroyTensorDesc) {
    aclDestroyTensorDesc(nullptr);                            // ignored
    aclTensorDesc *d = abi_desc_f32({4});
    aclDestroyTensorDesc(d);
    EXPECT(aclGetTensorDescType(d) == ACL_DT_UNDEFINED);      // gone
    abi_recent();
    aclDestroyTensorDesc(d);                                  // twice: a message, nothing else
    EXPECT(!abi_recent().empty());
}

ABI_CHECK(aclGetTensorDescType) {
    EXPECT(aclGetTensorDescType(nullptr) == ACL_DT_UNDEFINED);
    int64_t dims[1] = {3};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_BF16, 1, dims, ACL_FORMAT_ND);
    EXPECT(aclGetTensorDescType(d) == ACL_BF16);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescFormat) {
    EXPECT(aclGetTensorDescFormat(nullptr) == ACL_FORMAT_UNDEFINED);
    int64_t dims[4] = {1, 2, 3, 4};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, 4, dims, ACL_FORMAT_NHWC);
    EXPECT(aclGetTensorDescFormat(d) == ACL_FORMAT_NHWC);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescSize) {
    EXPECT(aclGetTensorDescSize(nullptr) == 0);
    int64_t dims[2] = {2, 3};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT16, 2, dims, ACL_FORMAT_ND);
    EXPECT(aclGetTensorDescSize(d) == 12);
    int64_t dyn[2] = {-1, 3};
    EXPECT_RC(aclSetTensorShape(d, 2, dyn), ACL_SUCCESS);
    EXPECT(aclGetTensorDescSize(d) == 0);                     // unknown dimension
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescElementCount) {
    EXPECT(aclGetTensorDescElementCount(nullptr) == 0);
    aclTensorDesc *d = abi_desc_f32({2, 3, 4});
    EXPECT(aclGetTensorDescElementCount(d) == 24);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescNumDims) {
    EXPECT(aclGetTensorDescNumDims(nullptr) == 0);
    aclTensorDesc *d = abi_desc_f32({2, 3, 4});
    EXPECT(aclGetTensorDescNumDims(d) == 3);
    int64_t unknown_rank[1] = {-2};
    EXPECT_RC(aclSetTensorShape(d, 1, unknown_rank), ACL_SUCCESS);
    EXPECT(aclGetTensorDescNumDims(d) == (size_t)ACL_UNKNOWN_RANK);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescDim) {
    aclTensorDesc *d = abi_desc_f32({5, 7});
    EXPECT(aclGetTensorDescDim(d, 1) == 7);
    EXPECT(aclGetTensorDescDim(d, 2) == -1);                  // out of range
    EXPECT(aclGetTensorDescDim(nullptr, 0) == -1);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescDimV2) {
    aclTensorDesc *d = abi_desc_f32({5, 7});
    int64_t v = 0;
    EXPECT_RC(aclGetTensorDescDimV2(d, 0, &v), ACL_SUCCESS);
    EXPECT(v == 5);
    EXPECT_RC(aclGetTensorDescDimV2(d, 2, &v), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclGetTensorDescDimV2(d, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclGetTensorDescDimV2(nullptr, 0, &v), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescDimRange) {
    aclTensorDesc *d = abi_desc_f32({-1, 8});
    int64_t range[2] = {0, 0};
    EXPECT_RC(aclGetTensorDescDimRange(d, 1, 2, range), ACL_SUCCESS);
    EXPECT(range[0] == 8 && range[1] == 8);                   // a static dimension
    int64_t set[2][2] = {{1, 32}, {8, 8}};
    EXPECT_RC(aclSetTensorShapeRange(d, 2, set), ACL_SUCCESS);
    EXPECT_RC(aclGetTensorDescDimRange(d, 0, 2, range), ACL_SUCCESS);
    EXPECT(range[0] == 1 && range[1] == 32);
    EXPECT_RC(aclGetTensorDescDimRange(d, 0, 1, range), ACL_ERROR_INVALID_PARAM);  // too short
    EXPECT_RC(aclGetTensorDescDimRange(d, 5, 2, range), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclGetTensorDescName) {
    EXPECT(aclGetTensorDescName(nullptr) == nullptr);
    aclTensorDesc *d = abi_desc_f32({1});
    const char *n = aclGetTensorDescName(d);
    EXPECT(n != nullptr && n[0] == '\0');                     // unnamed
    aclSetTensorDescName(d, "x1");
    n = aclGetTensorDescName(d);
    EXPECT(n != nullptr && strcmp(n, "x1") == 0);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorDescName) {
    aclTensorDesc *d = abi_desc_f32({1});
    aclSetTensorDescName(d, "weights");
    EXPECT(strcmp(aclGetTensorDescName(d), "weights") == 0);
    aclSetTensorDescName(d, nullptr);                         // clears it
    EXPECT(strcmp(aclGetTensorDescName(d), "") == 0);
    aclSetTensorDescName(nullptr, "x");                       // a message, nothing else
    EXPECT(!abi_recent().empty());
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorFormat) {
    aclTensorDesc *d = abi_desc_f32({1, 2, 3, 4});
    EXPECT_RC(aclSetTensorFormat(d, ACL_FORMAT_NCHW), ACL_SUCCESS);
    EXPECT(aclGetTensorDescFormat(d) == ACL_FORMAT_NCHW);
    EXPECT_RC(aclSetTensorFormat(d, (aclFormat)12345), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorFormat(nullptr, ACL_FORMAT_ND), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorStorageFormat) {
    aclTensorDesc *d = abi_desc_f32({16, 16});
    EXPECT_RC(aclSetTensorStorageFormat(d, ACL_FORMAT_FRACTAL_NZ), ACL_SUCCESS);
    EXPECT(aclGetTensorDescFormat(d) == ACL_FORMAT_ND);       // the origin format is unchanged
    EXPECT_RC(aclSetTensorStorageFormat(nullptr, ACL_FORMAT_ND), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorOriginFormat) {
    aclTensorDesc *d = abi_desc_f32({2});
    EXPECT_RC(aclSetTensorOriginFormat(d, ACL_FORMAT_ND), ACL_SUCCESS);
    EXPECT_RC(aclSetTensorOriginFormat(d, (aclFormat)-7), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorOriginFormat(nullptr, ACL_FORMAT_ND), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorShape) {
    aclTensorDesc *d = abi_desc_f32({2});
    int64_t dims[3] = {4, 5, 6};
    EXPECT_RC(aclSetTensorShape(d, 3, dims), ACL_SUCCESS);
    EXPECT(aclGetTensorDescNumDims(d) == 3 && aclGetTensorDescElementCount(d) == 120);
    EXPECT_RC(aclSetTensorShape(d, 3, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorShape(nullptr, 3, dims), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorStorageShape) {
    aclTensorDesc *d = abi_desc_f32({16, 16});
    int64_t dims[4] = {1, 1, 16, 16};
    EXPECT_RC(aclSetTensorStorageShape(d, 4, dims), ACL_SUCCESS);
    EXPECT(aclGetTensorDescNumDims(d) == 2);                  // the shape is unchanged
    EXPECT_RC(aclSetTensorStorageShape(d, -1, dims), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorOriginShape) {
    aclTensorDesc *d = abi_desc_f32({4});
    int64_t dims[2] = {2, 2};
    EXPECT_RC(aclSetTensorOriginShape(d, 2, dims), ACL_SUCCESS);
    EXPECT_RC(aclSetTensorOriginShape(nullptr, 2, dims), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorShapeRange) {
    aclTensorDesc *d = abi_desc_f32({-1, 3});
    int64_t ok[2][2] = {{1, -1}, {3, 3}};                     // max -1: unbounded
    EXPECT_RC(aclSetTensorShapeRange(d, 2, ok), ACL_SUCCESS);
    int64_t reversed[2][2] = {{5, 1}, {3, 3}};
    EXPECT_RC(aclSetTensorShapeRange(d, 2, reversed), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorShapeRange(d, 1, ok), ACL_ERROR_INVALID_PARAM);  // rank is 2
    EXPECT_RC(aclSetTensorShapeRange(d, 2, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorValueRange) {
    aclTensorDesc *d = abi_desc_f32({2});
    int64_t r[2][2] = {{0, 10}, {0, 10}};
    EXPECT_RC(aclSetTensorValueRange(d, 2, r), ACL_SUCCESS);
    EXPECT_RC(aclSetTensorValueRange(d, 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorValueRange(nullptr, 2, r), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorConst) {
    int64_t dims[1] = {2};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_INT64, 1, dims, ACL_FORMAT_ND);
    int64_t v[2] = {1, 0};
    EXPECT_RC(aclSetTensorConst(d, v, sizeof v), ACL_SUCCESS);
    EXPECT_RC(aclSetTensorConst(d, v, 8), ACL_ERROR_INVALID_PARAM);        // shorter than 2 x int64
    EXPECT_RC(aclSetTensorConst(d, nullptr, 16), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorConst(d, v, 0), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorPlaceMent) {
    aclTensorDesc *d = abi_desc_f32({2});
    EXPECT_RC(aclSetTensorPlaceMent(d, ACL_MEMTYPE_HOST), ACL_SUCCESS);
    EXPECT_RC(aclSetTensorPlaceMent(d, (aclMemType)9), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclSetTensorPlaceMent(nullptr, ACL_MEMTYPE_DEVICE), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclSetTensorDynamicInput) {
    aclTensorDesc *d = abi_desc_f32({2});
    EXPECT_RC(aclSetTensorDynamicInput(d, "x"), ACL_SUCCESS);
    EXPECT_RC(aclSetTensorDynamicInput(d, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclDataTypeSize) {
    EXPECT(aclDataTypeSize(ACL_FLOAT) == 4);
    EXPECT(aclDataTypeSize(ACL_FLOAT16) == 2);
    EXPECT(aclDataTypeSize(ACL_BF16) == 2);
    EXPECT(aclDataTypeSize(ACL_INT64) == 8);
    EXPECT(aclDataTypeSize(ACL_BOOL) == 1);
    EXPECT(aclDataTypeSize(ACL_DT_UNDEFINED) == 0);
    EXPECT(aclDataTypeSize(ACL_STRING) == 0);
    // data_buffer.cpp: the sub-byte types count one byte, an unnamed value
    // falls into the 64-bit branch.
    EXPECT(aclDataTypeSize(ACL_INT4) == 1);
    EXPECT(aclDataTypeSize(ACL_COMPLEX32) == 4);
    EXPECT(aclDataTypeSize(static_cast<aclDataType>(200)) == 8);
}

// ---- data buffers ----

ABI_CHECK(aclCreateDataBuffer) {
    char host[16];
    aclDataBuffer *b = aclCreateDataBuffer(host, sizeof host);
    EXPECT(b != nullptr);
    EXPECT(aclGetDataBufferAddr(b) == host && aclGetDataBufferSizeV2(b) == 16);
    EXPECT_RC(aclDestroyDataBuffer(b), ACL_SUCCESS);
    aclDataBuffer *empty = aclCreateDataBuffer(nullptr, 0);   // an empty tensor's buffer
    EXPECT(empty != nullptr);
    EXPECT_RC(aclDestroyDataBuffer(empty), ACL_SUCCESS);
    EXPECT(aclCreateDataBuffer(nullptr, 8) == nullptr);
}

ABI_CHECK(aclDestroyDataBuffer) {
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, 0);
    EXPECT_RC(aclDestroyDataBuffer(b), ACL_SUCCESS);
    EXPECT_RC(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);   // twice
    EXPECT_RC(aclDestroyDataBuffer(nullptr), ACL_ERROR_INVALID_PARAM);
}

ABI_CHECK(aclUpdateDataBuffer) {
    char a[8], c[32];
    aclDataBuffer *b = aclCreateDataBuffer(a, sizeof a);
    EXPECT_RC(aclUpdateDataBuffer(b, c, sizeof c), ACL_SUCCESS);
    EXPECT(aclGetDataBufferAddr(b) == c && aclGetDataBufferSizeV2(b) == 32);
    EXPECT_RC(aclUpdateDataBuffer(b, nullptr, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclUpdateDataBuffer(nullptr, c, 4), ACL_ERROR_INVALID_PARAM);
    aclDestroyDataBuffer(b);
}

ABI_CHECK(aclGetDataBufferAddr) {
    EXPECT(aclGetDataBufferAddr(nullptr) == nullptr);
    char a[4];
    aclDataBuffer *b = aclCreateDataBuffer(a, 4);
    EXPECT(aclGetDataBufferAddr(b) == a);
    aclDestroyDataBuffer(b);
}

ABI_CHECK(aclGetDataBufferSizeV2) {
    EXPECT(aclGetDataBufferSizeV2(nullptr) == 0);
    char a[40];
    aclDataBuffer *b = aclCreateDataBuffer(a, 40);
    EXPECT(aclGetDataBufferSizeV2(b) == 40);
    aclDestroyDataBuffer(b);
}

ABI_CHECK(aclGetDataBufferSize) {
    EXPECT(aclGetDataBufferSize(nullptr) == 0);
    char a[24];
    aclDataBuffer *b = aclCreateDataBuffer(a, 24);
    EXPECT(aclGetDataBufferSize(b) == 24);
    aclDestroyDataBuffer(b);
}

// ---- attributes ----

ABI_CHECK(aclopCreateAttr) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT(a != nullptr);
    EXPECT_RC(aclopSetAttrBool(a, "keep_dims", 1), ACL_SUCCESS);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopDestroyAttr) {
    aclopDestroyAttr(nullptr);                                // ignored
    aclopAttr *a = aclopCreateAttr();
    aclopDestroyAttr(a);
    EXPECT_RC(aclopSetAttrInt(a, "x", 1), ACL_ERROR_INVALID_PARAM);  // gone
}

ABI_CHECK(aclopSetAttrBool) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrBool(a, "transpose_x1", 1), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrBool(a, nullptr, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclopSetAttrBool(nullptr, "x", 1), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrInt) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrInt(a, "dst_type", ACL_FLOAT16), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrInt(a, "", 1), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrFloat) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrFloat(a, "alpha", 0.5f), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrFloat(nullptr, "alpha", 0.5f), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrString) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrString(a, "mode", "fast"), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrString(a, "mode", nullptr), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrDataType) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrDataType(a, "dtype", ACL_BF16), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrDataType(a, nullptr, ACL_BF16), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrListBool) {
    aclopAttr *a = aclopCreateAttr();
    uint8_t v[2] = {1, 0};
    EXPECT_RC(aclopSetAttrListBool(a, "flags", 2, v), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrListBool(a, "flags", 0, nullptr), ACL_SUCCESS);   // an empty list
    EXPECT_RC(aclopSetAttrListBool(a, "flags", 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclopSetAttrListBool(a, "flags", -1, v), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrListInt) {
    aclopAttr *a = aclopCreateAttr();
    int64_t axes[1] = {-1};
    EXPECT_RC(aclopSetAttrListInt(a, "axes", 1, axes), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrListInt(a, "axes", 1, nullptr), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrListFloat) {
    aclopAttr *a = aclopCreateAttr();
    float v[3] = {0.1f, 0.2f, 0.3f};
    EXPECT_RC(aclopSetAttrListFloat(a, "scales", 3, v), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrListFloat(a, "scales", -2, v), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrListString) {
    aclopAttr *a = aclopCreateAttr();
    const char *v[2] = {"a", "b"};
    EXPECT_RC(aclopSetAttrListString(a, "names", 2, v), ACL_SUCCESS);
    const char *holes[2] = {"a", nullptr};
    EXPECT_RC(aclopSetAttrListString(a, "names", 2, holes), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrListDataType) {
    aclopAttr *a = aclopCreateAttr();
    aclDataType v[2] = {ACL_FLOAT, ACL_INT32};
    EXPECT_RC(aclopSetAttrListDataType(a, "types", 2, v), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrListDataType(a, "types", 2, nullptr), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

ABI_CHECK(aclopSetAttrListListInt) {
    aclopAttr *a = aclopCreateAttr();
    int64_t l0[2] = {1, 2}, l1[1] = {3};
    const int64_t *lists[2] = {l0, l1};
    int counts[2] = {2, 1};
    EXPECT_RC(aclopSetAttrListListInt(a, "pads", 2, counts, lists), ACL_SUCCESS);
    EXPECT_RC(aclopSetAttrListListInt(a, "pads", 2, nullptr, lists), ACL_ERROR_INVALID_PARAM);
    const int64_t *holes[2] = {l0, nullptr};
    EXPECT_RC(aclopSetAttrListListInt(a, "pads", 2, counts, holes), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(a);
}

// ---- execution ----

ABI_CHECK(aclopExecuteV2) {
    aclrtStream s = nullptr;
    AbiGate gate;
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_RC(aclrtCreateStream(&s), ACL_SUCCESS);
    aclTensorDesc *d = abi_desc_f32({4});
    void *a = abi_dev_f32({1, 2, 3, 4}), *b = abi_dev_f32({10, 20, 30, 40}), *y = abi_dev_f32({0, 0, 0, 0});
    // Asynchronous: queued behind a closed gate, run when the stream gets there.
    EXPECT_RC(aclrtLaunchHostFunc(s, abi_gate_fn, &gate), ACL_SUCCESS);
    EXPECT_RC(abi_exec2("Add", d, a, b, y, 4, nullptr, s), ACL_SUCCESS);
    aclrtStreamStatus st = ACL_STREAM_STATUS_COMPLETE;
    EXPECT_RC(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    abi_gate_open(gate);
    std::vector<float> got = abi_read_f32(s, y, 4);
    EXPECT(got[0] == 11 && got[3] == 44);
    EXPECT_RC(abi_exec2("NoSuchOp", d, a, b, y, 4, nullptr, s), ACL_ERROR_OP_NOT_FOUND);
    aclopAttr *attr = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrInt(attr, "transpose_x1", 3), ACL_SUCCESS);
    aclTensorDesc *m = abi_desc_f32({2, 2});
    EXPECT_RC(abi_exec2("MatMul", m, a, b, y, 4, attr, s), ACL_ERROR_OP_ATTR_NOT_MATCH);
    // Output description of the wrong shape.
    aclTensorDesc *wrong = abi_desc_f32({2, 2});
    aclDataBuffer *ba = aclCreateDataBuffer(a, 16), *by = aclCreateDataBuffer(y, 16);
    aclTensorDesc *in_d[2] = {d, d}, *out_d[1] = {wrong};
    aclDataBuffer *in_b[2] = {ba, ba}, *out_b[1] = {by};
    EXPECT_RC(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, s), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
    EXPECT_RC(aclopExecuteV2("Add", 1, in_d, in_b, 1, in_d, out_b, nullptr, s), ACL_ERROR_OP_INPUT_NOT_MATCH);
    // Unknown output dimensions are refreshed.
    int64_t dyn[1] = {-1};
    aclTensorDesc *refreshed = aclCreateTensorDesc(ACL_FLOAT, 1, dyn, ACL_FORMAT_ND);
    out_d[0] = refreshed;
    EXPECT_RC(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, s), ACL_SUCCESS);
    EXPECT(aclGetTensorDescDim(refreshed, 0) == 4);
    EXPECT_RC(aclopExecuteV2(nullptr, 2, in_d, in_b, 1, out_d, out_b, nullptr, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclopExecuteV2("Add", 2, nullptr, in_b, 1, out_d, out_b, nullptr, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclrtSynchronizeStream(s), ACL_SUCCESS);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(by);
    aclDestroyTensorDesc(refreshed);
    aclDestroyTensorDesc(wrong);
    aclDestroyTensorDesc(m);
    aclDestroyTensorDesc(d);
    aclopDestroyAttr(attr);
    aclrtFree(a);
    aclrtFree(b);
    aclrtFree(y);
    EXPECT_RC(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
    // No current context.
    aclTensorDesc *d2 = abi_desc_f32({1});
    float h[1] = {0};
    EXPECT_RC(abi_exec2("Add", d2, h, h, h, 1, nullptr, nullptr), ACL_ERROR_RT_CONTEXT_NULL);
    aclDestroyTensorDesc(d2);
}

ABI_CHECK(aclopExecute) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclTensorDesc *d = abi_desc_f32({2});
    void *a = abi_dev_f32({-1, 2}), *y = abi_dev_f32({0, 0});
    aclDataBuffer *ba = aclCreateDataBuffer(a, 8), *by = aclCreateDataBuffer(y, 8);
    const aclTensorDesc *in_d[1] = {d}, *out_d[1] = {d};
    const aclDataBuffer *in_b[1] = {ba};
    aclDataBuffer *out_b[1] = {by};
    EXPECT_RC(aclopExecute("Relu", 1, in_d, in_b, 1, out_d, out_b, nullptr, nullptr), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 2);
    EXPECT(got[0] == 0 && got[1] == 2);
    // V1 does not refresh: unknown output dimensions are refused.
    int64_t dyn[1] = {-1};
    aclTensorDesc *unknown = aclCreateTensorDesc(ACL_FLOAT, 1, dyn, ACL_FORMAT_ND);
    const aclTensorDesc *out_u[1] = {unknown};
    EXPECT_RC(aclopExecute("Relu", 1, in_d, in_b, 1, out_u, out_b, nullptr, nullptr), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
    aclDestroyTensorDesc(unknown);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(by);
    aclDestroyTensorDesc(d);
    aclrtFree(a);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclopCompileAndExecuteV2) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclTensorDesc *d = abi_desc_f32({2, 2});
    void *a = abi_dev_f32({1, 2, 3, 4}), *b = abi_dev_f32({1, 0, 0, 1}), *y = abi_dev_f32({0, 0, 0, 0});
    aclDataBuffer *ba = aclCreateDataBuffer(a, 16), *bb = aclCreateDataBuffer(b, 16), *by = aclCreateDataBuffer(y, 16);
    aclTensorDesc *in_d[2] = {d, d}, *out_d[1] = {d};
    aclDataBuffer *in_b[2] = {ba, bb}, *out_b[1] = {by};
    aclopAttr *attr = aclopCreateAttr();
    EXPECT_RC(aclopSetAttrBool(attr, "transpose_x1", 1), ACL_SUCCESS);
    EXPECT_RC(aclopCompileAndExecuteV2("MatMul", 2, in_d, in_b, 1, out_d, out_b, attr, ACL_ENGINE_SYS,
                                       ACL_COMPILE_SYS, nullptr, nullptr), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 4);
    EXPECT(got[0] == 1 && got[1] == 3 && got[2] == 2 && got[3] == 4);   // a^T @ I
    EXPECT_RC(aclopCompileAndExecuteV2("MatMul", 2, in_d, in_b, 1, out_d, out_b, attr, (aclopEngineType)9,
                                       ACL_COMPILE_SYS, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclopCompileAndExecuteV2("MatMul", 2, in_d, in_b, 1, out_d, out_b, attr, ACL_ENGINE_SYS,
                                       ACL_COMPILE_SYS, "/tmp/ops", nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_RC(aclopCompileAndExecuteV2("Nope", 2, in_d, in_b, 1, out_d, out_b, attr, ACL_ENGINE_SYS,
                                       ACL_COMPILE_SYS, nullptr, nullptr), ACL_ERROR_OP_NOT_FOUND);
    aclopDestroyAttr(attr);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(bb);
    aclDestroyDataBuffer(by);
    aclDestroyTensorDesc(d);
    aclrtFree(a);
    aclrtFree(b);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclopCompileAndExecute) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclTensorDesc *d = abi_desc_f32({2});
    void *a = abi_dev_f32({4, 9}), *y = abi_dev_f32({0, 0});
    aclDataBuffer *ba = aclCreateDataBuffer(a, 8), *by = aclCreateDataBuffer(y, 8);
    const aclTensorDesc *in_d[1] = {d}, *out_d[1] = {d};
    const aclDataBuffer *in_b[1] = {ba};
    aclDataBuffer *out_b[1] = {by};
    EXPECT_RC(aclopCompileAndExecute("Sqrt", 1, in_d, in_b, 1, out_d, out_b, nullptr, ACL_ENGINE_SYS,
                                     ACL_COMPILE_SYS, nullptr, nullptr), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 2);
    EXPECT(got[0] == 2 && got[1] == 3);
    EXPECT_RC(aclopCompileAndExecute("Sqrt", 1, in_d, in_b, 1, out_d, out_b, nullptr, ACL_ENGINE_SYS,
                                     (aclopCompileType)5, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(by);
    aclDestroyTensorDesc(d);
    aclrtFree(a);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclopInferShape) {
    aclTensorDesc *a = abi_desc_f32({4, 1, 3}), *b = abi_desc_f32({2, 1});
    int64_t unknown[1] = {-2};
    aclTensorDesc *y = aclCreateTensorDesc(ACL_DT_UNDEFINED, 1, unknown, ACL_FORMAT_ND);
    aclTensorDesc *in_d[2] = {a, b}, *out_d[1] = {y};
    EXPECT_RC(aclopInferShape("Add", 2, in_d, nullptr, 1, out_d, nullptr), ACL_SUCCESS);
    EXPECT(aclGetTensorDescNumDims(y) == 3 && aclGetTensorDescDim(y, 1) == 2);
    EXPECT(aclGetTensorDescType(y) == ACL_FLOAT);
    EXPECT_RC(aclopInferShape("Add", 1, in_d, nullptr, 1, out_d, nullptr), ACL_ERROR_OP_INPUT_NOT_MATCH);
    EXPECT_RC(aclopInferShape("Add", 2, in_d, nullptr, -1, out_d, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(a);
    aclDestroyTensorDesc(b);
    aclDestroyTensorDesc(y);
}

ABI_CHECK(aclopCast) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclTensorDesc *src = abi_desc_f32({2});
    int64_t dims[1] = {2};
    aclTensorDesc *dst = aclCreateTensorDesc(ACL_FLOAT16, 1, dims, ACL_FORMAT_ND);
    void *a = abi_dev_f32({1.5f, -2.0f}), *y = nullptr;
    EXPECT_RC(aclrtMalloc(&y, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclDataBuffer *ba = aclCreateDataBuffer(a, 8), *by = aclCreateDataBuffer(y, 4);
    EXPECT_RC(aclopCast(src, ba, dst, by, 0, nullptr), ACL_SUCCESS);
    EXPECT_RC(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    uint16_t h[2] = {0, 0};
    EXPECT_RC(aclrtMemcpy(h, 4, y, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(h[0] == 0x3E00 && h[1] == 0xC000);                 // 1.5 and -2.0 in binary16
    aclDataBuffer *small = aclCreateDataBuffer(y, 2);
    EXPECT_RC(aclopCast(src, ba, dst, small, 0, nullptr), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
    EXPECT_RC(aclopCast(nullptr, ba, dst, by, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyDataBuffer(small);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(by);
    aclDestroyTensorDesc(src);
    aclDestroyTensorDesc(dst);
    aclrtFree(a);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclopCreateHandle) {
    aclTensorDesc *d = abi_desc_f32({3});
    const aclTensorDesc *in_d[2] = {d, d}, *out_d[1] = {d};
    aclopHandle *h = nullptr;
    EXPECT_RC(aclopCreateHandle("Mul", 2, in_d, 1, out_d, nullptr, &h), ACL_SUCCESS);
    EXPECT(h != nullptr);
    aclopDestroyHandle(h);
    EXPECT_RC(aclopCreateHandle("Nope", 2, in_d, 1, out_d, nullptr, &h), ACL_ERROR_OP_NOT_FOUND);
    EXPECT_RC(aclopCreateHandle("Mul", 2, in_d, 1, out_d, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclopCreateHandleForCast) {
    aclTensorDesc *src = abi_desc_f32({2});
    int64_t dims[1] = {2};
    aclTensorDesc *dst = aclCreateTensorDesc(ACL_INT32, 1, dims, ACL_FORMAT_ND);
    aclopHandle *h = nullptr;
    EXPECT_RC(aclopCreateHandleForCast(src, dst, 0, &h), ACL_SUCCESS);
    EXPECT(h != nullptr);
    aclopDestroyHandle(h);
    EXPECT_RC(aclopCreateHandleForCast(src, dst, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(src);
    aclDestroyTensorDesc(dst);
}

ABI_CHECK(aclopDestroyHandle) {
    aclopDestroyHandle(nullptr);                              // ignored
    aclTensorDesc *d = abi_desc_f32({1});
    const aclTensorDesc *in_d[1] = {d};
    aclopHandle *h = nullptr;
    EXPECT_RC(aclopCreateHandle("Abs", 1, in_d, 1, in_d, nullptr, &h), ACL_SUCCESS);
    aclopDestroyHandle(h);
    EXPECT_RC(aclopExecWithHandle(h, 0, nullptr, 0, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);  // gone
    aclDestroyTensorDesc(d);
}

ABI_CHECK(aclopExecWithHandle) {
    EXPECT_RC(aclrtSetDevice(0), ACL_SUCCESS);
    aclTensorDesc *d = abi_desc_f32({2});
    const aclTensorDesc *in_d[1] = {d};
    aclopHandle *h = nullptr;
    EXPECT_RC(aclopCreateHandle("Neg", 1, in_d, 1, in_d, nullptr, &h), ACL_SUCCESS);
    void *a = abi_dev_f32({1, -5}), *y = abi_dev_f32({0, 0});
    aclDataBuffer *ba = aclCreateDataBuffer(a, 8), *by = aclCreateDataBuffer(y, 8);
    const aclDataBuffer *in_b[1] = {ba};
    aclDataBuffer *out_b[1] = {by};
    for (int i = 0; i < 3; i++) EXPECT_RC(aclopExecWithHandle(h, 1, in_b, 1, out_b, nullptr), ACL_SUCCESS);
    std::vector<float> got = abi_read_f32(nullptr, y, 2);
    EXPECT(got[0] == -1 && got[1] == 5);
    EXPECT_RC(aclopExecWithHandle(h, 1, in_b, 0, out_b, nullptr), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
    EXPECT_RC(aclopExecWithHandle(h, 0, in_b, 1, out_b, nullptr), ACL_ERROR_OP_INPUT_NOT_MATCH);
    EXPECT_RC(aclopExecWithHandle(nullptr, 1, in_b, 1, out_b, nullptr), ACL_ERROR_INVALID_PARAM);
    aclopDestroyHandle(h);
    aclDestroyDataBuffer(ba);
    aclDestroyDataBuffer(by);
    aclDestroyTensorDesc(d);
    aclrtFree(a);
    aclrtFree(y);
    EXPECT_RC(aclrtResetDevice(0), ACL_SUCCESS);
}

ABI_CHECK(aclopSetCompileFlag) {
    EXPECT_RC(aclopSetCompileFlag(ACL_OP_COMPILE_FUZZ), ACL_SUCCESS);
    EXPECT_RC(aclopSetCompileFlag(ACL_OP_COMPILE_DEFAULT), ACL_SUCCESS);
    EXPECT_RC(aclopSetCompileFlag((aclOpCompileFlag)7), ACL_ERROR_INVALID_PARAM);
}
