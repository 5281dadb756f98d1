#include "options.h"

#include "support.h"

#include <ctype.h>
#include <errno.h>
#include <ppw/gasp_events.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    unsigned tag;
    const char *name;
} event_names[] = {
#define EVENT_NAME(tag, name, op) {tag, name},
    PPW_GASP_TAGS(EVENT_NAME)
#undef EVENT_NAME
};

#define EVENT_COUNT (sizeof event_names / sizeof event_names[0])
_Static_assert(EVENT_COUNT <= PPW_PASS_MAX_EVENTS, "raise PPW_PASS_MAX_EVENTS");

int ppw_options_event_index(unsigned tag)
{
    for (size_t i = 0; i < EVENT_COUNT; i++)
        if (event_names[i].tag == tag)
            return (int)i;
    return -1;
}

int ppw_options_event_selected(const struct ppw_pass_opts *opts, unsigned tag)
{
    int index = ppw_options_event_index(tag);
    return index >= 0 && opts->inst_events[index];
}

/* What the inst tokens asked for, before it becomes the event flags. */
struct inst_request {
    int given;             /* any inst token at all; without one, `inst` holds */
    int others;            /* inst, inst-local: every PPW_GASP_CALLS event */
    int functions;         /* inst-functions: GASP_C_FUNC as well */
    const char *only_file; /* inst-only=FILE: exactly the events it names */
    size_t only_length;
};

static int is_separator(char c)
{
    return c == ',' || isspace((unsigned char)c);
}

static int token_is(const char *token, size_t length, const char *word)
{
    return strlen(word) == length && !memcmp(token, word, length);
}

static void select_event_name(struct ppw_pass_opts *opts, const char *name, const char *path,
                              unsigned line)
{
    for (size_t i = 0; i < EVENT_COUNT; i++) {
        if (!strcmp(event_names[i].name, name)) {
            opts->inst_events[i] = 1;
            return;
        }
    }
    /* GASP lets a compiler ignore event names it does not support. */
    fprintf(stderr, "ppw: warning: %s:%u: unknown GASP event '%s' ignored\n", path, line, name);
}

/* One name per line (white space also separates); '#' starts a comment. */
static void read_event_file(struct ppw_pass_opts *opts, const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file) {
        snprintf(opts->error, sizeof opts->error, "ppw: cannot read the inst-only file '%s': %s",
                 path, strerror(errno));
        return;
    }
    char text[512];
    unsigned line = 0;
    int line_done = 1;
    while (fgets(text, sizeof text, file)) {
        line += line_done;
        line_done = strchr(text, '\n') != NULL;
        char *comment = strchr(text, '#');
        if (comment)
            *comment = '\0';
        for (char *name = text; *name;) {
            while (*name && isspace((unsigned char)*name))
                name++;
            char *end = name;
            while (*end && !isspace((unsigned char)*end))
                end++;
            char ended = *end;
            *end = '\0';
            if (*name)
                select_event_name(opts, name, path, line);
            name = ended ? end + 1 : end;
        }
    }
    if (ferror(file))
        snprintf(opts->error, sizeof opts->error, "ppw: cannot read the inst-only file '%s': %s",
                 path, strerror(errno));
    fclose(file);
}

static void apply_token(struct ppw_pass_opts *opts, struct inst_request *inst, const char *token,
                        size_t length)
{
    static const char only_prefix[] = "inst-only=";
    const size_t only_prefix_length = sizeof only_prefix - 1;
    if (token_is(token, length, "verbose"))
        opts->verbose = 1;
    else if (token_is(token, length, "no-export"))
        opts->no_export = 1;
    else if (token_is(token, length, "inst-marker"))
        opts->inst_marker = 1;
    else if (token_is(token, length, "inst") || token_is(token, length, "inst-local"))
        inst->given = inst->others = 1; /* C has no remote accesses: local is all */
    else if (token_is(token, length, "inst-functions"))
        inst->given = inst->others = inst->functions = 1;
    else if (token_is(token, length, "no-inst"))
        *inst = (struct inst_request){.given = 1};
    else if (length >= only_prefix_length && !memcmp(token, only_prefix, only_prefix_length)) {
        inst->given = 1;
        inst->only_file = token + only_prefix_length;
        inst->only_length = length - only_prefix_length;
    } else
        fprintf(stderr, "ppw: warning: PPW_PASS_OPTIONS: unknown option '%.*s' ignored\n",
                (int)length, token);
}

void ppw_options_parse(const char *text, struct ppw_pass_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    struct inst_request inst = {0};
    for (const char *at = text ? text : ""; *at;) {
        while (*at && is_separator(*at))
            at++;
        size_t length = 0;
        while (at[length] && !is_separator(at[length]))
            length++;
        if (length)
            apply_token(opts, &inst, at, length);
        at += length;
    }
    if (!inst.given)
        inst.others = 1; /* the default is `inst` */

    if (inst.only_file) {
        if (!inst.only_length) {
            snprintf(opts->error, sizeof opts->error, "ppw: inst-only= names no file");
            return;
        }
        char *path = ppw_xcalloc(inst.only_length + 1, 1);
        memcpy(path, inst.only_file, inst.only_length);
        path[inst.only_length] = '\0';
        read_event_file(opts, path);
        free(path);
        return;
    }
    for (size_t i = 0; i < EVENT_COUNT; i++)
        opts->inst_events[i] = event_names[i].tag == GASP_C_FUNC ? inst.functions : inst.others;
}
