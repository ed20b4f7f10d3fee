/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fixture of the daemon's switching suites (test_switch.c,
 * test_switch_ports.c): one hvswitch daemon, up to five virtio-user guests
 * vm0..vm4 on ports of the same names, and the checks they share. Every
 * helper runs on the test's thread and fails the test (ck_assert) rather
 * than return an error.
 */
#ifndef HV_TEST_SWITCH_FIXTURE_H
#define HV_TEST_SWITCH_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch_harness.h"

#define T SWH_TIMEOUT_MS

extern struct hvsw dut;    /**< the daemon under test */
extern struct guest vm[5]; /**< guest i is on port vm<i> */

/** Check fixture: a fresh daemon record, no guest open. */
void swf_setup(void);
/** Check fixture: close the guests, stop the daemon and remove its files. */
void swf_teardown(void);
/** Start the daemon with these options (NULL-ended list). */
void swf_start(const char *const *extra);
/** Stop the daemon and require exit status 0 (under ASan: its leak check too). */
void swf_stop_ok(void);
/** The path of port @name's vhost-user socket. */
void swf_sock_of(const char *name, char *buf, size_t len);
/** Open guest i on the existing port vm<i>; wait until the port is up. */
void swf_attach(unsigned int i);
/** port.add vm<i> (with extra JSON members) and attach its guest. */
void swf_add(unsigned int i, const char *extra);
/** Require frame @id to reach guest @g within the timeout. */
void swf_must_arrive(unsigned int g, uint32_t id);
/**
 * A broadcast from @from, waited for at @at: the daemon's one PMD handles
 * frames in order, so every frame sent before it that was to reach @at has.
 */
uint32_t swf_barrier(unsigned int from, unsigned int at);
/** Wait for a port counter to reach @want, then require exactly @want. */
void swf_stat_is(const char *port, const char *counter, double want);
/** The FDB's counter @name from the stats request. */
double swf_fdb_stat(const char *name);
/** Wait until @mac is in the FDB on @port (NULL: anywhere) or, if !present, gone. */
bool
swf_fdb_wait(const struct rte_ether_addr *mac, const char *port, bool present, unsigned int ms);
/** Whether fdb.show lists @mac on @port in the domain @vlan. */
bool swf_fdb_has_in(const struct rte_ether_addr *mac, const char *port, unsigned int vlan);
/** Wait until @mac is in the FDB on @port in the domain @vlan. */
bool swf_fdb_wait_in(const struct rte_ether_addr *mac, const char *port, unsigned int vlan,
		     unsigned int ms);
/** Require that none of guests 0..n-1 received a frame other than as sent. */
void swf_no_bad_frames(unsigned int n);

#endif
