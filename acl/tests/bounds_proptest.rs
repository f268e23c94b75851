//! Property tests: slicing and copying agree with a host model for any
//! ranges and lengths, and every out-of-bounds request is an error.

mod common;

use acl::{DeviceBuffer, DeviceMemory, Error};
use proptest::prelude::*;

fn model_bounds(start: usize, end: usize, len: usize) -> bool {
    start <= end && end <= len
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn slicing_matches_the_host_model(len in 0usize..200, start in 0usize..220, end in 0usize..220) {
        let npu = common::device(6);
        let data: Vec<u32> = (0..len as u32).collect();
        let buf = DeviceBuffer::from_host(&npu, &data).unwrap();
        match buf.slice(start..end) {
            Ok(s) => {
                prop_assert!(model_bounds(start, end, len));
                prop_assert_eq!(s.len(), end - start);
                prop_assert_eq!(s.to_host_vec().unwrap(), data[start..end].to_vec());
            }
            Err(Error::InvalidArgument { function, .. }) => {
                prop_assert!(!model_bounds(start, end, len));
                prop_assert_eq!(function, "DeviceBuffer::slice");
            }
            Err(other) => prop_assert!(false, "unexpected {other:?}"),
        }
    }

    #[test]
    fn writes_through_a_subslice_touch_exactly_that_range(
        len in 1usize..300,
        a in 0usize..300,
        b in 0usize..300,
        fill in any::<u8>(),
    ) {
        let (start, end) = (a.min(b) % (len + 1), a.max(b).min(len));
        prop_assume!(start <= end);
        let npu = common::device(6);
        let stream = npu.new_stream().unwrap();
        let mut buf = stream.clone_from_host(&vec![0u8; len]).unwrap();
        {
            let mut part = buf.slice_mut(start..end).unwrap();
            part.copy_from_host(&vec![fill; end - start]).unwrap();
        }
        let mut model = vec![0u8; len];
        model[start..end].fill(fill);
        prop_assert_eq!(buf.to_host_vec().unwrap(), model);
    }

    #[test]
    fn copies_between_unequal_lengths_are_errors(src_len in 0usize..64, dst_len in 0usize..64) {
        let npu = common::device(6);
        let mut dst = DeviceBuffer::<u16>::zeroed(&npu, dst_len).unwrap();
        let src = vec![1u16; src_len];
        let outcome = dst.copy_from_host(&src);
        if src_len == dst_len {
            prop_assert!(outcome.is_ok());
        } else {
            prop_assert_eq!(
                outcome.unwrap_err(),
                Error::InvalidArgument {
                    function: "DeviceBuffer::copy_from_host",
                    reason: format!("host to device: the source has {src_len} elements, the destination {dst_len}"),
                }
            );
        }
    }
}
