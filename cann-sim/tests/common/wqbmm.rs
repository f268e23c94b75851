//! `aclnnWeightQuantBatchMatmulV2` calls of the tests that drive it through
//! cann-sim's C ABI (included by path, next to `common`).

use crate::common::recent_error;
use acl_sys::aclnn::{ACLNN_SUCCESS, aclOpExecutor, aclTensor};
use cann_sim::aclnn::{
    aclDestroyTensor, aclnnWeightQuantBatchMatmulV2, aclnnWeightQuantBatchMatmulV2GetWorkspaceSize,
};
use std::ptr::null_mut;

/// A small deterministic sequence in `[lo, hi]`.
pub fn pattern(n: usize, seed: u32, lo: i32, hi: i32) -> Vec<i32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            lo + ((s >> 16) as i32).rem_euclid(hi - lo + 1)
        })
        .collect()
}

/// The arguments of one call (null: an absent optional one).
#[derive(Clone, Copy)]
pub struct Call {
    pub x: *mut aclTensor,
    pub w: *mut aclTensor,
    pub scale: *mut aclTensor,
    pub offset: *mut aclTensor,
    pub quant_scale: *mut aclTensor,
    pub quant_offset: *mut aclTensor,
    pub bias: *mut aclTensor,
    pub group: i32,
    pub y: *mut aclTensor,
}

impl Call {
    /// `x @ dequant(w)` into `y` with `scale` and nothing optional.
    pub fn new(
        x: *mut aclTensor,
        w: *mut aclTensor,
        scale: *mut aclTensor,
        y: *mut aclTensor,
    ) -> Call {
        Call {
            x,
            w,
            scale,
            offset: null_mut(),
            quant_scale: null_mut(),
            quant_offset: null_mut(),
            bias: null_mut(),
            group: 0,
            y,
        }
    }

    /// Plans the call; on success runs it. The status of the plan.
    pub fn run(&self) -> i32 {
        let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
        // SAFETY: live handles or null for the optional ones; valid
        // out-pointers.
        let rc = unsafe {
            aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(
                self.x,
                self.w,
                self.scale,
                self.offset,
                self.quant_scale,
                self.quant_offset,
                self.bias,
                self.group,
                self.y,
                &mut ws,
                &mut ex,
            )
        };
        if rc == ACLNN_SUCCESS {
            // SAFETY: a fresh executor; the simulator needs no workspace.
            let launched = unsafe { aclnnWeightQuantBatchMatmulV2(null_mut(), ws, ex, null_mut()) };
            assert_eq!(launched, ACLNN_SUCCESS, "{}", recent_error());
        }
        rc
    }
}

/// Destroys the tensors `ts` (null ones skipped) and frees `memory`.
pub fn destroy(ts: &[*mut aclTensor], memory: &[*mut u8]) {
    for &t in ts.iter().filter(|t| !t.is_null()) {
        // SAFETY: live tensors, destroyed once.
        assert_eq!(unsafe { aclDestroyTensor(t) }, ACLNN_SUCCESS);
    }
    for &p in memory {
        crate::common::free(p);
    }
}
