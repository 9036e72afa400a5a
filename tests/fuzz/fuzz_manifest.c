/* libFuzzer harness for the instrumentation cache's direct-mode manifests (common/cachefmt.c):
 * any input is rejected with a reason or parses; a parsed manifest's items point inside the
 * input, and one written back out (with its checksum) parses to the same items. The harness
 * also feeds the body of each input with a correct checksum appended, so that the fuzzer gets
 * past the checksum. */
#include "cachefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void with_checksum(const char *body, size_t n, char **out, size_t *outlen)
{
    struct vigil_sha256 s;
    unsigned char digest[32];
    char hex[65];
    vigil_sha256_init(&s);
    vigil_sha256_update(&s, body, n);
    vigil_sha256_final(&s, digest);
    vigil_sha256_hex(digest, hex);
    *out = malloc(n + 80);
    if (!*out) abort();
    memcpy(*out, body, n);
    *outlen = n + (size_t)sprintf(*out + n, "checksum %s\n", hex);
}

static void check(char *text, size_t len)
{
    struct vigil_manifest m;
    char err[256];
    char *copy = malloc(len + 1);
    if (!copy) abort();
    memcpy(copy, text, len);
    if (vigil_manifest_parse(copy, len, &m, err, sizeof err) != 0) {
        if (!err[0]) abort();
        free(copy);
        return;
    }
    if (strlen(m.key) != 64) abort();
    /* written back out */
    size_t cap = 256, used = 0;
    for (size_t i = 0; i < m.nitems; i++) {
        if (m.items[i].path < copy || m.items[i].path >= copy + len) abort();
        cap += strlen(m.items[i].path) + 100;
    }
    cap += m.deps_len + 64;
    char *body = malloc(cap);
    if (!body) abort();
    used += (size_t)sprintf(body, "%s\nkey %s\n", VIGIL_CACHE_MANIFEST_MAGIC, m.key);
    for (size_t i = 0; i < m.nitems; i++) {
        const struct vigil_manifest_item *it = &m.items[i];
        if (it->kind == VIGIL_MANIFEST_FILE)
            used += (size_t)sprintf(body + used, "file %lld %s %s\n", (long long)it->size, it->hex, it->path);
        else
            used += (size_t)sprintf(body + used, "%s %s\n", it->kind == VIGIL_MANIFEST_ABSENT ? "absent" : "present", it->path);
    }
    if (m.has_deps) {
        used += (size_t)sprintf(body + used, "deps %zu\n", m.deps_len);
        memcpy(body + used, m.deps, m.deps_len);
        used += m.deps_len;
        body[used++] = '\n';
    }
    char *again;
    size_t again_len;
    with_checksum(body, used, &again, &again_len);
    struct vigil_manifest m2;
    if (vigil_manifest_parse(again, again_len, &m2, err, sizeof err) != 0 || m2.nitems != m.nitems ||
        strcmp(m2.key, m.key) || m2.has_deps != m.has_deps || m2.deps_len != m.deps_len)
        abort();
    for (size_t i = 0; i < m.nitems; i++)
        if (m2.items[i].kind != m.items[i].kind || strcmp(m2.items[i].path, m.items[i].path) ||
            m2.items[i].size != m.items[i].size || strcmp(m2.items[i].hex, m.items[i].hex))
            abort();
    vigil_manifest_free(&m2);
    free(again);
    free(body);
    vigil_manifest_free(&m);
    free(copy);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    check((char *)data, size);
    char *text;
    size_t len;
    with_checksum((const char *)data, size, &text, &len);
    check(text, len);
    free(text);
    return 0;
}
