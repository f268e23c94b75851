// The fixed part of the program `cargo xtask abi-check --release X` (or
// `--headers DIR`) generates for the headers of another CANN release (see
// xtask/src/abi_release.rs), after common.hpp. main() takes the address of
// each function through abi_export, then returns abi_release_finish().

static int abi_exports = 0;
static int abi_elsewhere = 0;

// One function of the headers, linked: it must resolve into libcann_sim.so.
static void abi_export(const char *name, const void *addr) {
    abi_exports++;
    if (!abi_in_sim(addr)) {
        printf("  FAIL  %s is not defined by libcann_sim.so\n", name);
        abi_elsewhere++;
    }
}

// Prints the summary lines (and, with `config`, the header's
// HcclCommConfigInit bytes); the exit code.
static int abi_release_finish(bool config) {
    if (config) {
        abi_print_config("@config-zero", 0x00);
        abi_print_config("@config-ab", 0xAB);
    }
    printf("@exports %d\n@elsewhere %d\n", abi_exports, abi_elsewhere);
    return abi_elsewhere == 0 ? 0 : 1;
}
