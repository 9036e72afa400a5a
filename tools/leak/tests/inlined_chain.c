// leak-test: inlined_chain -- a leak allocated under a chain of calls that the optimizer
// inlines (decode_value into parse_request into handle_line), built as users build (-O2 -g,
// no frame-pointer flags): the report names every function of the chain with its line, the
// inlined ones included, and the callers above it.
// cflags: -O2 -g
// expect: found decode_value unreachable objects=40
// expect: stack decode_value:22 <- parse_request:33 <- handle_line:41 <- process_batch:51 <- run:59 <- main:66
#include <stdlib.h>
#include <string.h>

struct request {
    char *value;
    size_t len;
};

static void *volatile sink;

static inline char *decode_value(const char *text, size_t len)
{
    if (len > 64)
        len = 64;
    char *copy = malloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    return copy;
}

static inline int parse_request(const char *line, struct request *req)
{
    const char *eq = strchr(line, '=');
    if (!eq)
        return -1;
    req->value = decode_value(eq + 1, strlen(eq + 1));
    req->len = strlen(req->value);
    return 0;
}

__attribute__((noinline)) static size_t handle_line(const char *line)
{
    struct request req;
    if (parse_request(line, &req) != 0)
        return 0;
    sink = req.value;      /* the last pointer to it, overwritten by the next request: leaked */
    return req.len;
}

__attribute__((noinline)) static size_t process_batch(const char *const *lines, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += handle_line(lines[i]);
    return total;
}

__attribute__((noinline)) static size_t run(const char *const *lines, int n, int rounds)
{
    size_t total = 0;
    for (int r = 0; r < rounds; r++)
        total += process_batch(lines, n);
    return total;
}

int main(void)
{
    static const char *const lines[] = {"a=one", "b=two", "c=three", "d=four"};
    size_t total = run(lines, 4, 10);
    sink = NULL;
    return total == 0;
}
