/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in guest's test programs (CPL3), chosen on its command line:
 *
 *   ip=A.B.C.D                 its address (always answers ARP and ICMP echo)
 *   mode=respond seconds=S     only answer, for S seconds (0: until stopped)
 *   mode=ping peer=IP count=N [interval_ms=I] [linger_ms=L]
 *                              ping, print each RTT and a summary
 *   mode=stream peer=IP count=N size=B [pps=P] [window=W]
 *                              send N frames (ethertype 0x88b5, a pattern),
 *                              at most W unacknowledged by the sink (0x88b6)
 *   mode=masktest peer=IP      mask the RX vector, make the peer answer, check the
 *                              interrupt is held (PBA) and delivered on unmask;
 *                              then remap the vector and check it is followed
 *   mode=sink count=N size=B [timeout_ms=T]
 *                              receive and verify them byte for byte
 *   mode=rr peer=IP count=N [size=B]
 *                              request/response (netperf TCP_RR on raw frames):
 *                              an echo request of B bytes, the next one when its
 *                              answer came; transactions/s and RTT percentiles
 *
 * How it takes RX interrupts (rxirq=): "napi" (default) like Linux's NAPI:
 * none while it is awake and polls (VRING_AVAIL_F_NO_INTERRUPT set); armed
 * only to sleep, after spin_us=U µs (default 200) without a frame, and the
 * ring looked at once more after arming. "frame": re-armed after every frame
 * it takes, as Linux's NAPI on a fast host that empties its ring each time:
 * with EVENT_IDX (negotiated in this mode) used_event follows the frames it
 * took, so it asks for an interrupt for the next frame, never for one it
 * took; a backend without EVENT_IDX sees interrupts always on. "always":
 * interrupts on all the time, no EVENT_IDX (a driver that never turns them
 * off: the backend cannot tell which frames it took).
 *
 * kicks=always makes the driver kick even when the backend polls (to exercise
 * the ioeventfd path). Each mode ends with "result: ok" or "result: FAIL ..." and the guest's exit
 * status (the VMM reports it). Marks (the VMM logs KVM statistics) bracket
 * the data phase of stream and sink.
 */
#include "guest.h"

#define ETH_ARP 0x0806
#define ETH_IP 0x0800
#define ETH_TEST 0x88b5
#define ETH_TEST_ACK 0x88b6
#define ACK_EVERY 64
#define PING_ID 0x4856

static uint8_t my_mac[6], peer_mac[6];
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static uint32_t my_ip, peer_ip;
static int peer_known;

/* ping state */
static uint16_t ping_wait_seq;
static int ping_got;

/* sink state */
static uint32_t sink_count, sink_size, sink_good, sink_bad, sink_dup, sink_first;
static uint8_t sink_seen[(1u << 20) / 8];
static uint64_t sink_bytes;
static uint8_t sink_src[6];

/* stream state: frames the sink confirmed */
static uint32_t stream_acked;

/* respond counters */
static uint32_t n_arp, n_echo;

/* rxirq=frame; spin_us= */
static int rxirq_frame;
static uint64_t spin_ns = 200000;

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t
csum(const uint8_t *p, uint32_t len)
{
	uint32_t s = 0;

	for (; len > 1; len -= 2, p += 2)
		s += be16(p);
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint8_t *
tx_wait_buf(void)
{
	uint8_t *b;
	uint64_t deadline = now_ns() + 1000000000ull;

	while ((b = vnet_tx_buf()) == NULL) {
		vnet_tx_flush();
		if (now_ns() > deadline)
			return NULL;
	}
	return b;
}

static void
eth_hdr(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, my_mac, 6);
	put16(f + 12, type);
}

