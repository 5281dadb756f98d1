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
#include <sys/mman.h>

#include "modules.h"
#include "unwind.h"

/* Exported by libunwind's generic library, declared by none of its headers
 * (perf declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

#define LEAF_STEPS 48  /* frames unwound at most before the kernel's chain must take over */
#define LEAF_RANGES 32 /* readable segments of the modules looked up in one unwind */

_Static_assert(sizeof(struct ppw_leaf_rule) == 32, "a set of rules in two cache lines");

struct range {
    uint64_t lo, hi;
};

struct leaf_arg {
    const struct ppw_leaf_sample *sample;
    struct range ranges[LEAF_RANGES];
    int nranges;
    int last_range; /* where the last read fell (ranges[0] empty before any) */
    /* The kernel's chain and where it read each return address: a stack
     * word beyond the copy is known when it is one of those slots. */
    const uint64_t *chain, *kernel_slot;
    uint32_t nslots;
};

static unw_addr_space_t space;

uint64_t ppw_leaf_by_rules;

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

/* A word of a module's readable segment (readable() said so), read as a
 * debugger reads it, not as the program would: a sample's BP may point
 * anywhere in a module's data, and under AddressSanitizer a word there
 * may lie in an instrumented global's redzone.  One unaligned load, which
 * neither ASan's checks nor its memcpy interceptor see. */
typedef uint64_t unaligned_word __attribute__((aligned(1), may_alias));
__attribute__((no_sanitize("address"))) PPW_SIGSAFE static uint64_t module_word(uint64_t addr)
{
    return *(const volatile unaligned_word *)(uintptr_t)addr;
}

PPW_SIGSAFE static int in_range(const struct range *r, uint64_t addr, uint64_t len)
{
    return addr >= r->lo && addr + len <= r->hi && addr + len > addr;
}

PPW_SIGSAFE static int readable(struct leaf_arg *arg, uint64_t addr, uint64_t len)
{
    /* libunwind reads a module's unwind tables a word at a time, through
     * access_mem: most reads fall in the segment of the one before */
    if (in_range(&arg->ranges[arg->last_range], addr, len))
        return 1;
    for (int i = 0; i < arg->nranges; i++)
        if (in_range(&arg->ranges[i], addr, len)) {
            arg->last_range = i;
            return 1;
        }
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
    if (fde_count == 0 || !readable(arg, table, (uint64_t)fde_count * 8))
        return -UNW_ENOINFO;
    /* The entry whose function starts last at or before ip, found here:
     * libunwind's own search reads the table through access_mem a byte at
     * a time (about 50 of a first sighting's 260 calls).  It gets that
     * entry alone, and still checks that the FDE covers ip. */
    int64_t want = (int64_t)(ip - m.eh_frame_hdr);
    uint32_t lo = 0, hi = fde_count; /* the entry is below hi */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        int32_t start;
        memcpy(&start, (const uint8_t *)(uintptr_t)table + (uint64_t)mid * 8, sizeof start);
        if (start <= want)
            lo = mid;
        else
            hi = mid;
    }
    int32_t first;
    memcpy(&first, (const uint8_t *)(uintptr_t)table + (uint64_t)lo * 8, sizeof first);
    if (first > want)
        return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m.lo;
    di.end_ip = m.hi;
    di.u.rti.segbase = m.eh_frame_hdr;
    di.u.rti.table_data = table + (uint64_t)lo * 8;
    di.u.rti.table_len = 8 / sizeof(unw_word_t);
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
        *value = module_word(addr);
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

/* libunwind's address space, outside the program's heap.  It callocs
 * its 26 KiB at the start, in the program's main arena, before the
 * program's own first block: glibc 2.36's arena then consolidated its
 * fast bins about three times as often in bench/runtime/alloc.c (8,420
 * calls of malloc_consolidate on the main thread against 2,887 without
 * it, as many as the plain build's).  So the
 * calloc of libunwind's remote library is mmap's for this one call, and
 * libppw adds no block to the program's heap (runtime.heap).  The space
 * lives as long as the process: unw_destroy_addr_space would hand free()
 * a block malloc never gave. */
static void *mapped_calloc(size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes))
        return NULL;
    void *block = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return block == MAP_FAILED ? NULL : block;
}

struct create_call {
    unw_accessors_t *acc;
    unw_addr_space_t made;
};

