/* SPDX-License-Identifier: BSD-3-Clause */
/* The fixture of the daemon's switching suites: see switch_fixture.h. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <rte_common.h>

#include "switch_fixture.h"

struct hvsw dut;
struct guest vm[5];

void
swf_setup(void)
{
	memset(vm, 0, sizeof(vm));
	swh_reset();
	hvsw_init(&dut);
}

void
swf_teardown(void)
{
	for (unsigned int i = 0; i < RTE_DIM(vm); i++)
		guest_close(&vm[i]);
	hvsw_cleanup(&dut);
}

/* Start the daemon with these options (NULL-ended list). */
void
swf_start(const char *const *extra)
{
	ck_assert_msg(hvsw_start(&dut, extra) == 0, "hvswitch did not start");
}

/* A clean stop: exit status 0 (under ASan this includes its leak check). */
void
swf_stop_ok(void)
{
	int rc = hvsw_stop(&dut);

	ck_assert_msg(rc == 0, "hvswitch exited with %d", rc);
}

void
swf_sock_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.sock", dut.dir, name);
}

/* Open guest i on the port vm<i> (which exists) and wait until the port is up. */
void
swf_attach(unsigned int i)
{
	char name[16], sock[160];

	snprintf(name, sizeof(name), "vm%u", i);
	swf_sock_of(name, sock, sizeof(sock));
	ck_assert_int_eq(guest_open(&vm[i], name, i, sock, false), 0);
	ck_assert_msg(hvsw_wait_up(&dut, name, T), "port %s not up", name);
}

/* port.add vm<i> (with extra JSON members) and attach its guest. */
void
swf_add(unsigned int i, const char *extra)
{
	char name[16];

	snprintf(name, sizeof(name), "vm%u", i);
	hvsw_add_port(&dut, name, extra);
	swf_attach(i);
}

void
swf_must_arrive(unsigned int g, uint32_t id)
{
	ck_assert_msg(guest_wait(&vm[g], id, T), "frame %u did not reach vm%u", id, g);
}

/* A broadcast from @from, waited for at @at: a barrier for @at (see the top). */
uint32_t
swf_barrier(unsigned int from, unsigned int at)
{
	uint32_t id = guest_send(&vm[from], &swh_bcast, NULL, 0);

	swf_must_arrive(at, id);
	return id;
}

/* Wait for a port counter to reach @want, then require exactly @want. */
void
swf_stat_is(const char *port, const char *counter, double want)
{
	uint64_t end = swh_now_ms() + T;
	double v;

	while ((v = hvsw_port_stat(&dut, port, counter)) < want && swh_now_ms() < end)
		usleep(2000);
	ck_assert_msg(v == want, "%s %s = %.0f, expected %.0f", port, counter, v, want);
}

double
swf_fdb_stat(const char *name)
{
	cJSON *r = hvsw_ok(&dut, "stats", NULL);
	char path[64];
	double v;

	snprintf(path, sizeof(path), "fdb.%s", name);
	v = swh_num(r, path);
	cJSON_Delete(r);
	return v;
}

/* Wait until @mac is in the FDB on @port (NULL: anywhere) or, if !present, gone. */
bool
swf_fdb_wait(const struct rte_ether_addr *mac, const char *port, bool present, unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;

	do {
		if ((hvsw_fdb_has(&dut, mac, port) > 0) == present)
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

/* Whether fdb.show lists @mac on @port in the domain @vlan. */
bool
swf_fdb_has_in(const struct rte_ether_addr *mac, const char *port, unsigned int vlan)
{
	char m[RTE_ETHER_ADDR_FMT_SIZE];
	cJSON *r = hvsw_ok(&dut, "fdb.show", "{\"port\":\"%s\"}", port), *e;
	bool has = false;

	rte_ether_format_addr(m, sizeof(m), mac);
	cJSON_ArrayForEach(e, r)
	{
		const char *em = swh_str(e, "mac");

		has |= em != NULL && strcasecmp(em, m) == 0 && swh_num(e, "vlan") == vlan;
	}
	cJSON_Delete(r);
	return has;
}

/* Wait until @mac is in the FDB on @port in the domain @vlan. */
bool
swf_fdb_wait_in(const struct rte_ether_addr *mac, const char *port, unsigned int vlan,
		unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;

	do {
		if (swf_fdb_has_in(mac, port, vlan))
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

void
swf_no_bad_frames(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (vm[i].open)
			ck_assert_msg(guest_bad(&vm[i]) == 0, "vm%u received %u frames not as sent",
				      i, guest_bad(&vm[i]));
}
