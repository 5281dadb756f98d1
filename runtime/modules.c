/* Module map (see modules.h). */
#include "modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ppw/run_format.h"
#include "runfile.h"
#include "unwind.h"

#define MODULES_MAX 4096

struct known {
    uint64_t bias, lo, hi;
    int seen;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct known known[MODULES_MAX];
static int nknown;
static uint8_t exe_build_id[PPW_BUILD_ID_MAX];
static uint32_t exe_build_id_size;
static uint64_t self_lo, self_hi;
#define RUNTIME_RANGES 8
static struct {
    uint64_t lo, hi;
} runtime_ranges[RUNTIME_RANGES];
static int nruntime;

/* Parallel runtimes whose frames bound a task's own code. */
static int is_parallel_runtime(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libomp.", 7) == 0 || strncmp(base, "libomp-", 7) == 0 ||
           strncmp(base, "libgomp.", 8) == 0 || strncmp(base, "libiomp5.", 9) == 0;
}

static uint32_t build_id_of(const struct dl_phdr_info *info, uint8_t *out)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof(*n);
            const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
            const uint8_t *next = desc + ((n->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                uint32_t size = n->n_descsz < PPW_BUILD_ID_MAX ? n->n_descsz : PPW_BUILD_ID_MAX;
                memcpy(out, desc, size);
                return size;
            }
            p = next;
        }
    }
    return 0;
}

static void range_of(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < *lo)
            *lo = start;
        if (start + ph->p_memsz > *hi)
            *hi = start + ph->p_memsz;
    }
}

static int find_exe(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    /* The first object is the executable. */
    exe_build_id_size = build_id_of(info, exe_build_id);
    return 1;
}

void ppw_modules_early_init(void)
{
    dl_iterate_phdr(find_exe, NULL);
    Dl_info self;
    if (dladdr((void *)ppw_modules_early_init, &self) && self.dli_fbase) {
        /* Range filled precisely by the first scan; until then, the base. */
        self_lo = (uint64_t)(uintptr_t)self.dli_fbase;
        self_hi = self_lo + 1;
    }
}

static uint64_t exe_lo, exe_hi; /* the executable's range, once scanned */

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *index = data;
    int is_exe = (*index)++ == 0;
    uint64_t lo, hi;
    range_of(info, &lo, &hi);
    if (hi == 0)
        return 0;
    for (int i = 0; i < nknown; i++)
        if (known[i].bias == info->dlpi_addr && known[i].lo == lo && known[i].hi == hi) {
            known[i].seen = 1;
            return 0;
        }
    struct ppw_rec_module rec;
    memset(&rec, 0, sizeof(rec));
    rec.load_bias = info->dlpi_addr;
    rec.lo = lo;
    rec.hi = hi;
    rec.build_id_size = build_id_of(info, rec.build_id);
    rec.flags = is_exe ? PPW_MODULE_EXE : 0u;
    if (is_exe) {
        __atomic_store_n(&exe_lo, lo, __ATOMIC_RELAXED);
        __atomic_store_n(&exe_hi, hi, __ATOMIC_RELEASE);
    }
    if (self_lo >= lo && self_lo < hi) {
        rec.flags |= PPW_MODULE_PPW;
        self_lo = lo;
        self_hi = hi;
    }
    const char *path = info->dlpi_name;
    char exe[4096];
    if (is_exe && (!path || !*path)) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        path = exe;
    }
    if (path && is_parallel_runtime(path)) {
        rec.flags |= PPW_MODULE_PARALLEL;
        if (nruntime < RUNTIME_RANGES) {
            runtime_ranges[nruntime].lo = lo;
            runtime_ranges[nruntime].hi = hi;
            /* Published after the range: readers check the count first. */
            __atomic_store_n(&nruntime, nruntime + 1, __ATOMIC_RELEASE);
        }
    }
    const char *strings[1] = {path};
    ppw_runfile_append(PPW_RUN_MODULE, &rec, sizeof(rec), 1, strings);
    if (nknown < MODULES_MAX)
        known[nknown++] = (struct known){info->dlpi_addr, lo, hi, 1};
    return 0;
}

