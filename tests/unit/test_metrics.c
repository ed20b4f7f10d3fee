/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metrics text writer (lib/metrics): label values escaped whatever they
 * hold, families named as each format wants, and promtool accepts the
 * Prometheus text it writes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hv_metrics.h"

/* A small text of every kind of family, with label value @port. */
static char *
write_text(bool openmetrics, const char *port, size_t *len)
{
	struct hv_metrics_out o = {.openmetrics = openmetrics};

	hv_metrics_family(&o, "t_build", HV_METRICS_INFO, "Version");
	hv_metrics_sample(&o, "t_build", HV_METRICS_INFO);
	hv_metrics_label(&o, "version", "1.0");
	hv_metrics_value_u(&o, 1);
	hv_metrics_family(&o, "t_port_packets", HV_METRICS_COUNTER, "Frames");
	hv_metrics_sample(&o, "t_port_packets", HV_METRICS_COUNTER);
	hv_metrics_label(&o, "port", port);
	hv_metrics_label(&o, "direction", "rx");
	hv_metrics_value_u(&o, UINT64_MAX);
	hv_metrics_family(&o, "t_queue_pmd", HV_METRICS_GAUGE, "PMD");
	hv_metrics_sample(&o, "t_queue_pmd", HV_METRICS_GAUGE);
	hv_metrics_label(&o, "port", port);
	hv_metrics_label_u(&o, "queue", 7);
	hv_metrics_value_i(&o, -1);
	hv_metrics_family(&o, "t_busy_seconds", HV_METRICS_COUNTER, "Time");
	hv_metrics_sample(&o, "t_busy_seconds", HV_METRICS_COUNTER);
	hv_metrics_value_d(&o, 0.25);
	return hv_metrics_finish(&o, len);
}

/* A quote, a backslash and a newline come out as \", \\ and \n; nothing else changes. */
START_TEST(label_escaped)
{
	size_t len;
	char *t = write_text(false, "a\"b\\c\nd\xc3\xa9", &len);

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(t), len);
	ck_assert_ptr_nonnull(
		strstr(t, "t_port_packets_total{port=\"a\\\"b\\\\c\\nd\xc3\xa9\",direction=\"rx\"} "
			  "18446744073709551615\n"));
	ck_assert_ptr_nonnull(
		strstr(t, "t_queue_pmd{port=\"a\\\"b\\\\c\\nd\xc3\xa9\",queue=\"7\"} -1\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nt_busy_seconds_total 0.25\n"));
	free(t);
}
END_TEST

/* Prometheus 0.0.4: TYPE names the samples' name; OpenMetrics: the family, and # EOF ends it. */
START_TEST(family_names)
{
	size_t len;
	char *p = write_text(false, "vm0", &len), *m = write_text(true, "vm0", &len);

	ck_assert_ptr_nonnull(strstr(p, "# HELP t_port_packets_total Frames\n"
					"# TYPE t_port_packets_total counter\n"));
	ck_assert_ptr_nonnull(
		strstr(p, "# TYPE t_build_info gauge\nt_build_info{version=\"1.0\"} 1\n"));
	ck_assert_ptr_null(strstr(p, "# EOF"));
	ck_assert_ptr_nonnull(strstr(m, "# HELP t_port_packets Frames\n"
					"# TYPE t_port_packets counter\n"
					"t_port_packets_total{"));
	ck_assert_ptr_nonnull(strstr(m, "# TYPE t_build info\nt_build_info{version=\"1.0\"} 1\n"));
	ck_assert_str_eq(m + strlen(m) - 6, "# EOF\n");
	free(p);
	free(m);
}
END_TEST

/* promtool (Debian's prometheus package) takes the text, escaped labels included. */
START_TEST(promtool_accepts)
{
	char path[] = "/tmp/hv_metrics_XXXXXX", cmd[128];
	size_t len;
	char *t = write_text(false, "a\"b\\c\nd", &len);
	int fd = mkstemp(path), rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, t, len), (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	rc = system(cmd);
	unlink(path);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "promtool: status %d on:\n%s", rc, t);
	free(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("writer");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, label_escaped);
	tcase_add_test(tc, family_names);
	tcase_add_test(tc, promtool_accepts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
