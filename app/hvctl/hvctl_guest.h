/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl guest: the VMM verbs (cmd_guest*.c), shared helpers. */
#ifndef HVCTL_GUEST_H
#define HVCTL_GUEST_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "hv_vmm.h"
#include "hvctl.h"

/** Where hvswitch's port sockets are by default. */
#define HV_GUEST_SWITCH_DIR "/run/hvswitch"

int hvctl_guest_cmd_run(struct hvctl *h, int argc, char **argv);
/** "64M", "1G", "65536K", a bare number is MiB. 0 or -1. */
int hvctl_guest_parse_mem(const char *s, uint64_t *out);
int hvctl_guest_parse_mac(const char *s, uint8_t mac[6]);
/** The built-in guest image ($HV_GUEST_IMAGE or the build's). */
const char *hvctl_guest_builtin_image(void);

/** Default run directory of guests ($HV_GUEST_RUN_DIR overrides it). */
#define HV_GUEST_RUN_DIR "/run/hvswitch/guests"
/**
 * Take the defaults from hvctl's control socket: the switch's directory is
 * the socket's (hvctl --socket, $HVCTL_SOCKET, else HV_GUEST_SWITCH_DIR),
 * and the guests' run directory is its "guests" unless $HV_GUEST_RUN_DIR is
 * set. Called once, before the guest verbs run.
 */
void hvctl_guest_defaults(const struct hvctl *h);
/** The switch's run directory (port sockets), hvctl_guest_defaults()'s. */
const char *hvctl_guest_switch_dir(void);
/** The guests' run directory: $HV_GUEST_RUN_DIR, else SWITCH_DIR/guests. */
const char *hvctl_guest_run_dir(void);
/**
 * Create dir and its missing parents, each created one with mode 0750 (the
 * sockets and logs inside are the owner's and its group's). 0, or -1 (printed).
 */
int hvctl_guest_mkdir(const char *dir);
/** guest run's options, NULL-name terminated (guest start passes them on). */
extern const struct option hvctl_guest_run_opts[];
/** The option lines of guest run's help (guest start shares them). */
extern const char hvctl_guest_run_options[];

/** Control socket of a running VMM (cmd_guest_ctl.c), in run_dir (NULL: none). 0 or -1. */
int hvctl_guest_serve(struct hv_vm *vm, const struct hv_vm_config *cfg, const char *run_dir);
void hvctl_guest_unserve(struct hv_vm *vm);
/** DIR/NAME.sock; 0 or -1 when too long. */
int hvctl_guest_socket_path(const char *run_dir, const char *name, char *buf, size_t len);
/** 0 when no guest NAME answers in run_dir, else -1 (printed). */
int hvctl_guest_check_free(const char *run_dir, const char *name);

#endif
