/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupt moderation settings through the hvswitch daemon (a child
 * process): per port and per queue, live, refused when malformed, saved.
 * (test_rxmod.c has the behaviour, with frontends attached.)
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "switch_harness.h"

static struct hvsw D;

static void
setup(void)
{
	swh_reset();
	hvsw_init(&D);
}

static void
teardown(void)
{
	hvsw_cleanup(&D);
}

/* A vring counter/setting of port @name, queue pair @qp, direction @dir ("rx"/"tx"). */
static const cJSON *
ring_item(cJSON *r, unsigned int qp, const char *dir, const char *key)
{
	const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "qps"), (int)qp);

	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(q, dir), key);
}

static void
check_ring_setting(const char *port, unsigned int qp, const char *want)
{
	cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"%s\"}", port);

	for (int d = 0; d < 2; d++) {
		const cJSON *v = ring_item(r, qp, d ? "rx" : "tx", "rxmod");

		ck_assert_msg(cJSON_IsString(v) && strcmp(v->valuestring, want) == 0,
			      "%s qp %u: rxmod %s, want %s", port, qp,
			      cJSON_IsString(v) ? v->valuestring : "(none)", want);
	}
	cJSON_Delete(r);
}

/*
 * Settings: per port and per queue at port.add, changed live with port.set,
 * refused when malformed (nothing changes), saved in the config file and
 * back after a restart.
 */
START_TEST(settings_live_and_saved)
{
	char err[256];
	cJSON *r;

	ck_assert_msg(hvsw_start(&D, NULL) == 0, "hvswitch did not start");
	hvsw_add_port(&D, "m", ",\"queues\":2,\"rxmod\":\"50,1:adaptive\"");
	hvsw_add_port(&D, "d", NULL);
	check_ring_setting("m", 0, "50");
	check_ring_setting("m", 1, "adaptive");
	check_ring_setting("d", 0, "100"); /* the default */
	r = hvsw_ok(&D, "port.show", "{\"name\":\"m\"}");
	ck_assert(cJSON_GetNumberValue(ring_item(r, 0, "tx", "window_us")) == 50);
	ck_assert(cJSON_GetNumberValue(ring_item(r, 1, "tx", "window_us")) == 0); /* idle: 0 */
	ck_assert_int_eq(cJSON_GetArraySize(ring_item(r, 0, "tx", "fpi")), 8);
	cJSON_Delete(r);

	/* live: a number, a word, per-queue overrides */
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"m\",\"rxmod\":200}"));
	check_ring_setting("m", 0, "200");
	check_ring_setting("m", 1, "200");
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"m\",\"rxmod\":\"0,1:30\"}"));
	check_ring_setting("m", 0, "0");
	check_ring_setting("m", 1, "30");
	/* refused: nothing changes */
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "port.set",
				   "{\"name\":\"m\",\"rxmod\":\"2:10\"}"),
			 0);
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "port.set",
				   "{\"name\":\"m\",\"rxmod\":10001}"),
			 0);
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "port.set",
				   "{\"name\":\"m\",\"rxmod\":\"fast\"}"),
			 0);
	ck_assert_int_ne(
		hvsw_call(&D, NULL, err, sizeof(err), "port.add", "{\"name\":\"x\",\"rxmod\":-1}"),
		0);
	check_ring_setting("m", 0, "0");
	check_ring_setting("m", 1, "30");

	/* saved, and back after a restart */
	ck_assert_int_eq(hvsw_stop(&D), 0);
	ck_assert_msg(hvsw_start(&D, NULL) == 0, "hvswitch did not restart");
	r = hvsw_ok(&D, "port.show", "{\"name\":\"m\"}");
	ck_assert_str_eq(swh_str(r, "rxmod"), "0,1:30");
	cJSON_Delete(r);
	check_ring_setting("m", 0, "0");
	check_ring_setting("m", 1, "30");
	check_ring_setting("d", 0, "100");
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("rxmod-settings");
	TCase *t = tcase_create("settings");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, settings_live_and_saved);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
