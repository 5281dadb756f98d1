/* The ring sampler's leaf repair (see leaf.h).
 *
 * libunwind's remote mode over an address space of our own: registers come
 * from the sample, stack words from the kernel's copy of the stack, and
 * the call-frame information from the module's .eh_frame_hdr binary search
 * table, found with dl_iterate_phdr as libunwind's local mode finds it
 * (perf's DWARF unwinder does the same).  Memory reads are confined to the
 * copy and to the readable segments of modules looked up in this unwind:
 * the live stack has moved on since the sample, and a wrong address must
 * not fault in a signal handler. */
#include "leaf.h"

#include <libunwind.h>
#include <link.h>
#include <string.h>

#include "unwind.h"

/* Exported by libunwind's generic library, declared by none of its headers
 * (perf declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

#define LEAF_STEPS 48  /* frames unwound at most before the kernel's chain must take over */
#define LEAF_RANGES 32 /* readable segments of the modules looked up in one unwind */

struct range {
    uint64_t lo, hi;
};

struct leaf_arg {
    const struct ppw_leaf_sample *sample;
    struct range ranges[LEAF_RANGES];
    int nranges;
    /* The kernel's chain and where it read each return address: a stack
     * word beyond the copy is known when it is one of those slots. */
    const uint64_t *chain, *kernel_slot;
    uint32_t nslots;
};

static unw_addr_space_t space;

struct module_search {
    uint64_t ip;
    int found;
    uint64_t lo, hi, eh_frame_hdr;
    struct leaf_arg *arg;
};

PPW_SIGSAFE static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct module_search *m = data;
    int inside = 0;
    uint64_t lo = UINT64_MAX, hi = 0, hdr = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            if (m->ip >= start && m->ip < start + ph->p_memsz)
                inside = 1;
            lo = start < lo ? start : lo;
            hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            hdr = start;
        }
    }
    if (!inside)
        return 0;
    m->found = 1;
    m->lo = lo;
    m->hi = hi;
    m->eh_frame_hdr = hdr;
    /* Its readable segments, for access_mem (the gaps between segments
     * may be mapped without access). */
    struct leaf_arg *arg = m->arg;
    for (int i = 0; i < arg->nranges; i++)
        if (arg->ranges[i].lo >= lo && arg->ranges[i].hi <= hi)
            return 1; /* looked up before in this unwind */
    for (int i = 0; i < info->dlpi_phnum && arg->nranges < LEAF_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R)) {
            uint64_t start = info->dlpi_addr + ph->p_vaddr;
            arg->ranges[arg->nranges++] = (struct range){start, start + ph->p_filesz};
        }
    }
    return 1;
}

PPW_SIGSAFE static int readable(const struct leaf_arg *arg, uint64_t addr, uint64_t len)
{
    for (int i = 0; i < arg->nranges; i++)
        if (addr >= arg->ranges[i].lo && addr + len <= arg->ranges[i].hi && addr + len > addr)
            return 1;
    return 0;
}

PPW_SIGSAFE static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                                      int need_unwind_info, void *argp)
{
    struct leaf_arg *arg = argp;
    struct module_search m = {.ip = ip, .arg = arg};
    dl_iterate_phdr(find_module, &m);
    if (!m.found || !m.eh_frame_hdr || !readable(arg, m.eh_frame_hdr, 4))
        return -UNW_ENOINFO;
    /* .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, of
     * fde_count and of the table; the table's entries are pairs of 4-byte
     * offsets from the header (DW_EH_PE_datarel | sdata4), which is what
     * libunwind's table search reads. */
    const uint8_t *hdr = (const uint8_t *)(uintptr_t)m.eh_frame_hdr;
    enum { UDATA4 = 0x03, SDATA4 = 0x0b, UDATA8 = 0x04, SDATA8 = 0x0c, DATAREL_SDATA4 = 0x3b };
    uint8_t ptr_format = hdr[1] & 0x0f;
    uint64_t ptr_size = ptr_format == UDATA4 || ptr_format == SDATA4   ? 4
                        : ptr_format == UDATA8 || ptr_format == SDATA8 ? 8
                                                                       : 0;
    if (hdr[0] != 1 || ptr_size == 0 || hdr[2] != UDATA4 || hdr[3] != DATAREL_SDATA4 ||
        !readable(arg, m.eh_frame_hdr, 4 + ptr_size + 4))
        return -UNW_ENOINFO;
    uint32_t fde_count;
    memcpy(&fde_count, hdr + 4 + ptr_size, sizeof fde_count);
    uint64_t table = m.eh_frame_hdr + 4 + ptr_size + 4;
    if (!readable(arg, table, (uint64_t)fde_count * 8))
        return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m.lo;
    di.end_ip = m.hi;
    di.u.rti.segbase = m.eh_frame_hdr;
    di.u.rti.table_data = table;
    di.u.rti.table_len = (uint64_t)fde_count * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

/* Nothing to give back: libunwind frees the unwind info it allocated for
 * a table entry itself (its format is UNW_INFO_FORMAT_TABLE). */
PPW_SIGSAFE static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as;
    (void)pi;
    (void)arg;
}

