/* pprof's profile.proto of a run's samples (export.h), encoded by
 * protobuf-c from proto/profile.proto and gzip-compressed by zlib, as pprof
 * reads it: a function per name, a location per (function, line), a sample
 * per distinct stack with its count and metric, labelled with its thread
 * and the variable its samples are blamed to. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "arena.h"
#include "export.h"
#include "job.h"
#include "profile.pb-c.h"
#include "strmap.h"
#include "view.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Mapping Mapping;

/* The string table (string 0 is "") and the locations, each through a
 * ppw_strmap of its keys; functions are the export_frames of the stacks. */
struct pprof {
    struct ppw_strmap strings; /* text -> index in table */
    const char **table;        /* the map's copies, by index */
    size_t ntable, table_cap;
    bool oom;
    struct ppw_strmap locations; /* "function frame:line" -> index */
    size_t *loc_frame;           /* by location: its function's frame */
    int64_t *loc_line;
    size_t nlocations, loc_cap;
};

static int64_t str(struct pprof *p, const char *s)
{
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&p->strings, s ? s : "", p->ntable, &added);
    if (e && added && ppw_array_reserve(&p->table, &p->table_cap, p->ntable + 1, sizeof *p->table))
        p->table[p->ntable++] = e->key;
    else if (!e || added)
        p->oom = true;
    return e ? (int64_t)e->value : 0;
}

/* The location id (from 1) of a function's frame at a line. */
static uint64_t location(struct pprof *p, size_t frame, uint32_t line)
{
    char key[48];
    snprintf(key, sizeof key, "%zu:%" PRIu32, frame, line);
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&p->locations, key, p->nlocations, &added);
    if (!e) {
        p->oom = true;
        return 0;
    }
    if (added) {
        size_t cap = p->loc_cap;
        if (!ppw_array_reserve(&p->loc_frame, &cap, p->nlocations + 1, sizeof *p->loc_frame) ||
            !ppw_array_reserve(&p->loc_line, &p->loc_cap, p->nlocations + 1, sizeof *p->loc_line)) {
            p->oom = true;
            return 0;
        }
        p->loc_frame[p->nlocations] = frame;
        p->loc_line[p->nlocations++] = line;
    }
    return e->value + 1;
}

/* gzip (RFC 1952) of data into out. */
static int write_gzip(FILE *out, const uint8_t *data, size_t size)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uint8_t buf[1 << 16];
    z.next_in = (uint8_t *)data;
    int rc;
    do {
        size_t chunk = size - (size_t)(z.next_in - data);
        z.avail_in = chunk > UINT32_MAX ? UINT32_MAX : (uInt)chunk;
        z.next_out = buf;
        z.avail_out = sizeof buf;
        rc = deflate(&z, z.avail_in == chunk ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR ||
            fwrite(buf, 1, sizeof buf - z.avail_out, out) != sizeof buf - z.avail_out) {
            deflateEnd(&z);
            return -1;
        }
    } while (rc != Z_STREAM_END);
    deflateEnd(&z);
    return 0;
}

