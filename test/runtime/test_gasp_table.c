/* The GASP call table's invariants (ppw/gasp_events.h): rows that share a
 * tag agree on the forwarded operands, on carrying an element size and on
 * has_result, every tag in the call table has a name in PPW_GASP_TAGS, and
 * names and tags are unique. */
#include <stdio.h>
#include <string.h>

#include "ppw/gasp_events.h"

struct call_row {
    unsigned tag;
    const char *callee;
    unsigned mask;
    int has_result;
};

struct tag_row {
    unsigned tag;
    const char *name;
};

static const struct call_row calls[] = {
#define ROW(tag, callee, op, mask, result) {tag, callee, mask, result},
    PPW_GASP_CALLS(ROW)
#undef ROW
};

static const struct tag_row tags[] = {
#define ROW(tag, name, op) {tag, name},
    PPW_GASP_TAGS(ROW)
#undef ROW
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
    int failures = 0;
    for (size_t i = 0; i < COUNT(calls); i++) {
        int named = 0;
        for (size_t k = 0; k < COUNT(tags); k++)
            named += tags[k].tag == calls[i].tag;
        if (named != 1) {
            printf("FAIL: %s: tag %u has %d names\n", calls[i].callee, calls[i].tag, named);
            failures++;
        }
        for (size_t j = i + 1; j < COUNT(calls); j++) {
            if (strcmp(calls[i].callee, calls[j].callee) == 0) {
                printf("FAIL: %s is listed twice\n", calls[i].callee);
                failures++;
            }
            if (calls[i].tag == calls[j].tag &&
                (ppw_gasp_row_varargs(calls[i].mask) != ppw_gasp_row_varargs(calls[j].mask) ||
                 !PPW_ELEMENT_SIZE_OF(calls[i].mask) != !PPW_ELEMENT_SIZE_OF(calls[j].mask) ||
                 calls[i].has_result != calls[j].has_result)) {
                printf("FAIL: %s and %s share a tag but not its varargs\n", calls[i].callee,
                       calls[j].callee);
                failures++;
            }
        }
    }
    for (size_t i = 0; i < COUNT(tags); i++)
        for (size_t j = i + 1; j < COUNT(tags); j++)
            if (tags[i].tag == tags[j].tag || strcmp(tags[i].name, tags[j].name) == 0) {
                printf("FAIL: %s and %s collide\n", tags[i].name, tags[j].name);
                failures++;
            }
    printf("%zu calls, %zu tags: %s\n", COUNT(calls), COUNT(tags), failures ? "FAILED" : "ok");
    return failures != 0;
}
