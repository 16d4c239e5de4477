/*
 * The exec and file audit of agentjail-init (docs/jail.md "Exec and file audit").
 *
 * Jail side: audit_install() puts a seccomp filter on the jail's first process that turns execve/execveat and the
 * syscalls that change the file tree (opens for writing, unlink, rename, mkdir, link, symlink, truncate, chmod, chown,
 * utime, mknod, xattr) into user notifications, and passes the notification descriptor to the host over the hand-off
 * socket. Host side: supervise() reads each notification, reads the path and arguments from the caller's memory,
 * hands one frame per event to the launcher and lets the syscall go on. It audits; it decides only to refuse a call
 * whose memory it cannot read.
 */
#ifndef AGENTJAIL_AUDIT_H
#define AGENTJAIL_AUDIT_H

#include <stddef.h>

/* What audit_install() asks notifications for. */
#define AUDIT_EXEC 1
#define AUDIT_FILES 2

/* The byte that goes with the notification descriptor on the hand-off socket (listeners go with 'L'). */
#define AUDIT_HANDOFF_BYTE 'S'

/* Sends FD over CHANNEL with SCM_RIGHTS, one descriptor and the one byte BYTE per message; 0, or -1 with errno set. */
int audit_send_fd(int channel, char byte, int fd);

/* Parses "exec", "files", "exec,files" or "none"; -1 for anything else. */
int audit_parse(const char *text);

/*
 * Installs the notifying filter for WHAT (AUDIT_EXEC | AUDIT_FILES) and sends its descriptor over CHANNEL; returns
 * 0, or -1 with errno set and *step naming what failed.
 */
int audit_install(int channel, int what, const char **step);

/* agentjail-init supervise ...; returns the exit code. */
int audit_supervise(int argc, char **argv);

#endif
