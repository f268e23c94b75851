//! NPU telemetry for Ascend (health, temperature, power, utilisation, HBM,
//! processes), as a library and a CLI, like NVML and nvidia-smi. The safe API
//! is not written yet; the raw DCMI functions are in `dcmi-sys`.
