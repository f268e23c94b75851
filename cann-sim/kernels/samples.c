/* Sample kernels for cann-sim's tests and documentation, compiled by
 * cann-sim's build script into a sim kernel binary (a host shared library,
 * see the cann-sim README, "Kernel binaries").
 *
 * Convention: the kernel's arguments, each an 8-byte word passed as an
 * integer (pointer, uint64_t, or a smaller integer reading the low bits),
 * then the block index and the block count. Each call handles its block's
 * share of the work. */

#include <stdint.h>
#include <string.h>

/* The range of n elements block `idx` of `num` handles. */
static void block_range(uint64_t n, uint32_t idx, uint32_t num, uint64_t *begin, uint64_t *end) {
    uint64_t per = (n + num - 1) / num;
    *begin = per * idx;
    *end = *begin + per;
    if (*begin > n) *begin = n;
    if (*end > n) *end = n;
}

/* z = x + y, n floats. */
void vadd_f32(const float *x, const float *y, float *z, uint64_t n, uint32_t idx, uint32_t num) {
    uint64_t b, e;
    block_range(n, idx, num, &b, &e);
    for (uint64_t i = b; i < e; i++) z[i] = x[i] + y[i];
}

/* The tiling of scale_add, passed as a placeholder (its device address). */
struct ScaleTiling {
    float alpha;
    uint32_t reserved;
    uint64_t n;
};

/* y = alpha * x + y, with alpha and n from the tiling. */
void scale_add(const float *x, float *y, const struct ScaleTiling *t, uint32_t idx, uint32_t num) {
    uint64_t b, e;
    block_range(t->n, idx, num, &b, &e);
    for (uint64_t i = b; i < e; i++) y[i] = t->alpha * x[i] + y[i];
}

/* out[idx] = num * 1000 + idx: each block records that it ran, and the count. */
void record_blocks(uint32_t *out, uint32_t idx, uint32_t num) {
    out[idx] = num * 1000u + idx;
}

/* out[0] = the sum of 20 integer arguments, out[1] = a 32-bit float scalar's bits
 * scaled by 2 (floats arrive as their bits). */
void sum20(uint64_t *out, uint32_t fbits,
           uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
           uint64_t a6, uint64_t a7, uint64_t a8, uint64_t a9, uint64_t a10, uint64_t a11,
           uint64_t a12, uint64_t a13, uint64_t a14, uint64_t a15, uint64_t a16, uint64_t a17,
           uint64_t a18, uint64_t a19, uint32_t idx, uint32_t num) {
    (void)num;
    if (idx != 0) return;
    out[0] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14 +
             a15 + a16 + a17 + a18 + a19;
    float f;
    memcpy(&f, &fbits, sizeof f);
    f *= 2.0f;
    uint32_t out_bits;
    memcpy(&out_bits, &f, sizeof out_bits);
    out[1] = out_bits;
}