PPW_SIGSAFE static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as;
    (void)addr;
    (void)arg;
    return -UNW_ENOINFO;
}

/* Whether the instruction before ip pops the frame pointer: `pop %rbp`
 * (0x5d) or `leave` (0xc9), as a frame-pointer epilogue ends. */
PPW_SIGSAFE static int after_frame_pop(struct leaf_arg *arg, uint64_t ip)
{
    if (!readable(arg, ip - 1, 1)) {
        /* libunwind's cache may have spared this unwind the module's
         * lookup (find_proc_info), which records its segments */
        struct module_search m = {.ip = ip - 1, .arg = arg};
        dl_iterate_phdr(find_module, &m);
        if (!m.found || !readable(arg, ip - 1, 1))
            return 0;
    }
    uint8_t op = *(const uint8_t *)(uintptr_t)(ip - 1);
    return op == 0x5d || op == 0xc9;
}

PPW_SIGSAFE static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *value,
                                  int write, void *argp)
{
    (void)as;
    struct leaf_arg *arg = argp;
    const struct ppw_leaf_sample *s = arg->sample;
    if (write)
        return -UNW_EINVAL;
    if (addr >= s->sp && addr - s->sp + sizeof *value <= s->stack_size) {
        memcpy(value, s->stack + (addr - s->sp), sizeof *value);
        return 0;
    }
    if (readable(arg, addr, sizeof *value)) {
        memcpy(value, (const void *)(uintptr_t)addr, sizeof *value);
        return 0;
    }
    for (uint32_t j = 1; j < arg->nslots; j++)
        if (arg->kernel_slot[j] && arg->kernel_slot[j] == addr) {
            /* beyond the copy (the frame of a function with a large
             * stack), read by the kernel's walk */
            *value = arg->chain[j];
            return 0;
        }
    if (addr == s->sp - 8 && after_frame_pop(arg, s->ip)) {
        /* The epilogue's call-frame information still places the saved
         * frame pointer at CFA - 16 after popping it (clang 19 emits only
         * a new CFA there), one word below the copy: the pop loaded it
         * from there, so it is the sampled BP. */
        *value = s->bp;
        return 0;
    }
    return -UNW_EINVAL;
}

PPW_SIGSAFE static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *value,
                                  int write, void *argp)
{
    (void)as;
    const struct ppw_leaf_sample *s = ((const struct leaf_arg *)argp)->sample;
    if (write)
        return -UNW_EINVAL;
    switch (reg) {
    case UNW_X86_64_RIP: *value = s->ip; return 0;
    case UNW_X86_64_RSP: *value = s->sp; return 0;
    case UNW_X86_64_RBP: *value = s->bp; return 0;
    default: return -UNW_EBADREG; /* not in the sample */
    }
}

PPW_SIGSAFE static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *value,
                                    int write, void *arg)
{
    (void)as;
    (void)reg;
    (void)value;
    (void)write;
    (void)arg;
    return -UNW_EBADREG;
}

PPW_SIGSAFE static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
    (void)as;
    (void)cursor;
    (void)arg;
    return -UNW_EINVAL;
}

PPW_SIGSAFE static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                                     unw_word_t *offset, void *arg)
{
    (void)as;
    (void)addr;
    (void)buf;
    (void)len;
    (void)offset;
    (void)arg;
    return -UNW_ENOINFO;
}

void ppw_leaf_init(void)
{
    if (space)
        return;
    unw_accessors_t acc = {
        .find_proc_info = find_proc_info,
        .put_unwind_info = put_unwind_info,
        .get_dyn_info_list_addr = get_dyn_info_list_addr,
        .access_mem = access_mem,
        .access_reg = access_reg,
        .access_fpreg = access_fpreg,
        .resume = resume,
        .get_proc_name = get_proc_name,
    };
    unw_addr_space_t as = unw_create_addr_space(&acc, 0);
    if (!as)
        return;
    /* Per-thread caches of each address's unwind rule, as for the
     * handler's walk (unwind.c): no lock shared between threads. */
    unw_set_caching_policy(as, UNW_CACHE_PER_THREAD);
    space = as;
}

