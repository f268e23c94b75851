/* A stand-in "AscendCL" that exports only a few functions: the loader tests
 * use it to prove that a library lacking a symbol fails only the calls that
 * need that symbol. Written for this project; declarations follow acl_rt.h. */
#include <stddef.h>
#include <stdint.h>

int aclrtGetVersion(int32_t *major, int32_t *minor, int32_t *patch) {
    if (major == NULL || minor == NULL || patch == NULL) {
        return 100000;
    }
    *major = 1;
    *minor = 2;
    *patch = 3;
    return 0;
}

const char *aclGetRecentErrMsg(void) { return NULL; }

/* Exported with an older signature than the bindings' (theirs dates from
 * ACL 1.15; this library says 1.2.3): the loader must leave it out of the
 * table, so that it is never called with the wrong arguments. */
int aclrtUnuseStreamResInCurrentThread(void) { return 0; }