static void
send_arp(uint16_t op, const uint8_t *dst_mac, uint32_t dst_ip)
{
	uint8_t *f = tx_wait_buf();

	if (f == NULL)
		return;
	memset(f, 0, 60);
	eth_hdr(f, op == 1 ? bcast : dst_mac, ETH_ARP);
	put16(f + 14, 1);
	put16(f + 16, ETH_IP);
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, op);
	memcpy(f + 22, my_mac, 6);
	put32(f + 28, my_ip);
	memcpy(f + 32, op == 1 ? bcast : dst_mac, 6);
	put32(f + 38, dst_ip);
	vnet_tx_commit(60);
	vnet_tx_flush();
}

static void
send_echo(uint8_t type, const uint8_t *dst_mac, uint32_t dst_ip, uint16_t id, uint16_t seq,
	  const uint8_t *payload, uint32_t plen)
{
	uint8_t *f = tx_wait_buf();
	uint32_t len = 14 + 20 + 8 + plen;

	if (f == NULL)
		return;
	eth_hdr(f, dst_mac, ETH_IP);
	memset(f + 14, 0, 28);
	f[14] = 0x45;
	put16(f + 16, (uint16_t)(20 + 8 + plen));
	f[22] = 64;
	f[23] = 1;
	put32(f + 26, my_ip);
	put32(f + 30, dst_ip);
	put16(f + 24, csum(f + 14, 20));
	f[34] = type;
	put16(f + 38, id);
	put16(f + 40, seq);
	memcpy(f + 42, payload, plen);
	put16(f + 36, csum(f + 34, 8 + plen));
	vnet_tx_commit(len < 60 ? 60 : len);
	vnet_tx_flush();
}

/* Flow control: the sink tells the sender how many frames it holds, so that
 * the sender never has more in flight than the sink's RX ring takes, however
 * late either vCPU gets scheduled. */
static void
send_ack(void)
{
	uint8_t *f = tx_wait_buf();

	if (f == NULL)
		return;
	memset(f, 0, 60);
	eth_hdr(f, sink_src, ETH_TEST_ACK);
	put32(f + 14, sink_good);
	vnet_tx_commit(60);
	vnet_tx_flush();
}

static void
sink_frame(const uint8_t *f, uint32_t len)
{
	uint32_t seq = be32(f + 14), i;
	int ok = len == sink_size && be32(f + 18) == sink_count && seq < sink_count;

	for (i = 22; ok && i < len; i++)
		ok = f[i] == (uint8_t)(seq + i * 7);
	if (!ok) {
		sink_bad++;
		return;
	}
	if (sink_seen[seq / 8] & (1u << (seq % 8))) {
		sink_dup++;
		return;
	}
	if (sink_good == 0) {
		sink_first = seq;
		guest_mark(3);
	}
	sink_seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	sink_good++;
	sink_bytes += len;
	memcpy(sink_src, f + 6, 6);
	if (sink_good % ACK_EVERY == 0 || sink_good == sink_count)
		send_ack();
}

static void
handle(const uint8_t *f, uint32_t len)
{
	uint16_t type;

	if (len < 14)
		return;
	type = be16(f + 12);
	if (type == ETH_ARP && len >= 42 && be16(f + 20) == 1 && be32(f + 38) == my_ip) {
		n_arp++;
		send_arp(2, f + 22, be32(f + 28));
	} else if (type == ETH_ARP && len >= 42 && be16(f + 20) == 2 && be32(f + 28) == peer_ip) {
		memcpy(peer_mac, f + 22, 6);
		peer_known = 1;
	} else if (type == ETH_IP && len >= 42 && f[23] == 1 && be32(f + 30) == my_ip) {
		uint32_t tot = be16(f + 16);

		if (tot < 28 || tot + 14 > len)
			return;
		if (f[34] == 8) {
			n_echo++;
			send_echo(0, f + 6, be32(f + 26), be16(f + 38), be16(f + 40), f + 42,
				  tot - 28);
		} else if (f[34] == 0 && be16(f + 38) == PING_ID && be16(f + 40) == ping_wait_seq) {
			ping_got = 1;
		}
	} else if (type == ETH_TEST && len >= 22 && sink_count) {
		sink_frame(f, len);
	} else if (type == ETH_TEST_ACK && len >= 18) {
		uint32_t a = be32(f + 14);

		stream_acked = a > stream_acked ? a : stream_acked;
	}
}

