/* SPDX-License-Identifier: BSD-3-Clause */
/* Test helper: the host side of a kernel interface (a tap behind net_tap). */
#ifndef HV_TEST_NET_H
#define HV_TEST_NET_H

/**
 * A raw packet socket (AF_PACKET, every protocol) bound to interface
 * @ifname, close-on-exec; needs CAP_NET_RAW.
 *
 * Thread: any. @return the fd, owned by the caller; -1 when @ifname does not
 *   exist or the socket cannot be made or bound.
 */
int hv_test_raw_open(const char *ifname);

#endif