static void create_space(void *arg)
{
    struct create_call *c = arg;
    c->made = unw_create_addr_space(c->acc, 0);
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
    /* Before any thread samples, so no other call of that library's
     * calloc can see the slot rewritten (only the leaf repair uses it). */
    struct create_call call = {&acc, NULL};
    ppw_modules_call_redirected((const void *)unw_create_addr_space, "calloc",
                                (void *)mapped_calloc, create_space, &call);
    unw_addr_space_t as = call.made;
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

/* One unwind's frames and where they meet the kernel's chain. */
struct meeting {
    const uint64_t *chain;
    uint32_t n;
    const uint64_t *kernel_slot; /* where the kernel read chain[j] (see ppw_leaf_repair) */
    uint64_t unwound[LEAF_STEPS + 1];
    uint32_t k;
    /* A candidate: unwound frame cand_k is the chain's cand_j, which the
     * chain goes on from.  It stands when the next frames agree too, or
     * when the unwind cannot go on to compare them; else the kernel's
     * chain is wrong beyond (a frame pointer saved by a library that kept
     * none: a callback from qsort, an MPI library's progress loop), and
     * the unwind goes on.  Where the chain ends, the unwind goes on too:
     * the frame pointers may have ended early. */
    uint32_t cand_k, cand_j;
    int rejected;
    int chain_cut; /* the chain was cut where its frame pointers went wrong */
};

/* Whether unwound frame (ip, read at cfa - 8) is chain[j]: the same
 * address, read from the same stack slot where the kernel's is known. */
PPW_SIGSAFE static int same_frame(const struct meeting *m, uint32_t j, uint64_t ip, uint64_t cfa)
{
    return m->chain[j] == ip &&
           (j >= LEAF_STEPS + 3 || !m->kernel_slot[j] || m->kernel_slot[j] == cfa - 8);
}

/* Takes the next unwound frame; 1 when the chain takes over (*rc set). */
PPW_SIGSAFE static int meet(struct meeting *m, uint64_t ip, uint64_t cfa, uint64_t *out,
                            uint32_t cap, int *rc)
{
    if (m->cand_k) {
        if (same_frame(m, m->cand_j + 1, ip, cfa)) {
            *rc = splice(m->unwound, m->cand_k, m->chain, m->cand_j, m->n, out, cap);
            return 1;
        }
        m->rejected = 1;
        m->cand_k = 0;
    }
    /* The kernel's chain skips frames, never adds one: frame k can only be
     * its j <= k. */
    for (uint32_t j = 1; j <= m->k && j + 1 < m->n; j++)
        if (same_frame(m, j, ip, cfa)) {
            m->cand_k = m->k;
            m->cand_j = j;
            break;
        }
    m->unwound[m->k++] = ip;
    return 0;
}

/* The result once the unwind stopped: step 0 when it reached the
 * outermost frame, < 0 when it failed, > 0 at the step limit. */
PPW_SIGSAFE static int meeting_end(const struct meeting *m, int step, uint64_t *out, uint32_t cap,
                                   int *truncated)
{
    if (m->cand_k) { /* the unwind could not go on to compare */
        *truncated = m->chain_cut;
        return splice(m->unwound, m->cand_k, m->chain, m->cand_j, m->n, out, cap);
    }
    if (m->k > 1 && (step == 0 || m->rejected || m->k > m->n)) {
        /* The unwind reached the outermost frame, or the kernel's chain
         * went wrong or ended within it: the unwound frames, cut where the
         * copy or the step limit ended them. */
        *truncated = step != 0;
        return splice(m->unwound, m->k, m->chain, m->n, m->n, out, cap);
    }
    *truncated = m->chain_cut;
    memcpy(out, m->chain, m->n * sizeof *out);
    return (int)m->n;
}

/* ---- rules learned from earlier unwinds (leaf.h) ----
 *
 * libunwind's repair costs about 18 us here when an address is new to
 * its per-thread cache of 128 rules (5 to 8 us on average in a malloc-heavy
 * run): the module's lookup, then the call-frame information read a byte
 * at a time through access_mem.  A rule keeps
 * what one step found, as offsets: the caller's frame (CFA) from SP, and
 * BP's save slot from the CFA.  One sighting cannot tell a CFA based on SP
 * from one based on BP, so the rule holds only for the same BP - SP until
 * a sighting with another span tells which register it is based on.  A
 * rule is learned only from a step that read the return address at
 * CFA - 8 and BP from its slot, outside signal frames, so that any
 * call-frame information of another form is left to libunwind.  A frame
 * with call-frame information from which libunwind's step ended the stack
 * (the return address undefined or 0: _start, a thread's start) has an
 * OUTERMOST rule: most samples whose kernel chain is cut short are
 * unwound to there. */
enum { BASE_UNKNOWN, BASE_SP, BASE_BP, OUTERMOST };

PPW_SIGSAFE static uint64_t rule_key(uint64_t ip, uint32_t frame)
{
    /* A return address is looked up at its call (libunwind does the same):
     * ip - 1 is inside the call instruction, never an instruction's start,
     * so the two kinds of key never meet. */
    return frame == 0 ? ip : ip - 1;
}

/* Key's set of RULE_WAYS slots (a malloc-heavy run sampled 310 distinct
 * leaf addresses in 1,263 samples, which one slot per hash kept
 * evicting). */
enum { RULE_WAYS = 4 };
PPW_SIGSAFE static uint64_t rule_hash(uint64_t key)
{
    return key * 0x9e3779b97f4a7c15ull;
}

PPW_SIGSAFE static struct ppw_leaf_rule *rule_set(struct ppw_leaf_rules *rules, uint64_t key)
{
    return &rules->slot[((rule_hash(key) >> 32) & (PPW_LEAF_RULES / RULE_WAYS - 1)) * RULE_WAYS];
}

/* A consistent copy of key's rule into *out: 1 when the table holds one
 * learned under `unloads`. */
PPW_SIGSAFE static int rule_load(struct ppw_leaf_rules *rules, uint64_t key, uint16_t unloads,
                                 struct ppw_leaf_rule *out)
{
    struct ppw_leaf_rule *set = rule_set(rules, key);
    for (int i = 0; i < RULE_WAYS; i++) {
        struct ppw_leaf_rule *slot = &set[i];
        uint32_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
        if ((seq & 1) || __atomic_load_n(&slot->key, __ATOMIC_RELAXED) != key)
            continue;
        out->key = key;
        out->span = __atomic_load_n(&slot->span, __ATOMIC_RELAXED);
        out->cfa_off = __atomic_load_n(&slot->cfa_off, __ATOMIC_RELAXED);
        out->bp_save = __atomic_load_n(&slot->bp_save, __ATOMIC_RELAXED);
        out->base = __atomic_load_n(&slot->base, __ATOMIC_RELAXED);
        out->unloads = __atomic_load_n(&slot->unloads, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != seq)
            return 0; /* a writer changed it meanwhile */
        return out->unloads == unloads;
    }
    return 0;
}

/* Writes *value (its key set) as its key's rule: over the key's slot, an
 * empty or stale one, else a pseudo-random one of the set.  Nothing when
 * another writer holds that slot: the rule is learned at a later sighting. */
PPW_SIGSAFE static void rule_store(struct ppw_leaf_rules *rules, const struct ppw_leaf_rule *value)
{
    struct ppw_leaf_rule *set = rule_set(rules, value->key), *slot = NULL;
    for (int i = 0; i < RULE_WAYS && !slot; i++)
        if (__atomic_load_n(&set[i].key, __ATOMIC_RELAXED) == value->key)
            slot = &set[i];
    for (int i = 0; i < RULE_WAYS && !slot; i++)
        if (__atomic_load_n(&set[i].key, __ATOMIC_RELAXED) == 0 ||
            __atomic_load_n(&set[i].unloads, __ATOMIC_RELAXED) != value->unloads)
            slot = &set[i];
    if (!slot)
        slot = &set[(rule_hash(value->key) >> 20) & (RULE_WAYS - 1)];
    uint32_t seq = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
    if ((seq & 1) ||
        !__atomic_compare_exchange_n(&slot->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&slot->key, value->key, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->span, value->span, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->cfa_off, value->cfa_off, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->bp_save, value->bp_save, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->base, value->base, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->unloads, value->unloads, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->seq, seq + 2, __ATOMIC_RELEASE);
}

PPW_SIGSAFE static int read_word(struct leaf_arg *arg, uint64_t addr, uint64_t *value)
{
    unw_word_t v;
    if (access_mem(NULL, addr, &v, 0, arg) != 0)
        return -1;
    *value = v;
    return 0;
}

/* The caller of frame (ip, sp, bp) by its rule: 1, or 0 at the outermost
 * frame, -1 when no rule holds here. */
PPW_SIGSAFE static int rule_step(struct ppw_leaf_rules *rules, uint16_t unloads,
                                 struct leaf_arg *arg, uint32_t frame, uint64_t *ip, uint64_t *sp,
                                 uint64_t *bp)
{
    struct ppw_leaf_rule r;
    int64_t span = (int64_t)(*bp - *sp);
    if (!rule_load(rules, rule_key(*ip, frame), unloads, &r) ||
        (r.base == BASE_UNKNOWN && r.span != span))
        return -1;
    if (r.base == OUTERMOST)
        return 0;
    uint64_t cfa = r.base == BASE_BP ? *bp + (uint64_t)(int64_t)(r.cfa_off - r.span)
                                     : *sp + (uint64_t)(int64_t)r.cfa_off;
    uint64_t ra, caller_bp = *bp;
    if (cfa <= *sp || read_word(arg, cfa - 8, &ra) != 0 || ra == 0 ||
        (r.bp_save && read_word(arg, cfa - (uint64_t)r.bp_save, &caller_bp) != 0))
        return -1;
    *ip = ra;
    *sp = cfa;
    *bp = caller_bp;
    return 1;
}

/* Learns frame (ip, sp, bp)'s rule from libunwind's step to (caller_ip,
 * cfa, caller_bp), BP restored from bp_slot (0: not restored). */
PPW_SIGSAFE static void rule_learn(struct ppw_leaf_rules *rules, uint16_t unloads,
                                   struct leaf_arg *arg, uint32_t frame, uint64_t ip, uint64_t sp,
                                   uint64_t bp, uint64_t caller_ip, uint64_t cfa,
                                   uint64_t caller_bp, uint64_t bp_slot)
{
    uint64_t word;
    int64_t cfa_off = (int64_t)(cfa - sp), bp_save = bp_slot ? (int64_t)(cfa - bp_slot) : 0;
    if (cfa_off <= 0 || cfa_off > INT32_MAX || bp_save < 0 || bp_save > INT32_MAX ||
        read_word(arg, cfa - 8, &word) != 0 || word != caller_ip ||
        (bp_slot ? read_word(arg, bp_slot, &word) != 0 || word != caller_bp : caller_bp != bp))
        return;
    uint64_t key = rule_key(ip, frame);
    struct ppw_leaf_rule r;
    int known = rule_load(rules, key, unloads, &r);
    int64_t span = (int64_t)(bp - sp);
    if (known && r.base == BASE_UNKNOWN && r.span != span && r.bp_save == bp_save) {
        /* Another span: whichever offset held tells the base. */
        if (r.cfa_off == cfa_off || r.cfa_off - r.span == cfa_off - span) {
            r.base = r.cfa_off == cfa_off ? BASE_SP : BASE_BP;
            rule_store(rules, &r);
            return;
        }
    }
    if (known && r.base != BASE_UNKNOWN && r.base != OUTERMOST)
        return; /* known; a step that disagrees came in another way */
    r = (struct ppw_leaf_rule){.key = key,
                               .span = span,
                               .cfa_off = (int32_t)cfa_off,
                               .bp_save = (int32_t)bp_save,
                               .base = BASE_UNKNOWN,
                               .unloads = unloads};
    rule_store(rules, &r);
}

/* One sighting cannot tell the base of the CFA at the sampled address; a
 * second unwind of that frame with BP moved can: the CFA moves with BP or
 * it stays.  libunwind has the address's rule cached by then, so this
 * costs a fraction of the first unwind, and samples at an address need
 * not wait for a second sighting with another span. */
PPW_SIGSAFE static void rule_probe_base(struct ppw_leaf_rules *rules, uint16_t unloads,
                                        const struct leaf_arg *arg, uint64_t cfa)
{
    const struct ppw_leaf_sample *s = arg->sample;
    struct ppw_leaf_rule r;
    if (!rule_load(rules, rule_key(s->ip, 0), unloads, &r) || r.base != BASE_UNKNOWN)
        return;
    enum { SHIFT = 16 };
    struct ppw_leaf_sample shifted = *s;
    shifted.bp += SHIFT;
    struct leaf_arg probe = *arg;
    probe.sample = &shifted;
    unw_cursor_t cursor;
    unw_word_t moved_cfa;
    if (unw_init_remote(&cursor, space, &probe) != 0 || unw_step(&cursor) <= 0 ||
        unw_get_reg(&cursor, UNW_REG_SP, &moved_cfa) < 0)
        return;
    if (moved_cfa != cfa && moved_cfa != cfa + SHIFT)
        return;
    r.base = moved_cfa == cfa ? BASE_SP : BASE_BP;
    rule_store(rules, &r);
}

PPW_SIGSAFE static int known_outermost(struct ppw_leaf_rules *rules, uint16_t unloads,
                                       uint32_t frame, uint64_t ip)
{
    struct ppw_leaf_rule r;
    return rule_load(rules, rule_key(ip, frame), unloads, &r) && r.base == OUTERMOST;
}

/* Frame (ip)'s call-frame information ends the stack. */
PPW_SIGSAFE static void rule_learn_outermost(struct ppw_leaf_rules *rules, uint16_t unloads,
                                             uint32_t frame, uint64_t ip)
{
    struct ppw_leaf_rule r = {.key = rule_key(ip, frame), .base = OUTERMOST, .unloads = unloads};
    rule_store(rules, &r);
}

/* The unwind by rules alone: 1 when every frame it needed had one (*rc
 * set), 0 when libunwind must do it. */
PPW_SIGSAFE static int repair_by_rules(struct ppw_leaf_rules *rules, uint16_t unloads,
                                       struct leaf_arg *arg, struct meeting *m, uint64_t *out,
                                       uint32_t cap, int *rc, int *truncated)
{
    const struct ppw_leaf_sample *s = arg->sample;
    uint64_t ip = s->ip, sp = s->sp, bp = s->bp;
    int step = 1;
    while (m->k <= LEAF_STEPS) {
        if ((step = rule_step(rules, unloads, arg, m->k - 1, &ip, &sp, &bp)) < 0)
            return 0;
        if (step == 0)
            break;
        if (meet(m, ip, sp, out, cap, rc))
            return 1;
    }
    *rc = meeting_end(m, step, out, cap, truncated);
    return 1;
}

/* Where the kernel read chain[j]: at fp + 8, fp following the saved frame
 * pointers from the sample's BP, as far as the copy shows them (into
 * kernel_slot[1..LEAF_STEPS + 3)).  A return address alone does not place
 * a frame: in a recursion the same one repeats at every depth.  The kernel
 * follows any BP: where the code interrupted keeps none and BP holds some
 * other pointer (glibc's clone3, with no call-frame information for its
 * syscall, is entered with BP the new thread's descriptor, whose first
 * word points to itself), the chain repeats one word of the heap to its
 * end.  Returns the length the chain keeps when its frame pointers went
 * wrong (a BP below SP, or a saved one not above the frame that saved
 * it: frames lie ever higher on a stack), 0 when they did not as far as
 * the copy shows. */
PPW_SIGSAFE static uint32_t cut_wrong_chain(const struct ppw_leaf_sample *sample, uint32_t n,
                                           uint64_t *kernel_slot)
{
    uint64_t fp = sample->bp;
    if (fp < sample->sp)
        return n > 1 ? 1 : 0;
    for (uint32_t j = 1; j < n; j++) {
        if (j < LEAF_STEPS + 3)
            kernel_slot[j] = fp + 8;
        if (fp - sample->sp + 8 > sample->stack_size)
            return 0;
        uint64_t saved;
        memcpy(&saved, sample->stack + (fp - sample->sp), sizeof saved);
        if (saved <= fp)
            return j + 1 < n ? j + 1 : 0;
        fp = saved;
    }
    return 0;
}

int ppw_leaf_repair(const struct ppw_leaf_sample *sample, const uint64_t *chain, uint32_t n,
                    uint64_t *out, uint32_t cap, int *truncated, struct ppw_leaf_rules *rules)
{
    *truncated = 0;
    if (!space)
        return -1;
    if (n > cap)
        n = cap;
    uint64_t kernel_slot[LEAF_STEPS + 3] = {0};
    uint32_t chain_cut = cut_wrong_chain(sample, n, kernel_slot);
    if (chain_cut)
        n = chain_cut;
    uint32_t nslots = n < LEAF_STEPS + 3 ? n : LEAF_STEPS + 3;
    struct leaf_arg arg = {
        .sample = sample, .chain = chain, .kernel_slot = kernel_slot, .nslots = nslots};
    struct meeting m = {
        .chain = chain, .n = n, .kernel_slot = kernel_slot, .chain_cut = chain_cut != 0};
    m.unwound[m.k++] = sample->ip;
    if (n == 0 || sample->stack_size == 0)
        return meeting_end(&m, -1, out, cap, truncated);
    int rc = -1;
    uint16_t unloads = (uint16_t)ppw_modules_unload_count();
    if (rules) {
        if (repair_by_rules(rules, unloads, &arg, &m, out, cap, &rc, truncated)) {
            __atomic_fetch_add(&ppw_leaf_by_rules, 1, __ATOMIC_RELAXED);
            return rc;
        }
        m = (struct meeting){
            .chain = chain, .n = n, .kernel_slot = kernel_slot, .chain_cut = chain_cut != 0};
        m.unwound[m.k++] = sample->ip;
    }
    unw_cursor_t cursor;
    uint32_t *slot = ppw_unwind_enter();
    int step = 0;
    if (unw_init_remote(&cursor, space, &arg) == 0) {
        uint64_t ip = sample->ip, sp = sample->sp, bp = sample->bp;
        /* Where the frame's BP value is: known unless libunwind could not
         * say after some step, and then no rule is learned until it can. */
        unw_save_loc_t bp_loc = {.type = UNW_SLT_NONE};
        int bp_loc_known = unw_get_save_loc(&cursor, UNW_X86_64_RBP, &bp_loc) == 0;
        while (m.k <= LEAF_STEPS) {
            int signal_frame = unw_is_signal_frame(&cursor) > 0;
            if ((step = unw_step(&cursor)) <= 0) {
                /* The end by the frame's own call-frame information, not
                 * by a guess from the stack's contents without it. */
                unw_proc_info_t pi;
                if (step == 0 && rules && !known_outermost(rules, unloads, m.k - 1, ip) &&
                    unw_get_proc_info(&cursor, &pi) == 0)
                    rule_learn_outermost(rules, unloads, m.k - 1, ip);
                break;
            }
            unw_word_t caller_ip, cfa, caller_bp;
            /* A caller's frame lies above its callee's, except across a
             * signal frame (an alternate signal stack): a CFA that did not
             * move up came from a BP that was no frame pointer. */
            if (unw_get_reg(&cursor, UNW_REG_IP, &caller_ip) < 0 || caller_ip == 0 ||
                unw_get_reg(&cursor, UNW_REG_SP, &cfa) < 0 || (cfa <= sp && !signal_frame)) {
                step = -1;
                break;
            }
            unw_save_loc_t loc = {.type = UNW_SLT_NONE};
            int loc_known = unw_get_reg(&cursor, UNW_X86_64_RBP, &caller_bp) == 0 &&
                            unw_get_save_loc(&cursor, UNW_X86_64_RBP, &loc) == 0;
            if (rules && loc_known && bp_loc_known && !signal_frame) {
                /* BP's location moved to a stack slot: this frame saved it
                 * there; it stayed put: this frame left BP alone. */
                int moved = loc.type != bp_loc.type ||
                            (loc.type == UNW_SLT_MEMORY && loc.u.addr != bp_loc.u.addr);
                if (!moved || loc.type == UNW_SLT_MEMORY) {
                    rule_learn(rules, unloads, &arg, m.k - 1, ip, sp, bp, caller_ip, cfa,
                               caller_bp, moved ? loc.u.addr : 0);
                    if (m.k == 1)
                        rule_probe_base(rules, unloads, &arg, cfa);
                }
            }
            bp_loc = loc;
            bp_loc_known = loc_known;
            if (loc_known)
                bp = caller_bp;
            ip = caller_ip;
            sp = cfa;
            if (meet(&m, caller_ip, cfa, out, cap, &rc))
                break;
        }
    }
    ppw_unwind_leave(slot);
    if (rc >= 0)
        return rc;
    return meeting_end(&m, step, out, cap, truncated);
}
