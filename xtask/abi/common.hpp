// What both programs of `cargo xtask abi-check` start with: the full check
// (preamble.cpp follows, xtask/src/abi.rs) and the check of another CANN
// release's headers (release.cpp follows, xtask/src/abi_release.rs). Only the
// headers' declarations are used, never anything of the simulator.
//
// Output protocol: lines starting with "@" are read by xtask; every other
// line is shown to the user.

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "acl/acl_prof.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"
#include "hccl/hccl.h"

#include <math.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <string>

// Spells a function type in a declarator: abi_id<int(void *)> *p.
template <typename T> using abi_id = T;

// ---- exports --------------------------------------------------------------

template <typename F> static const void *abi_addr(F *f) {
    return reinterpret_cast<const void *>(f);
}

// Where the dynamic linker found `addr`: the path of the object defining it.
static std::string abi_object_of(const void *addr) {
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return std::string("(unknown)");
    return std::string(info.dli_fname);
}

static bool abi_in_sim(const void *addr) {
    return abi_object_of(addr).find("libcann_sim") != std::string::npos;
}

// ---- HcclCommConfigInit ---------------------------------------------------

// The header's inline HcclCommConfigInit on a struct filled with `fill`:
// "<tag> <sizeof> <hex bytes>" (xtask compares them with hccl-sys's).
static void abi_print_config(const char *tag, unsigned char fill) {
    HcclCommConfig config;
    memset(&config, fill, sizeof config);
    HcclCommConfigInit(&config);
    const unsigned char *b = reinterpret_cast<const unsigned char *>(&config);
    printf("%s %zu ", tag, sizeof config);
    for (size_t i = 0; i < sizeof config; i++) printf("%02x", b[i]);
    printf("\n");
}
