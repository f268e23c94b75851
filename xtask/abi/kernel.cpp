// A cann-sim kernel binary for `cargo xtask abi-check` (xtask/src/abi.rs
// compiles it into libabi_kernel.so next to the check program and passes
// the path in ABI_KERNEL_SO): each kernel's arguments are 8-byte words, then
// the block index and the block count (see cann-sim's README).

#include <stdint.h>

// z = x + y for n floats, split across the blocks.
extern "C" void abi_vadd(const float *x, const float *y, float *z, uint64_t n, uint32_t idx,
                         uint32_t num) {
    uint64_t per = (n + num - 1) / num, b = per * idx, e = b + per;
    if (e > n) e = n;
    for (uint64_t i = b; i < e; i++) z[i] = x[i] + y[i];
}

// out[idx] = num * 1000 + idx.
extern "C" void abi_blocks(uint32_t *out, uint32_t idx, uint32_t num) { out[idx] = num * 1000u + idx; }

// *out = *data * k, where data is a placeholder (the address of its bytes).
extern "C" void abi_scale(uint64_t *out, const uint64_t *data, uint64_t k, uint32_t idx, uint32_t num) {
    (void)num;
    if (idx == 0) *out = *data * k;
}