/* Handle what arrived; 1 if anything did. */
static int
poll_rx(void)
{
	uint8_t *f;
	uint32_t len;
	int any = 0;

	while ((f = vnet_rx(&len)) != NULL) {
		handle(f, len);
		any = 1;
	}
	vnet_rx_done();
	return any;
}

/*
 * Sleep until an interrupt: RX interrupts armed first, then the ring looked
 * at once more (a frame the backend published before it could see the flag
 * raises none: we take it now). An interrupt after `seen` skips the sleep.
 */
static void
sleep_rx(void)
{
	uint64_t seen = irq_rx + irq_timer;

	vnet_rx_irq(1);
	if (!vnet_rx_ready())
		wait_irq_since(seen);
	if (!rxirq_frame)
		vnet_rx_irq(0);
}

/* Handle frames until cond() or the deadline; spin a little, then sleep. */
static int
run_until(int (*cond)(void), uint64_t deadline)
{
	uint64_t idle_since = now_ns();

	for (;;) {
		uint64_t t;

		if (poll_rx())
			idle_since = now_ns();
		if (cond && cond())
			return 1;
		t = now_ns();
		if (t >= deadline)
			return 0;
		if (t - idle_since >= spin_ns)
			sleep_rx();
	}
}

static int
cond_peer(void)
{
	return peer_known;
}

static int
cond_ping(void)
{
	return ping_got;
}

static int
cond_sink(void)
{
	return sink_good + sink_bad + sink_dup >= sink_count;
}

static uint32_t stream_seq, stream_window;

static int
cond_window(void)
{
	return stream_seq - stream_acked < stream_window;
}

static uint32_t stream_count;

static int
cond_all_acked(void)
{
	return stream_acked >= stream_count;
}

static int
resolve_peer(void)
{
	unsigned int i;

	for (i = 0; i < 50 && !peer_known; i++) {
		send_arp(1, NULL, peer_ip);
		run_until(cond_peer, now_ns() + 100000000ull);
	}
	if (!peer_known)
		print("result: FAIL no ARP reply from the peer");
	return peer_known ? 0 : -1;
}

static int
mode_ping(void)
{
	uint32_t count = (uint32_t)arg_num("count", 5), sent, got = 0;
	uint64_t interval = arg_num("interval_ms", 100) * 1000000ull;
	uint64_t min = ~0ull, max = 0, sum = 0;
	uint8_t payload[56];

	if (resolve_peer() != 0)
		return 1;
	for (sent = 0; sent < count; sent++) {
		uint64_t t0, rtt;
		unsigned int i;

		for (i = 0; i < sizeof(payload); i++)
			payload[i] = (uint8_t)(i + sent);
		ping_wait_seq = (uint16_t)(sent + 1);
		ping_got = 0;
		t0 = now_ns();
		send_echo(8, peer_mac, peer_ip, PING_ID, ping_wait_seq, payload, sizeof(payload));
		if (!run_until(cond_ping, t0 + 1000000000ull)) {
			print("ping: icmp_seq=%u timeout", sent + 1);
			continue;
		}
		rtt = now_ns() - t0;
		got++;
		sum += rtt;
		min = rtt < min ? rtt : min;
		max = rtt > max ? rtt : max;
		print("ping: icmp_seq=%u rtt=%lu.%03lu us", sent + 1, rtt / 1000, rtt % 1000);
		run_until(NULL, t0 + interval);
	}
	if (got)
		print("ping: %u sent, %u received, rtt min/avg/max = %lu/%lu/%lu us", count, got,
		      min / 1000, sum / got / 1000, max / 1000);
	else
		print("ping: %u sent, 0 received", count);
	/* keep answering the peer for a while: it may still be pinging us */
	run_until(NULL, now_ns() + arg_num("linger_ms", 1000) * 1000000ull);
	if (got != count) {
		print("result: FAIL %u of %u pings lost", count - got, count);
		return 1;
	}
	print("result: ok");
	return 0;
}