int export_pprof(FILE *out, const struct view_input *in, const struct export_blame *blame,
                 struct ppw_err *err)
{
    size_t n;
    const struct ppw_blame_stack *stacks = view_user_stacks(in, &n, err);
    if (!stacks)
        return err->code;
    /* A stack with no frame of the program's (a sample in libppw's own
     * walk of a spawn context, whose frames the views cut) is a sample
     * with no location: pprof's total stays the run's. */
    size_t nframes = 0, nsamples = 0;
    for (size_t s = 0; s < n; s++)
        if (stacks[s].nframes || stacks[s].samples) {
            nframes += stacks[s].nframes ? view_top_frame(&stacks[s]) + 1 : 0;
            nsamples++;
        }
    bool seconds = in->unit && strcmp(in->unit, "s") == 0;
    struct pprof p = {0};
    int rc = PPW_ENOMEM;
    /* everything is allocated up front and freed at the end: protobuf-c
     * only reads the structures */
    Sample *samples = calloc(nsamples + 1, sizeof *samples);
    Sample **sample_ptrs = calloc(nsamples + 1, sizeof *sample_ptrs);
    uint64_t *loc_ids = calloc(nframes + 1, sizeof *loc_ids);
    int64_t *values = calloc(2 * nsamples + 1, sizeof *values);
    Label *labels = calloc(2 * nsamples + 1, sizeof *labels);
    Label **label_ptrs = calloc(2 * nsamples + 1, sizeof *label_ptrs);
    struct export_frames frames = {0};
    Location *locations = NULL, **location_ptrs = NULL;
    Line *lines = NULL, **line_ptrs = NULL;
    Function *functions = NULL, **function_ptrs = NULL;
    uint8_t *packed = NULL;
    if (!samples || !sample_ptrs || !loc_ids || !values || !labels || !label_ptrs ||
        export_frames_build(&frames, stacks, n, NULL, NULL))
        goto done;
    str(&p, "");
    int64_t key_thread = str(&p, "thread"), key_variable = str(&p, "variable");
    size_t next_loc = 0, next_label = 0, k = 0;
    for (size_t s = 0; s < n; s++) {
        const struct ppw_blame_stack *st = &stacks[s];
        if (!st->nframes && !st->samples)
            continue;
        Sample *sm = &samples[k];
        perftools__profiles__sample__init(sm);
        size_t count = st->nframes ? view_top_frame(st) + 1 : 0;
        sm->location_id = &loc_ids[next_loc];
        for (size_t f = 0; f < count; f++) /* leaf first */
            loc_ids[next_loc++] = location(&p, export_frame_index(&frames, st->frames[f].function),
                                           st->frames[f].line);
        sm->n_location_id = count;
        sm->value = &values[2 * k];
        sm->n_value = 2;
        values[2 * k] = (int64_t)st->samples;
        values[2 * k + 1] = seconds ? (int64_t)(st->weight * 1e9 + 0.5) : (int64_t)st->weight;
        sm->label = &label_ptrs[next_label];
        char thread[48];
        Label *l;
        if (st->thread != UINT32_MAX) { /* (folded input has no threads) */
            if (in->job)
                snprintf(thread, sizeof thread, "rank %" PRIu32 " thread %" PRIu32,
                         st->thread / PPW_JOB_RANK_SHIFT, st->thread % PPW_JOB_RANK_SHIFT);
            else
                snprintf(thread, sizeof thread, "thread %" PRIu32, st->thread);
            l = &labels[next_label];
            perftools__profiles__label__init(l);
            l->key = key_thread;
            l->str = str(&p, thread); /* the table keeps a copy */
            label_ptrs[next_label++] = l;
        }
        const char *var = export_stack_variable(blame, s);
        if (var) {
            l = &labels[next_label];
            perftools__profiles__label__init(l);
            l->key = key_variable;
            l->str = str(&p, var);
            label_ptrs[next_label++] = l;
        }
        sm->n_label = (size_t)(&label_ptrs[next_label] - sm->label);
        sample_ptrs[k] = sm;
        k++;
    }
    size_t nfun = frames.count, nloc = p.nlocations;
    functions = calloc(nfun + 1, sizeof *functions);
    function_ptrs = calloc(nfun + 1, sizeof *function_ptrs);
    locations = calloc(nloc + 1, sizeof *locations);
    location_ptrs = calloc(nloc + 1, sizeof *location_ptrs);
    lines = calloc(nloc + 1, sizeof *lines);
    line_ptrs = calloc(nloc + 1, sizeof *line_ptrs);
    if (!functions || !function_ptrs || !locations || !location_ptrs || !lines || !line_ptrs)
        goto done;
    for (size_t i = 0; i < nfun; i++) {
        perftools__profiles__function__init(&functions[i]);
        functions[i].id = i + 1;
        functions[i].name = functions[i].system_name = str(&p, frames.names[i]);
        functions[i].filename = str(&p, frames.files[i]);
        function_ptrs[i] = &functions[i];
    }
    for (size_t i = 0; i < nloc; i++) {
        perftools__profiles__line__init(&lines[i]);
        lines[i].function_id = p.loc_frame[i] + 1;
        lines[i].line = p.loc_line[i];
        line_ptrs[i] = &lines[i];
        perftools__profiles__location__init(&locations[i]);
        locations[i].id = i + 1;
        locations[i].mapping_id = 1;
        locations[i].n_line = 1;
        locations[i].line = &line_ptrs[i];
        location_ptrs[i] = &locations[i];
    }
    Mapping mapping = PERFTOOLS__PROFILES__MAPPING__INIT, *mapping_ptr = &mapping;
    mapping.id = 1;
    mapping.filename = str(&p, in->binary);
    mapping.has_functions = mapping.has_filenames = mapping.has_line_numbers = true;
    mapping.has_inline_frames = true; /* inlined frames are frames of their own */
    ValueType types[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
                          PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
    ValueType *type_ptrs[2] = {&types[0], &types[1]};
    types[0].type = str(&p, "samples");
    types[0].unit = str(&p, "count");
    types[1].type = str(&p, seconds ? "cpu" : in->metric ? in->metric : "metric");
    types[1].unit = str(&p, seconds ? "nanoseconds" : in->unit ? in->unit : "units");
    int64_t comment = str(&p, "ppw-blame export --to pprof");
    Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
    prof.n_sample_type = 2;
    prof.sample_type = type_ptrs;
    prof.n_sample = k;
    prof.sample = sample_ptrs;
    prof.n_mapping = 1;
    prof.mapping = &mapping_ptr;
    prof.n_location = nloc;
    prof.location = location_ptrs;
    prof.n_function = nfun;
    prof.function = function_ptrs;
    prof.n_comment = 1;
    prof.comment = &comment;
    prof.default_sample_type = types[1].type;
    prof.n_string_table = p.ntable; /* strings are all in by now */
    prof.string_table = (char **)p.table;
    if (p.oom)
        goto done;
    size_t size = perftools__profiles__profile__get_packed_size(&prof);
    if (!(packed = malloc(size ? size : 1)))
        goto done;
    perftools__profiles__profile__pack(&prof, packed);
    rc = write_gzip(out, packed, size) ? ppw_err_set(err, PPW_EIO, "cannot write the profile") : 0;
done:
    if (rc == PPW_ENOMEM)
        ppw_err_set(err, PPW_ENOMEM, "out of memory");
    free(packed);
    free(functions);
    free(function_ptrs);
    free(locations);
    free(location_ptrs);
    free(lines);
    free(line_ptrs);
    free(samples);
    free(sample_ptrs);
    free(loc_ids);
    free(values);
    free(labels);
    free(label_ptrs);
    export_frames_free(&frames);
    ppw_strmap_free(&p.strings);
    free(p.table);
    ppw_strmap_free(&p.locations);
    free(p.loc_frame);
    free(p.loc_line);
    return rc;
}
