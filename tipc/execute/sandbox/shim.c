/* The jail's shim in C: the same contract, arguments and messages as _shim.py (read its docstring), without
 * an interpreter to start before every command (about 1 ms against 20). tipc.execute.sandbox.native compiles
 * it once per source and machine where a C compiler exists; elsewhere _shim.py runs.
 *
 *   shim SOCK NR FILTER FSIZE CAPS -- ARGV
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define TIPC_RET_USER_NOTIF 0x7FC00000u
#define TIPC_RET_ERRNO_EPERM 0x00050001u
#define TIPC_FLAG_NEW_LISTENER (1UL << 3)

static void fail(const char *what, int err) {
    char line[512];
    int n = snprintf(line, sizeof line, "tipc sandbox: %s: %s; the command was not run\n", what, strerror(err));
    if (n > 0 && write(2, line, (size_t)n) < 0) {
        /* nothing left to tell */
    }
    _exit(126);
}

static void drop_caps(void) {
    for (int cap = 0; cap < 64; cap++) {
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0); /* EINVAL past the last one: nothing to drop */
    }
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) {
        fail("capset", errno);
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* FILTER, hex of the program's bytes in native order: the instructions (NULL, 0 when it is no program). */
static struct sock_filter *decode(const char *hex, unsigned short *count) {
    size_t len = strlen(hex);
    if (len % 2 != 0 || (len / 2) % sizeof(struct sock_filter) != 0 || len / 2 / sizeof(struct sock_filter) > 0xFFFF) {
        *count = 0;
        return NULL;
    }
    unsigned char *bytes = malloc(len / 2 + 1);
    if (bytes == NULL) fail("malloc", ENOMEM);
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) fail("the filter is not hex", EINVAL);
        bytes[i] = (unsigned char)(hi * 16 + lo);
    }
    *count = (unsigned short)(len / 2 / sizeof(struct sock_filter));
    return (struct sock_filter *)bytes;
}

/* Every RET_USER_NOTIF answered RET_ERRNO(EPERM) instead: a kernel without listeners. */
static void without_listener(struct sock_filter *prog, unsigned short count) {
    for (unsigned short i = 0; i < count; i++) {
        if (prog[i].code == (BPF_RET | BPF_K) && prog[i].k == TIPC_RET_USER_NOTIF) {
            prog[i].k = TIPC_RET_ERRNO_EPERM;
        }
    }
}

static long install(long nr, struct sock_filter *prog, unsigned short count, int listener) {
    struct sock_fprog fprog = {count, prog};
    return syscall(nr, SECCOMP_SET_MODE_FILTER, listener ? TIPC_FLAG_NEW_LISTENER : 0UL, &fprog);
}

static void send_word(int sock, char word, int fd) {
    char byte = word;
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    }
    if (sendmsg(sock, &msg, 0) < 0) fail("sendmsg", errno);
    close(sock);
}

int main(int argc, char **argv) {
    if (argc < 8 || strcmp(argv[6], "--") != 0) {
        fail("usage: shim SOCK NR FILTER FSIZE CAPS -- ARGV", EINVAL);
    }
    int sock = atoi(argv[1]);
    long nr = atol(argv[2]);
    long long fsize = atoll(argv[4]);
    if (strcmp(argv[5], "1") == 0) drop_caps();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs", errno);
    if (fsize > 0) {
        struct rlimit limit = {(rlim_t)fsize, (rlim_t)fsize};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) fail("RLIMIT_FSIZE", errno);
    }
    if (nr > 0) {
        unsigned short count = 0;
        struct sock_filter *prog = decode(argv[3], &count);
        if (prog == NULL || count == 0) fail("the filter is not a program", EINVAL);
        if (sock < 0) without_listener(prog, count);
        long listener = install(nr, prog, count, sock >= 0);
        if (listener < 0) {
            without_listener(prog, count);
            if (install(nr, prog, count, 0) != 0) fail("seccomp", errno);
            if (sock >= 0) send_word(sock, 'E', -1);
        } else if (sock >= 0) {
            send_word(sock, 'L', (int)listener);
            close((int)listener);
        }
    }
    execvp(argv[7], &argv[7]);
    int err = errno;
    char line[512];
    int n = snprintf(line, sizeof line, "tipc sandbox: cannot run '%s': %s\n", argv[7], strerror(err));
    if (n > 0 && write(2, line, (size_t)n) < 0) {
        /* nothing left to tell */
    }
    _exit(err == ENOENT ? 127 : 126);
}
