/* The custom_kernel example's vector add, as a cann-sim kernel binary.
 *
 * On an NPU this would be an AscendC kernel
 *     extern "C" __global__ __aicore__ void vadd(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
 * compiled by the AscendC toolchain; on cann-sim it is this C function in a
 * host shared library, run once per block with the block index and count
 * appended (as AscendC's CPU debugging mode runs kernels). The host code
 * that loads and launches it is the same.
 *
 * Arguments: x, y, z (float32 device memory) and a tiling (a placeholder:
 * the device address of { uint64_t total; uint64_t per_block; }). */

#include <stdint.h>

struct VaddTiling {
    uint64_t total;     /* elements */
    uint64_t per_block; /* elements each block adds (the last may add fewer) */
};

void vadd(const float *x, const float *y, float *z, const struct VaddTiling *tiling,
          uint32_t block_idx, uint32_t block_num) {
    (void)block_num;
    uint64_t begin = tiling->per_block * block_idx;
    uint64_t end = begin + tiling->per_block;
    if (end > tiling->total) end = tiling->total;
    for (uint64_t i = begin; i < end; i++) z[i] = x[i] + y[i];
}