static void scan(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nknown; i++)
        known[i].seen = 0;
    int index = 0;
    dl_iterate_phdr(visit, &index);
    /* Objects no longer present were unloaded. */
    for (int i = 0; i < nknown;) {
        if (known[i].seen) {
            i++;
            continue;
        }
        struct ppw_rec_module rec;
        memset(&rec, 0, sizeof(rec));
        rec.load_bias = known[i].bias;
        rec.lo = known[i].lo;
        rec.hi = known[i].hi;
        const char *strings[1] = {""};
        ppw_runfile_append(PPW_RUN_UNMODULE, &rec, sizeof(rec), 1, strings);
        known[i] = known[--nknown];
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the dynamic linker's write lock ----
 *
 * dlopen, dlclose and every dl_iterate_phdr callback run with glibc's
 * dl_load_write_lock held, and a stack walk calls dl_iterate_phdr while
 * holding a libunwind lock of its own.  A walk in the sample handler of the
 * thread that holds the dynamic linker's lock can therefore wait for
 * libunwind's, held by another thread's walk that waits for the dynamic
 * linker's: a deadlock (seen in Open MPI's MPI_Init, which dlopens
 * components).  The handler asks ppw_modules_walk_may_block first.
 *
 * The lock is a recursive pthread mutex inside ld.so's _rtld_global, at an
 * offset that changes between glibc versions, so it is found, not assumed:
 * inside a dl_iterate_phdr callback, the one recursive mutex in
 * _rtld_global owned by this thread, confirmed free once the callback has
 * returned.  Not found (another libc), the check is off.  (dlclose is also
 * interposed below, for the same reason.) */

static const pthread_mutex_t *dl_lock; /* _rtld_global's dl_load_write_lock */

struct dl_lock_search {
    const unsigned char *base;
    size_t size, found_at;
    int tid, matches;
};

static int find_owned_mutex(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    struct dl_lock_search *q = data;
    for (size_t at = 0; at + sizeof(pthread_mutex_t) <= q->size; at += sizeof(long)) {
        const pthread_mutex_t *m = (const pthread_mutex_t *)(const void *)(q->base + at);
        if (m->__data.__owner == q->tid && m->__data.__count >= 1 &&
            (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP) {
            q->found_at = at;
            q->matches++;
        }
    }
    return 1; /* the first object is enough */
}

static void locate_dl_lock(void)
{
    void *rtld = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!rtld || !dladdr1(rtld, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
        sym->st_size < sizeof(pthread_mutex_t))
        return;
    struct dl_lock_search q = {rtld, sym->st_size, 0, (int)syscall(SYS_gettid), 0};
    dl_iterate_phdr(find_owned_mutex, &q);
    const pthread_mutex_t *m = (const pthread_mutex_t *)(const void *)(q.base + q.found_at);
    if (q.matches == 1 && m->__data.__owner == 0 && m->__data.__lock == 0)
        __atomic_store_n(&dl_lock, m, __ATOMIC_RELEASE);
}

int ppw_modules_walk_may_block(uint32_t tid)
{
    const pthread_mutex_t *m = __atomic_load_n(&dl_lock, __ATOMIC_ACQUIRE);
    if (!m || !__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED))
        return 0;
    /* Locked, and the owner is this thread, or not yet (or no longer)
     * recorded: glibc sets the owner just after taking the lock word, and
     * clears it just before releasing it, and a signal may land between.
     * Or the owner is another thread in dlopen, dlclose or a callback of
     * the program's, which may wait for a lock the interrupted thread
     * holds: seen in Open MPI's MPI_Finalize, a dlclose freeing memory
     * under the lock while the handler of a thread interrupted inside
     * free() waited for it.  Only another thread's stack walk is sure to
     * release it without waiting for us. */
    int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
    return owner == 0 || (uint32_t)owner == tid || !ppw_unwind_in_walk((uint32_t)owner);
}

int ppw_modules_dl_lock_known(void)
{
    return __atomic_load_n(&dl_lock, __ATOMIC_ACQUIRE) != NULL;
}

void ppw_modules_init(void)
{
    nknown = 0;
    nruntime = 0;
    if (!dl_lock)
        locate_dl_lock();
    scan();
}

void ppw_modules_rescan(void)
{
    scan();
}

PPW_TLS volatile sig_atomic_t ppw_in_dlclose;
static uint64_t unload_count; /* dlclose calls returned */

PPW_EXPORT int dlclose(void *handle)
{
    static int (*real_dlclose)(void *);
    if (!real_dlclose)
        real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    if (!real_dlclose)
        return -1; /* cannot happen: libc defines it */
    ppw_in_dlclose++;
    int rc = real_dlclose(handle);
    __atomic_fetch_add(&unload_count, 1, __ATOMIC_RELEASE);
    ppw_in_dlclose--;
    return rc;
}

uint64_t ppw_modules_unload_count(void)
{
    return __atomic_load_n(&unload_count, __ATOMIC_ACQUIRE);
}

int ppw_modules_in_self(uint64_t pc)
{
    return pc >= self_lo && pc < self_hi;
}