/* out[0..cap): unwound[0..k), then chain[j..n). */
PPW_SIGSAFE static int splice(const uint64_t *unwound, uint32_t k, const uint64_t *chain,
                              uint32_t j, uint32_t n, uint64_t *out, uint32_t cap)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < k && m < cap; i++)
        out[m++] = unwound[i];
    for (uint32_t i = j; i < n && m < cap; i++)
        out[m++] = chain[i];
    return (int)m;
}

int ppw_leaf_repair(const struct ppw_leaf_sample *sample, const uint64_t *chain, uint32_t n,
                    uint64_t *out, uint32_t cap, int *truncated)
{
    *truncated = 0;
    if (!space)
        return -1;
    if (n > cap)
        n = cap;
    uint64_t unwound[LEAF_STEPS + 1];
    uint32_t k = 0;
    unwound[k++] = sample->ip;
    /* Where the kernel read chain[j]: at fp + 8, fp following the saved
     * frame pointers from the sample's BP, as far as the copy shows them.
     * A return address alone does not place a frame: in a recursion the
     * same one repeats at every depth. */
    uint64_t kernel_slot[LEAF_STEPS + 3] = {0};
    uint64_t fp = sample->bp;
    for (uint32_t j = 1; j < LEAF_STEPS + 3 && j < n; j++) {
        kernel_slot[j] = fp + 8;
        if (fp < sample->sp || fp - sample->sp + 8 > sample->stack_size)
            break;
        memcpy(&fp, sample->stack + (fp - sample->sp), sizeof fp);
    }
    uint32_t nslots = n < LEAF_STEPS + 3 ? n : LEAF_STEPS + 3;
    struct leaf_arg arg = {.sample = sample, .chain = chain, .kernel_slot = kernel_slot,
                           .nslots = nslots};
#define SAME_FRAME(j, ip, cfa)                                                                     \
    (chain[j] == (ip) && (j >= LEAF_STEPS + 3 || !kernel_slot[j] || kernel_slot[j] == (cfa)-8))
    unw_cursor_t cursor;
    uint32_t *slot = ppw_unwind_enter();
    int step = 0, rejected = 0, rc = -1;
    /* A candidate: unwound frame cand_k is the chain's cand_j, which the
     * chain goes on from.  It stands when the next frames agree too, or
     * when the unwind cannot go on to compare them; else the kernel's
     * chain is wrong beyond (a frame pointer saved by a library that kept
     * none: a callback from qsort, an MPI library's progress loop), and the
     * unwind goes on.  Where the chain ends, the unwind goes on too: the
     * frame pointers may have ended early. */
    uint32_t cand_k = 0, cand_j = 0;
    if (n > 0 && sample->stack_size > 0 && unw_init_remote(&cursor, space, &arg) == 0) {
        while (k <= LEAF_STEPS && (step = unw_step(&cursor)) > 0) {
            unw_word_t ip, cfa;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0 ||
                unw_get_reg(&cursor, UNW_REG_SP, &cfa) < 0) {
                step = -1;
                break;
            }
            /* The return address just unwound, frame k, was read at
             * cfa - 8. */
            if (cand_k) {
                if (SAME_FRAME(cand_j + 1, ip, cfa)) {
                    rc = splice(unwound, cand_k, chain, cand_j, n, out, cap);
                    break;
                }
                rejected = 1;
                cand_k = 0;
            }
            /* The kernel's chain skips frames, never adds one: frame k
             * can only be its j <= k. */
            for (uint32_t j = 1; j <= k && j + 1 < n; j++)
                if (SAME_FRAME(j, ip, cfa)) {
                    cand_k = k;
                    cand_j = j;
                    break;
                }
            unwound[k++] = ip;
        }
    }
    ppw_unwind_leave(slot);
#undef SAME_FRAME
    if (rc >= 0)
        return rc;
    if (cand_k) /* the unwind could not go on to compare */
        return splice(unwound, cand_k, chain, cand_j, n, out, cap);
    if (k > 1 && (step == 0 || rejected || k > n)) {
        /* The unwind reached the outermost frame, or the kernel's chain
         * went wrong or ended within it: the unwound frames, cut where the
         * copy or the step limit ended them. */
        *truncated = step != 0;
        return splice(unwound, k, chain, n, n, out, cap);
    }
    memcpy(out, chain, n * sizeof *out);
    return (int)n;
}
