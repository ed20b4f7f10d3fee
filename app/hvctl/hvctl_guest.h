/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl guest: the VMM verbs (cmd_guest*.c), shared helpers. */
#ifndef HVCTL_GUEST_H
#define HVCTL_GUEST_H

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

/** Control socket of a running VMM (cmd_guest_ctl.c): 0 or -1. */
int hvctl_guest_serve(struct hv_vm *vm, const char *name);
void hvctl_guest_serve_poll(struct hv_vm *vm);
void hvctl_guest_unserve(struct hv_vm *vm);

#endif
