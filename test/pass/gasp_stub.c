/* A test-only GASP tool (check_gasp.sh stub): linked into an instrumented
 * program instead of libppw, it counts the events it receives and reads
 * each event's operands as ppw/gasp_events.h lays them out, then prints a
 * summary on stderr at exit:
 *
 *   init MODEL
 *   func NAME START n END n           one line per funcsig pointer
 *   TAG-NAME START|END file:line:col a1 a2 ...   the last event per tag and type
 *
 * Built without the plugin, so it is not instrumented itself. */
#include <ppw/gasp_events.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    unsigned tag;
    const char *name;
} tag_names[] = {
#define TAG_NAME(tag, name, op) {tag, name},
    PPW_GASP_TAGS(TAG_NAME)
#undef TAG_NAME
};

static const struct {
    unsigned tag;
    unsigned mask;
    int has_result;
} call_rows[] = {
#define CALL_ROW(tag, callee, op, mask, result) {tag, mask, result},
    PPW_GASP_CALLS(CALL_ROW)
#undef CALL_ROW
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Function events, by funcsig pointer (GASP: the same pointer at START and END). */
static struct {
    const char *funcsig;
    atomic_long start, end;
} functions[64];
static atomic_int function_count;

/* The last call event of each tag and type. */
static struct {
    unsigned tag;
    int seen[2];
    char text[2][256];
} calls[64];
static int call_count;
static int init_model = -1;

gasp_context_t gasp_init(gasp_model_t model, int *argc, char ***argv)
{
    (void)argc, (void)argv;
    init_model = (int)model;
    return NULL;
}

static void count_function(const char *funcsig, gasp_evttype_t type)
{
    int count = atomic_load(&function_count);
    for (int i = 0; i < count; i++) {
        if (functions[i].funcsig == funcsig) {
            atomic_fetch_add(type == GASP_START ? &functions[i].start : &functions[i].end, 1);
            return;
        }
    }
    if (count == (int)COUNT(functions))
        abort();
    functions[count].funcsig = funcsig;
    atomic_fetch_add(type == GASP_START ? &functions[count].start : &functions[count].end, 1);
    atomic_store(&function_count, count + 1); /* single-threaded test program */
}

void gasp_event_notify(gasp_context_t context, unsigned int tag, gasp_evttype_t type,
                       const char *file, int line, int col, ...)
{
    va_list args;
    va_start(args, col);
    if (context != NULL)
        abort(); /* ppw passes the thread's implicit context */
    if (tag == GASP_C_FUNC_GATED) {
        const char *funcsig = va_arg(args, const char *);
        unsigned char *gate = va_arg(args, unsigned char *);
        if (!gate || *gate != 1)
            abort(); /* the switch is open, or the call would not happen */
        count_function(funcsig, type);
        va_end(args);
        return;
    }
    /* Every wrapped call carries its site record and the gate its code
     * read: a fresh site's gate is open (1), and the record is the same
     * for the call's START and END. */
    if (!(tag & GASP_PPW_SITE))
        abort();
    tag &= ~GASP_PPW_SITE;
    struct ppw_gasp_site *site = va_arg(args, struct ppw_gasp_site *);
    if (!site || site->gate != 1 || va_arg(args, int64_t) != 1)
        abort();
    size_t row = 0;
    while (row < COUNT(call_rows) && call_rows[row].tag != tag)
        row++;
    if (row == COUNT(call_rows))
        abort();
    int slot = 0;
    while (slot < call_count && calls[slot].tag != tag)
        slot++;
    if (slot == call_count)
        calls[call_count++].tag = tag;
    char *text = calls[slot].text[type == GASP_END];
    int used = snprintf(text, 256, "%s:%d:%d", file ? strrchr(file, '/') ? strrchr(file, '/') + 1
                                                                       : file
                                                    : "(null)",
                        line, col);
    int operands = (int)ppw_gasp_row_varargs(call_rows[row].mask) +
                   (type == GASP_END ? call_rows[row].has_result : 0);
    for (int i = 0; i < operands && used < 200; i++)
        used += snprintf(text + used, 256 - (size_t)used, " %#llx",
                         (unsigned long long)va_arg(args, int64_t));
    calls[slot].seen[type == GASP_END] = 1;
    va_end(args);
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "init %d\n", init_model);
    for (int i = 0; i < atomic_load(&function_count); i++)
        fprintf(stderr, "func %s START %ld END %ld\n", functions[i].funcsig,
                atomic_load(&functions[i].start), atomic_load(&functions[i].end));
    for (int i = 0; i < call_count; i++) {
        const char *name = "?";
        for (size_t t = 0; t < COUNT(tag_names); t++)
            if (tag_names[t].tag == calls[i].tag)
                name = tag_names[t].name;
        for (int type = 0; type < 2; type++)
            if (calls[i].seen[type])
                fprintf(stderr, "%s %s %s\n", name, type ? "END" : "START", calls[i].text[type]);
    }
}
