//! The custom_kernel example's logic on the simulator: the kernel the build
//! script compiled adds correctly, whatever the block count.

#[test]
fn vadd_result_matches_the_host_for_several_block_counts() {
    cann_sim::install().unwrap();
    for (elements, blocks) in [(1usize << 16, 8u32), (1000, 3), (5, 16)] {
        let r = examples::custom_kernel::run(elements, blocks).unwrap();
        assert_eq!(r.mismatches, 0, "{r:?}");
        assert_eq!((r.elements, r.blocks), (elements, blocks));
    }
}
