//! Fuzzes the simulator's model loader: any bytes must give a model or a
//! load error, never a panic, a hang or an out-of-bounds access.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = cann_sim::model::parse(data) {
        // A model that parses must also describe itself without trouble.
        let _ = format!("{model:?}");
    }
});