/* RTT histogram of mode rr: 1 µs buckets, the last one for everything above */
#define RR_BUCKETS 20000
static uint32_t rr_hist[RR_BUCKETS];

static uint64_t
rr_pct(uint32_t got, uint32_t pct)
{
	uint64_t want = ((uint64_t)got * pct + 99) / 100, n = 0;
	uint32_t b;

	for (b = 0; b < RR_BUCKETS; b++) {
		n += rr_hist[b];
		if (n >= want && want > 0)
			break;
	}
	return b < RR_BUCKETS ? b : RR_BUCKETS;
}

static int
mode_rr(void)
{
	uint32_t count = (uint32_t)arg_num("count", 10000), size = (uint32_t)arg_num("size", 64);
	static uint8_t payload[1472];
	uint32_t plen, i, got = 0, max = 0;
	uint64_t t0, t1, irq0;

	if (size < 60 || size > 1514) {
		print("result: FAIL bad size");
		return 1;
	}
	plen = size - 42;
	for (i = 0; i < plen; i++)
		payload[i] = (uint8_t)i;
	if (resolve_peer() != 0)
		return 1;
	run_until(NULL, now_ns() + 100000000ull);
	guest_mark(1);
	irq0 = irq_rx;
	t0 = now_ns();
	for (i = 0; i < count; i++) {
		uint64_t s = now_ns(), us;

		ping_wait_seq = (uint16_t)(i + 1);
		ping_got = 0;
		send_echo(8, peer_mac, peer_ip, PING_ID, ping_wait_seq, payload, plen);
		if (!run_until(cond_ping, s + 1000000000ull))
			continue;
		us = (now_ns() - s) / 1000;
		max = us > max ? (uint32_t)us : max;
		rr_hist[us < RR_BUCKETS ? us : RR_BUCKETS - 1]++;
		got++;
	}
	t1 = now_ns();
	guest_mark(2);
	print("rr: %u transactions of %u bytes in %lu us (%lu per s), %u lost, rtt "
	      "p50/p90/p99/max = %lu/%lu/%lu/%u us, %lu rx interrupts",
	      got, size, (t1 - t0) / 1000, (uint64_t)got * 1000000000ul / (t1 - t0 + 1),
	      count - got, rr_pct(got, 50), rr_pct(got, 90), rr_pct(got, 99), max, irq_rx - irq0);
	run_until(NULL, now_ns() + arg_num("linger_ms", 100) * 1000000ull);
	if (got != count) {
		print("result: FAIL %u of %u transactions lost", count - got, count);
		return 1;
	}
	print("result: ok");
	return 0;
}