int ppw_modules_in_runtime(uint64_t pc)
{
    if (ppw_modules_in_self(pc))
        return 1;
    int n = __atomic_load_n(&nruntime, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (pc >= runtime_ranges[i].lo && pc < runtime_ranges[i].hi)
            return 1;
    return 0;
}

int ppw_modules_in_exe(uint64_t pc)
{
    uint64_t hi = __atomic_load_n(&exe_hi, __ATOMIC_ACQUIRE);
    return pc >= __atomic_load_n(&exe_lo, __ATOMIC_RELAXED) && pc < hi;
}

const uint8_t *ppw_modules_exe_build_id(uint32_t *size)
{
    *size = exe_build_id_size;
    return exe_build_id;
}

void ppw_modules_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
}

/* ---- a module's imports ---- */

/* glibc relocates the dynamic section's addresses in place; a value below
 * the load bias is one it left alone. */
static uintptr_t dyn_address(const struct dl_phdr_info *info, ElfW(Addr) value)
{
    return value < info->dlpi_addr ? info->dlpi_addr + value : value;
}

static int each_relocation(const struct dl_phdr_info *info, const ElfW(Rela) * rela, size_t bytes,
                           const ElfW(Sym) * symtab, const char *strtab, size_t strsz,
                           ppw_module_import_fn *fn, void *arg)
{
    for (size_t i = 0; i < bytes / sizeof *rela; i++) {
        size_t index = ELF64_R_SYM(rela[i].r_info);
        if (!index)
            continue;
        const ElfW(Sym) *sym = &symtab[index];
        if (sym->st_shndx != SHN_UNDEF || sym->st_name >= strsz)
            continue;
        int rc = fn(info, strtab + sym->st_name, (void **)(info->dlpi_addr + rela[i].r_offset), arg);
        if (rc)
            return rc;
    }
    return 0;
}

int ppw_modules_each_import(const struct dl_phdr_info *info, ppw_module_import_fn *fn, void *arg)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *rela = NULL, *jmprel = NULL;
    size_t strsz = 0, relasz = 0, pltrelsz = 0;
    int plt_is_rela = 1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = (const void *)dyn_address(info, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const void *)dyn_address(info, dyn->d_un.d_ptr); break;
        case DT_STRSZ: strsz = dyn->d_un.d_val; break;
        case DT_RELA: rela = (const void *)dyn_address(info, dyn->d_un.d_ptr); break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        case DT_JMPREL: jmprel = (const void *)dyn_address(info, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
        case DT_PLTREL: plt_is_rela = dyn->d_un.d_val == DT_RELA; break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    int rc = rela ? each_relocation(info, rela, relasz, symtab, strtab, strsz, fn, arg) : 0;
    if (!rc && jmprel && plt_is_rela)
        rc = each_relocation(info, jmprel, pltrelsz, symtab, strtab, strsz, fn, arg);
    return rc;
}

struct redirect {
    uintptr_t in_module; /* an address of the module's */
    const char *name;
    void *replacement;
    void (*call)(void *);
    void *arg;
    int done;
};

/* mprotect of the page(s) that hold slot */
static int protect_slot(void **slot, int prot)
{
    uintptr_t at = (uintptr_t)slot, page = at & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
    return mprotect((void *)page, at + sizeof *slot - page, prot);
}

/* The slot's page made writable if it lies in the module's read-only
 * after relocation part; returns the protection to restore (0: none). */
static int unprotect(const struct dl_phdr_info *info, void **slot)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, at = (uintptr_t)slot;
        if (ph->p_type != PT_GNU_RELRO || at < lo || at + sizeof *slot > lo + ph->p_memsz)
            continue;
        return protect_slot(slot, PROT_READ | PROT_WRITE) == 0 ? PROT_READ : -1;
    }
    return 0;
}

static int redirect_import(const struct dl_phdr_info *info, const char *name, void **slot,
                           void *arg)
{
    struct redirect *r = arg;
    if (strcmp(name, r->name) != 0)
        return 0;
    int restore = unprotect(info, slot);
    if (restore < 0)
        return -1;
    void *bound = __atomic_load_n(slot, __ATOMIC_RELAXED);
    __atomic_store_n(slot, r->replacement, __ATOMIC_RELAXED);
    r->call(r->arg);
    r->done = 1;
    __atomic_store_n(slot, bound, __ATOMIC_RELAXED);
    if (restore)
        protect_slot(slot, restore);
    return 1;
}

static int redirect_in_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct redirect *r = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && r->in_module >= lo && r->in_module - lo < ph->p_memsz) {
            ppw_modules_each_import(info, redirect_import, r);
            return 1;
        }
    }
    return 0;
}

int ppw_modules_call_redirected(const void *in_module, const char *name, void *replacement,
                                void (*call)(void *), void *arg)
{
    struct redirect r = {(uintptr_t)in_module, name, replacement, call, arg, 0};
    dl_iterate_phdr(redirect_in_module, &r);
    if (!r.done)
        call(arg);
    return r.done ? 0 : -1;
}
