/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Harness for end-to-end tests of the hvswitch daemon: the real daemon runs
 * as a child process (its own DPDK primary); this process is a second DPDK
 * primary whose virtio-user ethdevs are the guests, attached to the daemon's
 * vhost-user ports. Frames carry a unique id so that every arrival can be
 * checked byte for byte against what was sent.
 *
 * Everything runs on the main lcore of this process.
 */
#ifndef HV_SWITCH_HARNESS_H
#define HV_SWITCH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <check.h>
#include <cjson/cJSON.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#define SWH_TIMEOUT_MS 5000
#define SWH_MAX_GUESTS 8
#define SWH_MAX_RX 8192   /* frames one guest logs per test */
#define SWH_MAX_IDS 16384 /* frames sent per test */
#define SWH_MAX_BURST 32  /* frames guest_send_burst() sends at once */

/* ---- the daemon ---- */

struct hvsw {
	pid_t pid;        /* 0: not running */
	char dir[64];     /* run dir, config, sockets, log */
	char prefix[32];  /* its EAL file prefix */
	char sock[128];   /* control socket */
	char config[128]; /* config file */
	char log[128];    /* its stdout and stderr */
	int ctl;          /* a connection to the control socket, -1 if none */
	int status;       /* waitpid() status of the last run */
};

/* Make a fresh run dir and prefix (no daemon yet). */
void hvsw_init(struct hvsw *d);
/* Start the daemon with @extra options after "--config .. --run-dir .." (NULL-ended)
 * and wait until its control socket answers. 0, or -1 (its log is printed). */
int hvsw_start(struct hvsw *d, const char *const *extra);
/* SIGTERM, wait (SIGKILL after a timeout). Returns the exit code, 128+signal if killed,
 * or -1 if it was not running. */
int hvsw_stop(struct hvsw *d);
/* Stop it if it runs, remove the run dir and DPDK's runtime dir of its prefix. */
void hvsw_cleanup(struct hvsw *d);

/*
 * One request on the daemon's control socket. @args_fmt is a printf format
 * for the JSON arguments (NULL: none). Returns 0 and the result in *res (may
 * be NULL to drop it; the caller frees), or -1 with the error in @err.
 */