static int
mode_stream(void)
{
	uint32_t count = (uint32_t)arg_num("count", 1000), size = (uint32_t)arg_num("size", 256);
	uint64_t pps = arg_num("pps", 0), t0, t1, gap = pps ? 1000000000ull / pps : 0;
	uint64_t kicks0;
	uint32_t seq, i;

	stream_window = (uint32_t)arg_num("window", 256);
	stream_count = count;

	if (size < 60 || size > 1514 || count > (1u << 20)) {
		print("result: FAIL bad size or count");
		return 1;
	}
	if (resolve_peer() != 0)
		return 1;
	/* the sink may still be starting: give it its ARP answer's worth of time */
	run_until(NULL, now_ns() + arg_num("delay_ms", 100) * 1000000ull);
	guest_mark(1);
	kicks0 = vnet_kicks;
	t0 = now_ns();
	for (seq = 0; seq < count; seq++) {
		uint8_t *f;

		while (gap && now_ns() < t0 + seq * gap)
			;
		stream_seq = seq;
		if (!cond_window()) {
			vnet_tx_flush();
			if (!run_until(cond_window, now_ns() + 2000000000ull)) {
				print("result: FAIL no acknowledgement from the sink after frame "
				      "%u",
				      stream_acked);
				return 1;
			}
		}
		f = tx_wait_buf();
		if (f == NULL) {
			print("result: FAIL TX ring stuck at frame %u", seq);
			return 1;
		}
		eth_hdr(f, peer_mac, ETH_TEST);
		put32(f + 14, seq);
		put32(f + 18, count);
		for (i = 22; i < size; i++)
			f[i] = (uint8_t)(seq + i * 7);
		vnet_tx_commit(size);
		if ((seq & 15) == 15)
			vnet_tx_flush();
		if ((seq & 63) == 0)
			poll_rx();
	}
	vnet_tx_flush();
	if (!run_until(cond_all_acked, now_ns() + 2000000000ull)) {
		print("result: FAIL sink acknowledged %u of %u frames", stream_acked, count);
		return 1;
	}
	t1 = now_ns();
	guest_mark(2);
	print("stream: sent %u frames of %u bytes in %lu us (%lu pps), %lu kicks, "
	      "all acknowledged, %lu rx interrupts",
	      count, size, (t1 - t0) / 1000, (uint64_t)count * 1000000000ul / (t1 - t0 + 1),
	      vnet_kicks - kicks0, irq_rx);
	run_until(NULL, now_ns() + arg_num("linger_ms", 500) * 1000000ull);
	print("result: ok");
	return 0;
}

static int
mode_sink(void)
{
	uint64_t timeout = arg_num("timeout_ms", 10000) * 1000000ull;
	uint64_t irq0 = irq_rx, t0;

	sink_count = (uint32_t)arg_num("count", 1000);
	sink_size = (uint32_t)arg_num("size", 256);
	if (sink_count > (1u << 20)) {
		print("result: FAIL count above 1048576");
		return 1;
	}
	print("sink: ready for %u frames of %u bytes", sink_count, sink_size);
	t0 = now_ns();
	run_until(cond_sink, t0 + timeout);
	guest_mark(4);
	/* the last acknowledgement must leave before this guest does */
	for (t0 = now_ns(); vnet_tx_inflight() && now_ns() < t0 + 1000000000ull;)
		vnet_tx_flush();
	run_until(NULL, now_ns() + arg_num("linger_ms", 50) * 1000000ull);
	print("sink: received %u/%u frames, %lu bytes, %u bad, %u duplicate, first seq %u, "
	      "%lu rx interrupts",
	      sink_good, sink_count, sink_bytes, sink_bad, sink_dup, sink_first, irq_rx - irq0);
	if (sink_good != sink_count || sink_bad || sink_dup) {
		print("result: FAIL %u frames missing, %u bad", sink_count - sink_good, sink_bad);
		return 1;
	}
	print("result: ok");
	return 0;
}

static int
mode_masktest(void)
{
	uint64_t irq0, irq_masked, t;
	int pend_masked, pend_after;

	/* the test is about the vector: interrupts asked for all the time */
	rxirq_frame = 1;
	vnet_rx_irq(1);
	if (resolve_peer() != 0)
		return 1;
	run_until(NULL, now_ns() + 50000000ull);
	vnet_rx_vector_mask(1);
	irq0 = irq_rx;
	peer_known = 0;
	send_arp(1, NULL, peer_ip); /* the answer raises our RX interrupt */
	run_until(cond_peer, now_ns() + 1000000000ull);
	run_until(NULL, now_ns() + 50000000ull);
	irq_masked = irq_rx - irq0;
	pend_masked = vnet_rx_vector_pending();
	vnet_rx_vector_mask(0);
	for (t = now_ns(); irq_rx == irq0 && now_ns() < t + 1000000000ull;)
		;
	pend_after = vnet_rx_vector_pending();
	print("masktest: reply %s, while masked: %lu interrupts, pending %d; after unmask: "
	      "%lu interrupts, pending %d",
	      peer_known ? "received" : "lost", irq_masked, pend_masked, irq_rx - irq0, pend_after);
	if (!peer_known || irq_masked != 0 || !pend_masked || irq_rx == irq0 || pend_after) {
		print("result: FAIL masked interrupt not held and delivered on unmask");
		return 1;
	}
	/* remap the live vector: the next interrupt must arrive on the new one */
	run_until(NULL, now_ns() + 50000000ull);
	irq0 = irq_other;
	vnet_rx_vector_retarget(VEC_OTHER);
	peer_known = 0;
	send_arp(1, NULL, peer_ip);
	run_until(cond_peer, now_ns() + 1000000000ull);
	for (t = now_ns(); irq_other == irq0 && now_ns() < t + 1000000000ull;)
		poll_rx();
	print("masktest: after remapping the vector: %lu interrupts on the new one",
	      irq_other - irq0);
	vnet_rx_vector_retarget(VEC_RX);
	if (irq_other == irq0) {
		print("result: FAIL MSI-X vector remap not followed");
		return 1;
	}
	print("result: ok");
	return 0;
}

