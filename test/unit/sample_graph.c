/* The sample graph shared by the reader and CLI tests. */
#include "sample_graph.h"

#include "ppw/static_format.h"

static const struct tloc g_incl[] = {{"", 12, 3}, {"", 12, 7}, {"", 14, 0}, {"other.h", 5, 1}};
static const struct tloc g_excl[] = {{"", 12, 3}};
static const struct tloc energy_incl[] = {{"", 13, 9}};

void write_main_func(struct chunk_writer *cw)
{
    cw_func(cw, "main", "main", "grid.c", 10, PPW_FUNC_ANALYSED, "", 3, 2);
    cw_var(cw, 0,
           &(struct tvar){.name = "g",
                          .kind = PPW_VAR_LOCAL,
                          .type = "struct grid *",
                          .decl_file = "grid.c",
                          .decl_line = 11,
                          .flags = PPW_VAR_WRITTEN | PPW_VAR_PASSED_BY_REF,
                          .inclusive = g_incl,
                          .inclusive_count = 4,
                          .exclusive = g_excl,
                          .exclusive_count = 1});
    cw_var(cw, 1,
           &(struct tvar){.name = "g->cells[].energy",
                          .kind = PPW_VAR_FIELD,
                          .type = "double",
                          .decl_file = "grid.c",
                          .decl_line = 11,
                          .parent = 1,
                          .inclusive = energy_incl,
                          .inclusive_count = 1});
    cw_var(cw, 2,
           &(struct tvar){.name = "result",
                          .kind = PPW_VAR_LOCAL,
                          .type = "int",
                          .decl_line = 12,
                          .flags = PPW_VAR_EXIT_RETURNED});
    const struct tbinding step_bindings[] = {{1, 0, PPW_BIND_REF, ""},
                                             {3, -1, PPW_BIND_RETURN, ""}};
    cw_call(cw, 0, 15, 5, "step", PPW_CALL_DIRECT, step_bindings, 2);
    const struct tbinding fork_bindings[] = {{2, 2, PPW_BIND_REF, "->energy"}};
    cw_call(cw, 1, 16, 2, "main.omp_outlined", PPW_CALL_FORK, fork_bindings, 1);
    const struct taccess accesses[] = {{"", 12, 3, 0, 1, 0},
                                       {"", 13, 9, 0, 1, 0},
                                       {"", 13, 9, 1, 1, 1},
                                       {"other.h", 5, 1, 2, 0, 2}};
    cw_access(cw, accesses, 4);
}

void write_outlined_func(struct chunk_writer *cw)
{
    cw_func(cw, "main.omp_outlined", "main.omp_outlined", "grid.c", 16,
            PPW_FUNC_ANALYSED | PPW_FUNC_OUTLINED, "main", 1, 0);
    cw_var(cw, 0,
           &(struct tvar){.name = "n",
                          .kind = PPW_VAR_PARAM,
                          .type = "int *",
                          .decl_file = "grid.c",
                          .decl_line = 16,
                          .param_index = 3,
                          .flags = PPW_VAR_EXIT_WRITTEN});
}

/* The sample graph: a unit with main, its outlined body and a global. */
void build_sample(struct bytes *out, const char *source)
{
    struct chunk_writer cw;
    cw_init(&cw, source);
    cw_unit(&cw, source, "/src", "clang 19 + ppw", 2, 1);
    write_main_func(&cw);
    write_outlined_func(&cw);
    cw_global(&cw, "counter", "counter", "long", "grid.c", 3);
    cw_finish(&cw, out);
    cw_free(&cw);
}
