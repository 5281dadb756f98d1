#include "json.h"

#include <math.h>
#include <stdlib.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at p (2..4), or 0.  Stops at the
 * terminating NUL because NUL is never a continuation byte. */
static size_t utf8_length(const unsigned char *p)
{
    size_t n;
    uint32_t cp;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2, cp = p[0] & 0x1f;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3, cp = p[0] & 0x0f;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4, cp = p[0] & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static void escape_control(FILE *out, unsigned char ch)
{
    switch (ch) {
    case '\n': fputs("\\n", out); break;
    case '\t': fputs("\\t", out); break;
    case '\r': fputs("\\r", out); break;
    case '\b': fputs("\\b", out); break;
    case '\f': fputs("\\f", out); break;
    default: fprintf(out, "\\u%04x", ch); break;
    }
}

void json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    putc('"', out);
    while (*p) {
        if (*p == '"' || *p == '\\') {
            putc('\\', out);
            putc(*p++, out);
        } else if (*p < 0x20) {
            escape_control(out, *p++);
        } else if (*p < 0x80) {
            putc(*p++, out);
        } else {
            size_t n = utf8_length(p);
            if (n) {
                fwrite(p, 1, n, out);
                p += n;
            } else {
                fputs("\\ufffd", out);
                p++;
            }
        }
    }
    putc('"', out);
}

void json_string_or_null(FILE *out, const char *s)
{
    if (s && s[0])
        json_string(out, s);
    else
        fputs("null", out);
}

void json_double(FILE *out, double value)
{
    char text[32];
    if (!isfinite(value)) {
        fputs("null", out);
        return;
    }
    snprintf(text, sizeof text, "%.15g", value);
    if (strtod(text, NULL) != value)
        snprintf(text, sizeof text, "%.17g", value);
    fputs(text, out);
}
