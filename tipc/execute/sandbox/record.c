/* The observation's recording stand-in as a native program (tipc.planning.observe.standins, _RECORDER).

   usage: _record-HASH RECORD NAME [ARG...]

   Appends one JSON line to RECORD, byte for byte what the Python recorder writes for the same call run as
   `python -I -S _tipc_record.py RECORD NAME ARG...`:
     {"name": NAME, "argv": [ARG, ...], "cwd": CWD, "env": {K: V, ...}, "stdout": T1, "stderr": T2,
      "via": "stand-in"}
   Strings are what Python decodes from the bytes (UTF-8, an invalid byte b as the lone surrogate U+DC00+b)
   written as json.dumps does by default: ASCII, \uXXXX (lower-case hex) for the rest, surrogate pairs above
   U+FFFF. The environment in the order of `environ`, the first of a repeated name kept and entries without
   `=` left out (as CPython builds os.environ). T1/T2: where fd 1 and 2 point, null when unreadable.
   A script calls its interpreter a few times per observation; this costs about a millisecond where an
   interpreter's start costs 15. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    char *data;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (grown == NULL) {
            fputs("tipc recorder: out of memory\n", stderr);
            exit(1);
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static void unit(buf *b, unsigned code) { /* one UTF-16 code unit as \uXXXX */
    char out[8];
    snprintf(out, sizeof out, "\\u%04x", code);
    put(b, out, 6);
}

static int cont(const unsigned char *s, size_t i, size_t n) { return i < n && (s[i] & 0xC0) == 0x80; }

/* The length of the valid UTF-8 sequence at s[i] (its code point in *code), 0 if there is none: the
   sequences Python's strict decoder accepts (no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t sequence(const unsigned char *s, size_t i, size_t n, unsigned *code) {
    unsigned c = s[i];
    if (c < 0x80) {
        *code = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF && cont(s, i + 1, n)) {
        *code = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F);
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF && cont(s, i + 1, n) && cont(s, i + 2, n)) {
        unsigned c1 = s[i + 1];
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) return 0;
        *code = ((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (s[i + 2] & 0x3F);
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4 && cont(s, i + 1, n) && cont(s, i + 2, n) && cont(s, i + 3, n)) {
        unsigned c1 = s[i + 1];
        if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return 0;
        *code = ((c & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
        return 4;
    }
    return 0;
}

static void text(buf *b, const char *raw, size_t n) {
    const unsigned char *s = (const unsigned char *)raw;
    put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned code;
        size_t len = sequence(s, i, n, &code);
        if (len == 0) { /* surrogateescape */
            unit(b, 0xDC00 + s[i]);
            i += 1;
            continue;
        }
        i += len;
        switch (code) {
            case '"': puts_(b, "\\\""); continue;
            case '\\': puts_(b, "\\\\"); continue;
            case '\n': puts_(b, "\\n"); continue;
            case '\r': puts_(b, "\\r"); continue;
            case '\t': puts_(b, "\\t"); continue;
            case '\b': puts_(b, "\\b"); continue;
            case '\f': puts_(b, "\\f"); continue;
            default: break;
        }
        if (code >= 0x20 && code < 0x7F) {
            char c = (char)code;
            put(b, &c, 1);
        } else if (code > 0xFFFF) {
            code -= 0x10000;
            unit(b, 0xD800 | (code >> 10));
            unit(b, 0xDC00 | (code & 0x3FF));
        } else {
            unit(b, code);
        }
    }
    put(b, "\"", 1);
}

static void target(buf *b, int fd) {
    char link[64], found[8192];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, found, sizeof found);
    if (n < 0 || (size_t)n >= sizeof found) {
        puts_(b, "null");
        return;
    }
    text(b, found, (size_t)n);
}

static int seen_before(char **env, size_t upto, const char *key, size_t klen) {
    for (size_t j = 0; j < upto; j++) {
        const char *eq = strchr(env[j], '=');
        if (eq != NULL && (size_t)(eq - env[j]) == klen && memcmp(env[j], key, klen) == 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fputs("usage: _record RECORD NAME [ARG...]\n", stderr);
        return 2;
    }
    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL) {
        perror("tipc recorder: getcwd");
        return 1;
    }
    buf b = {0};
    puts_(&b, "{\"name\": ");
    text(&b, argv[2], strlen(argv[2]));
    puts_(&b, ", \"argv\": [");
    for (int i = 3; i < argc; i++) {
        if (i > 3) puts_(&b, ", ");
        text(&b, argv[i], strlen(argv[i]));
    }
    puts_(&b, "], \"cwd\": ");
    text(&b, cwd, strlen(cwd));
    puts_(&b, ", \"env\": {");
    int first = 1;
    for (size_t j = 0; environ[j] != NULL; j++) {
        const char *entry = environ[j];
        const char *eq = strchr(entry, '=');
        if (eq == NULL) continue;
        size_t klen = (size_t)(eq - entry);
        if (seen_before(environ, j, entry, klen)) continue;
        if (!first) puts_(&b, ", ");
        first = 0;
        text(&b, entry, klen);
        puts_(&b, ": ");
        text(&b, eq + 1, strlen(eq + 1));
    }
    puts_(&b, "}, \"stdout\": ");
    target(&b, 1);
    puts_(&b, ", \"stderr\": ");
    target(&b, 2);
    puts_(&b, ", \"via\": \"stand-in\"}\n");
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror("tipc recorder: open");
        return 1;
    }
    /* one write: concurrent stand-ins append whole lines */
    size_t done = 0;
    while (done < b.len) {
        ssize_t n = write(fd, b.data + done, b.len - done);
        if (n <= 0) {
            perror("tipc recorder: write");
            return 1;
        }
        done += (size_t)n;
    }
    close(fd);
    return 0;
}
