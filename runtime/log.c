/* Diagnostics for libppw: a printf subset that needs neither malloc nor
 * stdio, so it works from the signal handler and inside a program whose
 * stdio or malloc is broken or locked. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "config.h"

struct out {
    char *buf;
    int size, len;
};

static void put_char(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void put_str(struct out *o, const char *s)
{
    if (!s)
        s = "(null)";
    for (int i = 0; s[i] && i < 4096; i++)
        put_char(o, s[i]);
}

static void put_unsigned(struct out *o, unsigned long long v, unsigned base)
{
    char digits[32];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && n < (int)sizeof(digits));
    while (n > 0)
        put_char(o, digits[--n]);
}

static void put_signed(struct out *o, long long v)
{
    if (v < 0) {
        put_char(o, '-');
        put_unsigned(o, 0ull - (unsigned long long)v, 10);
    } else {
        put_unsigned(o, (unsigned long long)v, 10);
    }
}

static void format(struct out *o, const char *fmt, va_list ap)
{
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            put_char(o, *p);
            continue;
        }
        int longs = 0;
        while (p[1] == 'l' && longs < 2) {
            longs++;
            p++;
        }
        switch (*++p) {
        case 's': put_str(o, va_arg(ap, const char *)); break;
        case 'd':
            put_signed(o, longs == 2 ? va_arg(ap, long long)
                          : longs    ? va_arg(ap, long)
                                     : va_arg(ap, int));
            break;
        case 'u':
        case 'x': {
            unsigned base = *p == 'x' ? 16 : 10;
            put_unsigned(o,
                         longs == 2 ? va_arg(ap, unsigned long long)
                         : longs    ? va_arg(ap, unsigned long)
                                    : va_arg(ap, unsigned),
                         base);
            break;
        }
        case 'p':
            put_str(o, "0x");
            put_unsigned(o, (uintptr_t)va_arg(ap, void *), 16);
            break;
        case '%': put_char(o, '%'); break;
        case '\0': return;
        default: put_char(o, '%'); put_char(o, *p);
        }
    }
}

int ppw_format(char *buf, int size, const char *fmt, ...)
{
    struct out o = {buf, size, 0};
    va_list ap;
    va_start(ap, fmt);
    format(&o, fmt, ap);
    va_end(ap);
    if (size > 0)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return o.len < size ? o.len : size - 1;
}

static void emit(const char *fmt, va_list ap)
{
    int saved = errno;
    char buf[1024];
    struct out o = {buf, (int)sizeof(buf) - 1, 0};
    put_str(&o, "ppw: ");
    format(&o, fmt, ap);
    int len = o.len < o.size ? o.len : o.size - 1;
    buf[len++] = '\n';
    for (int off = 0; off < len;) {
        ssize_t n = write(STDERR_FILENO, buf + off, (size_t)(len - off));
        if (n <= 0 && errno != EINTR)
            break;
        if (n > 0)
            off += (int)n;
    }
    errno = saved;
}

void ppw_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(fmt, ap);
    va_end(ap);
}

static int loss_reported;

int ppw_log_claim_loss(void)
{
    return __atomic_exchange_n(&loss_reported, 1, __ATOMIC_ACQ_REL) == 0;
}

int ppw_log_loss(const char *fmt, ...)
{
    if (!ppw_log_claim_loss())
        return 0;
    char message[768];
    va_list ap;
    va_start(ap, fmt);
    struct out o = {message, (int)sizeof(message), 0};
    format(&o, fmt, ap);
    va_end(ap);
    message[o.len < o.size ? o.len : o.size - 1] = '\0';
    ppw_log("output lost: %s (ppw says this once; the program runs on)", message);
    return 1;
}

void ppw_log_loss_after_fork(void)
{
    loss_reported = 0;
}

void ppw_log_verbose(const char *fmt, ...)
{
    if (!ppw_config.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(fmt, ap);
    va_end(ap);
}