int hvsw_call(struct hvsw *d, cJSON **res, char *err, size_t errlen, const char *cmd,
	      const char *args_fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same, and the result must be ok (aborts the test otherwise). */
cJSON *hvsw_ok(struct hvsw *d, const char *cmd, const char *args_fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Send raw bytes on a fresh connection and read one reply line into @line. */
int hvsw_raw(struct hvsw *d, const char *bytes, size_t len, char *line, size_t linelen);
/* A number inside a JSON object, by a dotted path ("stats.tx_packets"); -1 if absent. */
double swh_num(const cJSON *o, const char *path);
const char *swh_str(const cJSON *o, const char *path);

/* port.add a vhost-user port (server mode, socket in the run dir) with extra
 * JSON members (e.g. ",\"vlan\":10"). */
void hvsw_add_port(struct hvsw *d, const char *name, const char *extra_json);
/* Wait until port.show says "state":"up". */
bool hvsw_wait_up(struct hvsw *d, const char *name, unsigned int timeout_ms);
/* A counter of port.show's "stats". */
double hvsw_port_stat(struct hvsw *d, const char *name, const char *counter);
/* How many fdb.show entries have this MAC (and, if @port, that port). */
int hvsw_fdb_has(struct hvsw *d, const struct rte_ether_addr *mac, const char *port);
/* Entries of fdb.show with port @port. */
int hvsw_fdb_count(struct hvsw *d, const char *port);

/* ---- guests ---- */

struct rx_rec {
	uint32_t id;  /* UINT32_MAX: not one of ours */
	bool exact;   /* bytes identical to what was sent, 802.1Q tags aside */
	uint16_t tag; /* the frame's VLAN id as received, 0 when untagged */
};

struct guest {
	char name[16];
	char vdev[32];
	char devargs[256];
	uint16_t eth;
	bool open;
	struct rte_ether_addr mac;
	unsigned int n_rx;
	struct rx_rec rx[SWH_MAX_RX];
};

/* Environment: EAL (this process) and the guests' pool. */
int swh_env_init(int argc, char **argv);
void swh_env_fini(void);
/* The guests' mbuf pool (switch_guest.c), made and freed by swh_env_init/fini. */
int swh_guests_init(void);
void swh_guests_fini(void);
/*
 * main() of a daemon test: swh_env_init(), the Check suite made by
 * @make_suite run in this process (CK_NOFORK: one EAL per process), then
 * swh_env_fini(). @return the exit status, 0 when every test passed.
 */
int swh_run_suite(Suite *(*make_suite)(void), int argc, char **argv);
/* A MAC of the form 02:00:00:00:00:nn. */
struct rte_ether_addr swh_mac(uint8_t n);
extern const struct rte_ether_addr swh_bcast;

/* Attach a virtio-user guest (MAC 02:00:00:00:00:@idx) to @sock; @server: the
 * frontend listens (rte_vdev_init blocks until the backend connects). */
int guest_open(struct guest *g, const char *name, unsigned int idx, const char *sock, bool server);
/* The same with ethdev RX/TX offloads (RTE_ETH_RX_OFFLOAD_TCP_LRO: GUEST_TSO, ...). */
int guest_open_offloads(struct guest *g, const char *name, unsigned int idx, const char *sock,
			bool server, uint64_t rx_offloads, uint64_t tx_offloads);
/* The guests' mbuf pool. */
struct rte_mempool *swh_guest_pool(void);
void guest_close(struct guest *g);
/* Forget what was received (all guests) and the sent frames. */
void swh_reset(void);

/* Send one frame from @g: @src NULL = its MAC, @vlan_tag != 0 adds an 802.1Q tag.
 * Returns the frame's id. Aborts the test if it cannot be queued. */
uint32_t guest_send(struct guest *g, const struct rte_ether_addr *dst,
		    const struct rte_ether_addr *src, uint16_t vlan_tag);
/* The same with a tag of TPID @tpid (0x88a8: 802.1ad) and TCI @tci (not 0). */
uint32_t
guest_send_tpid(struct guest *g, const struct rte_ether_addr *dst, uint16_t tpid, uint16_t tci);
/*
 * Send @n frames from @g (its MAC, untagged) to @dst[0..n-1] in one TX burst,
 * which the guest publishes at once: the switch reads them in one burst.
 * Their ids go to @ids. Aborts the test unless the ring takes them all.
 */
void
guest_send_burst(struct guest *g, const struct rte_ether_addr *dst, unsigned int n, uint32_t *ids);
/* The bytes frame @id was sent with (untagged as built: at most SWH_FRAME_MAX) into @buf; its length. */
#define SWH_FRAME_MAX 1280
uint16_t swh_frame_bytes(uint32_t id, uint8_t *buf);
/* Poll every open guest once; returns frames received. */
unsigned int swh_poll(void);
/* Times @id arrived at @g so far. */
unsigned int guest_count(const struct guest *g, uint32_t id);
/* VLAN id frame @id arrived with at @g (0: untagged; UINT16_MAX: never came). */
uint16_t guest_tag(const struct guest *g, uint32_t id);
/* Poll until @id has arrived at @g; false after @timeout_ms. */
bool guest_wait(struct guest *g, uint32_t id, unsigned int timeout_ms);
/* Frames at @g that were not byte-exact or not ours. */
unsigned int guest_bad(const struct guest *g);

uint64_t swh_now_ms(void);

/* ---- DPDK telemetry of the daemon ---- */

/* Connect to /var/run/dpdk/@prefix/dpdk_telemetry.v2 and check the greeting's pid. */
int swh_tel_open(const char *prefix, pid_t pid);
/* Send a command; returns the reply's value (the caller frees it). */
cJSON *swh_tel(int fd, const char *cmd);
/* Value @inner of the nested dict @outer (a container: "stats", "qps/0"); -1 if absent. */
double swh_tel_num(const cJSON *v, const char *outer, const char *inner);

#endif