static int
mode_respond(void)
{
	uint64_t secs = arg_num("seconds", 0);

	print("respond: answering ARP and ping on %u.%u.%u.%u", my_ip >> 24, (my_ip >> 16) & 255,
	      (my_ip >> 8) & 255, my_ip & 255);
	run_until(NULL, secs ? now_ns() + secs * 1000000000ull : ~0ull);
	print("respond: %u ARP requests, %u echo requests answered", n_arp, n_echo);
	print("result: ok");
	return 0;
}

int
net_main(void)
{
	char buf[32], mode[16];

	memcpy(my_mac, info->mac, 6);
	if (arg_str("ip", buf, sizeof(buf)) == NULL || parse_ip(buf, &my_ip) != 0) {
		print("result: FAIL no ip=A.B.C.D on the command line");
		return 2;
	}
	if (arg_str("peer", buf, sizeof(buf)) != NULL && parse_ip(buf, &peer_ip) != 0) {
		print("result: FAIL bad peer=");
		return 2;
	}
	if (arg_str("mode", mode, sizeof(mode)) == NULL)
		memcpy(mode, "respond", 8);
	vnet_kick_always =
		arg_str("kicks", buf, sizeof(buf)) != NULL && memcmp(buf, "always", 7) == 0;
	if (arg_str("rxirq", buf, sizeof(buf)) != NULL) {
		if (memcmp(buf, "frame", 6) == 0) {
			rxirq_frame = 1;
			vnet_want_event_idx = 1;
		} else if (memcmp(buf, "always", 7) == 0) {
			rxirq_frame = 1;
		} else if (memcmp(buf, "napi", 5) != 0) {
			print("result: FAIL rxirq= wants napi, frame or always");
			return 2;
		}
	}
	spin_ns = arg_num("spin_us", 200) * 1000;
	if (vnet_init() != 0) {
		print("result: FAIL no network device");
		return 3;
	}
	if (!rxirq_frame)
		vnet_rx_irq(0); /* awake: we poll */
	print("net: %02x:%02x:%02x:%02x:%02x:%02x up, mode %s, rxirq %s%s", my_mac[0], my_mac[1],
	      my_mac[2], my_mac[3], my_mac[4], my_mac[5], mode,
	      !rxirq_frame          ? "napi"
	      : vnet_want_event_idx ? "frame"
				    : "always",
	      vnet_event_idx ? ", event_idx" : "");
	if (memcmp(mode, "ping", 5) == 0)
		return mode_ping();
	if (memcmp(mode, "stream", 7) == 0)
		return mode_stream();
	if (memcmp(mode, "rr", 3) == 0)
		return mode_rr();
	if (memcmp(mode, "sink", 5) == 0)
		return mode_sink();
	if (memcmp(mode, "masktest", 9) == 0)
		return mode_masktest();
	if (memcmp(mode, "respond", 8) == 0)
		return mode_respond();
	print("result: FAIL unknown mode %s", mode);
	return 2;
}
