/* Minimal JSON string output shared by the commands' --format json. */
#ifndef PPW_BLAME_JSON_H
#define PPW_BLAME_JSON_H

#include <stdio.h>

/* Writes s as a quoted JSON string: quotes, backslashes and control
 * characters escaped, valid UTF-8 passed through, invalid bytes as U+FFFD. */
void json_string(FILE *out, const char *s);

/* json_string, or null when s is NULL or empty. */
void json_string_or_null(FILE *out, const char *s);

/* The shortest of %.15g and %.17g that reads back as value; null when it
 * is not finite. */
void json_double(FILE *out, double value);

#endif
